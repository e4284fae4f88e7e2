// Recovery after an unclean worker exit: jobs left
// claimed or running by a previous worker of this user are looked up through
// /proc by their exact BK_RESERVATION_ID marker, stopped (TERM, then KILL),
// and left uncertain: nobody knows whether they finished their work.

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "worker/procs.h"
#include "worker/worker.h"

namespace bk::worker {

using store::JobStatus;
namespace {

bool Retryable(const std::string& state) {
  return state == "terminating" || state == "unverified" || state == "termination-unverified" ||
         state == "remote-unverified";
}

}  // namespace

// Long on purpose: crash recovery examines each orphaned job in one pass, in
// the order its state allows (claimed, running, stopped) and records it once.
void Worker::Recover() {
  auto jobs = ledger_.Jobs({true});
  if (!jobs) {
    Warn(fmt::format("recovery skipped: cannot read the jobs: {}", jobs.error().message));
    return;
  }
  int examined = 0, uncertain = 0, terminated = 0, remote = 0;
  struct Pending {
    const service::JobView* view;
    std::map<int, int> groups;
  };
  std::vector<Pending> to_stop;
  for (const auto& v : *jobs) {
    const store::JobRecord& j = v.job;
    bool orphan =
        (j.status == JobStatus::kClaimed || j.status == JobStatus::kRunning) && j.worker_id != worker_id_;
    bool again = j.status == JobStatus::kUncertain && Retryable(j.recovery_state) && j.runner_host == host_;
    if (!orphan && !again) continue;
    ++examined;
    service::JobPatch p = Patch(v);
    p.if_status = {j.status};
    p.status = JobStatus::kUncertain;
    p.worker_id = worker_id_;
    p.expire_reservation = true;
    p.audit_action = "job-recovery";
    std::map<int, int> groups;
    if (!j.runner_host.empty() && j.runner_host != host_) {
      if (j.recovery_state == "remote-unverified") continue;
      p.recovery_state = "remote-unverified";
      p.message = fmt::format("previous worker ran on {}; not signalled from here; not retried automatically",
                              j.runner_host);
      ++remote;
    } else {
      bool available = true;
      groups = FindMarkedGroups(v.reservation.id, uid_, getpgrp(), &available);
      if (!available) {
        p.recovery_state = "unverified";
        p.message =
            "previous worker disappeared; its processes could not be inspected; not retried automatically";
        Warn(fmt::format("{}: /proc is not readable; orphaned processes could not be checked",
                         Short(v.reservation.id)));
      } else if (groups.empty()) {
        p.recovery_state = "not-found";
        p.message =
            "previous worker disappeared; no owned process group was found; not retried automatically";
      } else {
        p.recovery_state = "terminating";
        p.message = "previous worker disappeared; stopping its orphaned process group";
      }
    }
    p.audit_message = (*p.recovery_state + ": " + *p.message).substr(0, 200);
    if (!Apply(p)) continue;
    ++uncertain;
    ++counts_.recovered;
    if (*p.recovery_state == "terminating") to_stop.push_back({&v, groups});
  }
  for (auto& t : to_stop) {
    for (const auto& [pgid, pid] : t.groups) SignalGroup(pgid, SIGTERM, uid_);
    auto deadline = std::chrono::steady_clock::now() +
                    std::chrono::milliseconds(static_cast<int64_t>(settings_.recovery_grace_seconds * 1000));
    auto alive = [&] { return !FindMarkedGroups(t.view->reservation.id, uid_, getpgrp()).empty(); };
    while (alive() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (alive()) {
      for (const auto& [pgid, pid] : FindMarkedGroups(t.view->reservation.id, uid_, getpgrp()))
        SignalGroup(pgid, SIGKILL, uid_);
      auto confirm = std::chrono::steady_clock::now() +
                     std::chrono::milliseconds(
                         static_cast<int64_t>(std::min(1.0, settings_.recovery_grace_seconds) * 1000));
      while (alive() && std::chrono::steady_clock::now() < confirm)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    bool stopped = !alive();
    if (stopped) terminated += static_cast<int>(t.groups.size());
    service::JobPatch p = Patch(*t.view);
    p.if_status = {JobStatus::kUncertain};
    p.status = JobStatus::kUncertain;
    p.worker_id = worker_id_;
    p.recovery_state = stopped ? "terminated" : "termination-unverified";
    p.message =
        stopped ? "orphaned process group stopped after worker restart; prior completion remains uncertain"
                : "orphaned process group could not be confirmed stopped; do not retry automatically";
    p.audit_action = "job-recovery";
    p.audit_message = (*p.recovery_state + ": " + *p.message).substr(0, 200);
    Apply(p);
  }
  counts_.terminated_groups += terminated;
  if (examined > 0)
    Say(fmt::format("recovery: examined={} uncertain={} terminated_groups={} remote={}", examined, uncertain,
                    terminated, remote));
}

}  // namespace bk::worker
