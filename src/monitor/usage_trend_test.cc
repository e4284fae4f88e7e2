#include "monitor/usage_trend.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace bk::monitor {
namespace {

// Sunday 2026-11-29 18:49 UTC: the week began on Monday 11-23.
const int64_t kEnd = engine::CivilToEpoch({2026, 11, 29, 18, 49, 0});

store::RollupRow Hourly(engine::CivilTime at, std::string status, int64_t active_min, int64_t observed_min) {
  store::RollupRow r;
  r.window_start = engine::CivilToEpoch(at);
  r.resolution = 3600;
  r.status = std::move(status);
  r.active_ms = active_min * 60'000;
  r.observed_ms = observed_min * 60'000;
  return r;
}

std::vector<std::string> Days(const std::vector<TrendRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(std::to_string(r.day.month) + "-" + std::to_string(r.day.day));
  return out;
}

TEST(UsageTrend, SevenLocalDaysAndFourMondayWeeks) {
  engine::FixedZone utc(0);
  EXPECT_EQ(TrendStart(kEnd, utc), engine::CivilToEpoch({2026, 11, 2, 0, 0, 0}));
  std::vector<store::RollupRow> rows = {
      Hourly({2026, 11, 29, 18, 0, 0}, "ok", 60, 120),        // today: booked 2 h, used 1 h
      Hourly({2026, 11, 28, 9, 0, 0}, "unreserved", 30, 30),  // used without a booking: not booked time
      Hourly({2026, 11, 10, 0, 0, 0}, "ok", 240, 240),        // a Tuesday two weeks back
      Hourly({2026, 11, 1, 23, 0, 0}, "ok", 60, 60),          // before the oldest week
      Hourly({2026, 11, 30, 0, 0, 0}, "ok", 60, 60),          // after `end`'s day
  };
  ActivityTrend t = BuildActivityTrend(rows, kEnd, utc);
  EXPECT_EQ(Days(t.days),
            (std::vector<std::string>{"11-23", "11-24", "11-25", "11-26", "11-27", "11-28", "11-29"}));
  EXPECT_EQ(Days(t.weeks), (std::vector<std::string>{"11-2", "11-9", "11-16", "11-23"}));
  EXPECT_EQ(t.days[6].active_ms, 60 * 60'000);
  EXPECT_EQ(t.days[6].reserved_ms, 120 * 60'000);
  EXPECT_EQ(t.days[5].active_ms, 30 * 60'000);
  EXPECT_EQ(t.days[5].reserved_ms, 0);
  EXPECT_EQ(t.weeks[1].reserved_ms, 240 * 60'000);
  EXPECT_EQ(t.weeks[3].active_ms, 90 * 60'000);
  EXPECT_EQ(t.weeks[3].reserved_ms, 120 * 60'000);
  EXPECT_EQ(t.weeks[0].reserved_ms, 0);
}

TEST(UsageTrend, DaysAreLocal) {
  engine::FixedZone tokyo(9 * 3600);
  const int64_t end = engine::CivilToEpoch({2026, 11, 29, 10, 0, 0});  // 19:00 in UTC+9
  // 11-28 20:00 UTC is 11-29 05:00 in UTC+9.
  std::vector<store::RollupRow> rows = {Hourly({2026, 11, 28, 20, 0, 0}, "ok", 60, 60)};
  ActivityTrend t = BuildActivityTrend(rows, end, tokyo);
  EXPECT_EQ(t.days[6].reserved_ms, 60 * 60'000);
  EXPECT_EQ(t.days[5].reserved_ms, 0);
  EXPECT_EQ(TrendStart(end, tokyo), engine::CivilToEpoch({2026, 11, 2, 0, 0, 0}) - 9 * 3600);
  // Past midnight there (Monday 11-30) a new week and a new last day begin.
  t = BuildActivityTrend(rows, kEnd, tokyo);
  EXPECT_EQ(t.days[5].reserved_ms, 60 * 60'000);
  EXPECT_EQ(t.weeks[3].day, (engine::CivilTime{2026, 11, 30}));
}

TEST(UsageTrend, BarsScaleToTheLargestBookingOfTheirSet) {
  engine::FixedZone utc(0);
  std::vector<store::RollupRow> rows = {
      Hourly({2026, 11, 29, 10, 0, 0}, "ok", 60, 240),         // 4 h booked, 1 h used: the peak
      Hourly({2026, 11, 27, 10, 0, 0}, "ok", 120, 120),        // 2 h booked and used
      Hourly({2026, 11, 26, 10, 0, 0}, "unreserved", 60, 60),  // use with nothing booked: no bar
  };
  std::string text = TrendText(BuildActivityTrend(rows, kEnd, utc));
  const std::string used(std::string("━")), idle(std::string("─"));
  auto bar = [&](int u, int i) {
    std::string s;
    for (int k = 0; k < u; ++k) s += used;
    for (int k = 0; k < i; ++k) s += idle;
    return s;
  };
  const std::string blank(24, ' ');
  std::string expected =
      "ACTIVITY TREND\nLast 7 days\n"
      "  Mon 11-23 " +
      blank +
      "    0.0/0.0\n"
      "  Tue 11-24 " +
      blank +
      "    0.0/0.0\n"
      "  Wed 11-25 " +
      blank +
      "    0.0/0.0\n"
      "  Thu 11-26 " +
      blank +
      "    1.0/0.0\n"
      "  Fri 11-27 " +
      bar(12, 0) + std::string(12, ' ') +
      "    2.0/2.0\n"
      "  Sat 11-28 " +
      blank +
      "    0.0/0.0\n"
      "  Sun 11-29 " +
      bar(6, 18) +
      "    1.0/4.0\n"
      "Last 4 weeks\n"
      "  11-02     " +
      blank +
      "    0.0/0.0\n"
      "  11-09     " +
      blank +
      "    0.0/0.0\n"
      "  11-16     " +
      blank +
      "    0.0/0.0\n"
      "  11-23     " +
      bar(16, 8) + "    4.0/6.0\n";
  EXPECT_EQ(text, expected);
}

}  // namespace
}  // namespace bk::monitor
