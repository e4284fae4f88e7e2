#include "store/records.h"

#include <gtest/gtest.h>

namespace bk::store {
namespace {

TEST(JobStatusNames, EveryStatusRoundTripsAndStrangersAreRefused) {
  EXPECT_EQ(kJobStatusNames.entries.size(), 10u);
  for (const auto& [status, name] : kJobStatusNames.entries) {
    EXPECT_EQ(kJobStatusNames.Name(status), name);
    EXPECT_EQ(kJobStatusNames.Parse(name), status);
  }
  EXPECT_EQ(kJobStatusNames.Name(JobStatus::kTimedOut), "timed-out");
  EXPECT_FALSE(kJobStatusNames.Parse("Running"));
  EXPECT_FALSE(kJobStatusNames.Parse("timed_out"));
  EXPECT_FALSE(kJobStatusNames.Parse(""));
  EXPECT_FALSE(kJobStatusNames.Parse("waiting"));  // a display state, never stored
}

TEST(JobStatusNames, OnlyPendingClaimedAndRunningAreUnfinished) {
  for (const auto& [status, name] : kJobStatusNames.entries)
    EXPECT_EQ(Finished(status), name != "pending" && name != "claimed" && name != "running") << name;
}

}  // namespace
}  // namespace bk::store
