#include "worker/lease.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/temp_dir_testing.h"
#include "engine/civil_time.h"

namespace bk::worker {
namespace {

class LeaseTest : public TempDirTest {};

TEST_F(LeaseTest, OneWorkerPerUserAndDataDirectory) {
  EXPECT_EQ(Inspect(root(), "data:/a", getuid(), 100).state, "not-seen");
  {
    auto first = Lease::Acquire(root(), "data:/a", "w1", 100);
    ASSERT_TRUE(first.has_value()) << first.error().message;
    WorkerStatus s = Inspect(root(), "data:/a", getuid(), 100);
    EXPECT_EQ(s.state, "running");
    ASSERT_TRUE(s.lease.has_value());
    EXPECT_EQ(s.lease->worker_id, "w1");
    EXPECT_EQ(s.lease->pid, getpid());
    // flock leases belong to the open file description: a second open is refused.
    auto second = Lease::Acquire(root(), "data:/a", "w2", 100);
    ASSERT_FALSE(second.has_value());
    EXPECT_EQ(second.error().kind, ErrorKind::kBusy);
    EXPECT_EQ(second.error().message, "another worker is active for " + root());
    // Another data directory with the same job directory is refused too.
    EXPECT_FALSE(Lease::Acquire(root(), "data:/b", "w3", 100).has_value());
    EXPECT_EQ(Inspect(root(), "data:/b", getuid(), 100).state, "other-instance");
  }
  WorkerStatus after = Inspect(root(), "data:/a", getuid(), 100);
  EXPECT_EQ(after.state, "stopped");
  auto z = engine::FixedZone(0);
  EXPECT_EQ(StatusLine(after, z), "worker: stopped (last pid=" + std::to_string(getpid()) +
                                      " host=" + after.lease->hostname + " since=1970-01-01 00:01 +0000)");
  std::string json = StatusJson(after, "me");
  EXPECT_NE(json.find("\"schema_version\":\"gpubk.worker.v1\""), std::string::npos);
  EXPECT_NE(json.find("\"running\":false"), std::string::npos);
}

// GPUBK 0.2.8's worker left its metadata with the time as ISO text only.
TEST_F(LeaseTest, TheOriginalsLeaseMetadataIsRead) {
  std::string original =
      R"({"acquired_at": "2026-11-29T18:49:00Z", "hostname": "vm", "instance_id": "ab", "pid": 123, )"
      R"("uid": )" +
      std::to_string(getuid()) + R"(, "version": 1, "worker_id": "w-old"})" + "\n";
  {
    std::ofstream out(Path("worker.lock"));
    out << original;
  }
  chmod(Path("worker.lock").c_str(), 0600);
  WorkerStatus s = Inspect(root(), "data:/a", getuid(), 100);
  EXPECT_EQ(s.state, "stopped");
  ASSERT_TRUE(s.lease.has_value());
  EXPECT_EQ(s.metadata_valid, true);
  EXPECT_EQ(s.lease->pid, 123);
  EXPECT_EQ(s.lease->worker_id, "w-old");
  auto z = engine::FixedZone(0);
  EXPECT_EQ(StatusLine(s, z), "worker: stopped (last pid=123 host=vm since=2026-11-29 18:49 +0000)");
}

TEST_F(LeaseTest, UnsafeLeaseFileIsInvalid) {
  ASSERT_TRUE(Lease::Acquire(root(), "data:/a", "w1", 100).has_value());
  chmod(Path("worker.lock").c_str(), 0644);
  WorkerStatus s = Inspect(root(), "data:/a", getuid(), 100);
  EXPECT_EQ(s.state, "invalid");
  EXPECT_FALSE(s.running.has_value());
  EXPECT_FALSE(Lease::Acquire(root(), "data:/a", "w1", 100).has_value());
}

// The original's words for each state; a booking's document lists the
// warning once, and only when the booking carries a command.
TEST(SchedulingWarning, SaysWhyNothingWillLaunch) {
  WorkerStatus s;
  EXPECT_EQ(
      SchedulingWarning(s).value_or(""),
      "scheduled command worker is not-seen; start `bk w start` now or enable bk-worker.service, otherwise "
      "the command cannot launch. For temporary use keep `bk w start` in tmux; for logout/reboot "
      "persistence contact the GPUBK administrator shown by `bk info`");
  s.state = "other-instance";
  EXPECT_EQ(
      SchedulingWarning(s).value_or("").rfind("scheduled command worker serves another data directory", 0),
      0u);
  s.state = "invalid";
  EXPECT_EQ(SchedulingWarning(s).value_or("").rfind("scheduled command worker status is invalid;", 0), 0u);
  s.state = "running";
  s.running = true;
  EXPECT_FALSE(SchedulingWarning(s).has_value());

  WorkerStatus none;
  service::BookingOutcome o;
  EXPECT_TRUE(WithSchedulingWarning(o, none).warnings.empty());
  o.job = store::JobRecord{};
  o = WithSchedulingWarning(WithSchedulingWarning(o, none), none);
  EXPECT_EQ(o.warnings, std::vector<std::string>{*SchedulingWarning(none)});
  EXPECT_EQ(WithSchedulingWarning(o, s).warnings.size(), 1u);
}

}  // namespace
}  // namespace bk::worker
