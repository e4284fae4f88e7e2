#include "monitor/usage_trend.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace bk::monitor {
namespace {

constexpr int kBarCells = 24;
constexpr const char* kUsedCell = "━";
constexpr const char* kIdleCell = "─";

// Local dates as day numbers (days since 1970-01-01), so weeks are arithmetic.
int64_t DayNumber(const engine::CivilTime& c) {
  int64_t t = engine::CivilToEpoch({c.year, c.month, c.day, 0, 0, 0});
  return t / engine::kDay;
}
int64_t LocalDay(int64_t t, const engine::Zone& zone) { return DayNumber(zone.ToLocal(t)); }
engine::CivilTime DayCivil(int64_t day) { return engine::EpochToCivil(day * engine::kDay); }
int64_t MondayOf(int64_t day) { return day - (engine::Weekday(day * engine::kDay) + 6) % 7; }

// Python's round(): halves go to the even neighbour, as the original's bars.
int64_t RoundHalfEven(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

// Cells of one bar: (used, booked but idle), scaled to the set's largest
// booked time; nothing booked draws nothing, even with use outside a booking.
std::pair<int64_t, int64_t> BarCells(double active_h, double reserved_h, double peak_h) {
  if (peak_h <= 0 || reserved_h <= 0) return {0, 0};
  int64_t reserved = std::max<int64_t>(1, RoundHalfEven(reserved_h / peak_h * kBarCells));
  int64_t active = std::min(reserved, RoundHalfEven(active_h / peak_h * kBarCells));
  return {active, reserved - active};
}

std::string Repeat(const char* cell, int64_t n) {
  std::string s;
  for (int64_t i = 0; i < n; ++i) s += cell;
  return s;
}

std::string Rows(const std::vector<TrendRow>& rows, bool weekday) {
  constexpr const char* kWeekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  double peak = 0;
  for (const TrendRow& r : rows) peak = std::max(peak, r.reserved_ms / 3.6e6);
  std::string out;
  for (const TrendRow& r : rows) {
    const double active = r.active_ms / 3.6e6, reserved = r.reserved_ms / 3.6e6;
    auto [used, idle] = BarCells(active, reserved, peak);
    std::string label = fmt::format("{:02}-{:02}", r.day.month, r.day.day);
    if (weekday) label = fmt::format("{} {}", kWeekdays[engine::Weekday(engine::CivilToEpoch(r.day))], label);
    std::string line =
        fmt::format("  {:<9} {}{}{} {:>6.1f}/{:<6.1f}", label, Repeat(kUsedCell, used),
                    Repeat(kIdleCell, idle), std::string(kBarCells - used - idle, ' '), active, reserved);
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  return out;
}

}  // namespace

int64_t TrendStart(int64_t end, const engine::Zone& zone) {
  engine::CivilTime first = DayCivil(MondayOf(LocalDay(end, zone)) - 7 * (kTrendWeeks - 1));
  return zone.FromLocal(first);
}

ActivityTrend BuildActivityTrend(std::span<const store::RollupRow> rows, int64_t end,
                                 const engine::Zone& zone) {
  const int64_t today = LocalDay(end, zone);
  const int64_t first_day = today - (kTrendDays - 1);
  const int64_t this_week = MondayOf(today);
  const int64_t first_week = this_week - 7 * (kTrendWeeks - 1);
  ActivityTrend t;
  for (int64_t d = first_day; d <= today; ++d) t.days.push_back({DayCivil(d)});
  for (int64_t w = first_week; w <= this_week; w += 7) t.weeks.push_back({DayCivil(w)});
  for (const store::RollupRow& r : rows) {
    const int64_t day = LocalDay(r.window_start, zone);
    const int64_t reserved = r.status == "ok" ? r.observed_ms : 0;
    auto add = [&](TrendRow& row) {
      row.active_ms += r.active_ms;
      row.reserved_ms += reserved;
    };
    if (day >= first_day && day <= today) add(t.days[day - first_day]);
    const int64_t week = MondayOf(day);
    if (week >= first_week && week <= this_week) add(t.weeks[(week - first_week) / 7]);
  }
  return t;
}

std::string TrendText(const ActivityTrend& trend) {
  return "ACTIVITY TREND\nLast 7 days\n" + Rows(trend.days, true) + "Last 4 weeks\n" +
         Rows(trend.weeks, false);
}

}  // namespace bk::monitor
