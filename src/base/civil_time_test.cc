#include "base/civil_time.h"

#include <gtest/gtest.h>

namespace bk {
namespace {

struct Anchor {
  CivilTime civil;
  Seconds epoch;
};

// Reference values from Python's datetime (proleptic Gregorian, UTC).
const Anchor kAnchors[] = {
    {{1970, 1, 1, 0, 0, 0}, 0},
    {{1969, 12, 31, 23, 59, 59}, -1},
    {{2030, 1, 1, 12, 41, 23}, 1893501683},
    {{2026, 11, 29, 18, 45, 0}, 1795977900},
    {{2000, 2, 29, 0, 0, 0}, 951782400},
    {{1900, 3, 1, 0, 0, 0}, -2203891200},
    {{1969, 7, 20, 20, 17, 40}, -14182940},
    {{1, 1, 1, 0, 0, 0}, -62135596800},
    {{9999, 12, 31, 23, 59, 59}, 253402300799},
};

TEST(CivilTimeTest, CivilToEpochMatchesReference) {
  for (const Anchor& a : kAnchors) {
    EXPECT_EQ(CivilToEpoch(a.civil), a.epoch) << a.civil.year << "-" << a.civil.month << "-" << a.civil.day;
  }
}

TEST(CivilTimeTest, EpochToCivilMatchesReference) {
  for (const Anchor& a : kAnchors) EXPECT_EQ(EpochToCivil(a.epoch), a.civil) << a.epoch;
}

// Every day from year 1 to 9999 round-trips and follows the previous one by
// exactly one day; this also walks every leap-year rule.
TEST(CivilTimeTest, EveryDayRoundTripsAndIsContiguous) {
  Seconds previous = CivilToEpoch({1, 1, 1}) - kDay;
  int checked = 0;
  for (int y = 1; y <= 9999; ++y) {
    for (int m = 1; m <= 12; ++m) {
      for (int d = 1; ValidDate(y, m, d); ++d) {
        const CivilTime c{y, m, d, 0, 0, 0};
        const Seconds t = CivilToEpoch(c);
        ASSERT_EQ(t - previous, kDay) << y << "-" << m << "-" << d;
        ASSERT_EQ(EpochToCivil(t), c);
        previous = t;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 3652059);  // days in 0001-01-01 .. 9999-12-31
}

TEST(CivilTimeTest, NegativeTimesFloorToTheContainingDay) {
  EXPECT_EQ(EpochToCivil(-kDay), (CivilTime{1969, 12, 31, 0, 0, 0}));
  EXPECT_EQ(EpochToCivil(-kDay - 1), (CivilTime{1969, 12, 30, 23, 59, 59}));
  EXPECT_EQ(EpochToCivil(-kDay + 1), (CivilTime{1969, 12, 31, 0, 0, 1}));
}

TEST(CivilTimeTest, OutOfRangeFieldsCarry) {
  EXPECT_EQ(CivilToEpoch({2029, 13, 1}), CivilToEpoch({2030, 1, 1}));
  EXPECT_EQ(CivilToEpoch({2030, 0, 1}), CivilToEpoch({2029, 12, 1}));
  EXPECT_EQ(CivilToEpoch({2030, 3, 0}), CivilToEpoch({2030, 2, 28}));
  EXPECT_EQ(CivilToEpoch({2028, 2, 30}), CivilToEpoch({2028, 3, 1}));
  EXPECT_EQ(CivilToEpoch({2030, 12, 32}), CivilToEpoch({2031, 1, 1}));
  EXPECT_EQ(CivilToEpoch({2030, 1, 1, 24, 0, 0}), CivilToEpoch({2030, 1, 2}));
  EXPECT_EQ(CivilToEpoch({2030, 1, 1, 0, -1, 0}), CivilToEpoch({2029, 12, 31, 23, 59, 0}));
}

TEST(CivilTimeTest, ValidDate) {
  struct Case {
    int y, m, d;
    bool valid;
  };
  const Case cases[] = {
      {2024, 2, 29, true},  {2023, 2, 29, false}, {1900, 2, 29, false}, {2000, 2, 29, true},
      {2030, 2, 28, true},  {2030, 4, 30, true},  {2030, 4, 31, false}, {2030, 1, 31, true},
      {2030, 12, 31, true}, {2030, 0, 1, false},  {2030, 13, 1, false}, {2030, 1, 0, false},
      {2030, 1, 32, false}, {2030, 1, -1, false}, {1, 1, 1, true},      {9999, 12, 31, true},
      {0, 12, 31, false},   {10000, 1, 1, false}, {-1, 1, 1, false},
  };
  for (const Case& c : cases) EXPECT_EQ(ValidDate(c.y, c.m, c.d), c.valid) << c.y << "-" << c.m << "-" << c.d;
}

TEST(CivilTimeTest, Weekday) {
  EXPECT_EQ(Weekday(0), 4);                             // Thursday
  EXPECT_EQ(Weekday(kDay - 1), 4);                      // still Thursday
  EXPECT_EQ(Weekday(-1), 3);                            // Wednesday 1969-12-31
  EXPECT_EQ(Weekday(1893501683), 2);                    // Tuesday 2030-01-01
  EXPECT_EQ(Weekday(CivilToEpoch({1, 1, 1})), 1);       // Monday
  EXPECT_EQ(Weekday(CivilToEpoch({1900, 1, 1})), 1);    // Monday
  EXPECT_EQ(Weekday(CivilToEpoch({9999, 12, 31})), 5);  // Friday
  for (int i = 0; i < 14; ++i) EXPECT_EQ(Weekday(i * kDay), (4 + i) % 7);
}

TEST(CivilTimeTest, FixedZoneConvertsBothWays) {
  const FixedZone plus8(8 * kHour);
  const Seconds t = 1893501683;  // 2030-01-01 12:41:23 UTC
  EXPECT_EQ(plus8.ToLocal(t), (CivilTime{2030, 1, 1, 20, 41, 23}));
  EXPECT_EQ(plus8.FromLocal({2030, 1, 1, 20, 41, 23}), t);
  const FixedZone minus530(-(5 * kHour + 30 * kMinute));
  EXPECT_EQ(minus530.ToLocal(t), (CivilTime{2030, 1, 1, 7, 11, 23}));
  EXPECT_EQ(minus530.FromLocal({2030, 1, 1, 7, 11, 23}), t);
}

}  // namespace
}  // namespace bk
