#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "service/booking_service.h"
#include "service/service_testing.h"
#include "sys/users.h"

namespace bk::service {
namespace {

using engine::T;
using store::JobStatus;

class ReclaimTest : public ServiceTest {
 protected:
  engine::Reservation Book(std::optional<engine::Seconds> start = std::nullopt) {
    CreateRequest r;
    r.count = 1;
    r.gpus = {2};
    r.duration = 3600;
    r.start = start;
    auto out = service_->Create(alice_, r);
    EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message);
    return out ? out->reservation : engine::Reservation{};
  }

  const Actor alice_{static_cast<uint32_t>(getuid()) + 1001, "alice", false};
};

TEST_F(ReclaimTest, CancelsWithKindReclaimedAnEventAndANotification) {
  auto r = Book();
  clock_->Set(T("2026-11-29T19:49:00Z"));
  auto out = service_->Reclaim(r.id, "no-show: nothing ran for 1h");
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->reservation.status, engine::Status::kCancelled);
  ASSERT_TRUE(out->reservation.cancellation.has_value());
  EXPECT_EQ(out->reservation.cancellation->kind, engine::CancelKind::kReclaimed);
  EXPECT_EQ(out->reservation.cancellation->reason, "no-show: nothing ran for 1h");
  EXPECT_EQ(out->reservation.cancellation->actor_uid, getuid());
  EXPECT_EQ(out->reservation.cancellation->actor_username, sys::UserName(getuid()));
  EXPECT_EQ(out->reservation.cancellation->at, T("2026-11-29T19:49:00Z"));

  auto h = service_->History(alice_, r.id);
  ASSERT_TRUE(h.has_value()) << h.error().message;
  ASSERT_EQ(h->events.size(), 2u);
  EXPECT_EQ(h->events[1].action, "reclaim");
  EXPECT_EQ(h->events[1].actor_uid, getuid());
  EXPECT_EQ(h->events[1].message, "no-show: nothing ran for 1h");
  ASSERT_EQ(h->notifications.size(), 1u);
  EXPECT_EQ(h->notifications[0].type, "reservation-reclaimed");
  EXPECT_EQ(h->notifications[0].uid, alice_.uid);
  auto n = service_->Notifications(alice_, 10);
  ASSERT_TRUE(n.has_value());
  ASSERT_EQ(n->size(), 1u);
  EXPECT_NE((*n)[0].message.find("reclaimed by the monitor"), std::string::npos);

  // Not twice.
  auto again = service_->Reclaim(r.id, "again");
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().kind, ErrorKind::kConflict);
}

// A reclaimed booking is cancelled as `bk cancel` cancels: a job bound to it
// that never started is settled, so no worker launches it later.
TEST_F(ReclaimTest, SettlesTheBoundJobAsACancelDoes) {
  CreateRequest req;
  req.count = 1;
  req.gpus = {1};
  req.duration = 3600;
  req.job = JobBinding{"79133ddf-0000-4000-8000-000000000001", std::string(64, 'a'), "python train.py"};
  auto booked = service_->Create(alice_, req);
  ASSERT_TRUE(booked.has_value()) << booked.error().message;
  clock_->Set(T("2026-11-29T19:49:00Z"));
  ASSERT_TRUE(service_->Reclaim(booked->reservation.id, "no-show").has_value());
  auto jobs = service_->Jobs(alice_, {});
  ASSERT_TRUE(jobs.has_value()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].job.status, JobStatus::kCancelled);
  EXPECT_EQ((*jobs)[0].job.finished_at, T("2026-11-29T19:49:00Z"));
}

TEST_F(ReclaimTest, RefusesFutureEndedAndUnknownBookings) {
  auto future = Book(T("2026-11-29T21:00:00Z"));
  auto e = service_->Reclaim(future.id, "no-show");
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().kind, ErrorKind::kConflict);
  EXPECT_NE(e.error().message.find("has not started"), std::string::npos);

  auto now = Book();
  clock_->Set(T("2026-11-29T20:00:00Z"));  // ended at 19:50
  e = service_->Reclaim(now.id, "no-show");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().message.find("expired"), std::string::npos) << e.error().message;

  e = service_->Reclaim("00000000-0000-4000-8000-000000000000", "no-show");
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().kind, ErrorKind::kNotFound);
  e = service_->Reclaim(future.id, "bad\nreason");
  ASSERT_FALSE(e.has_value());
  EXPECT_EQ(e.error().kind, ErrorKind::kInvalid);
}

}  // namespace
}  // namespace bk::service
