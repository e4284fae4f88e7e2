#include "worker/worker.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>

#include "base/exit_codes.h"
#include "sys/node.h"
#include "sys/random.h"
#include "sys/users.h"
#include "worker/cleanup.h"
#include "worker/job_dir.h"
#include "worker/lease.h"

namespace bk::worker {

using store::JobStatus;
namespace {

std::atomic<int> g_stop_signal{0};
std::atomic<bool> g_hangup{false};
int g_wake[2] = {-1, -1};

void OnStop(int sig) {
  g_stop_signal = sig;
  if (g_wake[1] >= 0) {
    char c = 1;
    ssize_t ignored = write(g_wake[1], &c, 1);
    (void)ignored;
  }
}

// A closed terminal or dropped SSH session: noted, and nothing more. What runs
// belongs to its booking, not to the terminal it was started from.
void OnHangup(int) { g_hangup = true; }

struct sigaction g_old_int, g_old_term, g_old_hup, g_old_pipe;

std::string Seconds(double s) {
  return s == std::floor(s) ? fmt::format("{}s", static_cast<int64_t>(s)) : fmt::format("{:g}s", s);
}

}  // namespace

bool StopRequested() { return g_stop_signal != 0; }
int StopSignal() { return g_stop_signal; }
bool HangupSeen() { return g_hangup; }

StopHandlers::StopHandlers() {
  g_stop_signal = 0;  // a hangup stays noted: the terminal does not come back
  if (g_wake[0] < 0 && pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) g_wake[0] = g_wake[1] = -1;
  struct sigaction sa {};
  sa.sa_handler = OnStop;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
  sa.sa_handler = OnHangup;
  sa.sa_flags = SA_RESTART;  // nothing to wake up for
  sigaction(SIGHUP, &sa, &g_old_hup);
  // With the terminal or the reading end of a pipe gone, our own lines fail
  // to write (EIO, EPIPE); that must not end the supervision of a job.
  sa.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &sa, &g_old_pipe);
}

StopHandlers::~StopHandlers() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
  sigaction(SIGHUP, &g_old_hup, nullptr);
  sigaction(SIGPIPE, &g_old_pipe, nullptr);
}

void StopHandlers::Sleep(double seconds) {
  if (seconds <= 0) return;
  pollfd p{g_wake[0], POLLIN, 0};
  int ms = static_cast<int>(seconds * 1000);
  if (g_wake[0] < 0) {
    usleep(static_cast<useconds_t>(ms) * 1000);
    return;
  }
  if (poll(&p, 1, ms) > 0) {
    char buf[16];
    while (read(g_wake[0], buf, sizeof(buf)) > 0) {
    }
  }
}

Worker::Worker(client::Ledger& ledger, const sys::Clock& clock, const config::Config& config,
               const Settings& settings, WorkerOptions options, const engine::Zone& zone, FILE* out,
               FILE* err)
    : ledger_(ledger),
      clock_(clock),
      config_(config),
      settings_(settings),
      options_(std::move(options)),
      zone_(zone),
      out_(out),
      err_(err),
      worker_id_(sys::NewUuid()),
      host_(sys::LocalNode().hostname),
      uid_(getuid()),
      sampler_(config, ledger) {}

Worker::~Worker() = default;

