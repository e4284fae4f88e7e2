// Jobs bound to bookings: the ledger side of managed launches. A worker proposes each change as a
// compare-and-swap patch; the service checks ownership, the transition and
// the booking window, stamps the times and writes the audit event.

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/reference.h"
#include "service/impl.h"
#include "sys/fs.h"
#include "sys/random.h"

namespace bk::service {

using engine::Reservation;
using engine::Seconds;

namespace {

using store::JobStatus;
using store::kJobStatusNames;

// The job state machine (4.9). Retry (back to pending) is RetryJob's alone.
bool Allowed(JobStatus from, JobStatus to) {
  using enum JobStatus;
  if (from == to) return from == kPending || from == kUncertain || from == kClaimed || from == kRunning;
  if (from == kPending) return to == kClaimed || to == kCancelled || to == kMissed;
  if (from == kClaimed)
    return to == kRunning || to == kFailed || to == kCancelled || to == kMissed || to == kUncertain;
  if (from == kRunning)
    return to == kSucceeded || to == kFailed || to == kTimedOut || to == kCancelled || to == kInterrupted ||
           to == kUncertain;
  return false;
}

bool IsHex64(const std::string& s) {
  return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

Status Text(const std::optional<std::string>& v, const char* name, size_t max) {
  if (!v) return Ok();
  if (v->size() > max) return Invalid(fmt::format("{} must be at most {} bytes", name, max));
  for (unsigned char c : *v)
    if (c < 0x20 || c == 0x7f) return Invalid(fmt::format("{} must not contain control characters", name));
  return Ok();
}

Status ValidatePatch(const JobPatch& p) {
  if (p.reservation_id.empty() || p.reservation_id.size() > 128)
    return Invalid("reservation_id must be a full ID");
  if (p.launch_guard_state && !p.launch_guard_state->empty() && *p.launch_guard_state != "waiting")
    return Invalid("launch_guard_state must be \"waiting\" or empty");
  BK_TRY(Text(p.if_claim_token, "if_claim_token", 64));
  BK_TRY(Text(p.claim_token, "claim_token", 64));
  BK_TRY(Text(p.worker_id, "worker_id", 64));
  BK_TRY(Text(p.runner_host, "runner_host", 255));
  BK_TRY(Text(p.message, "message", 1000));
  BK_TRY(Text(p.launch_guard_key, "launch_guard_key", 200));
  BK_TRY(Text(p.recovery_state, "recovery_state", 64));
  BK_TRY(Text(p.log_warning, "log_warning", 200));
  BK_TRY(Text(std::optional(p.audit_message), "audit_message", 200));
  if (p.runner_pid && (*p.runner_pid < 1 || *p.runner_pid > (int64_t{1} << 31)))
    return Invalid("runner_pid must be a process ID");
  if (p.exit_code && (*p.exit_code < -128 || *p.exit_code > 255))
    return Invalid("exit_code must be -128..255");
  if (!p.audit_action.empty()) {
    bool ok = p.audit_action.size() <= 64 && StartsWith(p.audit_action, "job-") && p.audit_action.size() > 4;
    for (char c : p.audit_action) ok = ok && ((c >= 'a' && c <= 'z') || c == '-');
    if (!ok) return Invalid("audit_action must match job-[a-z-]+ (at most 64 characters)");
  }
  return Ok();
}

// A job event carries the job's status as its result, in its own transaction ID.
store::Event Stamped(store::Event e, const store::JobRecord& job) {
  e.transaction_id = sys::NewUuid();
  e.result = kJobStatusNames.Name(job.status);
  return e;
}

// Clears everything an attempt leaves behind (retry, 4.11).
void ResetAttempt(store::JobRecord& j) {
  j.claim_token.clear();
  j.claimed_at.reset();
  j.started_at.reset();
  j.finished_at.reset();
  j.exit_code.reset();
  j.runner_pid.reset();
  j.runner_host.clear();
  j.worker_id.clear();
  j.message.clear();
  j.cancel_requested_at.reset();
  j.launch_guard_state.clear();
  j.launch_guard_key.clear();
  j.waiting_since.reset();
  j.log_warning.clear();
  j.log_rotated = false;
  j.recovery_state.clear();
  j.recovery_worker_id.clear();
  j.recovered_at.reset();
}

}  // namespace

Status ValidateJobBinding(const JobBinding& b) {
  if (!sys::IsLowercaseUuid(b.spec_id)) return Invalid("job spec_id must be a lowercase UUID");
  if (!IsHex64(b.digest)) return Invalid("job digest must be 64 lowercase hex characters");
  if (b.summary.empty()) return Invalid("job summary must not be empty");
  return Text(b.summary, "job summary", 200);
}

store::JobRecord NewJob(const Reservation& r, const JobBinding& b, Seconds now) {
  store::JobRecord j;
  j.reservation_id = r.id;
  j.uid = r.uid;
  j.spec_id = b.spec_id;
  j.digest = b.digest;
  j.summary = b.summary;
  j.status = JobStatus::kPending;
  j.submitted_at = j.updated_at = now;
  return j;
}

Status CancelJob(store::LedgerStore& s, const Reservation& r, Seconds now) {
  BK_ASSIGN_OR_RETURN(auto job, s.GetJob(r.id));
  if (!job) return Ok();
  if (job->status == JobStatus::kPending) {
    job->status = JobStatus::kCancelled;
    job->finished_at = now;
    job->message = "reservation cancelled before the command started";
  } else if (job->status == JobStatus::kClaimed || job->status == JobStatus::kRunning) {
    if (!job->cancel_requested_at) job->cancel_requested_at = now;
  } else {
    return Ok();
  }
  job->updated_at = now;
  return s.UpdateJob(*job);
}

Result<store::LedgerStore*> BookingService::Impl::FreshReader() {
  if (!trial && store && store->in_memory() && LedgerExists()) store.reset();
  return Reader();
}

Result<std::vector<JobView>> BookingService::Jobs(const Actor& actor, const JobsQuery& query) {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->FreshReader());
  BK_ASSIGN_OR_RETURN(auto jobs, s->JobsForUid(actor.uid, query.open_only));
  std::vector<JobView> out;
  for (auto& j : jobs) {
    BK_ASSIGN_OR_RETURN(auto r, s->Get(j.reservation_id));
    if (r) out.push_back(JobView{std::move(*r), std::move(j)});
  }
  return out;
}

Result<JobPatchResult> BookingService::UpdateJob(const Actor& actor, const JobPatch& p) {
  return impl_->Write([&] { return UpdateJobImpl(actor, p); });
}

// Long on purpose: one compare-and-swap of a job inside one transaction; the
// preconditions, the stamping of times and the write read as one rule.
Result<JobPatchResult> BookingService::UpdateJobImpl(const Actor& actor, const JobPatch& p) {
  BK_TRY(ValidatePatch(p));
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, false));
  BK_ASSIGN_OR_RETURN(auto r, s->Get(p.reservation_id));
  if (!r) return Fail(ErrorKind::kNotFound, fmt::format("reservation not found: {}", p.reservation_id));
  // Not even an administrator: a job runs as its owner, so only the owner's
  // worker may say what happened to it.
  if (r->uid != actor.uid)
    return Fail(ErrorKind::kPermission,
                fmt::format("reservation {} belongs to {}; only its owner's worker may update its job",
                            r->ShortId(), r->username));
  BK_ASSIGN_OR_RETURN(auto current, s->GetJob(r->id));
  if (!current) return Fail(ErrorKind::kNotFound, fmt::format("reservation {} has no job", r->ShortId()));
  JobPatchResult out;
  out.current = JobView{*r, *current};
  if (!p.if_status.empty() &&
      std::find(p.if_status.begin(), p.if_status.end(), current->status) == p.if_status.end()) {
    out.reason = fmt::format("job is {}", kJobStatusNames.Name(current->status));
    return out;
  }
  if (p.if_claim_token && *p.if_claim_token != current->claim_token) {
    out.reason = "the claim belongs to another attempt";
    return out;
  }
  store::JobRecord j = *current;
  JobStatus to = p.status.value_or(j.status);
  if (!Allowed(j.status, to))
    return Invalid(fmt::format("job {} cannot go from {} to {}", r->ShortId(), kJobStatusNames.Name(j.status),
                               kJobStatusNames.Name(to)));
  bool changed_status = to != j.status;
  // The window is checked here too, so that no client can launch outside it.
  if (changed_status && to == JobStatus::kClaimed && !(r->ActiveAt(now) && r->start <= now)) {
    out.reason = "reservation is not active now";
    return out;
  }
  if (changed_status && to == JobStatus::kRunning && !r->ActiveAt(now)) {
    out.reason = r->status == engine::Status::kCancelled ? "reservation was cancelled" : "reservation ended";
    return out;
  }
  if (p.claim_token) j.claim_token = *p.claim_token;
  if (p.worker_id) j.worker_id = *p.worker_id;
  if (p.runner_host) j.runner_host = *p.runner_host;
  if (p.runner_pid) j.runner_pid = *p.runner_pid;
  if (p.exit_code) j.exit_code = *p.exit_code;
  if (p.message) j.message = *p.message;
  if (p.log_warning) j.log_warning = *p.log_warning;
  if (p.log_rotated) j.log_rotated = *p.log_rotated;
  if (p.launch_guard_state) {
    if (p.launch_guard_state->empty()) {
      j.launch_guard_state.clear();
      j.launch_guard_key.clear();
      j.waiting_since.reset();
    } else {
      j.launch_guard_state = *p.launch_guard_state;
      if (!j.waiting_since) j.waiting_since = now;
    }
  }
  if (p.launch_guard_key) j.launch_guard_key = *p.launch_guard_key;
  if (p.recovery_state) {
    j.recovery_state = *p.recovery_state;
    j.recovery_worker_id = p.worker_id.value_or(j.recovery_worker_id);
    j.recovered_at = now;
  }
  if (changed_status) {
    j.status = to;
    if (to == JobStatus::kClaimed) {
      j.claimed_at = now;
      j.launch_guard_state.clear();
      j.launch_guard_key.clear();
      j.waiting_since.reset();
      if (!p.message) j.message.clear();
    } else if (to == JobStatus::kRunning) {
      j.started_at = now;
    } else if (store::Finished(to)) {
      j.finished_at = now;
    }
  }
  j.updated_at = now;
  BK_TRY(s->UpdateJob(j));
  if (p.expire_reservation && r->status == engine::Status::kActive && r->end <= now) {
    r->status = engine::Status::kExpired;
    r->updated_at = now;
    BK_TRY(s->Update(*r));
  }
  if (!p.audit_action.empty())
    BK_TRY(s->AppendEvent(Stamped(MakeEvent(p.audit_action, *r, actor, r->op_id, p.audit_message, now), j)));
  BK_TRY(txn.Commit());
  out.applied = true;
  out.current = JobView{*r, j};
  return out;
}

