#include "worker/stop_reason.h"

#include <gtest/gtest.h>

#include "base/enum_names_testing.h"

namespace bk::worker {
namespace {

TEST(StopReasonNames, EveryReasonRoundTripsAndStrangersAreRefused) {
  EXPECT_EQ(kStopReasonNames.entries.size(), 3u);
  EXPECT_EQ(kStopReasonNames.Name(StopReason::kCancelled), "cancelled");
  EXPECT_EQ(kStopReasonNames.Name(StopReason::kDeadline), "deadline");
  EXPECT_EQ(kStopReasonNames.Name(StopReason::kStopRequested), "worker-stop");
  ExpectNamesRoundTrip(kStopReasonNames, {"", "signal", "canceled", "worker_stop"});
}

}  // namespace
}  // namespace bk::worker
