#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "service/booking_service.h"
#include "service/service_testing.h"

namespace bk::service {
namespace {

using engine::kHour;
using engine::T;
using ::testing::HasSubstr;

// Over a private ledger (exclusive_store false) and, in the second run of
// each test, over one held as the daemon holds it.
class FairShareTest : public ServiceTest, public ::testing::WithParamInterface<bool> {
 protected:
  FairShareTest() {
    exclusive_store_ = GetParam();
    config_.policy.fair_share.user.max_gpus = 2;
  }
  void SetUp() override { Build(); }

  // The service, with `vision_` as the members of the group "vision".
  void Build() {
    service_.reset();
    BookingService::Deps deps{&config_, clock_.get(), nullptr, static_cast<uid_t>(getuid()),
                              exclusive_store_};
    deps.in_group = [this](uint32_t uid, const std::string& group) {
      return group == "vision" && vision_.count(uid) > 0;
    };
    service_ = std::make_unique<BookingService>(deps);
  }

  Result<BookingOutcome> Book(const Actor& who, int count, engine::Seconds duration,
                              std::optional<engine::Seconds> start = std::nullopt,
                              std::optional<std::string> reason = std::nullopt) {
    CreateRequest r;
    r.count = count;
    r.duration = duration;
    r.start = start;
    r.override_reason = reason;
    return service_->Create(who, r);
  }

  const Actor alice_{static_cast<uint32_t>(getuid()) + 1001, "alice", false};
  const Actor bob_{static_cast<uint32_t>(getuid()) + 1002, "bob", false};
  const Actor admin_{static_cast<uint32_t>(getuid()) + 1003, "root", true};
  std::set<uint32_t> vision_;
  const engine::Seconds now_slot_ = T("2026-11-29T18:50:00Z");
};

TEST_P(FairShareTest, AnExactRequestOverTheLimitIsRefusedWithTheUseAndTheEarliestFit) {
  ASSERT_TRUE(Book(alice_, 2, 2 * kHour).has_value());
  auto out = Book(alice_, 1, kHour, now_slot_);
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().kind, ErrorKind::kConflict);
  EXPECT_THAT(out.error().message,
              HasSubstr("fair-share limit user_max_gpus: alice may hold at most 2 GPU(s) at once; holds 2 at "
                        "2026-11-29T18:50:00Z and this adds 1"));
  // The earliest time it would fit: when her own booking ends.
  EXPECT_THAT(out.error().message, HasSubstr("nearest available:"));
  EXPECT_THAT(out.error().message, HasSubstr("2026-11-29T20:50:00Z -> 2026-11-29T21:50:00Z"));
  // Nobody else is held back by alice's limit.
  EXPECT_TRUE(Book(bob_, 2, kHour, now_slot_).has_value());
}

TEST_P(FairShareTest, AnAutomaticRequestQueuesUntilTheLimitAllowsIt) {
  ASSERT_TRUE(Book(alice_, 2, 2 * kHour).has_value());
  auto out = Book(alice_, 1, kHour);
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->status, "queued");
  EXPECT_EQ(out->reservation.start, T("2026-11-29T20:50:00Z"));
  EXPECT_THAT(out->queued_reason, HasSubstr("fair-share limit user_max_gpus"));
}

TEST_P(FairShareTest, RenewAndEditAreHeldToTheLimitsToo) {
  config_.policy.fair_share.user.max_gpu_hours_24h = 5;
  Build();
  auto first = Book(alice_, 2, 2 * kHour);
  ASSERT_TRUE(first.has_value()) << first.error().message;
  // 4 GPU-hours held; 30 more minutes on 2 GPUs makes 5: allowed. An hour more is not.
  RenewRequest ok{first->reservation.id, 30 * engine::kMinute};
  ASSERT_TRUE(service_->Renew(alice_, ok).has_value());
  RenewRequest over{first->reservation.id, kHour};
  auto refused = service_->Renew(alice_, over);
  ASSERT_FALSE(refused.has_value());
  EXPECT_THAT(refused.error().message, HasSubstr("cannot extend"));
  EXPECT_THAT(
      refused.error().message,
      HasSubstr("fair-share limit user_max_gpu_hours_24h: alice may use at most 5 GPU-hours in any 24 "
                "hours"));
  EXPECT_THAT(refused.error().message, HasSubstr("that would be 7 (this adds 2)"));
  // The same through an edit of the started booking, and as a dry run.
  EditRequest longer;
  longer.ref = first->reservation.id;
  longer.duration = 4 * kHour;
  longer.dry_run = true;
  auto edit = service_->Edit(alice_, longer);
  ASSERT_FALSE(edit.has_value());
  EXPECT_THAT(edit.error().message, HasSubstr("user_max_gpu_hours_24h"));
}