void Worker::Say(const std::string& line) {
  if (options_.quiet) return;
  std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void Worker::Warn(const std::string& line) {
  std::fprintf(err_, "warning: %s\n", line.c_str());
  std::fflush(err_);
}

bool Worker::Mine(const service::JobView& v) const {
  return options_.only_reservation.empty() || v.reservation.id == options_.only_reservation;
}

service::JobPatch Worker::Patch(const service::JobView& v) const {
  service::JobPatch p;
  p.reservation_id = v.reservation.id;
  return p;
}

bool Worker::Apply(const service::JobPatch& p, service::JobPatchResult* out) {
  auto r = ledger_.UpdateJob(p);
  if (!r) {
    if (r.error().kind == ErrorKind::kPolicy) policy_drift_ = true;
    Warn(fmt::format("job {} could not be updated: {}", Short(p.reservation_id), r.error().message));
    return false;
  }
  if (out) *out = *r;
  return r->applied;
}

int Worker::Run() {
  auto policy = ledger_.CheckPolicy();
  if (!policy) {
    std::fprintf(err_, "bk: %s\n", policy.error().message.c_str());
    return policy.error().kind == ErrorKind::kPolicy ? exit_code::kPolicyDrift : 2;
  }
  if (policy->state == service::PolicyState::kMismatch) {
    std::fprintf(err_, "bk: %s\n", policy->message.c_str());
    return exit_code::kPolicyDrift;
  }
  if (ledger_.actor().uid != uid_) {
    std::fprintf(
        err_,
        "bk: the ledger knows you as UID %u but this process runs as UID %u; run the worker as yourself\n",
        ledger_.actor().uid, uid_);
    return 2;
  }
  if (auto st = EnsureJobDir(settings_.job_dir, uid_); !st) {
    std::fprintf(err_, "bk: %s\n", st.error().message.c_str());
    return 2;
  }
  auto lease = Lease::Acquire(settings_.job_dir, InstanceIdentity(config_), worker_id_, clock_.Now());
  if (!lease) {
    std::fprintf(err_, "bk: %s\n", lease.error().message.c_str());
    return lease.error().kind == ErrorKind::kBusy ? exit_code::kBusy : 2;
  }
  StopHandlers handlers;
  // Orphaned grandchildren of a job come back to us, so they can be reaped
  // even where PID 1 does not reap (containers).
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  if (!options_.foreground)
    Say(fmt::format("worker started: uid={} poll={} parallel={} stop-grace={} logs={}", uid_,
                    Seconds(options_.poll), options_.max_parallel, Seconds(settings_.grace_seconds),
                    settings_.job_dir));
  Recover();
  bool keep_going = true;
  while (keep_going) {
    bool stopping = StopRequested() || policy_drift_;
    Iterate(stopping, &keep_going);
    if (!keep_going) break;
    double nap = options_.poll;
    if (!children_.empty()) nap = std::min(nap, 0.2);
    if (options_.foreground) nap = std::min(nap, 0.5);
    if (StopRequested() && !children_.empty()) nap = 0.05;
    Sleep(nap);
  }
  if (!policy_drift_) Cleanup(true);
  if (!options_.foreground)
    Say(
        fmt::format("worker stopped: claimed={} started={} succeeded={} failed={} cancelled={} waiting={} "
                    "recovered={} terminated_groups={}",
                    counts_.claimed, counts_.started, counts_.succeeded, counts_.failed, counts_.cancelled,
                    counts_.waiting, counts_.recovered, counts_.terminated_groups));
  if (policy_drift_) return exit_code::kPolicyDrift;
  if (counts_.failed > 0) return 1;
  if (options_.once && counts_.waiting > 0) return 3;
  return 0;
}

void Worker::Sleep(double seconds) { StopHandlers::Sleep(seconds); }

void Worker::Iterate(bool stopping, bool* keep_going) {
  engine::Seconds now = clock_.Now();
  std::optional<std::vector<service::JobView>> jobs;
  if (!policy_drift_) {
    auto r = ledger_.Jobs({true});
    if (r) {
      jobs = std::move(*r);
      last_read_error_.clear();
    } else {
      if (r.error().kind == ErrorKind::kPolicy) {
        policy_drift_ = true;
        stopping = true;
      }
      // Once per outage, not once per poll: running jobs keep their last known end.
      if (r.error().message != last_read_error_)
        Warn(fmt::format("cannot read the jobs: {}", r.error().message));
      last_read_error_ = r.error().message;
    }
  }
  Reap();
  Reconcile(jobs, now, stopping);
  if (stopping) {
    *keep_going = !children_.empty();
    return;
  }
  if (!jobs) {
    *keep_going = !options_.once || !children_.empty();
    return;
  }
  Cleanup(false);
  Settle(*jobs, now);
  auto due = Due(*jobs, now);
  claimed_this_round_ = false;
  auto ready = Guard(due, now);
  int capacity = options_.max_parallel - static_cast<int>(children_.size());
  for (const service::JobView* v : due) {
    auto it = ready.find(v->reservation.id);
    if (it == ready.end() || capacity <= 0) continue;
    std::string token;
    if (!Claim(*v, &token)) continue;
    claimed_this_round_ = true;
    --capacity;
    Launch(*v, token, it->second);
  }
  if (options_.foreground) {
    // Keep going while our one job may still start or is running.
    bool open = false;
    for (const auto& v : *jobs)
      if (Mine(v) && v.job.status == JobStatus::kPending && v.reservation.ActiveAt(now)) open = true;
    *keep_going = open || !children_.empty();
    return;
  }
  if (options_.once) *keep_going = !children_.empty() || claimed_this_round_;
}

void Worker::Settle(const std::vector<service::JobView>& jobs, engine::Seconds now) {
  for (const auto& v : jobs) {
    if (!Mine(v)) continue;
    const store::JobRecord& j = v.job;
    bool ours = false;
    for (const auto& c : children_) ours = ours || c->reservation_id == v.reservation.id;
    if (j.status == JobStatus::kClaimed && !ours && j.worker_id != worker_id_ &&
        (!j.claimed_at ||
         *j.claimed_at < now - static_cast<engine::Seconds>(settings_.claim_timeout_seconds))) {
      service::JobPatch p = Patch(v);
      p.if_status = {JobStatus::kClaimed};
      p.if_claim_token = j.claim_token;
      p.status = JobStatus::kUncertain;
      p.message = "worker disappeared after durable claim; not retried automatically";
      p.audit_action = "job-uncertain";
      p.audit_message = *p.message;
      Apply(p);
      continue;
    }
    if (j.status != JobStatus::kPending) continue;
    service::JobPatch p = Patch(v);
    p.if_status = {JobStatus::kPending};
    if (v.reservation.status == engine::Status::kCancelled) {
      p.status = JobStatus::kCancelled;
      p.message = "reservation cancelled before the command started";
      p.audit_action = "job-cancelled";
      p.audit_message = *p.message;
      if (Apply(p)) {
        if (options_.foreground) foreground_ = {JobStatus::kCancelled, std::nullopt, *p.message};
        Say(fmt::format("cancelled: {} reservation cancelled before the command started",
                        Short(v.reservation.id)));
      }
    } else if (!v.reservation.ActiveAt(now)) {
      p.status = JobStatus::kMissed;
      p.message = j.launch_guard_state == "waiting"
                      ? "reservation window ended while waiting for live GPU safety"
                      : "reservation window ended";
      p.expire_reservation = true;
      p.audit_action = "job-missed";
      p.audit_message = *p.message;
      if (Apply(p)) {
        if (options_.foreground) foreground_ = {JobStatus::kMissed, std::nullopt, *p.message};
        Say(fmt::format("missed: {} {}", Short(v.reservation.id), *p.message));
      }
    }
  }
}

std::vector<const service::JobView*> Worker::Due(const std::vector<service::JobView>& jobs,
                                                 engine::Seconds now) const {
  std::vector<const service::JobView*> out;
  for (const auto& v : jobs)
    if (Mine(v) && v.job.status == JobStatus::kPending && v.reservation.ActiveAt(now) &&
        v.reservation.start <= now)
      out.push_back(&v);
  return out;
}

void Worker::Cleanup(bool force) {
  auto since = std::chrono::steady_clock::now() - last_cleanup_;
  if (!force && cleaned_once_ && since < std::chrono::minutes(5)) return;
  last_cleanup_ = std::chrono::steady_clock::now();
  cleaned_once_ = true;
  auto all = ledger_.Jobs({false});
  if (!all) return;
  CleanupReport specs = CleanupSpecs(settings_.job_dir, *all, clock_.Now(), uid_);
  CleanupReport logs = CleanupLogs(settings_.job_dir, *all, clock_.Now(), settings_.log_retention_days, uid_);
  for (const auto& w : specs.warnings) Warn(w);
  for (const auto& w : logs.warnings) Warn(w);
}

}  // namespace bk::worker
