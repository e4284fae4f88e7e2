// The Monitor against a real private ledger and usage.db in a temp dir, with
// scripted snapshots and a stepped clock.

#include "monitor/monitor.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "monitor/heartbeat.h"
#include "monitor/monitor_testing.h"
#include "monitor/usage_view.h"
#include "service/service_testing.h"

namespace bk::monitor {
namespace {

constexpr uint32_t kAlice = 1001;
constexpr uint32_t kBob = 1002;

gpu::ProcessSample Proc(int pid, std::optional<uid_t> uid, std::string user = "") {
  gpu::ProcessSample p;
  p.pid = pid;
  p.uid = uid;
  p.host_uid = uid;
  p.username = user.empty() ? (uid ? "u" + std::to_string(*uid) : "?") : user;
  p.command = "python train.py";
  p.sm_utilization_percent = 0;
  p.gpu_memory_mb = 512;
  return p;
}

class MonitorTest : public service::ServiceTest {
 protected:
  MonitorTest() { config_.policy.gpu_count = 2; }
  void SetUp() override {
    ServiceTest::SetUp();
    ASSERT_TRUE(service_->Open());
    auto u = store::UsageStore::Open({config_.data_dir + "/usage.db", true, getuid(), 1000});
    ASSERT_TRUE(u.has_value()) << u.error().message;
    usage_ = std::move(*u);
    now_ms_ = clock_->Now() * 1000;
  }
  void TearDown() override {
    monitor_.reset();
    usage_.reset();
    ServiceTest::TearDown();
  }

  void StartMonitor(int64_t reclaim_after_s = 60, bool pause = false) {
    Options o;
    o.config = &config_;
    o.service = service_.get();
    o.actor = {static_cast<uint32_t>(getuid()), "owner", true};
    o.usage = usage_.get();
    o.interval_ms = 2000;
    o.reclaim_after_ms = reclaim_after_s * 1000;
    o.pause_during_exclusive = pause;
    o.monitor_id = "m1";
    o.pid = getpid();
    o.uid = getuid();
    monitor_ = std::make_unique<Monitor>(o);
    ASSERT_TRUE(monitor_->Start(now_ms_));
  }

  engine::Reservation Book(uint32_t uid, const std::string& name, std::vector<int> gpus,
                           engine::Mode mode = engine::Mode::kShared) {
    service::CreateRequest r;
    r.count = static_cast<int>(gpus.size());
    r.gpus = std::move(gpus);
    r.duration = 3 * 3600;
    r.mode = mode;
    auto out = service_->Create({uid, name, false}, r);
    EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message);
    return out ? out->reservation : engine::Reservation{};
  }

  // One sample at the current time, then the clock steps 2 s.
  TickReport Sample(gpu::Snapshot snap, bool paused = false) {
    clock_->Set(now_ms_ / 1000);
    RawSample s{now_ms_, paused, std::move(snap)};
    auto r = monitor_->Ingest(std::move(s));
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    now_ms_ += 2000;
    return r ? std::move(*r) : TickReport{};
  }

  bool Reclaimed(const TickReport& r) {
    return std::any_of(r.decisions.begin(), r.decisions.end(), [](const auto& d) { return d.reclaimed; });
  }

  std::vector<std::string> Kinds(const TickReport& r) {
    std::vector<std::string> out;
    for (const auto& e : r.events) out.push_back(e.kind);
    return out;
  }

