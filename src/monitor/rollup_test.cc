#include "monitor/rollup.h"

#include <gtest/gtest.h>

namespace bk::monitor {
namespace {

TEST(CheckRollup, OnlyTheMinuteUsageDbRecordsAndWholeIntervals) {
  EXPECT_TRUE(CheckRollup(60, 2000));
  EXPECT_TRUE(CheckRollup(60, 200));
  EXPECT_TRUE(CheckRollup(60, 60000));
  EXPECT_TRUE(CheckRollup(60, 7500));  // 8 samples a window
  for (double bad : {1.0, 30.0, 120.0, 3600.0, 60.5}) {
    Status s = CheckRollup(bad, 2000);
    ASSERT_FALSE(s) << bad;
    EXPECT_NE(s.error().message.find("only 60 is accepted"), std::string::npos) << s.error().message;
  }
  for (int64_t interval_ms : {7000, 700, 90000}) {
    Status s = CheckRollup(60, interval_ms);
    ASSERT_FALSE(s) << interval_ms;
    EXPECT_EQ(s.error().message,
              "monitor_rollup_seconds must be an integer multiple of monitor_interval_seconds");
  }
}

}  // namespace
}  // namespace bk::monitor
