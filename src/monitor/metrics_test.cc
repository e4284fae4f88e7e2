#include "monitor/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "base/temp_dir_testing.h"

namespace bk::monitor {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kNow = 1767225600;  // 2026-01-01 00:00:00 UTC

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from < text.size()) {
    const size_t nl = text.find('\n', from);
    out.push_back(text.substr(from, nl - from));
    from = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

std::vector<std::string> Prefixed(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& line : Lines(text)) {
    if (line.starts_with(prefix)) out.push_back(line);
  }
  return out;
}

// The lines of one family's samples (name or name_suffix, then '{' or ' ').
std::vector<std::string> Samples(const std::string& text, const std::string& family) {
  std::vector<std::string> out;
  for (const auto& line : Lines(text)) {
    if (line.starts_with('#') || !line.starts_with(family)) continue;
    const char next = line[family.size()];
    if (next == '{' || next == ' ' || next == '_') out.push_back(line);
  }
  return out;
}

gpu::DeviceSample Device(int index, std::optional<int> util, std::optional<int64_t> used_mb,
                         std::optional<int> temp) {
  gpu::DeviceSample d;
  d.index = index;
  d.uuid = "GPU-" + std::to_string(index) + "abc";
  d.name = "NVIDIA H200";
  d.utilization_percent = util;
  d.memory_used_mb = used_mb;
  d.memory_total_mb = 143771;
  d.temperature_c = temp;
  return d;
}

engine::Reservation Booking(const std::string& id, const std::string& user, std::vector<int> gpus,
                            engine::Mode mode, int64_t start, int64_t end) {
  engine::Reservation r;
  r.id = id;
  r.uid = 1000;
  r.username = user;
  r.gpus = std::move(gpus);
  r.mode = mode;
  r.start = start;
  r.end = end;
  return r;
}

class RenderTest : public ::testing::Test {
 protected:
  RenderTest() {
    snapshot_.devices = {Device(0, 87, 2048, 45), Device(1, 0, 0, std::nullopt)};
    requests_.Record("booking.create", 0.0003, true);
    requests_.Record("booking.create", 0.002, true);
    requests_.Record("booking.create", 0.3, false);
    requests_.Record("booking.create", 5.0, true);
    requests_.Record("status.get", 0.001, true);  // exactly on a bound: counted in it

    in_.at_ms = kNow * 1000 + 250;
    in_.snapshot = &snapshot_;
    in_.gpu_count = 2;
    in_.now = kNow;
    in_.bookings = {
        Booking("aaaaaaaa-0000-4000-8000-000000000001", "alice", {0}, engine::Mode::kShared, kNow - 600,
                kNow + 3000),
        Booking("bbbbbbbb-0000-4000-8000-000000000002", "bob", {1}, engine::Mode::kExclusive, kNow - 1200,
                kNow + 1800),
        Booking("cccccccc-0000-4000-8000-000000000003", "alice", {0, 1}, engine::Mode::kShared, kNow + 3600,
                kNow + 7200),
    };
    ReclaimDecision noshow;
    noshow.reservation_id = "bbbbbbbb-0000-4000-8000-000000000002";
    noshow.username = "bob";
    noshow.verdict = "no-use";
    noshow.streak_ms = 600500;
    noshow.threshold_ms = 3600000;
    ReclaimDecision used = noshow;
    used.reservation_id = "aaaaaaaa-0000-4000-8000-000000000001";
    used.username = "alice";
    used.verdict = "use";
    used.streak_ms = 0;
    in_.decisions = {noshow, used};
    in_.reclaims_total = 3;
    in_.samples_total = 1234;
    in_.sample_ok = true;
    in_.requests = &requests_;
    in_.ledger_bytes = 98304;
    in_.ledger_reservations = 57;
  }

  gpu::Snapshot snapshot_;
  RequestStats requests_;
  MetricsInput in_;
};