  std::unique_ptr<store::UsageStore> usage_;
  std::unique_ptr<Monitor> monitor_;
  int64_t now_ms_ = 0;
};

TEST_F(MonitorTest, ReclaimsANoShowExactlyAtTheThreshold) {
  auto r = Book(kAlice, "alice", {0});
  StartMonitor(60);
  const int64_t first = now_ms_;
  for (int i = 0; i < 30; ++i) {
    TickReport t = Sample(Snap({{Proc(77, kBob, "bob")}, {}}));
    ASSERT_FALSE(Reclaimed(t)) << "sample " << i << " at +" << (t.at_ms - first) / 1000 << "s";
  }
  TickReport last = Sample(Snap({{Proc(77, kBob, "bob")}, {}}));
  ASSERT_TRUE(Reclaimed(last));
  EXPECT_EQ(last.at_ms - first, 60'000);

  auto h = service_->History({kAlice, "alice", false}, r.id);
  ASSERT_TRUE(h.has_value()) << h.error().message;
  EXPECT_EQ(h->reservation.status, engine::Status::kCancelled);
  ASSERT_TRUE(h->reservation.cancellation.has_value());
  EXPECT_EQ(h->reservation.cancellation->kind, engine::CancelKind::kReclaimed);
  EXPECT_NE(h->reservation.cancellation->reason.find("no process of alice"), std::string::npos);
  EXPECT_EQ(h->events.back().action, "reclaim");
  ASSERT_EQ(h->notifications.size(), 1u);
  EXPECT_EQ(h->notifications[0].type, "reservation-reclaimed");
  EXPECT_EQ(h->notifications[0].uid, kAlice);
  EXPECT_EQ(Kinds(last).back(), "reclaim");

  // Nothing left to judge afterwards.
  TickReport after = Sample(Snap({{}, {}}));
  EXPECT_TRUE(after.decisions.empty());
}

TEST_F(MonitorTest, OwnerProcessAtZeroPercentKeepsTheBooking) {
  Book(kAlice, "alice", {1});
  StartMonitor(10);
  for (int i = 0; i < 40; ++i) ASSERT_FALSE(Reclaimed(Sample(Snap({{}, {Proc(50, kAlice, "alice")}}))));
}

TEST_F(MonitorTest, ContainerProcessInferredToTheOnlyHolderIsUse) {
  Book(kAlice, "alice", {0});
  StartMonitor(10);
  gpu::ProcessSample root = Proc(60, 0, "root");
  root.container_runtime = "docker";
  root.container_id = "0123456789abcdef0123";
  TickReport t = Sample(Snap({{root}, {}}));
  ASSERT_EQ(t.snapshot.devices[0].processes[0].identity_source, "container-reservation");
  EXPECT_EQ(t.snapshot.devices[0].processes[0].uid, kAlice);
  EXPECT_EQ(t.snapshot.devices[0].processes[0].host_uid, 0u);
  EXPECT_EQ(t.classified[0][0].status, "ok");
  for (int i = 0; i < 20; ++i) ASSERT_FALSE(Reclaimed(Sample(Snap({{}, {}}))));
}

TEST_F(MonitorTest, AmbiguousContainerProcessRestartsTheCount) {
  Book(kAlice, "alice", {0});
  Book(kBob, "bob", {0});
  StartMonitor(10);
  gpu::ProcessSample root = Proc(61, 0, "root");
  root.container_runtime = "docker";
  root.container_id = "0123456789abcdef0123";
  for (int i = 0; i < 20; ++i) {
    TickReport t = Sample(Snap({{root}, {}}));
    ASSERT_EQ(t.snapshot.devices[0].processes[0].identity_source, "container-ambiguous");
    ASSERT_FALSE(Reclaimed(t));
    EXPECT_EQ(t.heartbeat.status, "degraded");
  }
}

TEST_F(MonitorTest, FailedSamplesPreserveProcessesAndRestartTheCount) {
  Book(kAlice, "alice", {0});
  StartMonitor(10);
  TickReport t = Sample(Snap({{}, {Proc(70, kBob, "bob")}}));
  EXPECT_EQ(Kinds(t), (std::vector<std::string>{"process-start", "unbooked-use"}));
  for (int i = 0; i < 3; ++i) Sample(Snap({{}, {Proc(70, kBob, "bob")}}));  // +2..+6
  gpu::Snapshot failed = gpu::UnknownSnapshot(2, "NVML_ERROR_UNKNOWN");
  TickReport f = Sample(failed);  // +8
  EXPECT_TRUE(f.failed);
  EXPECT_EQ(Kinds(f), std::vector<std::string>{"telemetry-failed"});
  EXPECT_EQ(f.heartbeat.status, "degraded");
  EXPECT_EQ(f.decisions[0].verdict, "untrusted");
  // Back: no process-stop was invented, the streak restarts at +10.
  TickReport back = Sample(Snap({{}, {Proc(70, kBob, "bob")}}));
  EXPECT_EQ(Kinds(back), std::vector<std::string>{"telemetry-restored"});
  for (int i = 0; i < 4; ++i)
    ASSERT_FALSE(Reclaimed(Sample(Snap({{}, {Proc(70, kBob, "bob")}}))));  // +12..+18
  EXPECT_TRUE(Reclaimed(Sample(Snap({{}, {Proc(70, kBob, "bob")}}))));     // +20
  TickReport gone = Sample(Snap({{}, {}}));
  EXPECT_EQ(Kinds(gone), std::vector<std::string>{"process-stop"});
}

TEST_F(MonitorTest, SamplingGapRestartsTheCount) {
  Book(kAlice, "alice", {0});
  StartMonitor(10);
  for (int i = 0; i < 4; ++i) Sample(Snap({{}, {}}));  // +0..+6
  now_ms_ += 10'000;                                   // nothing sampled for 12 s
  TickReport t = Sample(Snap({{}, {}}));               // +18
  EXPECT_TRUE(t.decisions[0].gap);
  for (int i = 0; i < 4; ++i) ASSERT_FALSE(Reclaimed(Sample(Snap({{}, {}}))));
  EXPECT_TRUE(Reclaimed(Sample(Snap({{}, {}}))));  // +28 = +18 + 10
}

TEST_F(MonitorTest, ExclusiveWindowPausesAndIsNoEvidence) {
  Book(kAlice, "alice", {0});
  auto x = Book(kBob, "bob", {1}, engine::Mode::kExclusive);
  StartMonitor(10, /*pause=*/true);
  auto windows = monitor_->ExclusiveWindows();
  ASSERT_TRUE(windows.has_value());
  ASSERT_EQ(windows->size(), 1u);
  EXPECT_EQ((*windows)[0].start, x.start);
  EXPECT_TRUE(Inside(*windows, now_ms_));
  for (int i = 0; i < 30; ++i) {
    TickReport t = Sample({}, /*paused=*/true);
    ASSERT_FALSE(Reclaimed(t));
    EXPECT_EQ(t.heartbeat.status, "paused");
    if (i == 0) {
      EXPECT_EQ(Kinds(t), std::vector<std::string>{"paused"});
    }
  }
}

TEST_F(MonitorTest, PausedSnapshotKeepsIdentities) {
  StartMonitor(10, true);
  Sample(Snap({{}, {}}));
  TickReport p = Sample({}, true);
  ASSERT_EQ(p.snapshot.devices.size(), 2u);
  EXPECT_EQ(p.snapshot.devices[1].uuid, "GPU-00000001");
  EXPECT_EQ(p.snapshot.devices[1].memory_total_mb, 81920);
  EXPECT_EQ(p.snapshot.devices[1].source, gpu::Source::kNone);
  EXPECT_EQ(monitor_->latest().devices[1].uuid, "GPU-00000001");
  TickReport back = Sample(Snap({{}, {}}));
  EXPECT_EQ(Kinds(back), std::vector<std::string>{"resumed"});
}

TEST_F(MonitorTest, ARestartWithoutGapContinuesTheStreak) {
  Book(kAlice, "alice", {0});
  StartMonitor(10);
  for (int i = 0; i < 3; ++i) Sample(Snap({{}, {}}));  // +0, +2, +4
  ASSERT_TRUE(monitor_->Stop(now_ms_ - 2000));
  StartMonitor(10);                                 // a new process, same usage.db
  ASSERT_FALSE(Reclaimed(Sample(Snap({{}, {}}))));  // +6
  ASSERT_FALSE(Reclaimed(Sample(Snap({{}, {}}))));  // +8
  EXPECT_TRUE(Reclaimed(Sample(Snap({{}, {}}))));   // +10
}

TEST_F(MonitorTest, UsageHistoryAndHeartbeat) {
  Book(kAlice, "alice", {0});
  StartMonitor(3600);
  for (int i = 0; i < 45; ++i)
    Sample(Snap({{i < 15 ? Proc(80, kAlice, "alice") : Proc(81, kBob, "bob")}, {}}));
  ASSERT_TRUE(monitor_->Stop(now_ms_));
  auto users = usage_->Users(now_ms_ / 1000 - 3600, now_ms_ / 1000 + 1, std::nullopt);
  ASSERT_TRUE(users.has_value());
  ASSERT_EQ(users->size(), 2u);
  const store::UserUsage& alice = (*users)[0];
  EXPECT_EQ(alice.uid, kAlice);
  EXPECT_EQ(alice.reserved_ms, 45 * 2000);
  EXPECT_EQ(alice.active_ms, 15 * 2000);
  EXPECT_EQ(alice.idle_reserved_ms, 30 * 2000);
  const store::UserUsage& bob = (*users)[1];
  EXPECT_EQ(bob.unbooked_ms, 30 * 2000);
  auto hb = usage_->Heartbeat();
  ASSERT_TRUE(hb.has_value() && hb->has_value());
  EXPECT_EQ((*hb)->status, "stopped");
  EXPECT_EQ(ClassifyHeartbeat(*hb, now_ms_).state, "stopped");

  UsageQuery q;
  q.kind = UsageKind::kUsers;
  q.from = now_ms_ / 1000 - 3600;
  q.to = now_ms_ / 1000 + 1;
  auto doc = UsageJson(usage_.get(), q, now_ms_);
  ASSERT_TRUE(doc.has_value());
  EXPECT_NE(doc->find("\"unbooked_gpu_seconds\": 60.0"), std::string::npos) << *doc;
}

TEST(HeartbeatTest, Classification) {
  store::HeartbeatRow h;
  h.status = "running";
  h.interval_ms = 2000;
  h.written_ms = 100'000;
  EXPECT_EQ(ClassifyHeartbeat(std::nullopt, 0).state, "not-seen");
  EXPECT_EQ(ClassifyHeartbeat(h, 110'000).state, "running");
  EXPECT_TRUE(ClassifyHeartbeat(h, 110'000).fresh);
  EXPECT_EQ(ClassifyHeartbeat(h, 131'000).state, "stale");
  EXPECT_EQ(ClassifyHeartbeat(h, -300'000).state, "clock-skew");
  h.status = "paused";
  EXPECT_EQ(ClassifyHeartbeat(h, 101'000).state, "paused");
  h.status = "stopped";
  EXPECT_EQ(ClassifyHeartbeat(h, 101'000).state, "stopped");
  EXPECT_FALSE(ClassifyHeartbeat(h, 101'000).fresh);
}

}  // namespace
}  // namespace bk::monitor
