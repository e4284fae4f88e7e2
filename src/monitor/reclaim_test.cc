#include "monitor/reclaim.h"

#include <gtest/gtest.h>

#include <deque>

#include "monitor/monitor_testing.h"

namespace bk::monitor {
namespace {

constexpr int64_t kS = 1000;  // one second in ms
constexpr int64_t kStart = 1'000'000 * kS;
constexpr uint32_t kOwner = 1001;
constexpr uint32_t kOther = 1002;

gpu::ProcessSample Proc(int pid, std::optional<uid_t> uid, std::string source = "host", int sm = 0) {
  gpu::ProcessSample p;
  p.pid = pid;
  p.uid = uid;
  p.username = uid ? "u" + std::to_string(*uid) : "?";
  p.identity_source = std::move(source);
  p.sm_utilization_percent = sm;
  p.command = "python train.py";
  return p;
}

// A timeline: samples own their snapshots (SampleView points into them).
class Timeline {
 public:
  void Add(int64_t at_ms, gpu::Snapshot snap, bool paused = false) {
    snaps_.push_back(std::move(snap));
    SampleView v;
    v.at_ms = at_ms;
    v.paused = paused;
    v.failed = !snaps_.back().ok();
    v.snapshot = &snaps_.back();
    views_.push_back(v);
  }
  // Samples every `step` from `from` (inclusive) to `to` (exclusive).
  void Every(int64_t from, int64_t to, int64_t step, const gpu::Snapshot& snap, bool paused = false) {
    for (int64_t t = from; t < to; t += step) Add(t, snap, paused);
  }
  const std::vector<SampleView>& views() const { return views_; }
  int64_t at(size_t i) const { return views_[i].at_ms; }

