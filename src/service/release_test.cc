#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "service/booking_service.h"
#include "service/service_testing.h"

namespace bk::service {
namespace {

using engine::T;

class ReleaseTest : public ServiceTest {
 protected:
  engine::Reservation Book(const Actor& who, std::optional<engine::Seconds> start = std::nullopt) {
    CreateRequest r;
    r.count = 1;
    r.gpus = {2};
    r.duration = 2 * engine::kHour;
    r.mode = engine::Mode::kExclusive;
    r.start = start;
    auto out = service_->Create(who, r);
    EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message);
    return out ? out->reservation : engine::Reservation{};
  }

  std::vector<store::Event> Events(const std::string& id) {
    auto h = service_->History(alice_, id);
    EXPECT_TRUE(h.has_value()) << (h ? "" : h.error().message);
    return h ? h->events : std::vector<store::Event>{};
  }

  size_t Count(const std::vector<store::Event>& events, const std::string& action) {
    return std::count_if(events.begin(), events.end(),
                         [&](const store::Event& e) { return e.action == action; });
  }

  const Actor alice_{static_cast<uint32_t>(getuid()) + 1001, "alice", false};
  const Actor bob_{static_cast<uint32_t>(getuid()) + 1002, "bob", false};
  const Actor admin_{static_cast<uint32_t>(getuid()) + 1003, "root", true};
};

// Booked 18:50-20:50 at 18:52; the command exits at 19:03: the booking keeps
// the slot it is in and ends at 19:05.
TEST_F(ReleaseTest, AStartedBookingEndsAtTheNextSlotBoundary) {
  auto r = Book(alice_);
  clock_->Set(T("2026-11-29T19:03:10Z"));
  auto out = service_->Release(alice_, {r.id});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->from, T("2026-11-29T19:05:00Z"));
  EXPECT_EQ(out->given_back, T("2026-11-29T20:50:00Z") - T("2026-11-29T19:05:00Z"));
  EXPECT_EQ(out->reservation.end, T("2026-11-29T19:05:00Z"));
  EXPECT_EQ(out->reservation.status, engine::Status::kActive);
  EXPECT_FALSE(out->reservation.cancellation.has_value());
  auto events = Events(r.id);
  ASSERT_EQ(Count(events, "release"), 1u);
  const store::Event& e = events.back();
  EXPECT_EQ(e.action, "release");
  EXPECT_EQ(e.actor_username, "alice");
  EXPECT_NE(e.before.find("20:50:00Z"), std::string::npos) << e.before;
  EXPECT_NE(e.after.find("19:05:00Z"), std::string::npos) << e.after;

  // The given-back time is free for others at once.
  CreateRequest later;
  later.count = 1;
  later.gpus = {2};
  later.duration = engine::kHour;
  later.mode = engine::Mode::kExclusive;
  later.start = T("2026-11-29T19:05:00Z");
  auto theirs = service_->Create(bob_, later);
  ASSERT_TRUE(theirs.has_value()) << theirs.error().message;
  EXPECT_EQ(theirs->reservation.start, T("2026-11-29T19:05:00Z"));
}

TEST_F(ReleaseTest, RepeatingItGivesBackNothingAndWritesNothing) {
  auto r = Book(alice_);
  clock_->Set(T("2026-11-29T19:03:10Z"));
  ASSERT_TRUE(service_->Release(alice_, {r.id}).has_value());
  clock_->Set(T("2026-11-29T19:04:00Z"));
  auto again = service_->Release(alice_, {r.id});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->given_back, 0);
  EXPECT_EQ(again->reservation.end, T("2026-11-29T19:05:00Z"));
  // After the booking has ended too.
  clock_->Set(T("2026-11-29T19:30:00Z"));
  auto ended = service_->Release(alice_, {r.id});
  ASSERT_TRUE(ended.has_value()) << ended.error().message;
  EXPECT_EQ(ended->given_back, 0);
  EXPECT_EQ(Count(Events(r.id), "release"), 1u);
}

// In its last slot there is nothing past the next boundary: the end never moves later.
TEST_F(ReleaseTest, NothingIsReleasedPastTheEnd) {
  auto r = Book(alice_);
  clock_->Set(T("2026-11-29T20:47:00Z"));
  auto out = service_->Release(alice_, {r.id});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->given_back, 0);
  EXPECT_EQ(out->reservation.end, T("2026-11-29T20:50:00Z"));
  EXPECT_EQ(Count(Events(r.id), "release"), 0u);
}

TEST_F(ReleaseTest, ABookingThatHasNotStartedIsCancelledWhole) {
  auto r = Book(alice_, T("2026-11-29T20:00:00Z"));
  auto out = service_->Release(alice_, {r.id});
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->from, T("2026-11-29T20:00:00Z"));
  EXPECT_EQ(out->given_back, 2 * engine::kHour);
  EXPECT_EQ(out->reservation.status, engine::Status::kCancelled);
  ASSERT_TRUE(out->reservation.cancellation.has_value());
  EXPECT_EQ(out->reservation.cancellation->kind, engine::CancelKind::kReleased);
  EXPECT_EQ(Count(Events(r.id), "cancel"), 1u);
  auto again = service_->Release(alice_, {r.id});
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(again->given_back, 0);
  EXPECT_EQ(Count(Events(r.id), "cancel"), 1u);
}

TEST_F(ReleaseTest, OnlyTheOwnerMayRelease) {
  auto r = Book(alice_);
  clock_->Set(T("2026-11-29T19:03:10Z"));
  for (const Actor* who : {&bob_, &admin_}) {
    auto out = service_->Release(*who, {r.id});
    ASSERT_FALSE(out.has_value());
    EXPECT_EQ(out.error().kind, ErrorKind::kPermission);
  }
  EXPECT_EQ(Count(Events(r.id), "release"), 0u);
  auto missing = service_->Release(alice_, {"00000000-0000-4000-8000-000000000000"});
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(service_->Release(alice_, {""}).error().kind, ErrorKind::kInvalid);
}

}  // namespace
}  // namespace bk::service
