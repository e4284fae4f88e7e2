// Jobs bound to bookings: binding, the owner-only compare-and-swap updates,
// the state machine, cancel and retry, and the v1 -> v2 schema migration.

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "service/booking_service.h"
#include "service/service_testing.h"
#include "store/ledger_store.h"

namespace bk::service {
namespace {

using engine::T;
using store::JobStatus;

constexpr const char* kDigest = "aeaf07aeaf07aeaf07aeaf07aeaf07aeaf07aeaf07aeaf07aeaf07aeaf07aeaf";
constexpr const char* kSpec = "79133ddf-0000-4000-8000-000000000001";

class JobsTest : public ServiceTest {
 protected:
  BookingOutcome BookWithJob(engine::Seconds duration = engine::kHour) {
    CreateRequest r;
    r.count = 1;
    r.duration = duration;
    r.job = JobBinding{kSpec, kDigest, "python train.py (+2 args)"};
    auto out = service_->Create(me_, r);
    EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message);
    return out ? *out : BookingOutcome{};
  }

  // Whether `p` applied (a refused or failed update fails the test).
  bool Apply(const JobPatch& p) {
    auto r = service_->UpdateJob(me_, p);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().message);
    return r && r->applied;
  }

  // A booking whose job worker w1 has claimed with token t1.
  BookingOutcome BookClaimed() {
    BookingOutcome o = BookWithJob();
    EXPECT_TRUE(Apply(Claim(o.reservation.id, "t1")));
    return o;
  }

  JobPatch Claim(const std::string& id, const std::string& token) {
    JobPatch p;
    p.reservation_id = id;
    p.if_status = {JobStatus::kPending};
    p.status = JobStatus::kClaimed;
    p.claim_token = token;
    p.worker_id = "w1";
    p.runner_host = "vm";
    p.runner_pid = 4242;
    p.audit_action = "job-claim";
    return p;
  }

  Actor me_{getuid(), "me", false};
  Actor other_{getuid() + 1000, "alice", true};  // even an administrator may not touch the job
};

TEST_F(JobsTest, BookingBindsAPendingJobWithoutTheCommand) {
  BookingOutcome o = BookWithJob();
  ASSERT_TRUE(o.job.has_value());
  EXPECT_EQ(o.job->status, JobStatus::kPending);
  EXPECT_EQ(o.job->digest, kDigest);
  EXPECT_EQ(o.job->summary, "python train.py (+2 args)");
  auto jobs = service_->Jobs(me_, {});
  ASSERT_TRUE(jobs.has_value());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].reservation.id, o.reservation.id);
  auto list = service_->List(me_, {});
  ASSERT_TRUE(list.has_value());
  ASSERT_EQ(list->jobs.size(), 1u);
  EXPECT_TRUE(service_->Jobs(other_, {})->empty());
}

TEST_F(JobsTest, MalformedBindingIsRefusedBeforeBooking) {
  CreateRequest r;
  r.count = 1;
  r.duration = engine::kHour;
  r.job = JobBinding{"../../etc/passwd", kDigest, "x"};
  EXPECT_FALSE(service_->Create(me_, r).has_value());
  r.job = JobBinding{kSpec, "abc", "x"};
  EXPECT_FALSE(service_->Create(me_, r).has_value());
  r.job = JobBinding{kSpec, kDigest, "bad\nsummary"};
  EXPECT_FALSE(service_->Create(me_, r).has_value());
  EXPECT_TRUE(service_->List(me_, {})->reservations.empty());
}

