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

TEST_F(PidLock, TheOriginalsJsonLockNamesItsPid) {
  int held = Open();
  ASSERT_GE(held, 0);
  ASSERT_EQ(flock(held, LOCK_EX | LOCK_NB), 0);
  std::string original = R"({"pid": 123, "locked_at": "2026-11-29T18:49:00.123456+00:00"})";
  ASSERT_EQ(pwrite(held, original.data(), original.size(), 0), static_cast<ssize_t>(original.size()));
  auto busy = Take(Open());
  ASSERT_FALSE(busy.has_value());
  EXPECT_EQ(busy.error().message, "held by 123");
  close(held);
}

TEST(LockHolderPid, ReadsANumberOrTheOriginalsJson) {
  EXPECT_EQ(LockHolderPid("4242\n"), "4242");
  EXPECT_EQ(LockHolderPid(R"({"pid": 123, "locked_at": "2026-11-29T18:49:00+00:00"})"), "123");
  // The original worker's lease metadata.
  EXPECT_EQ(LockHolderPid(R"({"acquired_at": "2026-11-29T18:49:00Z", "hostname": "vm", "instance_id": "ab", )"
                          R"("pid": 77, "uid": 1000, "version": 1, "worker_id": "w"})"
                          "\n"),
            "77");
}

TEST(LockHolderPid, AnythingElseNamesNobody) {
  for (const char* text :
       {"", "\n", "abc", "12abc", "0", "-5", "99999999999", "{}", R"({"pid": "123"})", R"({"pid": -1})",
        R"({"pid": 1.5})", R"({"pid": 0})", R"({"pid": 1, "pid": 2})", "[123]", R"({"pid": 123)"})
    EXPECT_EQ(LockHolderPid(text), "?") << text;
}

}  // namespace
}  // namespace bk::sys
