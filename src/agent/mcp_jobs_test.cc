#include "agent/mcp_jobs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>

#include "base/temp_dir_testing.h"
#include "sys/file_system_testing.h"

namespace bk::agent {
namespace {

// The real file system, but access(2) answers `err` (root passes the real check).
class AccessDenied : public sys::ForwardingFileSystem {
 public:
  explicit AccessDenied(int err) : err_(err) {}
  sys::ErrnoResult<void> Access(const std::string&, int) override { return std::unexpected(err_); }

 private:
  int err_;
};

class WorkingDirectoryTest : public TempDirTest {};

TEST_F(WorkingDirectoryTest, ADirectoryThisUserMayEnter) {
  EXPECT_TRUE(CheckWorkingDirectory(sys::RealFileSystem(), root()));
}

TEST_F(WorkingDirectoryTest, OneErrorSaysWhatItIsNot) {
  sys::FileSystem& real = sys::RealFileSystem();
  EXPECT_EQ(CheckWorkingDirectory(real, "relative").error().message,
            "job working directory must be absolute");
  EXPECT_EQ(CheckWorkingDirectory(real, Path("missing")).error().message,
            "job working directory does not exist: " + Path("missing"));
  AccessDenied denied(EACCES);
  auto st = CheckWorkingDirectory(denied, root());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(st.error().message, "job working directory is not readable: " + root());
}

}  // namespace
}  // namespace bk::agent
