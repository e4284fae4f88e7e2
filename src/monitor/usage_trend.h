#pragma once
// The ACTIVITY TREND of `bk u me`: a user's used (active) and booked GPU time
// per local day over the last 7 days and per week (from Monday) over the last
// 4, drawn as bars. Built from the hourly rollups usage.db already holds, so
// it agrees with every other usage view.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/civil_time.h"
#include "store/usage_store.h"

namespace bk::monitor {

struct TrendRow {
  engine::CivilTime day;    // local date the row starts (a Monday for weeks)
  int64_t active_ms = 0;    // with a process, whatever its status
  int64_t reserved_ms = 0;  // observed while booked (status ok)
};

struct ActivityTrend {
  std::vector<TrendRow> days;   // 7, oldest first, the last one holds `end`
  std::vector<TrendRow> weeks;  // 4, oldest first, the last one holds `end`
};

inline constexpr int kTrendDays = 7;
inline constexpr int kTrendWeeks = 4;

// The first instant the trend covers: local midnight of the oldest week's
// Monday before `end` (epoch seconds).
int64_t TrendStart(int64_t end, const engine::Zone& zone);

// Sums hourly rollup rows (any uid: the caller selects) into local days and
// weeks; rows outside the shown days are ignored.
ActivityTrend BuildActivityTrend(std::span<const store::RollupRow> rows, int64_t end,
                                 const engine::Zone& zone);

// The section as text, 50 columns wide: "ACTIVITY TREND", then "Last 7 days"
// rows labelled `Mon 11-23` and "Last 4 weeks" rows labelled `11-02`, each
// `active_hours/reserved_hours` with a bar of 24 cells scaled to the largest
// booked time of its set: heavy cells used, light cells booked but idle.
std::string TrendText(const ActivityTrend& trend);

}  // namespace bk::monitor
