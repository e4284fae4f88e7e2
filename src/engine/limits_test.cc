#include "engine/limits.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/reservation.h"

namespace bk::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr Seconds kDay0 = 1795910400;  // 2026-11-29T00:00:00Z
constexpr Seconds kSlot = 5 * kMinute;

Seconds At(int hour, int minute = 0) { return kDay0 + hour * kHour + minute * kMinute; }

LimitScope Scope(Limits limits, std::vector<Holding> held, std::string name = "alice") {
  FairShare fs;
  fs.user = limits;
  LimitScope s = LimitScope::ForUser(fs, name);
  s.held = std::move(held);
  return s;
}

TEST(LimitsTest, AUsersOwnEntryReplacesTheDefaultFieldByField) {
  FairShare fs;
  fs.user.max_gpus = 2;
  fs.user.max_queued = 3;
  fs.users["alice"].max_gpus = 8;
  fs.users["bob"].max_queued = kNoLimit;
  EXPECT_EQ(fs.ForUser("alice").max_gpus, 8);
  EXPECT_EQ(fs.ForUser("alice").max_queued, 3);
  EXPECT_EQ(fs.ForUser("bob").max_gpus, 2);
  EXPECT_EQ(fs.ForUser("bob").max_queued, std::nullopt);  // lifted
  EXPECT_EQ(fs.ForUser("carol"), fs.user);

  LimitScope alice = LimitScope::ForUser(fs, "alice");
  EXPECT_EQ(alice.keys[static_cast<std::size_t>(LimitKind::kGpus)], "user_limits.alice.max_gpus");
  EXPECT_EQ(alice.keys[static_cast<std::size_t>(LimitKind::kQueued)], "user_max_queued");
  fs.groups["vision"].max_gpus = 4;
  LimitScope vision = LimitScope::ForGroup(fs, "vision");
  EXPECT_EQ(vision.group, "vision");
  EXPECT_EQ(vision.keys[static_cast<std::size_t>(LimitKind::kGpus)], "group_limits.vision.max_gpus");
  EXPECT_TRUE(fs.Any());
  EXPECT_FALSE(FairShare().Any());
}

TEST(LimitsTest, AHoldingIsWhatWasHeldOnTheGrid) {
  Reservation r;
  r.gpus = {0, 1};
  r.start = At(10);
  r.end = At(12);
  EXPECT_EQ(HoldingOf(r, kSlot), (Holding{At(10), At(12), 2}));
  // Cancelled while it ran: held until the next slot boundary.
  r.status = Status::kCancelled;
  r.cancellation = Cancellation{At(11, 3)};
  EXPECT_EQ(HoldingOf(r, kSlot), (Holding{At(10), At(11, 5), 2}));
  // Cancelled before it started: nothing.
  r.cancellation->at = At(9);
  EXPECT_EQ(HoldingOf(r, kSlot), std::nullopt);
}

TEST(LimitsTest, GpusAtOnceQueueAfterTheUsersOwnBookings) {
  // alice holds 3 of her 4 GPUs until 12:00.
  LimitRule rule({Scope({.max_gpus = 4}, {{At(10), At(12), 3}})}, At(10, 2), kSlot);
  // One more fits now; two wait for 12:00 minus nothing: starts from 12:00.
  EXPECT_THAT(rule.Allowed(1, kHour, At(10), At(13)), ElementsAre(Interval{At(10), At(13) + kSlot}));
  EXPECT_THAT(rule.Allowed(2, kHour, At(10), At(13)), ElementsAre(Interval{At(12), At(13) + kSlot}));
  EXPECT_THAT(rule.Allowed(5, kHour, At(10), At(13)), IsEmpty());
  auto why = rule.Reasons(2, At(10), At(11));
  ASSERT_THAT(why, SizeIs(1));
  EXPECT_EQ(why[0],
            "fair-share limit user_max_gpus: alice may hold at most 4 GPU(s) at once; holds 3 at "
            "2026-11-29T10:00:00Z and this adds 2");
  EXPECT_THAT(rule.Reasons(2, At(12), At(13)), IsEmpty());
}

