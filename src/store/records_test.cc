#include "store/records.h"

#include <gtest/gtest.h>

#include "base/enum_names_testing.h"

namespace bk::store {
namespace {

TEST(JobStatusNames, EveryStatusRoundTripsAndStrangersAreRefused) {
  EXPECT_EQ(kJobStatusNames.entries.size(), 10u);
  EXPECT_EQ(kJobStatusNames.Name(JobStatus::kTimedOut), "timed-out");
  // "waiting" is a display state of a pending job, never stored.
  ExpectNamesRoundTrip(kJobStatusNames, {"Running", "timed_out", "", "waiting"});
}

TEST(JobStatusNames, OnlyPendingClaimedAndRunningAreUnfinished) {
  for (const auto& [status, name] : kJobStatusNames.entries)
    EXPECT_EQ(Finished(status), name != "pending" && name != "claimed" && name != "running") << name;
}

}  // namespace
}  // namespace bk::store