TEST_F(JobsTest, OnlyTheOwnerUpdatesTheJob) {
  BookingOutcome o = BookWithJob();
  auto r = service_->UpdateJob(other_, Claim(o.reservation.id, "t1"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, ErrorKind::kPermission);
  EXPECT_TRUE(Apply(Claim(o.reservation.id, "t1")));
}

TEST_F(JobsTest, ClaimIsACompareAndSwap) {
  BookingOutcome o = BookWithJob();
  auto first = service_->UpdateJob(me_, Claim(o.reservation.id, "t1"));
  ASSERT_TRUE(first && first->applied);
  EXPECT_EQ(first->current.job.status, JobStatus::kClaimed);
  EXPECT_EQ(first->current.job.claimed_at, clock_->Now());
  auto second = service_->UpdateJob(me_, Claim(o.reservation.id, "t2"));
  ASSERT_TRUE(second.has_value());
  EXPECT_FALSE(second->applied);
  EXPECT_EQ(second->current.job.claim_token, "t1");
  // Running needs the token of this attempt.
  JobPatch run;
  run.reservation_id = o.reservation.id;
  run.if_status = {JobStatus::kClaimed};
  run.if_claim_token = "t2";
  run.status = JobStatus::kRunning;
  EXPECT_FALSE(Apply(run));
  run.if_claim_token = "t1";
  run.runner_pid = 5151;
  auto ok = service_->UpdateJob(me_, run);
  ASSERT_TRUE(ok && ok->applied);
  EXPECT_EQ(ok->current.job.runner_pid, 5151);
  EXPECT_TRUE(ok->current.job.started_at.has_value());
}

TEST_F(JobsTest, ImpossibleTransitionsAreErrors) {
  BookingOutcome o = BookWithJob();
  JobPatch p;
  p.reservation_id = o.reservation.id;
  p.status = JobStatus::kSucceeded;  // pending -> succeeded skips the launch
  EXPECT_FALSE(service_->UpdateJob(me_, p).has_value());
  p.status = JobStatus::kClaimed;
  p.audit_action = "rm -rf";
  EXPECT_FALSE(service_->UpdateJob(me_, p).has_value());
}

TEST_F(JobsTest, NoClaimBeforeTheStart) {
  CreateRequest r;
  r.count = 1;
  r.duration = engine::kHour;
  r.start = T("2026-11-29T20:00:00Z");
  r.job = JobBinding{kSpec, kDigest, "x"};
  auto o = service_->Create(me_, r);
  ASSERT_TRUE(o.has_value());
  auto c = service_->UpdateJob(me_, Claim(o->reservation.id, "t1"));
  ASSERT_TRUE(c.has_value());
  EXPECT_FALSE(c->applied);
  EXPECT_EQ(c->reason, "reservation is not active now");
}

TEST_F(JobsTest, FinishingStampsTimeAndAudits) {
  BookingOutcome o = BookClaimed();
  JobPatch run;
  run.reservation_id = o.reservation.id;
  run.if_claim_token = "t1";
  run.status = JobStatus::kRunning;
  ASSERT_TRUE(Apply(run));
  JobPatch done;
  done.reservation_id = o.reservation.id;
  done.if_status = {JobStatus::kRunning};
  done.if_claim_token = "t1";
  done.status = JobStatus::kTimedOut;
  done.exit_code = -9;
  done.message = "deadline";
  done.audit_action = "job-timed-out";
  done.audit_message = "exit=-9";
  auto r = service_->UpdateJob(me_, done);
  ASSERT_TRUE(r && r->applied);
  EXPECT_EQ(r->current.job.exit_code, -9);
  EXPECT_TRUE(r->current.job.finished_at.has_value());
  auto log = service_->Log(me_, 100);
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->back().action, "job-timed-out");
  EXPECT_EQ(log->back().result, "timed-out");
  // Open jobs no longer include it.
  EXPECT_TRUE(service_->Jobs(me_, {true})->empty());
}

