#include "sys/users.h"

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
