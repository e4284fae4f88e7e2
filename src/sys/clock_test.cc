#include "sys/clock.h"

#include <gtest/gtest.h>

#include <ctime>

namespace bk::sys {
namespace {

TEST(RealClock, WholeSecondsNearTime) {
  RealClock clock;
  time_t before = time(nullptr);
  Seconds now = clock.Now();
  time_t after = time(nullptr);
  EXPECT_GE(now, before);
  EXPECT_LE(now, after);
}

TEST(RealClock, MillisecondsAgreeWithSeconds) {
  RealClock clock;
  int64_t before = clock.Now();
  int64_t ms = clock.NowMs();
  int64_t after = clock.Now();
  EXPECT_GE(ms / 1000, before);
  EXPECT_LE(ms / 1000, after);
}

TEST(FixedClock, MillisecondsAreWholeSeconds) {
  FixedClock clock(100);
  EXPECT_EQ(clock.NowMs(), 100000);
  clock.Set(101);
  EXPECT_EQ(clock.NowMs(), 101000);
}

TEST(FixedClock, ReturnsAndSetsTheTime) {
  FixedClock clock(100);
  EXPECT_EQ(clock.Now(), 100);
  clock.Set(250);
  EXPECT_EQ(clock.Now(), 250);
}

struct GoodCase {
  const char* text;
  Seconds want;
};

class TestNowGood : public ::testing::TestWithParam<GoodCase> {};

TEST_P(TestNowGood, Parses) {
  auto clock = ClockFromTestNow(GetParam().text);
  ASSERT_TRUE(clock.has_value()) << GetParam().text << ": " << clock.error().message;
  EXPECT_EQ((*clock)->Now(), GetParam().want) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Values, TestNowGood,
    ::testing::Values(
        GoodCase{"1795978140", 1795978140}, GoodCase{"0", 0}, GoodCase{" 1795978140\n", 1795978140},
        GoodCase{"2026-11-29T18:49:00Z", 1795978140}, GoodCase{"2026-11-29t18:49:00z", 1795978140},
        GoodCase{"2026-11-29T18:49Z", 1795978140}, GoodCase{"2026-11-29T18:49:00.987Z", 1795978140},
        GoodCase{"2026-11-29T18:49:00+00:00", 1795978140}, GoodCase{"2026-11-29T18:49:00+08:00", 1795949340},
        GoodCase{"2026-11-29T18:49:00+0800", 1795949340}, GoodCase{"2026-11-29T18:49:00+08", 1795949340},
        GoodCase{"2026-11-29T18:49:00+05:30", 1795958340},
        GoodCase{"2026-11-29T18:49:00-05:00", 1795978140 + 5 * 3600},
        GoodCase{"2026-11-29 18:49:00Z", 1795978140}, GoodCase{"2028-02-29T12:00:00Z", 1835438400},
        GoodCase{"1969-12-31T23:59:59Z", -1}, GoodCase{"1970-01-01T00:00:00Z", 0}));

class TestNowBad : public ::testing::TestWithParam<const char*> {};

TEST_P(TestNowBad, RefusedWithOneClearLine) {
  auto clock = ClockFromTestNow(GetParam());
  ASSERT_FALSE(clock.has_value()) << GetParam();
  EXPECT_EQ(clock.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(clock.error().message,
            "BK_TEST_NOW must be Unix seconds or an ISO time with offset such as 2026-11-29T18:49:00Z");
}

INSTANTIATE_TEST_SUITE_P(Values, TestNowBad,
                         ::testing::Values("", "   ", "now", "-5", "+5", "12.5", "99999999999999999999",
                                           "2026-11-29T18:49:00",  // naive: offset required
                                           "2026-11-29",           // date only
                                           "2026-11-29T18:49:00+8:00", "2026-11-29T18:49:00+24:00",
                                           "2026-11-29T18:49:00+08:60", "2026-02-29T00:00:00Z",
                                           "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
                                           "2026-04-31T00:00:00Z", "2026-11-29T24:00:00Z",
                                           "2026-11-29T18:60:00Z", "2026-11-29T18:49:60Z",
                                           "2026-11-29T18:49:00.Z", "2026-11-29T18:49:00Zjunk",
                                           "2026-11-29X18:49:00Z", "26-11-29T18:49:00Z"));

}  // namespace
}  // namespace bk::sys
