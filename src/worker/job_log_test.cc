#include "worker/job_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/temp_dir_testing.h"

namespace bk::worker {
namespace {

class JobLogTest : public TempDirTest {
 protected:
  std::string path_ = Path("r.log");
};

TEST(LogHeaderTest, PythonStyleSeparators) {
  EXPECT_EQ(
      LogHeader("bk-job-start", 1795977000, "id", {0, 2}, "/tmp", {"sh", "-c", "echo \"x\""}),
      "{\"event\": \"bk-job-start\", \"timestamp\": \"2026-11-29T18:30:00Z\", \"reservation_id\": \"id\", "
      "\"gpus\": [0, 2], \"cwd\": \"/tmp\", \"argv\": [\"sh\", \"-c\", \"echo \\\"x\\\"\"]}");
}

TEST_F(JobLogTest, PumpsAPipeAndKeepsThePreviousAttempt) {
  {
    auto log = JobLog::Open(path_, 64, "H1");
    ASSERT_TRUE(log.has_value());
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    (*log)->Start(fds[0]);
    ASSERT_EQ(write(fds[1], "first\n", 6), 6);
    close(fds[1]);
    EXPECT_TRUE((*log)->Finish(2000));
    EXPECT_FALSE((*log)->rotated());
  }
  auto again = JobLog::Open(path_, 64, "H2");
  ASSERT_TRUE(again.has_value());
  EXPECT_TRUE((*again)->rotated());
  (*again)->Line("second");
  again->reset();
  auto text = ReadJobLog(path_, getuid());
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, "H1\nfirst\nH2\nsecond\n");
  EXPECT_EQ(std::filesystem::status(path_).permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST_F(JobLogTest, RotatesAtHalfTheLimit) {
  auto log = JobLog::Open(path_, 1, "H");  // 512 KiB segments
  ASSERT_TRUE(log.has_value());
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  (*log)->Start(fds[0]);
  std::string chunk(100 * 1024, 'x');
  for (int i = 0; i < 8; ++i)
    ASSERT_EQ(write(fds[1], chunk.data(), chunk.size()), static_cast<ssize_t>(chunk.size()));
  close(fds[1]);
  EXPECT_TRUE((*log)->Finish(5000));
  EXPECT_TRUE((*log)->rotated());
  EXPECT_TRUE(std::filesystem::exists(path_ + ".1"));
  EXPECT_LE(std::filesystem::file_size(path_), 512u * 1024u);
}

TEST_F(JobLogTest, MissingLogIsNotFound) {
  auto text = ReadJobLog(path_, getuid());
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().kind, ErrorKind::kNotFound);
}

TEST_F(JobLogTest, TailSpansBothSegmentsAndCountsThem) {
  auto none = ReadJobLogTail(path_, getuid(), 100);
  ASSERT_TRUE(none.has_value());
  EXPECT_EQ(none->segments, 0);
  EXPECT_EQ(none->bytes, "");
  {
    auto log = JobLog::Open(path_, 64, "H1");
    ASSERT_TRUE(log.has_value());
    (*log)->Line("older");
  }
  auto again = JobLog::Open(path_, 64, "H2");
  ASSERT_TRUE(again.has_value());
  (*again)->Line("newer");
  again->reset();
  // "H1\nolder\n" + "H2\nnewer\n": 9 bytes each.
  auto both = ReadJobLogTail(path_, getuid(), 12);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->segments, 2);
  EXPECT_EQ(both->bytes, "er\nH2\nnewer\n");
  auto current = ReadJobLogTail(path_, getuid(), 6);
  ASSERT_TRUE(current.has_value());
  EXPECT_EQ(current->segments, 2) << "the older segment still counts";
  EXPECT_EQ(current->bytes, "newer\n");
}

TEST_F(JobLogTest, TailRefusesASymlinkedSegment) {
  std::ofstream(Path("elsewhere")) << "secret";
  std::filesystem::create_symlink(Path("elsewhere"), path_);
  EXPECT_FALSE(ReadJobLogTail(path_, getuid(), 100).has_value());
}

}  // namespace
}  // namespace bk::worker