TEST_F(JobsTest, CancelSettlesAPendingJobAndFlagsARunningOne) {
  BookingOutcome pending = BookWithJob();
  ASSERT_TRUE(service_->Cancel(me_, {pending.reservation.id, std::nullopt, std::nullopt}).has_value());
  auto jobs = service_->Jobs(me_, {});
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].job.status, JobStatus::kCancelled);

  BookingOutcome running = BookClaimed();
  ASSERT_TRUE(service_->Cancel(me_, {running.reservation.id, std::nullopt, std::nullopt}).has_value());
  auto all = service_->Jobs(me_, {});
  ASSERT_TRUE(all.has_value());
  for (const auto& v : *all)
    if (v.reservation.id == running.reservation.id) {
      EXPECT_EQ(v.job.status, JobStatus::kClaimed);  // the worker stops it and records the outcome
      EXPECT_TRUE(v.job.cancel_requested_at.has_value());
    }
}

TEST_F(JobsTest, RetryRules) {
  BookingOutcome o = BookWithJob();
  EXPECT_FALSE(service_->RetryJob(me_, {"1", false}).has_value());  // pending
  ASSERT_TRUE(Apply(Claim(o.reservation.id, "t1")));
  JobPatch lost;
  lost.reservation_id = o.reservation.id;
  lost.status = JobStatus::kUncertain;
  lost.recovery_state = "terminated";
  ASSERT_TRUE(Apply(lost));
  auto refused = service_->RetryJob(me_, {"1", false});
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("--accept-duplicate-risk"), std::string::npos);
  auto ok = service_->RetryJob(me_, {o.reservation.id.substr(0, 8), true});
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  EXPECT_EQ(ok->job.status, JobStatus::kPending);
  EXPECT_TRUE(ok->job.claim_token.empty());
  EXPECT_TRUE(ok->job.recovery_state.empty());
  EXPECT_FALSE(ok->job.claimed_at.has_value());
  // After the window the retry is refused.
  ASSERT_TRUE(Apply(Claim(o.reservation.id, "t2")));
  lost.status = JobStatus::kFailed;
  lost.recovery_state.reset();
  ASSERT_TRUE(Apply(lost));
  clock_->Set(T("2026-11-29T23:00:00Z"));
  auto late = service_->RetryJob(me_, {"1", false});
  ASSERT_FALSE(late.has_value());
  EXPECT_NE(late.error().message.find("no longer active"), std::string::npos);
}

TEST_F(JobsTest, MissedExpiresTheReservation) {
  BookingOutcome o = BookWithJob();
  clock_->Set(T("2026-11-29T23:00:00Z"));
  JobPatch p;
  p.reservation_id = o.reservation.id;
  p.if_status = {JobStatus::kPending};
  p.status = JobStatus::kMissed;
  p.expire_reservation = true;
  ASSERT_TRUE(Apply(p));
  auto jobs = service_->Jobs(me_, {});
  EXPECT_EQ((*jobs)[0].reservation.status, engine::Status::kExpired);
}

TEST_F(JobsTest, VersionOneLedgerMigratesForward) {
  BookWithJob();
  service_.reset();
  {
    store::OpenOptions o{config_.ledger_path, false, static_cast<uid_t>(getuid()), 1000, false};
    auto s = store::LedgerStore::Open(o);
    ASSERT_TRUE(s.has_value());
    // What version 1 had: no jobs table and none of version 2's indexes.
    ASSERT_TRUE((*s)->db()
                    .Exec("DROP TABLE jobs; DROP INDEX IF EXISTS reservations_by_owner_active; "
                          "PRAGMA user_version=1")
                    .has_value());
  }
  store::OpenOptions o{config_.ledger_path, false, static_cast<uid_t>(getuid()), 1000, false};
  auto s = store::LedgerStore::Open(o);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  auto st = (*s)->db().Prepare("PRAGMA user_version");
  ASSERT_TRUE(st.has_value());
  ASSERT_TRUE(st->Step().value_or(false));
  EXPECT_EQ(st->Int(0), store::LedgerStore::kSchemaVersion);
  auto jobs = (*s)->JobsForUid(getuid());
  ASSERT_TRUE(jobs.has_value());
  EXPECT_TRUE(jobs->empty());
  EXPECT_EQ((*s)->CountReservations().value_or(0), 1);
}

}  // namespace
}  // namespace bk::service
