#include "service/advice.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace bk::service {
namespace {

// Between equal scores: idle first, then unknown, then busy.
int StateRank(gpu::LiveStatus s) {
  switch (s) {
    case gpu::LiveStatus::kIdle: return 0;
    case gpu::LiveStatus::kUnknown: return 1;
    case gpu::LiveStatus::kBusy: return 2;
  }
  return 2;
}

}  // namespace

Advice BuildAdvice(const gpu::Snapshot& snapshot, const engine::Policy& policy) {
  Advice a;
  int n = policy.gpu_count;
  a.views.resize(n);
  a.engine.scores.assign(n, 45.0);
  a.engine.memory_total_mb.assign(n, std::nullopt);
  for (int g = 0; g < n; ++g) {
    GpuView& v = a.views[g];
    v.gpu = g;
    v.priority = policy.Priority(g);
    if (g < static_cast<int>(snapshot.devices.size())) {
      const gpu::DeviceSample& d = snapshot.devices[g];
      gpu::LiveState live = gpu::ClassifyLive(d);
      v.live_status = live.status;
      v.live_reason = live.reason;
      v.load_score = std::round(live.score * 1000) / 1000;
      v.utilization_percent = d.utilization_percent;
      if (d.source != gpu::Source::kNone && d.memory_total_mb && *d.memory_total_mb > 0) {
        v.memory_total_mb = d.memory_total_mb;
        v.memory_free_mb = *d.memory_total_mb - d.memory_used_mb.value_or(0);
        a.engine.memory_total_mb[g] = d.memory_total_mb;
        a.any_memory_telemetry = true;
      }
    }
    a.engine.scores[g] = v.load_score;
  }
  a.engine.order.resize(n);
  std::iota(a.engine.order.begin(), a.engine.order.end(), 0);
  std::stable_sort(a.engine.order.begin(), a.engine.order.end(), [&](int x, int y) {
    const GpuView& vx = a.views[x];
    const GpuView& vy = a.views[y];
    return std::tuple(vx.load_score, StateRank(vx.live_status), x) <
           std::tuple(vy.load_score, StateRank(vy.live_status), y);
  });
  return a;
}

}  // namespace bk::service