Result<JobView> BookingService::RetryJob(const Actor& actor, const JobRetryRequest& request) {
  return impl_->Write([&] { return RetryJobImpl(actor, request); });
}

Result<JobView> BookingService::RetryJobImpl(const Actor& actor, const JobRetryRequest& request) {
  std::string ref(Trim(request.ref));
  if (ref.empty()) return Invalid("give a job number or ID; `bk j` lists your jobs");
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, false));
  BK_ASSIGN_OR_RETURN(auto jobs, s->JobsForUid(actor.uid));
  BK_ASSIGN_OR_RETURN(engine::ListRef pick, engine::ParseListRef(ref, jobs.size(), "job", "bk j"));
  std::vector<store::JobRecord> matches =
      engine::Picked(pick, jobs, [](const store::JobRecord& j) { return j.reservation_id; });
  if (matches.empty())
    return Fail(ErrorKind::kNotFound,
                fmt::format("job not found for current user: {}; `bk j` lists your jobs", ref));
  if (matches.size() > 1) return Invalid(fmt::format("ambiguous job ID {}; give more characters", ref));
  store::JobRecord j = matches[0];
  if (j.status != JobStatus::kFailed && j.status != JobStatus::kInterrupted &&
      j.status != JobStatus::kUncertain)
    return Invalid(fmt::format("job in {} state cannot be retried", kJobStatusNames.Name(j.status)));
  if (j.status == JobStatus::kUncertain && !request.accept_duplicate_risk)
    return Invalid("uncertain job may already be running; pass --accept-duplicate-risk after checking");
  BK_ASSIGN_OR_RETURN(auto r, s->Get(j.reservation_id));
  if (!r || !r->ActiveAt(now)) return Invalid("reservation window is no longer active; create a new booking");
  ResetAttempt(j);
  j.status = JobStatus::kPending;
  j.updated_at = now;
  BK_TRY(s->UpdateJob(j));
  std::string why = request.accept_duplicate_risk ? "retry queued; duplicate risk accepted" : "retry queued";
  BK_TRY(s->AppendEvent(Stamped(MakeEvent("job-retry", *r, actor, r->op_id, why, now), j)));
  BK_TRY(txn.Commit());
  return JobView{*r, j};
}

}  // namespace bk::service
