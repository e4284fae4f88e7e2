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

int OpenLock(const std::string& path) { return open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600); }

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string Busy(const std::string& pid) { return "held by " + pid; }

TEST(PidLock, TheHolderWritesItsPid) {
  TempDir dir("bk-pid-lock");
  std::string path = dir.path() + "/x.lock";
  int fd = OpenLock(path);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(LockNamingPid(fd, path, Busy).has_value());
  EXPECT_EQ(Slurp(path), std::to_string(getpid()) + "\n");
  close(fd);
}

TEST(PidLock, ASecondTakerIsBusyAndNamesTheHolder) {
  TempDir dir("bk-pid-lock");
  std::string path = dir.path() + "/x.lock";
  int held = OpenLock(path);
  ASSERT_GE(held, 0);
  ASSERT_TRUE(LockNamingPid(held, path, Busy).has_value());
  auto again = LockNamingPid(OpenLock(path), path, Busy);
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().kind, ErrorKind::kBusy);
  EXPECT_EQ(again.error().message, "held by " + std::to_string(getpid()));
  close(held);
  // Released with its descriptor: the next taker gets it.
  int next = OpenLock(path);
  EXPECT_TRUE(LockNamingPid(next, path, Busy).has_value());
  close(next);
}

TEST(PidLock, AnEmptyFileNamesNoPid) {
  TempDir dir("bk-pid-lock");
  std::string path = dir.path() + "/x.lock";
  int held = OpenLock(path);
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  auto busy = LockNamingPid(OpenLock(path), path, Busy);
  ASSERT_FALSE(busy.has_value());
  EXPECT_EQ(busy.error().message, "held by ?");
  close(held);
}

}  // namespace
}  // namespace bk::sys