TEST_F(RenderTest, GpuTelemetryInBaseUnitsAndUnknownValuesLeftOut) {
  const std::string text = RenderMetrics(in_);
  const auto lines = Lines(text);
  EXPECT_THAT(lines, Contains("gpubk_gpus 2"));
  EXPECT_THAT(lines, Contains("gpubk_gpu_info{gpu=\"0\",name=\"NVIDIA H200\",uuid=\"GPU-0abc\"} 1"));
  EXPECT_THAT(lines, Contains("gpubk_gpu_utilization_ratio{gpu=\"0\"} 0.87"));
  EXPECT_THAT(lines, Contains("gpubk_gpu_utilization_ratio{gpu=\"1\"} 0"));
  EXPECT_THAT(lines, Contains("gpubk_gpu_memory_used_bytes{gpu=\"0\"} 2147483648"));
  EXPECT_THAT(lines, Contains("gpubk_gpu_memory_total_bytes{gpu=\"1\"} 150754820096"));
  EXPECT_THAT(Samples(text, "gpubk_gpu_temperature_celsius"),
              ::testing::ElementsAre("gpubk_gpu_temperature_celsius{gpu=\"0\"} 45"));
}

TEST_F(RenderTest, EveryGpuHasOneBookedSeriesWithTheRunningBookingsMode) {
  const std::string text = RenderMetrics(in_);
  EXPECT_THAT(Samples(text, "gpubk_gpu_booked"),
              ::testing::ElementsAre("gpubk_gpu_booked{gpu=\"0\",mode=\"shared\"} 1",
                                     "gpubk_gpu_booked{gpu=\"1\",mode=\"exclusive\"} 1"));
  in_.bookings.erase(in_.bookings.begin() + 1);  // bob's booking: GPU 1 free now
  EXPECT_THAT(Lines(RenderMetrics(in_)), Contains("gpubk_gpu_booked{gpu=\"1\",mode=\"none\"} 0"));
}

TEST_F(RenderTest, OwnersAreTheRunningBookingsOnly) {
  EXPECT_THAT(
      Samples(RenderMetrics(in_), "gpubk_gpu_booking_owner_info"),
      ::testing::ElementsAre(
          "gpubk_gpu_booking_owner_info{gpu=\"0\",mode=\"shared\",reservation=\"aaaaaaaa\",user=\"alice\"} 1",
          "gpubk_gpu_booking_owner_info{gpu=\"1\",mode=\"exclusive\",reservation=\"bbbbbbbb\",user=\"bob\"} "
          "1"));
}

TEST_F(RenderTest, BookingsCountedPerUserAndStateAndGpusHeldNow) {
  const std::string text = RenderMetrics(in_);
  EXPECT_THAT(Samples(text, "gpubk_bookings"),
              ::testing::ElementsAre("gpubk_bookings{state=\"queued\",user=\"alice\"} 1",
                                     "gpubk_bookings{state=\"running\",user=\"alice\"} 1",
                                     "gpubk_bookings{state=\"queued\",user=\"bob\"} 0",
                                     "gpubk_bookings{state=\"running\",user=\"bob\"} 1"));
  // alice's queued booking on GPUs 0 and 1 holds nothing yet.
  EXPECT_THAT(
      Samples(text, "gpubk_booked_gpus"),
      ::testing::ElementsAre("gpubk_booked_gpus{user=\"alice\"} 1", "gpubk_booked_gpus{user=\"bob\"} 1"));
}

TEST_F(RenderTest, EndedOrCancelledBookingsAreNotCounted) {
  in_.bookings[0].end = kNow;  // ended at this very second
  in_.bookings[1].status = engine::Status::kCancelled;
  const std::string text = RenderMetrics(in_);
  EXPECT_THAT(Samples(text, "gpubk_gpu_booking_owner_info"), ::testing::IsEmpty());
  EXPECT_THAT(Samples(text, "gpubk_bookings"),
              ::testing::ElementsAre("gpubk_bookings{state=\"queued\",user=\"alice\"} 1",
                                     "gpubk_bookings{state=\"running\",user=\"alice\"} 0"));
}

