// Supervising running jobs, against the booking as
// it stands now: TERM at end - grace and KILL at end of the *current* end (a
// renewal or edit moves both), TERM then KILL after the grace on a cancel or
// a worker stop. A job is finished when its whole process group is gone and
// nothing it left behind carrying the booking's marker still runs; unless it
// was submitted with --keep, the rest of its booking is then given back.

#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>

#include "base/strings.h"
#include "engine/parse.h"
#include "worker/procs.h"
#include "worker/worker.h"

namespace bk::worker {

using store::JobStatus;

void Worker::Reap() {
  int status = 0;
  pid_t pid;
  // As a subreaper we also collect orphaned grandchildren here; only the
  // leaders' statuses matter.
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
    for (auto& c : children_)
      if (c->pid == pid) c->wait_status = status;
}

void Worker::RequestTermination(Child& c, StopReason reason) {
  c.reason = reason;
  if (c.term_sent) return;
  c.term_sent = true;
  c.term_at = std::chrono::steady_clock::now();
  // Ctrl-C on a foreground run reaches the command as the SIGINT it expects.
  int sig = options_.foreground && reason == StopReason::kStopRequested && StopSignal() == SIGINT ? SIGINT
                                                                                                  : SIGTERM;
  SignalGroup(c.pid, sig, uid_);
  SignalEscaped(c, sig);
}

// A process that left the job's group with setsid() still carries the
// booking's marker; once the booking is over (its end, a cancel) it goes too.
void Worker::SignalEscaped(const Child& c, int sig) {
  if (c.reason == StopReason::kStopRequested) return;
  for (const auto& [pgid, pid] : FindMarkedGroups(c.reservation_id, uid_, getpgrp()))
    if (pgid != c.pid) SignalGroup(pgid, sig, uid_);
}

void Worker::Reconcile(const std::optional<std::vector<service::JobView>>& jobs, engine::Seconds now,
                       bool stopping) {
  if (children_.empty()) return;
  auto grace = static_cast<engine::Seconds>(std::ceil(settings_.grace_seconds));
  for (auto& cp : children_) {
    Child& c = *cp;
    if (jobs && !c.claim_token.empty()) {
      const service::JobView* view = nullptr;
      for (const auto& v : *jobs)
        if (v.reservation.id == c.reservation_id) view = &v;
      bool cancelled = true;  // gone from the open jobs: someone settled it
      if (view) {
        c.end = view->reservation.end;
        cancelled = view->reservation.status == engine::Status::kCancelled || view->job.cancel_requested_at ||
                    (view->job.status != JobStatus::kRunning && view->job.status != JobStatus::kClaimed);
      }
      if (cancelled && c.reason != StopReason::kCancelled) RequestTermination(c, StopReason::kCancelled);
    }
    if (!c.reason && now >= c.end - grace) RequestTermination(c, StopReason::kDeadline);
    if (stopping && !c.reason)
      RequestTermination(c, now >= c.end ? StopReason::kDeadline : StopReason::kStopRequested);
    if (c.term_sent && !c.kill_sent) {
      bool due = c.reason == StopReason::kDeadline
                     ? now >= c.end
                     : std::chrono::steady_clock::now() - c.term_at >=
                           std::chrono::milliseconds(static_cast<int64_t>(settings_.grace_seconds * 1000));
      if (due) {
        c.kill_sent = true;
        SignalGroup(c.pid, SIGKILL, uid_);
        SignalEscaped(c, SIGKILL);
      }
    }
  }
  Reap();
  auto procs = ListProcesses();
  for (size_t i = 0; i < children_.size();) {
    Child& c = *children_[i];
    if (c.wait_status && GroupMembers(procs, c.pid).empty() && LeftoversGone(c)) {
      Finish(c);
      children_.erase(children_.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
}

// Once the job's own group has ended, whatever left it and still carries the
// marker is stopped too: the job is over, so is its claim on the GPUs. The
// result stays the command's own (its main process's status).
bool Worker::LeftoversGone(Child& c) {
  if (!c.leftovers)
    c.leftovers.emplace(c.reservation_id, uid_,
                        std::chrono::milliseconds(static_cast<int64_t>(settings_.grace_seconds * 1000)));
  if (!c.leftovers->Step()) return false;
  if (c.leftovers->stuck())
    Warn(fmt::format("{}: processes left behind by the job could not be confirmed stopped",
                     Short(c.reservation_id)));
  return true;
}

void Worker::Finish(Child& c) {
  bool complete = c.log ? c.log->Finish(2000) : true;
  std::string log_error = c.log ? c.log->error() : "";
  int status = c.wait_status.value_or(0);
  int64_t code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1;
  const std::string reason(c.reason ? kStopReasonNames.Name(*c.reason) : "");
  JobStatus result = c.reason == StopReason::kCancelled       ? JobStatus::kCancelled
                     : c.reason == StopReason::kDeadline      ? JobStatus::kTimedOut
                     : c.reason == StopReason::kStopRequested ? JobStatus::kInterrupted
                     : code == 0                              ? JobStatus::kSucceeded
                                                              : JobStatus::kFailed;
  std::string warning;
  if (!complete)
    warning = "job log stream remained open after the command exited";
  else if (!log_error.empty())
    warning = log_error;
  if (!warning.empty())
    Warn(fmt::format("{} private job log is incomplete: {}", Short(c.reservation_id), warning));
  if (!c.claim_token.empty()) {
    service::JobPatch p;
    p.reservation_id = c.reservation_id;
    p.if_status = {JobStatus::kRunning};
    p.if_claim_token = c.claim_token;
    p.status = result;
    p.exit_code = code;
    p.message = reason;
    if (c.log) p.log_rotated = c.log->rotated();
    if (!warning.empty()) p.log_warning = "private job log is incomplete; inspect the owning worker";
    p.audit_action = fmt::format("job-{}", store::kJobStatusNames.Name(result));
    p.audit_message = fmt::format("exit={}", code);
    Apply(p);
  }
  // Only a command that ended by itself gives its booking back: one stopped
  // by a cancel or the end has none left, and one interrupted by a stopping
  // worker may be retried (`bk jr`) in what remains.
  bool exited = result == JobStatus::kSucceeded || result == JobStatus::kFailed;
  if (result == JobStatus::kSucceeded)
    ++counts_.succeeded;
  else if (result == JobStatus::kCancelled)
    ++counts_.cancelled;
  else
    ++counts_.failed;
  if (options_.foreground) foreground_ = {result, static_cast<int>(code), reason};
  Say(fmt::format("finished: {} status={} exit={}", Short(c.reservation_id),
                  store::kJobStatusNames.Name(result), code));
  if (exited && !c.keep_booking && !c.claim_token.empty()) GiveBack(c.reservation_id);
}

void Worker::GiveBack(const std::string& reservation_id) {
  auto released = ledger_.Release({reservation_id});
  if (!released) {
    if (released.error().kind == ErrorKind::kPolicy) policy_drift_ = true;
    Warn(fmt::format("{}: the rest of the booking could not be released: {}", Short(reservation_id),
                     released.error().message));
    return;
  }
  if (released->given_back <= 0) return;
  Say(fmt::format("released: {} GPU {} from {} - {} given back", Short(reservation_id),
                  JoinInts(released->reservation.gpus), engine::FormatLocal(released->from, zone_),
                  engine::FormatDuration(released->given_back)));
}

}  // namespace bk::worker
