#include "agent/gpu_history.h"

#include <gtest/gtest.h>

#include <vector>

namespace bk::agent {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;  // a minute boundary
constexpr int64_t kMinute = 60'000;

store::DeviceRow Row(int64_t ts_ms, int gpu, int64_t util, int64_t used, int64_t processes = 0) {
  store::DeviceRow r;
  r.ts_ms = ts_ms;
  r.gpu = gpu;
  r.state = "ok";
  r.source = "simulation";
  r.utilization_percent = util;
  r.memory_used_mb = used;
  r.memory_total_mb = 81920;
  r.process_count = processes;
  return r;
}

TEST(GpuHistory, OneBusySampleIsTheWholeHistory) {
  std::vector<store::DeviceRow> rows = {Row(kNow - kMinute, 1, 87, 40960, 1)};
  auto h = SummarizeGpuHistory(rows, 4, kNow);
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[1].sample_count, 1);
  EXPECT_DOUBLE_EQ(h[1].average_utilization_percent, 87.0);
  EXPECT_DOUBLE_EQ(h[1].memory_percent, 50.0);
  EXPECT_DOUBLE_EQ(h[1].busy_fraction, 1.0);
  // 87 x 0.65 + 1 x 25 + 50 x 0.10
  EXPECT_DOUBLE_EQ(h[1].predicted_percent, 86.55);
  EXPECT_EQ(h[0].sample_count, 0);
  EXPECT_DOUBLE_EQ(h[0].predicted_percent, 0.0);
}

TEST(GpuHistory, NewerMinutesWeighMore) {
  // Ten minutes (one half-life) apart: weights 1 and 1/2.
  std::vector<store::DeviceRow> rows = {Row(kNow - kMinute, 0, 100, 0), Row(kNow - 11 * kMinute, 0, 0, 0)};
  auto h = SummarizeGpuHistory(rows, 1, kNow);
  EXPECT_EQ(h[0].sample_count, 2);
  EXPECT_DOUBLE_EQ(h[0].average_utilization_percent, 66.667);
  EXPECT_DOUBLE_EQ(h[0].busy_fraction, 0.6667);  // util 100% is busy, 0% with no memory is idle
}

TEST(GpuHistory, SamplesWithoutTelemetryOrOutsideTheWindowDoNotCount) {
  store::DeviceRow failed = Row(kNow - kMinute, 0, 90, 0);
  failed.state = "failed";
  store::DeviceRow none = Row(kNow - kMinute, 0, 90, 0);
  none.source = "none";
  std::vector<store::DeviceRow> rows = {failed, none, Row(kNow - 122 * kMinute, 0, 90, 0),
                                        Row(kNow - kMinute, 7, 90, 0), Row(kNow - kMinute, -1, 90, 0)};
  auto h = SummarizeGpuHistory(rows, 2, kNow);
  EXPECT_EQ(h[0].sample_count, 0);
  EXPECT_EQ(h[1].sample_count, 0);
  // Two hours back is still in the window.
  rows = {Row(kNow - 121 * kMinute, 0, 90, 0)};
  EXPECT_EQ(SummarizeGpuHistory(rows, 1, kNow)[0].sample_count, 1);
}

}  // namespace
}  // namespace bk::agent