TEST(LimitsTest, GpuHoursCountPastUseInAnyWindow) {
  // 10 GPU-hours yesterday evening (2 GPUs 18:00-23:00), limit 12 per 24 h.
  LimitRule rule({Scope({.max_gpu_hours_24h = 12}, {{At(-6), At(-1), 2}})}, At(0), kSlot);
  // 2 GPU-hours more fit at once; 4 hours of 1 GPU wait until the window
  // holding yesterday's use lets 2 hours of it go: at 19:00 - 24 h + ...
  EXPECT_THAT(rule.Reasons(1, At(0), At(2)), IsEmpty());
  auto why = rule.Reasons(1, At(0), At(4));
  ASSERT_THAT(why, SizeIs(1));
  EXPECT_THAT(why[0],
              HasSubstr("fair-share limit user_max_gpu_hours_24h: alice may use at most 12 GPU-hours in "
                        "any 24 hours"));
  EXPECT_THAT(why[0], HasSubstr("that would be 14 (this adds 4)"));
  // The earliest start for 4 GPU-hours: the window [s - 24h + 4h ... ] must
  // drop 2 of yesterday's hours, i.e. the booking ends by 18:00 + 2h + 24h - ...
  auto ok = rule.Allowed(1, 4 * kHour, At(0), At(23));
  ASSERT_FALSE(ok.empty());
  // Check the first allowed start against the definition directly.
  Seconds first = ok.front().start;
  EXPECT_THAT(rule.Reasons(1, first, first + 4 * kHour), IsEmpty());
  EXPECT_THAT(rule.Reasons(1, first - kSlot, first - kSlot + 4 * kHour), SizeIs(1));
  // More than the limit in one booking never fits.
  EXPECT_THAT(rule.Allowed(1, 13 * kHour, At(0), At(23)), IsEmpty());
}

TEST(LimitsTest, DurationHorizonAndQueue) {
  LimitRule rule(
      {Scope({.max_duration = 4 * kHour, .max_horizon = kDay, .max_queued = 1}, {{At(20), At(21), 1}})},
      At(10, 2), kSlot);
  EXPECT_THAT(rule.Allowed(1, 5 * kHour, At(10), At(11)), IsEmpty());
  EXPECT_THAT(
      rule.Reasons(1, At(10), At(15)),
      ElementsAre("fair-share limit user_max_booking_hours: bookings of alice last at most 4h; this one "
                  "lasts 5h"));
  // One booking waits to start already: another may only start now.
  EXPECT_THAT(rule.Allowed(1, kHour, At(10), At(12)), ElementsAre(Interval{At(10), At(10) + kSlot}));
  EXPECT_THAT(rule.Reasons(1, At(11), At(12)),
              ElementsAre("fair-share limit user_max_queued: alice may have at most 1 booking(s) waiting to "
                          "start and has 1"));
  // The horizon: it must end within a day of now.
  LimitRule far({Scope({.max_horizon = kDay}, {})}, At(0), kSlot);
  EXPECT_THAT(far.Allowed(1, kHour, At(22), At(24)), ElementsAre(Interval{At(22), At(23) + kSlot}));
}

TEST(LimitsTest, ARenewalIsCheckedForWhatItAdds) {
  // alice's 7-day budget is 10 GPU-hours; her running booking (not in
  // `held`: it is the one renewed) has used 8 of them by now.
  LimitRule rule({Scope({.max_gpu_hours_7d = 10}, {})}, At(8), kSlot);
  EXPECT_THAT(rule.Reasons(1, At(0), At(10), At(9)), IsEmpty());
  auto why = rule.Reasons(1, At(0), At(11), At(9));
  ASSERT_THAT(why, SizeIs(1));
  EXPECT_THAT(why[0], HasSubstr("that would be 11 (this adds 2)"));
}

TEST(LimitsTest, EveryScopeMustAllowTheStart) {
  FairShare fs;
  fs.groups["vision"].max_gpus = 2;
  LimitScope group = LimitScope::ForGroup(fs, "vision");
  group.held = {{At(10), At(11), 2}};  // bob, a member, holds both
  LimitRule rule({Scope({.max_gpus = 4}, {}), group}, At(10), kSlot);
  EXPECT_THAT(rule.Allowed(1, kHour, At(10), At(12)), ElementsAre(Interval{At(11), At(12) + kSlot}));
  EXPECT_THAT(
      rule.Reasons(1, At(10), At(11)),
      ElementsAre("fair-share limit group_limits.vision.max_gpus: group vision may hold at most 2 GPU(s) "
                  "at once; holds 2 at 2026-11-29T10:00:00Z and this adds 1"));
}

TEST(LimitsTest, UseIsWhatWasHeldBeforeNowAndWhatIsHeldAhead) {
  LimitUse u = UseOf({{At(0), At(2), 2}, {At(1), At(5), 1}, {At(6), At(7), 3}}, At(3));
  EXPECT_EQ(u.gpus_now, 1);
  EXPECT_EQ(u.peak_gpus, 3);
  EXPECT_DOUBLE_EQ(u.gpu_hours_24h, 6.0);  // 2 x 2 h + 1 x 2 h
  EXPECT_EQ(u.queued, 1);
}

TEST(LimitsTest, ARuleWithoutLimitsIsEmpty) {
  EXPECT_TRUE(LimitRule({Scope({}, {{At(0), At(1), 1}})}, At(0), kSlot).empty());
}

}  // namespace
}  // namespace bk::engine
