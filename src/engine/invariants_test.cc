#include "engine/invariants.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace bk::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

Footprint Shared(int gpu, int units, Seconds s, Seconds e) {
  return Footprint{{gpu}, Mode::kShared, units, {}, 0, 0, s, e};
}
Footprint Exclusive(int gpu, Seconds s, Seconds e) {
  return Footprint{{gpu}, Mode::kExclusive, 2, {}, 0, 0, s, e};
}

Policy TwoGpus() {
  Policy p;
  p.gpu_count = 2;
  p.share_capacity = 2;
  return p;
}

TEST(InvariantsTest, LegalCalendarHasNoViolations) {
  // Touching intervals never conflict; two single slots fill a GPU exactly.
  EXPECT_THAT(CheckInvariants(TwoGpus(), {Shared(0, 1, 0, 100), Shared(0, 1, 50, 150), Exclusive(0, 150, 200),
                                          Exclusive(1, 0, 100), Exclusive(1, 100, 200)}),
              IsEmpty());
}

TEST(InvariantsTest, SharedOverCapacityIsFoundWhereThreeOverlap) {
  auto v = CheckInvariants(TwoGpus(), {Shared(0, 1, 0, 100), Shared(0, 1, 50, 150), Shared(0, 1, 90, 95)});
  ASSERT_THAT(v, SizeIs(1));
  EXPECT_THAT(v[0], HasSubstr("GPU 0 shared slots over capacity (3/2) at 1970-01-01T00:01:30Z"));
}

TEST(InvariantsTest, ExclusiveOverlapIsFound) {
  auto v = CheckInvariants(TwoGpus(), {Exclusive(1, 0, 100), Shared(1, 1, 99, 120)});
  ASSERT_THAT(v, SizeIs(1));
  EXPECT_THAT(v[0], HasSubstr("GPU 1 exclusive reservation overlaps another"));
}

TEST(InvariantsTest, HostBudgetsAreCheckedAtEveryInstant) {
  Policy p = TwoGpus();
  p.host_cpus = 8;
  Footprint a = Shared(0, 1, 0, 100), b = Shared(1, 1, 50, 150);
  a.cpus = 4, b.cpus = 5;
  auto v = CheckInvariants(p, {a, b});
  ASSERT_THAT(v, SizeIs(1));
  EXPECT_THAT(v[0], HasSubstr("host CPU budget over (9/8)"));
  b.start = 100;  // back to back: fine
  EXPECT_THAT(CheckInvariants(p, {a, b}), IsEmpty());
}

TEST(InvariantsTest, OutOfRangeGpuIsReported) {
  EXPECT_THAT(CheckInvariants(TwoGpus(), {Shared(5, 1, 0, 10)}), testing::Contains(HasSubstr("GPU 5")));
}

}  // namespace
}  // namespace bk::engine