TEST_P(FairShareTest, AFutureBookingMovedByAnEditKeepsToTheLimits) {
  ASSERT_TRUE(Book(alice_, 2, 2 * kHour).has_value());
  auto later = Book(alice_, 1, kHour, T("2026-11-29T22:00:00Z"));
  ASSERT_TRUE(later.has_value()) << later.error().message;
  EditRequest move;
  move.ref = later->reservation.id;
  move.start = T("2026-11-29T19:00:00Z");
  auto out = service_->Edit(alice_, move);
  ASSERT_FALSE(out.has_value());
  EXPECT_THAT(out.error().message, HasSubstr("user_max_gpus"));
  move.start = T("2026-11-29T21:00:00Z");
  EXPECT_TRUE(service_->Edit(alice_, move).has_value());
}

TEST_P(FairShareTest, AnAdministratorGoesBeyondOnlyWithAReasonWhichIsAudited) {
  ASSERT_TRUE(Book(admin_, 2, 2 * kHour).has_value());
  EXPECT_FALSE(Book(admin_, 1, kHour, now_slot_).has_value());
  auto out = Book(admin_, 1, kHour, now_slot_, "deadline for the lab's paper");
  ASSERT_TRUE(out.has_value()) << out.error().message;
  auto history = service_->History(admin_, out->reservation.id);
  ASSERT_TRUE(history.has_value());
  EXPECT_THAT(history->events.back().message,
              HasSubstr("beyond fair-share limits: deadline for the lab's paper"));
  // Nobody else may.
  auto refused = Book(alice_, 1, kHour, now_slot_, "please");
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, ErrorKind::kPermission);
  EXPECT_THAT(refused.error().message, HasSubstr("only administrators"));
}

TEST_P(FairShareTest, AGroupsMembersTogetherStayWithinItsLimits) {
  config_.policy.fair_share.user = {};
  config_.policy.fair_share.groups["vision"].max_gpus = 2;
  vision_ = {alice_.uid, bob_.uid};
  Build();
  ASSERT_TRUE(Book(bob_, 1, 2 * kHour).has_value());
  ASSERT_TRUE(Book(alice_, 1, 2 * kHour).has_value());
  auto out = Book(alice_, 1, kHour, now_slot_);
  ASSERT_FALSE(out.has_value());
  EXPECT_THAT(
      out.error().message,
      HasSubstr("fair-share limit group_limits.vision.max_gpus: group vision may hold at most 2 GPU(s)"));
  // carol is not in the group.
  const Actor carol{static_cast<uint32_t>(getuid()) + 1004, "carol", false};
  EXPECT_TRUE(Book(carol, 2, kHour, now_slot_).has_value());
}

TEST_P(FairShareTest, RecommendationsAndSlotsKeepToTheLimits) {
  ASSERT_TRUE(Book(alice_, 2, 2 * kHour).has_value());
  CreateRequest one;
  one.count = 1;
  one.duration = kHour;
  auto rec = service_->Recommend(alice_, one);
  ASSERT_TRUE(rec.has_value()) << rec.error().message;
  ASSERT_TRUE(rec->available);
  ASSERT_TRUE(rec->placement.has_value());
  EXPECT_EQ(rec->placement->start, T("2026-11-29T20:50:00Z"));
  auto slots = service_->Slots(alice_, one, clock_->Now(), 3);
  ASSERT_TRUE(slots.has_value()) << slots.error().message;
  ASSERT_FALSE(slots->options.empty());
  for (const SlotOption& o : slots->options) EXPECT_GE(o.start, T("2026-11-29T20:50:00Z"));
  // bob's view is not alice's.
  auto bobs = service_->Recommend(bob_, one);
  ASSERT_TRUE(bobs.has_value());
  ASSERT_TRUE(bobs->placement.has_value());
  EXPECT_EQ(bobs->placement->start, now_slot_);
}

INSTANTIATE_TEST_SUITE_P(Ledgers, FairShareTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Daemon" : "Private"; });

}  // namespace
}  // namespace bk::service
