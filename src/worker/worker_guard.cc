// The worker's live launch guard and claim.

#include <fmt/format.h>
#include <unistd.h>

#include "sys/random.h"
#include "worker/guard.h"
#include "worker/worker.h"

namespace bk::worker {

using store::JobStatus;

std::map<std::string, std::vector<std::string>> Worker::Guard(const std::vector<const service::JobView*>& due,
                                                              engine::Seconds now) {
  std::map<std::string, std::vector<std::string>> ready;
  counts_.waiting = 0;
  if (due.empty()) return ready;
  const engine::Policy& policy = ledger_.policy();
  gpu::Snapshot snap = sampler_.Sample(policy.gpu_count);
  if (!settings_.live_guard) {
    for (const auto* v : due) ready[v->reservation.id] = CudaTokens(v->reservation.gpus, snap);
    return ready;
  }
  service::ListQuery everyone;
  everyone.everyone = true;
  auto active = ledger_.List(everyone);
  if (!active) {
    Warn(fmt::format("cannot read the bookings for the launch guard: {}", active.error().message));
    counts_.waiting = static_cast<int>(due.size());
    return ready;
  }
  for (const auto* v : due) {
    GuardInput in;
    in.reservation = &v->reservation;
    in.snapshot = snap;
    in.active = active->reservations;
    in.now = now;
    in.reserve_mb = policy.shared_memory_reserve_mb;
    in.share_capacity = policy.share_capacity;
    in.eligible = eligible_;
    GuardDecision d = EvaluateGuard(std::move(in));
    const store::JobRecord& j = v->job;
    service::JobPatch p = Patch(*v);
    p.if_status = {JobStatus::kPending};
    if (d.ready) {
      if (j.launch_guard_state == "waiting") {
        p.launch_guard_state = "";
        p.message = "";
        p.audit_action = "job-ready";
        p.audit_message = "live GPU guard cleared";
        if (Apply(p)) Say(fmt::format("ready: {} live GPU guard cleared", Short(v->reservation.id)));
      }
      ready[v->reservation.id] = d.tokens;
      continue;
    }
    ++counts_.waiting;
    // A repeated identical decision writes nothing: the audit log stays readable.
    if (j.launch_guard_state == "waiting" && j.launch_guard_key == d.key) continue;
    p.launch_guard_state = "waiting";
    p.launch_guard_key = d.key;
    p.message = d.reason;
    p.audit_action = "job-waiting";
    p.audit_message = d.reason.substr(0, 200);
    if (Apply(p)) Say(fmt::format("waiting: {} {}", Short(v->reservation.id), d.reason));
  }
  return ready;
}

bool Worker::Claim(const service::JobView& v, std::string* token) {
  *token = sys::NewUuid();
  service::JobPatch p = Patch(v);
  p.if_status = {JobStatus::kPending};
  p.status = JobStatus::kClaimed;
  p.claim_token = *token;
  p.worker_id = worker_id_;
  p.runner_host = host_;
  p.runner_pid = getpid();
  p.audit_action = "job-claim";
  p.audit_message = "claimed";
  if (!Apply(p)) return false;
  ++counts_.claimed;
  return true;
}

}  // namespace bk::worker