 private:
  std::deque<gpu::Snapshot> snaps_;  // stable addresses
  std::vector<SampleView> views_;
};

BookingRef Booking(std::vector<int> gpus = {0}) {
  return BookingRef{"r1", kOwner, std::move(gpus), kStart, kStart + 10 * 3600 * kS};
}

Rules R(int64_t after_s = 60, int64_t interval_s = 2) { return Rules{after_s * kS, interval_s * kS}; }

const gpu::Snapshot kIdle = Snap({{}});

TEST(JudgeTest, Verdicts) {
  BookingRef b = Booking();
  gpu::Snapshot empty = kIdle;
  SampleView v{kStart, false, false, &empty};
  EXPECT_EQ(Judge(b, v).verdict, Verdict::kNoUse);

  gpu::Snapshot other = Snap({{Proc(10, kOther)}});
  v.snapshot = &other;
  EXPECT_EQ(Judge(b, v).verdict, Verdict::kNoUse) << "another user's process is no use by the owner";

  gpu::Snapshot mine = Snap({{Proc(11, kOwner, "host", 0)}});
  v.snapshot = &mine;
  EXPECT_EQ(Judge(b, v).verdict, Verdict::kUse) << "0% utilisation is still use";

  gpu::Snapshot inferred = Snap({{Proc(12, kOwner, "container-reservation")}});
  v.snapshot = &inferred;
  EXPECT_EQ(Judge(b, v).verdict, Verdict::kUse);

  gpu::Snapshot ambiguous = Snap({{Proc(13, 0, "container-ambiguous")}});
  v.snapshot = &ambiguous;
  EXPECT_EQ(Judge(b, v).verdict, Verdict::kUntrusted);
  EXPECT_NE(Judge(b, v).why.find("ambiguous"), std::string::npos);

  gpu::Snapshot unknown = Snap({{Proc(14, std::nullopt)}});
  v.snapshot = &unknown;
  EXPECT_EQ(Judge(b, v).verdict, Verdict::kUntrusted);

  gpu::Snapshot failed = kIdle;
  failed.error = "NVML_ERROR_GPU_IS_LOST";
  v.snapshot = &failed;
  EXPECT_EQ(Judge(b, v).verdict, Verdict::kUntrusted);

  v.snapshot = &empty;
  v.paused = true;
  EXPECT_EQ(Judge(b, v).verdict, Verdict::kUntrusted);
}

TEST(JudgeTest, NoProcessTelemetryIsUntrusted) {
  gpu::Snapshot s = kIdle;
  s.devices[0].process_telemetry = false;
  SampleView v{kStart, false, false, &s};
  EXPECT_EQ(Judge(Booking(), v).verdict, Verdict::kUntrusted);
  s.devices[0].process_telemetry = true;
  s.devices[0].source = gpu::Source::kNone;
  EXPECT_EQ(Judge(Booking(), v).verdict, Verdict::kUntrusted);
}

TEST(JudgeTest, MissingGpuIsUntrusted) {
  SampleView v{kStart, false, false, &kIdle};
  EXPECT_EQ(Judge(Booking({0, 3}), v).verdict, Verdict::kUntrusted);
}

TEST(JudgeTest, OwnerUseWinsOverUnknownsOnAnotherGpu) {
  gpu::Snapshot s = Snap({{Proc(1, std::nullopt)}, {Proc(2, kOwner)}});
  SampleView v{kStart, false, false, &s};
  EXPECT_EQ(Judge(Booking({0, 1}), v).verdict, Verdict::kUse);
  gpu::Snapshot t = Snap({{Proc(1, std::nullopt)}, {Proc(2, kOther)}});
  v.snapshot = &t;
  EXPECT_EQ(Judge(Booking({0, 1}), v).verdict, Verdict::kUntrusted);
}

TEST(ReclaimTest, ExactlyAtTheThresholdNotOneSampleBefore) {
  Timeline t;
  t.Every(kStart, kStart + 100 * kS, 2 * kS, kIdle);
  auto at = FirstReclaim(Booking(), t.views(), R(60, 2));
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(t.at(*at), kStart + 60 * kS);
  // Cut the timeline one sample short: nothing.
  std::vector<SampleView> shorter(t.views().begin(), t.views().begin() + static_cast<long>(*at));
  EXPECT_FALSE(FirstReclaim(Booking(), shorter, R(60, 2)).has_value());
}

TEST(ReclaimTest, StreakStartsAtTheFirstSampleAfterTheStart) {
  Timeline t;
  t.Every(kStart - 20 * kS, kStart + 100 * kS, 2 * kS, kIdle);  // sampling before the booking began
  t.Add(kStart + 101 * kS, kIdle);
  auto at = FirstReclaim(Booking(), t.views(), R(60, 2));
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(t.at(*at), kStart + 60 * kS);
}

TEST(ReclaimTest, OwnerProcessAtZeroPercentIsUse) {
  Timeline t;
  t.Every(kStart, kStart + 3 * 3600 * kS, 2 * kS, Snap({{Proc(7, kOwner, "host", 0)}}));
  EXPECT_FALSE(FirstReclaim(Booking(), t.views(), R(60, 2)).has_value());
}

TEST(ReclaimTest, OnceUsedNeverReclaimed) {
  Timeline t;
  t.Add(kStart, Snap({{Proc(7, kOwner)}}));
  t.Every(kStart + 2 * kS, kStart + 3600 * kS, 2 * kS, kIdle);
  EXPECT_FALSE(FirstReclaim(Booking(), t.views(), R(60, 2)).has_value());
}

TEST(ReclaimTest, OtherUsersProcessesAreNoUse) {
  Timeline t;
  t.Every(kStart, kStart + 100 * kS, 2 * kS, Snap({{Proc(8, kOther, "host", 99)}}));
  auto at = FirstReclaim(Booking(), t.views(), R(60, 2));
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(t.at(*at), kStart + 60 * kS);
}

// Every kind of untrustworthy sample at +30 s restarts the count: the reclaim
// moves to 60 s after the next trustworthy sample (+32 s), i.e. +92 s.
class RestartTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RestartTest, RestartsTheCount) {
  std::string kind = GetParam();
  Timeline t;
  t.Every(kStart, kStart + 30 * kS, 2 * kS, kIdle);
  if (kind == "failed") {
    gpu::Snapshot f = kIdle;
    f.error = "NVML error";
    t.Add(kStart + 30 * kS, f);
  } else if (kind == "paused") {
    t.Add(kStart + 30 * kS, kIdle, true);
  } else if (kind == "ambiguous") {
    t.Add(kStart + 30 * kS, Snap({{Proc(5, 0, "container-ambiguous")}}));
  } else if (kind == "unattributed") {
    t.Add(kStart + 30 * kS, Snap({{Proc(5, std::nullopt)}}));
  } else if (kind == "no-telemetry") {
    gpu::Snapshot n = kIdle;
    n.devices[0].process_telemetry = false;
    t.Add(kStart + 30 * kS, n);
  }
  t.Every(kStart + 32 * kS, kStart + 200 * kS, 2 * kS, kIdle);
  auto at = FirstReclaim(Booking(), t.views(), R(60, 2));
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(t.at(*at), kStart + 92 * kS);
}

INSTANTIATE_TEST_SUITE_P(Untrustworthy, RestartTest,
                         ::testing::Values("failed", "paused", "ambiguous", "unattributed", "no-telemetry"));

TEST(ReclaimTest, GapRestartsTheCount) {
  Timeline t;
  t.Every(kStart, kStart + 30 * kS, 2 * kS, kIdle);             // ... +28
  t.Every(kStart + 33 * kS, kStart + 200 * kS, 2 * kS, kIdle);  // 5 s gap > 2 x 2 s
  auto at = FirstReclaim(Booking(), t.views(), R(60, 2));
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(t.at(*at), kStart + 93 * kS);
}

TEST(ReclaimTest, TwiceTheIntervalIsNotAGap) {
  Timeline t;
  t.Every(kStart, kStart + 30 * kS, 2 * kS, kIdle);             // ... +28
  t.Every(kStart + 32 * kS, kStart + 200 * kS, 4 * kS, kIdle);  // every 4 s = 2 x interval
  auto at = FirstReclaim(Booking(), t.views(), R(60, 2));
  ASSERT_TRUE(at.has_value());
  EXPECT_EQ(t.at(*at), kStart + 60 * kS);
}

TEST(ReclaimTest, ClockGoingBackIsAGap) {
  Streak s{kStart, kStart + 50 * kS, std::nullopt};
  SampleView v{kStart + 40 * kS, false, false, &kIdle};
  Step step = Advance(s, Booking(), v, R(60, 2));
  EXPECT_TRUE(step.gap);
  EXPECT_EQ(step.next.since_ms, kStart + 40 * kS);
  EXPECT_FALSE(step.reclaim);
}

TEST(ReclaimTest, OffWhenReclaimAfterIsZero) {
  Timeline t;
  t.Every(kStart, kStart + 3600 * kS, 2 * kS, kIdle);
  EXPECT_FALSE(FirstReclaim(Booking(), t.views(), R(0, 2)).has_value());
}

TEST(ReclaimTest, MultiGpuBookingNeedsEveryGpuClean) {
  Timeline t;
  t.Every(kStart, kStart + 200 * kS, 2 * kS, Snap({{}, {Proc(3, kOwner)}}));
  EXPECT_FALSE(FirstReclaim(Booking({0, 1}), t.views(), R(60, 2)).has_value());
  Timeline u;
  u.Every(kStart, kStart + 200 * kS, 2 * kS, Snap({{}, {}}));
  EXPECT_TRUE(FirstReclaim(Booking({0, 1}), u.views(), R(60, 2)).has_value());
}

TEST(ReclaimTest, ReasonNamesOwnerGpusAndDuration) {
  Streak s{kStart, kStart + 58 * kS, std::nullopt};
  std::string why = ReclaimReason(Booking({0, 2}), "alice", s, kStart + 3600 * kS, R(3600, 2));
  EXPECT_NE(why.find("alice"), std::string::npos) << why;
  EXPECT_NE(why.find("GPU 0,2"), std::string::npos) << why;
  EXPECT_NE(why.find("1h"), std::string::npos) << why;
  EXPECT_NE(why.find("reclaim_after_seconds=3600"), std::string::npos) << why;
}

}  // namespace
}  // namespace bk::monitor
