#include "sys/local_zone.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "base/env_testing.h"

namespace bk::sys {
namespace {

// Sets TZ for one test and restores the previous value afterwards.
class LocalZoneTest : public ::testing::Test {
 protected:
  void TearDown() override {
    tz_.Restore();
    tzset();
  }
  // False (and the test should skip) when the zone's data is not installed.
  bool UseZone(const std::string& name) {
    if (name != "UTC" && access(("/usr/share/zoneinfo/" + name).c_str(), R_OK) != 0) return false;
    setenv("TZ", name.c_str(), 1);
    tzset();
    return true;
  }

  SavedEnv tz_{"TZ"};
  LocalZone zone_;
};

CivilTime Civil(int y, int mo, int d, int h, int mi, int s = 0) { return {y, mo, d, h, mi, s}; }

TEST_F(LocalZoneTest, Utc) {
  ASSERT_TRUE(UseZone("UTC"));
  EXPECT_EQ(zone_.OffsetAt(1795978140), 0);
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 11, 29, 18, 49)), 1795978140);
  EXPECT_EQ(zone_.FromLocal(Civil(1970, 1, 1, 0, 0)), 0);
}

TEST_F(LocalZoneTest, Shanghai) {
  if (!UseZone("Asia/Shanghai")) GTEST_SKIP() << "no zoneinfo for Asia/Shanghai";
  EXPECT_EQ(zone_.OffsetAt(1795978140), 8 * 3600);
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 11, 29, 18, 49)), 1795949340);
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 11, 30, 2, 49)), 1795978140);
}

TEST_F(LocalZoneTest, NewYorkOffsetsAroundSpringForward) {
  if (!UseZone("America/New_York")) GTEST_SKIP() << "no zoneinfo for America/New_York";
  // 2026-03-08 02:00 EST (07:00Z) clocks jump to 03:00 EDT.
  const Seconds change = 1772953200;
  EXPECT_EQ(zone_.OffsetAt(change - 1), -5 * 3600);
  EXPECT_EQ(zone_.OffsetAt(change), -4 * 3600);
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 3, 8, 1, 59, 59)), change - 1);
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 3, 8, 3, 0)), change);
}

TEST_F(LocalZoneTest, SkippedTimeMovesForward) {
  if (!UseZone("America/New_York")) GTEST_SKIP() << "no zoneinfo for America/New_York";
  // 02:30 does not exist on 2026-03-08: it becomes 03:30 EDT (07:30Z).
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 3, 8, 2, 30)), 1772955000);
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 3, 8, 2, 0)), 1772953200);
}

TEST_F(LocalZoneTest, RepeatedTimeTakesFirstOccurrence) {
  if (!UseZone("America/New_York")) GTEST_SKIP() << "no zoneinfo for America/New_York";
  // 01:30 happens twice on 2026-11-01: first in EDT (05:30Z), then in EST (06:30Z).
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 11, 1, 1, 30)), 1793511000);
  EXPECT_EQ(zone_.OffsetAt(1793511000), -4 * 3600);
  EXPECT_EQ(zone_.OffsetAt(1793511000 + 3600), -5 * 3600);
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 11, 1, 2, 0)), 1793511000 + 5400);   // after the repeat: EST
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 11, 1, 0, 59)), 1793511000 - 1860);  // before it: EDT
}

TEST_F(LocalZoneTest, NewYorkSummerAndWinter) {
  if (!UseZone("America/New_York")) GTEST_SKIP() << "no zoneinfo for America/New_York";
  EXPECT_EQ(zone_.FromLocal(Civil(2026, 7, 1, 12, 0)), 1782921600);
  EXPECT_EQ(zone_.OffsetAt(1782921600), -4 * 3600);
  EXPECT_EQ(zone_.OffsetAt(1795978140), -5 * 3600);
}

// Every instant of a year, hour by hour, maps back to itself from its local
// time, except the second pass through a repeated hour.
TEST_F(LocalZoneTest, RoundTripsThroughAYear) {
  for (const char* name :
       {"UTC", "Asia/Shanghai", "America/New_York", "Europe/London", "Australia/Lord_Howe"}) {
    if (!UseZone(name)) continue;
    for (Seconds t = 1767225600; t < 1767225600 + 366 * 86400; t += 1800) {
      int64_t off = zone_.OffsetAt(t);
      time_t shifted = static_cast<time_t>(t + off);
      tm c{};
      gmtime_r(&shifted, &c);
      Seconds back =
          zone_.FromLocal(Civil(c.tm_year + 1900, c.tm_mon + 1, c.tm_mday, c.tm_hour, c.tm_min, c.tm_sec));
      bool second_pass = zone_.OffsetAt(back) != off && back < t;
      if (!second_pass) {
        EXPECT_EQ(back, t) << name << " at " << t;
      }
    }
  }
}

}  // namespace
}  // namespace bk::sys
