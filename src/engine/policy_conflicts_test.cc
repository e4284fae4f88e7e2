#include "engine/policy_conflicts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace bk::engine {
namespace {

constexpr Seconds kNow = 1795910400;  // 2026-11-29T00:00:00Z

Reservation Booking(const std::string& id, std::vector<int> gpus, Seconds start, Seconds end,
                    Mode mode = Mode::kShared, int units = 1) {
  Reservation r;
  r.id = id;
  r.gpus = std::move(gpus);
  r.start = start;
  r.end = end;
  r.mode = mode;
  r.share_units = units;
  r.status = Status::kActive;
  return r;
}

std::vector<std::string> Kinds(const std::vector<BookingConflict>& cs) {
  std::vector<std::string> out;
  for (const auto& c : cs) out.push_back(std::to_string(c.index) + ":" + c.kind);
  return out;
}

TEST(PolicyConflictsTest, NamesWhatEachBookingBreaks) {
  Policy running;
  running.gpu_count = 4;
  std::vector<Reservation> active = {
      Booking("a", {3}, kNow, kNow + 2 * kHour),
      Booking("b", {0}, kNow + kHour, kNow + 20 * kDay),
      Booking("c", {1}, kNow, kNow + kHour, Mode::kShared, 2),
  };
  Policy next = running;
  next.disabled_gpus = {3};
  next.horizon = 7 * kDay;
  next.share_capacity = 1;
  auto found = NewConflicts(running, next, active, kNow);
  EXPECT_THAT(Kinds(found), ::testing::ElementsAre("0:disabled", "1:horizon", "2:slots", "2:capacity"));
  EXPECT_EQ(found[0].why, "GPU 3 is disabled");
  EXPECT_EQ(found[1].why, "it ends beyond the 7-day booking horizon");
  EXPECT_EQ(found[3].why, "GPU 1 shared slots over capacity (2/1) at 2026-11-29T00:00:00Z");
}

TEST(PolicyConflictsTest, OnlyWhatTheChangeMakesNew) {
  Policy running;
  running.gpu_count = 2;
  running.disabled_gpus = {1};
  std::vector<Reservation> active = {Booking("a", {1}, kNow, kNow + kHour),
                                     Booking("b", {0}, kNow, kNow + kHour)};
  Policy next = running;
  EXPECT_TRUE(NewConflicts(running, next, active, kNow).empty()) << "already disabled: nothing new";
  next.blackouts = {{kNow + 30 * kMinute, kNow + 2 * kHour, "rack move", {0}}};
  auto found = NewConflicts(running, next, active, kNow);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].index, 1u);
  EXPECT_EQ(found[0].why,
            "administrator blackout on GPU 0 2026-11-29T00:30:00Z -> 2026-11-29T02:00:00Z: rack move");
  // A booking that is over breaks nothing.
  EXPECT_TRUE(NewConflicts(running, next, active, kNow + kHour).empty());
  // Nor does a window that is over for what is left of a booking.
  next.blackouts[0].end = kNow + 45 * kMinute;
  EXPECT_TRUE(NewConflicts(running, next, active, kNow + 50 * kMinute).empty());
}

TEST(PolicyConflictsTest, RequiredVramAndLength) {
  Policy running;
  running.gpu_count = 1;
  Reservation with = Booking("a", {0}, kNow, kNow + 3 * kHour);
  with.memory_mb = 4096;
  std::vector<Reservation> active = {Booking("b", {0}, kNow, kNow + 3 * kHour), with,
                                     Booking("x", {0}, kNow + 4 * kHour, kNow + 5 * kHour, Mode::kExclusive)};
  Policy next = running;
  next.require_shared_memory = true;
  next.max_duration = 2 * kHour;
  EXPECT_THAT(Kinds(NewConflicts(running, next, active, kNow)),
              ::testing::ElementsAre("0:duration", "0:vram", "1:duration"));
}

}  // namespace
}  // namespace bk::engine
