#pragma once
// How a reader classifies the monitor's heartbeat row in usage.db: the
// monitor rewrites it with every sample, so a row older than stale_after means the monitor is gone or hung.
//
//   not-seen    no heartbeat was ever written
//   running     fresh, every GPU sampled with process telemetry
//   degraded    fresh, but a sample failed or some GPU/process lacks telemetry
//   paused      fresh, sampling paused during an exclusive window
//   stale       no write for longer than stale_after (the monitor died or hangs)
//   stopped     the monitor stopped gracefully
//   clock-skew  written more than 5 minutes in the future
//   not-recording  the live monitor samples but cannot write usage.db (a full
//               disk, say); only the daemon, which runs it, can tell

#include <cstdint>
#include <optional>
#include <string>

#include "store/usage_store.h"

namespace bk::monitor {

struct Collector {
  std::string state = "not-seen";
  bool fresh = false;  // the only signal a consumer should treat as current
  std::optional<int64_t> age_ms;
  int64_t stale_after_ms = 30000;
  std::optional<store::HeartbeatRow> row;
  std::string not_recording;  // why the live monitor's samples are not being recorded
};

// max(30 s, 5 x interval)
int64_t StaleAfterMs(int64_t interval_ms);
Collector ClassifyHeartbeat(const std::optional<store::HeartbeatRow>& row, int64_t now_ms);
// "collector: running age=2s", "collector: degraded age=2s (GPU 1 has no process telemetry)", ...
std::string CollectorLine(const Collector& c);
// "0s", "45s", "1h30m" (seconds below a minute, then engine::FormatDuration).
std::string DurationText(int64_t seconds);

}  // namespace bk::monitor
