// The cleanup never follows a symbolic link out of the private job directory:
// CheckJobDir refuses it, and both sweeps then remove nothing.

#include "worker/cleanup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/temp_dir_testing.h"
#include "worker/job_dir.h"

namespace bk::worker {
namespace {

namespace fs = std::filesystem;

class CleanupTest : public ::testing::Test {
 protected:
  // An orphaned spec far past its grace: any sweep that reaches it removes it.
  std::string StaleSpec(const std::string& dir) {
    std::string path = dir + "/00000000-0000-4000-8000-000000000000.json";
    std::ofstream(path) << "{}";
    chmod(path.c_str(), 0600);
    fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(48));
    return path;
  }
  engine::Seconds Now() const { return static_cast<engine::Seconds>(time(nullptr)); }

  TempDir tmp_{"bk-cleanup"};
  std::string root_ = tmp_.path() + "/jobs";
};

TEST_F(CleanupTest, AbsentOrPrivateDirectoriesPass) {
  EXPECT_TRUE(CheckJobDir(root_, getuid()).has_value());
  ASSERT_TRUE(EnsureJobDir(root_, getuid()).has_value());
  EXPECT_TRUE(CheckJobDir(root_, getuid()).has_value());
  std::string stale = StaleSpec(SpecsDir(root_));
  CleanupReport r = CleanupSpecs(root_, {}, Now(), getuid());
  EXPECT_EQ(r.removed, 1);
  EXPECT_FALSE(fs::exists(stale));
}

TEST_F(CleanupTest, ALinkedSpecsDirectoryIsRefusedAndLeftAlone) {
  ASSERT_TRUE(EnsureJobDir(root_, getuid()).has_value());
  std::string elsewhere = tmp_.path() + "/elsewhere";
  fs::create_directory(elsewhere);
  fs::permissions(elsewhere, fs::perms::owner_all);
  fs::remove(SpecsDir(root_));
  fs::create_directory_symlink(elsewhere, SpecsDir(root_));
  std::string stale = StaleSpec(elsewhere);
  auto check = CheckJobDir(root_, getuid());
  ASSERT_FALSE(check.has_value());
  EXPECT_EQ(check.error().message, "private job path is not a directory: " + SpecsDir(root_));
  CleanupReport r = CleanupSpecs(root_, {}, Now(), getuid());
  EXPECT_EQ(r.removed, 0);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.warnings, std::vector<std::string>{check.error().message});
  EXPECT_TRUE(fs::exists(stale));
  EXPECT_EQ(CleanupLogs(root_, {}, Now(), 1, getuid()).failed, 1);
}

TEST_F(CleanupTest, ALinkedOrSharedRootIsRefused) {
  std::string real = tmp_.path() + "/real";
  ASSERT_TRUE(EnsureJobDir(real, getuid()).has_value());
  fs::create_directory_symlink(real, root_);
  EXPECT_FALSE(CheckJobDir(root_, getuid()).has_value());
  chmod(real.c_str(), 0750);
  auto shared = CheckJobDir(real, getuid());
  ASSERT_FALSE(shared.has_value());
  EXPECT_EQ(shared.error().message,
            "private job directory must not be accessible by group or other users: " + real);
}

}  // namespace
}  // namespace bk::worker
