#include "monitor/rollup.h"

#include <fmt/format.h>

#include <algorithm>

namespace bk::monitor {

namespace {

// What one (gpu, uid, status) group saw in one sample.
struct SampleGroup {
  std::string username;
  int64_t processes = 0;
  int64_t memory_mb = 0;
  int64_t sm_sum = 0;
  bool sm_seen = false;
  bool inferred = false;
};

}  // namespace

Status CheckRollup(double rollup_s, int64_t interval_ms) {
  if (rollup_s != static_cast<double>(RollupAggregator::kWindowSeconds))
    return Invalid(fmt::format("--rollup {}: usage.db records one-minute rollups, so only {} is accepted",
                               rollup_s, RollupAggregator::kWindowSeconds));
  if (interval_ms <= 0 || (RollupAggregator::kWindowSeconds * 1000) % interval_ms != 0)
    return Invalid("monitor_rollup_seconds must be an integer multiple of monitor_interval_seconds");
  return Ok();
}

void RollupAggregator::Add(int64_t at_ms, int64_t interval_ms, const gpu::Snapshot& snapshot,
                           const std::vector<std::vector<Classified>>& classified,
                           std::span<const ActiveBooking> bookings) {
  const int64_t at_s = at_ms / 1000;
  const int64_t window = at_s - at_s % kWindowSeconds;
  for (size_t i = 0; i < snapshot.devices.size(); ++i) {
    const gpu::DeviceSample& d = snapshot.devices[i];
    if (d.source == gpu::Source::kNone || !d.process_telemetry) continue;
    const int gpu = static_cast<int>(i);
    std::map<std::pair<uint32_t, std::string>, SampleGroup> here;
    for (const ActiveBooking& b : bookings)
      if (std::find(b.gpus.begin(), b.gpus.end(), gpu) != b.gpus.end())
        here[{b.uid, "ok"}].username = b.username;
    for (size_t j = 0; j < d.processes.size() && j < classified[i].size(); ++j) {
      const gpu::ProcessSample& p = d.processes[j];
      const std::string& status = classified[i][j].status;
      if (status == "system" || status == "unknown" || !p.uid) continue;
      SampleGroup& g = here[{*p.uid, status}];
      if (g.username.empty() || g.username == "?") g.username = p.username;
      ++g.processes;
      g.memory_mb += p.gpu_memory_mb;
      if (p.sm_utilization_percent) {
        g.sm_sum += *p.sm_utilization_percent;
        g.sm_seen = true;
      }
      if (p.identity_source == "container-reservation") g.inferred = true;
    }
    for (auto& [who, g] : here) {
      store::RollupRow& r = groups_[Key{window, gpu, who.first, who.second}];
      r.window_start = window;
      r.resolution = kWindowSeconds;
      r.gpu = gpu;
      r.uid = who.first;
      r.status = who.second;
      if (!g.username.empty()) r.username = g.username;
      ++r.samples;
      r.observed_ms += interval_ms;
      if (g.processes > 0) {
        ++r.active_samples;
        r.active_ms += interval_ms;
        if (g.inferred) r.inferred_ms += interval_ms;
      }
      r.process_sum += g.processes;
      r.process_max = std::max(r.process_max, g.processes);
      if (g.sm_seen) {
        r.sm_sum += g.sm_sum;
        ++r.sm_count;
        r.sm_max = std::max(r.sm_max, g.sm_sum);
      }
      r.memory_sum_mb += g.memory_mb;
      r.memory_max_mb = std::max(r.memory_max_mb, g.memory_mb);
      if (d.utilization_percent) {
        r.util_sum += *d.utilization_percent;
        ++r.util_count;
        r.util_max = std::max<int64_t>(r.util_max, *d.utilization_percent);
      }
    }
  }
}

std::vector<store::RollupRow> RollupAggregator::TakeClosed(int64_t at_ms) {
  std::vector<store::RollupRow> out;
  const int64_t at_s = at_ms / 1000;
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (std::get<0>(it->first) + kWindowSeconds <= at_s) {
      out.push_back(std::move(it->second));
      it = groups_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

std::vector<store::RollupRow> RollupAggregator::TakeAll() {
  std::vector<store::RollupRow> out;
  for (auto& [k, r] : groups_) out.push_back(std::move(r));
  groups_.clear();
  return out;
}

}  // namespace bk::monitor
