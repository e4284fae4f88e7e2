#include "sys/users.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "base/env_testing.h"

namespace bk::sys {
namespace {

// An UID that no passwd database on a test machine uses.
constexpr uid_t kNoSuchUid = 3999999;

TEST(Users, CurrentUidIsGetuid) { EXPECT_EQ(CurrentUid(), getuid()); }

TEST(Users, RootIsNamed) {
  EXPECT_EQ(UserName(0), "root");
  EXPECT_EQ(UidForName("root"), std::optional<uid_t>(0));
}

TEST(Users, CurrentUserRoundTrips) {
  passwd* pw = getpwuid(getuid());
  if (pw == nullptr) GTEST_SKIP() << "the current UID has no passwd entry";
  EXPECT_EQ(UserName(getuid()), pw->pw_name);
  EXPECT_EQ(UidForName(pw->pw_name), std::optional<uid_t>(getuid()));
}

TEST(Users, UnknownUidFallsBackToDecimal) {
  ASSERT_EQ(getpwuid(kNoSuchUid), nullptr);
  EXPECT_EQ(UserName(kNoSuchUid), "3999999");
  EXPECT_EQ(UidForName("3999999"), std::optional<uid_t>(kNoSuchUid));
}

// Root and the owner always; others only through the named group, which
// `nobody` is in by its primary group on Debian-like systems.
TEST(Users, AdministratorsAreRootTheOwnerAndTheAdminGroup) {
  passwd* nobody = getpwnam("nobody");
  group* primary = nobody ? getgrgid(nobody->pw_gid) : nullptr;
  if (!nobody || !primary) GTEST_SKIP() << "no nobody account with a named primary group";
  const uid_t uid = nobody->pw_uid;
  const std::string own_group = primary->gr_name;
  EXPECT_TRUE(IsAdministrator(0, 1234, ""));
  EXPECT_TRUE(IsAdministrator(uid, uid, ""));
  EXPECT_FALSE(IsAdministrator(uid, 1234, ""));
  EXPECT_TRUE(IsAdministrator(uid, 1234, own_group));
  EXPECT_FALSE(IsAdministrator(uid, 1234, "no-such-group-gpubk-test"));
  if (own_group != "root") EXPECT_FALSE(IsAdministrator(uid, 1234, "root"));
  EXPECT_FALSE(IsAdministrator(kNoSuchUid, 1234, own_group));
}

TEST(Users, UnknownNameIsNullopt) {
  EXPECT_EQ(UidForName("no-such-user-gpubk-test"), std::nullopt);
  EXPECT_EQ(UidForName(""), std::nullopt);
  EXPECT_EQ(UidForName("-1"), std::nullopt);
  EXPECT_EQ(UidForName("4294967295"), std::nullopt);  // (uid_t)-1 is never a user
}

class HomeDirTest : public ::testing::Test {
 protected:
  std::string PasswdHome() {
    passwd* pw = getpwuid(getuid());
    return pw != nullptr && pw->pw_dir != nullptr ? pw->pw_dir : "";
  }
  SavedEnv home_{"HOME"};  // each test sets its own HOME
};

TEST_F(HomeDirTest, AbsoluteHomeWins) {
  setenv("HOME", "/srv/somewhere", 1);
  EXPECT_EQ(HomeDir(), "/srv/somewhere");
}

TEST_F(HomeDirTest, RelativeHomeIgnored) {
  std::string expected = PasswdHome();
  if (expected.empty() || expected[0] != '/') GTEST_SKIP() << "no absolute passwd home";
  setenv("HOME", "relative/home", 1);
  EXPECT_EQ(HomeDir(), expected);
  setenv("HOME", "", 1);
  EXPECT_EQ(HomeDir(), expected);
  unsetenv("HOME");
  EXPECT_EQ(HomeDir(), expected);
}

}  // namespace
}  // namespace bk::sys
