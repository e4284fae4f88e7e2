#include "agent/gpu_history.h"

#include <cmath>
#include <map>

#include "gpu/snapshot.h"
#include "monitor/runner.h"
#include "sys/fs.h"

namespace bk::agent {
namespace {

constexpr int64_t kWindowMs = 120 * 60 * 1000;
constexpr int64_t kBucketMs = 60 * 1000;
constexpr double kHalfLifeMinutes = 10;
// Two hours of 2 s samples on the largest hosts, with room to spare.
constexpr int kMaxRows = 500000;

// One minute of one GPU: sums over its samples with telemetry.
struct Bucket {
  int64_t samples = 0;
  double util = 0, memory = 0, busy = 0;
};

// A recorded row as the live sample it was, for the live classification:
// busy by the same rule as `bk st`, from the process count usage.db keeps.
gpu::DeviceSample AsSample(const store::DeviceRow& r) {
  gpu::DeviceSample d;
  d.index = r.gpu;
  d.source = gpu::Source::kSimulation;  // anything but "none": the row has telemetry
  d.utilization_percent =
      r.utilization_percent ? std::optional(static_cast<int>(*r.utilization_percent)) : std::nullopt;
  d.memory_used_mb = r.memory_used_mb;
  d.memory_total_mb = r.memory_total_mb;
  d.processes.resize(static_cast<size_t>(std::max<int64_t>(0, r.process_count)));
  return d;
}

double Round(double v, double scale) { return std::round(v * scale) / scale; }

}  // namespace

std::vector<GpuHistory> SummarizeGpuHistory(std::span<const store::DeviceRow> rows, int gpu_count,
                                            int64_t now_ms) {
  std::vector<std::map<int64_t, Bucket>> buckets(static_cast<size_t>(std::max(0, gpu_count)));
  for (const store::DeviceRow& r : rows) {
    if (r.gpu < 0 || r.gpu >= gpu_count || r.state != "ok" || r.source == "none") continue;
    int64_t start = r.ts_ms - ((r.ts_ms % kBucketMs) + kBucketMs) % kBucketMs;
    if (now_ms - (start + kBucketMs) > kWindowMs) continue;
    Bucket& b = buckets[static_cast<size_t>(r.gpu)][start];
    ++b.samples;
    b.util += static_cast<double>(std::clamp<int64_t>(r.utilization_percent.value_or(0), 0, 100));
    if (r.memory_total_mb && *r.memory_total_mb > 0)
      b.memory +=
          std::min(100.0, 100.0 * static_cast<double>(r.memory_used_mb.value_or(0)) / *r.memory_total_mb);
    b.busy += gpu::ClassifyLive(AsSample(r)).status == gpu::LiveStatus::kBusy ? 1 : 0;
  }
  std::vector<GpuHistory> out(buckets.size());
  for (size_t g = 0; g < buckets.size(); ++g) {
    double weight_sum = 0, util = 0, busy = 0, memory = 0;
    for (const auto& [start, b] : buckets[g]) {
      double age_minutes = std::max<double>(0, static_cast<double>(now_ms - (start + kBucketMs)) / 60000.0);
      double weight =
          std::exp(-std::log(2.0) * age_minutes / kHalfLifeMinutes) * static_cast<double>(b.samples);
      util += weight * b.util / b.samples;
      busy += weight * b.busy / b.samples;
      memory += weight * b.memory / b.samples;
      weight_sum += weight;
      out[g].sample_count += b.samples;
    }
    if (weight_sum <= 0) continue;
    util /= weight_sum, busy /= weight_sum, memory /= weight_sum;
    out[g].predicted_percent = Round(std::min(100.0, util * 0.65 + busy * 25.0 + memory * 0.10), 1000);
    out[g].average_utilization_percent = Round(util, 1000);
    out[g].busy_fraction = Round(busy, 10000);
    out[g].memory_percent = Round(memory, 1000);
  }
  return out;
}

std::vector<GpuHistory> ReadGpuHistory(const config::Config& config, bool direct, uid_t owner, int gpu_count,
                                       int64_t now_ms) {
  std::vector<GpuHistory> none(static_cast<size_t>(std::max(0, gpu_count)));
  const std::string path = monitor::UsagePath(config);
  if (!direct || !sys::Exists(path)) return none;
  store::UsageOpenOptions o{path, false, owner, static_cast<int>(config.lock_timeout_seconds * 1000)};
  auto usage = store::UsageStore::Open(o);
  // The history only refines advice: an unreadable usage.db (bk u reports
  // why) must not cost the agent its context.
  if (!usage) return none;
  auto rows = (*usage)->Devices(now_ms - kWindowMs - kBucketMs, now_ms + 1, kMaxRows);
  if (!rows) return none;
  return SummarizeGpuHistory(*rows, gpu_count, now_ms);
}

}  // namespace bk::agent