TEST_F(RenderTest, NoShowStreaksOnlyForNoUseVerdictsNotYetReclaimed) {
  std::string text = RenderMetrics(in_);
  EXPECT_THAT(
      Samples(text, "gpubk_noshow_streak_seconds"),
      ::testing::ElementsAre("gpubk_noshow_streak_seconds{reservation=\"bbbbbbbb\",user=\"bob\"} 600.5"));
  EXPECT_THAT(Lines(text), Contains("gpubk_noshow_threshold_seconds 3600"));
  EXPECT_THAT(Lines(text), Contains("gpubk_reclaims_total 3"));

  in_.decisions[0].reclaimed = true;
  in_.reclaim_after_ms = 0;  // the configured value wins over the decisions'
  text = RenderMetrics(in_);
  EXPECT_THAT(Samples(text, "gpubk_noshow_streak_seconds"), ::testing::IsEmpty());
  EXPECT_THAT(Lines(text), Contains("gpubk_noshow_threshold_seconds 0"));
}

TEST_F(RenderTest, MonitorHealthAndLedger) {
  in_.paused = true;
  const auto lines = Lines(RenderMetrics(in_));
  EXPECT_THAT(lines, Contains("gpubk_monitor_samples_total 1234"));
  EXPECT_THAT(lines, Contains("gpubk_monitor_sample_ok 1"));
  EXPECT_THAT(lines, Contains("gpubk_monitor_paused 1"));
  EXPECT_THAT(lines, Contains("gpubk_monitor_last_sample_timestamp_seconds 1767225600.25"));
  EXPECT_THAT(lines, Contains("gpubk_ledger_size_bytes 98304"));
  EXPECT_THAT(lines, Contains("gpubk_ledger_reservations 57"));
}

TEST_F(RenderTest, RequestCountsPerMethodAndOutcome) {
  const std::string text = RenderMetrics(in_);
  EXPECT_THAT(Samples(text, "gpubk_requests_total"),
              ::testing::ElementsAre("gpubk_requests_total{method=\"booking.create\",outcome=\"error\"} 1",
                                     "gpubk_requests_total{method=\"booking.create\",outcome=\"ok\"} 3",
                                     "gpubk_requests_total{method=\"status.get\",outcome=\"error\"} 0",
                                     "gpubk_requests_total{method=\"status.get\",outcome=\"ok\"} 1"));
}

TEST_F(RenderTest, LatencyHistogramIsCumulativeAndCountsEqualTheInfBucket) {
  const std::string text = RenderMetrics(in_);
  EXPECT_THAT(Prefixed(text, "gpubk_request_duration_seconds_bucket{method=\"booking.create\""),
              ::testing::ElementsAre(
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.0005\"} 1",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.001\"} 1",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.0025\"} 2",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.005\"} 2",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.01\"} 2",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.025\"} 2",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.05\"} 2",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.1\"} 2",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.25\"} 2",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"0.5\"} 3",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"1\"} 3",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"2.5\"} 3",
                  "gpubk_request_duration_seconds_bucket{method=\"booking.create\",le=\"+Inf\"} 4"));
  const auto lines = Lines(text);
  EXPECT_THAT(lines, Contains("gpubk_request_duration_seconds_count{method=\"booking.create\"} 4"));
  EXPECT_THAT(lines,
              Contains(HasSubstr("gpubk_request_duration_seconds_sum{method=\"booking.create\"} 5.3023")));
  EXPECT_THAT(lines, Contains("gpubk_request_duration_seconds_bucket{method=\"status.get\",le=\"0.001\"} 1"));
  EXPECT_THAT(lines, Contains("gpubk_request_duration_seconds_count{method=\"status.get\"} 1"));
}

TEST_F(RenderTest, PrivateModeHasNoRequestFamilies) {
  in_.requests = nullptr;
  in_.ledger_bytes.reset();
  const std::string text = RenderMetrics(in_);
  EXPECT_THAT(text, Not(HasSubstr("gpubk_request")));
  EXPECT_THAT(text, Not(HasSubstr("gpubk_ledger_size_bytes")));  // not even HELP and TYPE
  EXPECT_THAT(Lines(text), Contains("gpubk_ledger_reservations 57"));
}

TEST_F(RenderTest, LabelValuesAreEscaped) {
  in_.bookings[1].username = "b\"o\\b\nx";
  in_.decisions[0].username = "b\"o\\b\nx";
  const std::string text = RenderMetrics(in_);
  EXPECT_THAT(Lines(text), Contains("gpubk_booked_gpus{user=\"b\\\"o\\\\b\\nx\"} 1"));
  EXPECT_THAT(
      Lines(text),
      Contains("gpubk_noshow_streak_seconds{reservation=\"bbbbbbbb\",user=\"b\\\"o\\\\b\\nx\"} 600.5"));
}

