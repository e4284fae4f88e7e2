#include "engine/time_grid.h"

#include <gtest/gtest.h>

namespace bk::engine {
namespace {

struct GridCase {
  Seconds t;
  Seconds floor;
  Seconds ceil;
};

void CheckGrid(const SlotGrid& grid, const GridCase& c) {
  EXPECT_EQ(grid.Floor(c.t), c.floor) << "t=" << c.t;
  EXPECT_EQ(grid.Ceil(c.t), c.ceil) << "t=" << c.t;
  EXPECT_EQ(grid.Aligned(c.t), c.floor == c.t) << "t=" << c.t;
}

TEST(SlotGridTest, FiveMinutes) {
  const SlotGrid grid(300);
  EXPECT_EQ(grid.slot(), 300);
  const GridCase cases[] = {
      {0, 0, 0},
      {1, 0, 300},
      {299, 0, 300},
      {300, 300, 300},
      {301, 300, 600},
      {599, 300, 600},
      {1893501683, 1893501600, 1893501900},
      {1893501600, 1893501600, 1893501600},
  };
  for (const GridCase& c : cases) CheckGrid(grid, c);
}

// Before 1970 the grid must still floor downwards, not toward zero.
TEST(SlotGridTest, NegativeTimes) {
  const SlotGrid grid(300);
  const GridCase cases[] = {
      {-1, -300, 0},
      {-299, -300, 0},
      {-300, -300, -300},
      {-301, -600, -300},
      {-600, -600, -600},
      {-62135596800, -62135596800, -62135596800},
      {-62135596799, -62135596800, -62135596500},
  };
  for (const GridCase& c : cases) CheckGrid(grid, c);
}

TEST(SlotGridTest, OtherSlotLengths) {
  CheckGrid(SlotGrid(60), {3599, 3540, 3600});
  CheckGrid(SlotGrid(60), {-59, -60, 0});
  CheckGrid(SlotGrid(3600), {5400, 3600, 7200});
  CheckGrid(SlotGrid(3600), {-1, -3600, 0});
  CheckGrid(SlotGrid(900), {1893501683, 1893501000, 1893501900});
  CheckGrid(SlotGrid(1), {-7, -7, -7});
}

TEST(SlotGridTest, FloorAndCeilBracketEveryInstant) {
  for (Seconds slot : {60, 120, 300, 600, 900, 1800, 3600}) {
    const SlotGrid grid(slot);
    for (Seconds t = -2 * slot - 3; t <= 2 * slot + 3; ++t) {
      const Seconds f = grid.Floor(t), c = grid.Ceil(t);
      ASSERT_LE(f, t);
      ASSERT_GE(c, t);
      ASSERT_LT(t - f, slot);
      ASSERT_LT(c - t, slot);
      ASSERT_TRUE(grid.Aligned(f));
      ASSERT_TRUE(grid.Aligned(c));
      ASSERT_EQ(f % slot, 0);
      ASSERT_EQ(grid.Aligned(t), f == c);
    }
  }
}

}  // namespace
}  // namespace bk::engine
