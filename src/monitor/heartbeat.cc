#include "monitor/heartbeat.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/parse.h"

namespace bk::monitor {

std::string DurationText(int64_t seconds) {
  if (seconds < 60) return fmt::format("{}s", std::max<int64_t>(0, seconds));
  return engine::FormatDuration(seconds);
}

int64_t StaleAfterMs(int64_t interval_ms) { return std::max<int64_t>(30000, 5 * interval_ms); }

Collector ClassifyHeartbeat(const std::optional<store::HeartbeatRow>& row, int64_t now_ms) {
  Collector c;
  if (!row) return c;
  c.row = row;
  c.stale_after_ms = StaleAfterMs(row->interval_ms);
  c.age_ms = now_ms - row->written_ms;
  if (*c.age_ms < -300000) {
    c.state = "clock-skew";
  } else if (row->status == "stopped") {
    c.state = "stopped";
  } else if (*c.age_ms > c.stale_after_ms) {
    c.state = "stale";
  } else {
    c.state = row->status;
    c.fresh = true;
  }
  return c;
}

std::string CollectorLine(const Collector& c) {
  if (c.state == "not-seen") return "collector: not-seen (no monitor heartbeat has been recorded)";
  if (c.state == "not-recording")
    return "collector: not-recording (sampling, but cannot record: " + Printable(c.not_recording) + ")";
  std::string age = DurationText(c.age_ms.value_or(0) / 1000);
  if (c.state == "stopped")
    return fmt::format("collector: stopped at={}",
                       engine::FormatIsoUtc(c.row->stopped_ms.value_or(c.row->written_ms) / 1000));
  std::string line = fmt::format("collector: {} age={}", c.state, age);
  if ((c.state == "degraded" || c.state == "paused") && !c.row->detail.empty())
    line += " (" + Printable(c.row->detail) + ")";
  return line;
}

}  // namespace bk::monitor