TEST(AppendLabelValue, KeepsValidUtf8AndReplacesInvalidBytes) {
  std::string out;
  AppendLabelValue(out, "m\xC3\xBCller \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(out, "m\xC3\xBCller \xE2\x82\xAC \xF0\x9F\x98\x80");
  out.clear();
  // A lone continuation byte, a truncated sequence, an overlong '/', a surrogate.
  AppendLabelValue(out,
                   "a\x80"
                   "b\xE2\x82"
                   "c\xC0\xAF"
                   "d\xED\xA0\x80");
  EXPECT_EQ(out,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD"
            "d\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(RenderTest, DeterministicWhateverTheInputOrder) {
  const std::string first = RenderMetrics(in_);
  EXPECT_EQ(RenderMetrics(in_), first);
  std::reverse(in_.bookings.begin(), in_.bookings.end());
  std::reverse(in_.decisions.begin(), in_.decisions.end());
  EXPECT_EQ(RenderMetrics(in_), first);
}

// What `promtool check metrics` insists on, checked without it: HELP then TYPE
// once per family before its samples, samples of a family together, names
// prefixed and snake_case, counters ending in _total, no timestamps.
TEST_F(RenderTest, ExpositionFormatShape) {
  const std::string text = RenderMetrics(in_);
  ASSERT_TRUE(text.ends_with('\n'));
  const std::regex help(R"(# HELP (gpubk_[a-z0-9_]+) [^\n]+)");
  const std::regex type(R"(# TYPE (gpubk_[a-z0-9_]+) (gauge|counter|histogram))");
  const std::regex sample(R"((gpubk_[a-z0-9_]+)(\{[^}]*\})? (-?[0-9.e+-]+|\+Inf))");
  std::map<std::string, std::string> types;
  std::string current;
  std::string pending_help;
  for (const auto& line : Lines(text)) {
    std::smatch m;
    if (std::regex_match(line, m, help)) {
      EXPECT_FALSE(types.contains(m[1])) << "family twice: " << line;
      pending_help = m[1];
    } else if (std::regex_match(line, m, type)) {
      EXPECT_EQ(m[1], pending_help) << "TYPE without its HELP: " << line;
      current = m[1];
      types[current] = m[2];
      EXPECT_EQ(m[2] == "counter", current.ends_with("_total")) << current;
    } else {
      ASSERT_TRUE(std::regex_match(line, m, sample)) << "not a sample: " << line;
      std::string name = m[1];
      if (types[current] == "histogram") {
        for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
          if (name.ends_with(suffix)) name.resize(name.size() - suffix.size());
        }
      }
      EXPECT_EQ(name, current) << "sample outside its family: " << line;
    }
  }
  EXPECT_EQ(types.size(), 21u);
}

TEST(RequestStats, NegativeAndNonFiniteDurationsCountAsZero) {
  RequestStats s;
  s.Record("m", -1, true);
  s.Record("m", std::numeric_limits<double>::quiet_NaN(), true);
  s.Record("m", std::numeric_limits<double>::infinity(), false);
  const MethodStats& m = s.methods.at("m");
  EXPECT_EQ(m.buckets[0], 3);
  EXPECT_EQ(m.sum_seconds, 0);
  EXPECT_EQ(m.ok, 2);
  EXPECT_EQ(m.error, 1);
  EXPECT_EQ(m.count(), 3);
}

TEST(RequestStats, MethodsPastTheLimitShareOneSeries) {
  RequestStats s;
  for (size_t i = 0; i < RequestStats::kMaxMethods + 10; ++i) s.Record("m" + std::to_string(i), 0.01, true);
  EXPECT_EQ(s.methods.size(), RequestStats::kMaxMethods + 1);
  EXPECT_EQ(s.methods.at(std::string(RequestStats::kOtherMethod)).ok, 10);
  s.Record("m0", 0.01, true);  // known methods keep their own series
  EXPECT_EQ(s.methods.at("m0").ok, 2);
}

}  // namespace
}  // namespace bk::monitor
