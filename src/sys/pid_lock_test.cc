#include "sys/pid_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "base/temp_dir_testing.h"

namespace bk::sys {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Busy(const std::string& pid) { return "held by " + pid; }

class PidLock : public ::testing::Test {
 protected:
  int Open() { return open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); }
  Status Take(int fd) { return LockNamingPid(fd, path_, Busy); }

  TempDir dir_{"bk-pid-lock"};
  std::string path_ = dir_.path() + "/x.lock";
};

TEST_F(PidLock, TheHolderWritesItsPid) {
  int fd = Open();
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(Take(fd).has_value());
  EXPECT_EQ(Slurp(path_), std::to_string(getpid()) + "\n");
  close(fd);
}

TEST_F(PidLock, ASecondTakerIsBusyAndNamesTheHolder) {
  int held = Open();
  ASSERT_GE(held, 0);
  ASSERT_TRUE(Take(held).has_value());
  auto again = Take(Open());
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().kind, ErrorKind::kBusy);
  EXPECT_EQ(again.error().message, "held by " + std::to_string(getpid()));
  close(held);
  // Released with its descriptor: the next taker gets it.
  int next = Open();
  EXPECT_TRUE(Take(next).has_value());
  close(next);
}

TEST_F(PidLock, AnEmptyFileNamesNoPid) {
  int held = Open();
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  auto busy = Take(Open());
  ASSERT_FALSE(busy.has_value());
  EXPECT_EQ(busy.error().message, "held by ?");
  close(held);
}

}  // namespace
}  // namespace bk::sys
