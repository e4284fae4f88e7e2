#pragma once
// Prometheus metrics as a node_exporter "textfile collector" file: GPU
// telemetry, bookings, no-show streaks, the monitor's own health and the
// daemon's request counts and latencies, in the text exposition format 0.0.4.
//
// Rendering is pure (no clock, no I/O): the caller gathers a MetricsInput after
// each monitor sample and hands the text to sys::WriteFileAtomic, which replaces the
// file atomically so node_exporter never reads half of it. The output is
// deterministic (families in a fixed order, series sorted by their labels).
// Samples carry no timestamps: node_exporter refuses textfiles that have them.
//
// Not thread-safe: RequestStats is recorded and read on one thread (the
// daemon's event loop, where both the dispatcher and the monitor's ingest run).

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "engine/reservation.h"
#include "gpu/snapshot.h"
#include "monitor/monitor.h"

namespace bk::monitor {

// Upper bounds (seconds) of the request latency histogram; +Inf is implicit.
inline constexpr std::array<double, 12> kLatencyBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                           0.05,   0.1,   0.25,   0.5,   1.0,  2.5};

struct MethodStats {
  int64_t ok = 0;
  int64_t error = 0;
  // Per bucket, not cumulative (the renderer accumulates); the last is +Inf.
  std::array<int64_t, kLatencyBuckets.size() + 1> buckets{};
  double sum_seconds = 0;
  int64_t count() const { return ok + error; }
};

// Request counts and latencies per RPC method since the daemon started.
struct RequestStats {
  // A method name becomes a label value, so the set must stay small: callers
  // record known method names only, and past this many distinct names the
  // rest are counted under kOtherMethod rather than growing without bound.
  static constexpr size_t kMaxMethods = 128;
  static constexpr std::string_view kOtherMethod = "other";

  std::map<std::string, MethodStats, std::less<>> methods;

  // A negative, NaN or infinite duration counts as 0 (a clock step must not
  // lose the request, nor poison _sum).
  void Record(std::string_view method, double seconds, bool ok);
};

// One monitor sample and the state around it, gathered by the caller.
struct MetricsInput {
  int64_t at_ms = 0;                        // sample time (epoch ms)
  const gpu::Snapshot* snapshot = nullptr;  // nullptr: no GPU telemetry series
  int gpu_count = 0;
  std::vector<engine::Reservation> bookings;  // active and not ended: running and queued
  int64_t now = 0;                            // epoch seconds
  std::vector<ReclaimDecision> decisions;     // this sample's no-show verdicts
  // The reclaim threshold (0: reclaiming is off); when unset, the decisions'
  // threshold_ms is used, and without decisions the series is left out.
  std::optional<int64_t> reclaim_after_ms;
  int64_t reclaims_total = 0;  // since the process started
  int64_t samples_total = 0;
  bool sample_ok = false;
  bool paused = false;
  const RequestStats* requests = nullptr;  // nullptr in private mode (no daemon)
  std::optional<int64_t> ledger_bytes;
  std::optional<int64_t> ledger_reservations;
};

// The whole textfile, ending in a newline. A family without samples is left
// out entirely (no HELP/TYPE lines either).
std::string RenderMetrics(const MetricsInput& in);

// Label value escaping of the exposition format (backslash, double quote,
// newline); bytes that are not valid UTF-8 become U+FFFD, because one bad
// byte makes node_exporter drop the whole file.
void AppendLabelValue(std::string& out, std::string_view value);

}  // namespace bk::monitor
