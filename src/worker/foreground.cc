#include "worker/foreground.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <set>

#include "base/exit_codes.h"
#include "base/strings.h"
#include "worker/leftovers.h"
#include "worker/procs.h"
#include "worker/spawn.h"
#include "worker/worker.h"

namespace bk::worker {

std::map<std::string, std::string> AdhocEnvironment(const AdhocRun& run) {
  std::vector<int> gpus;
  std::vector<std::string> ids;
  std::set<std::optional<int64_t>> memory;
  for (const auto& r : run.selected) {
    ids.push_back(r.id);
    memory.insert(r.memory_mb);
    for (int g : r.gpus)
      if (std::find(gpus.begin(), gpus.end(), g) == gpus.end()) gpus.push_back(g);
  }
  std::map<std::string, std::string> env = {{"CUDA_VISIBLE_DEVICES", Join(run.tokens, ",")},
                                            {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                            {"BK_RESERVED_GPUS", JoinInts(gpus)},
                                            {"GPUBK_RESERVATION_IDS", Join(ids, ",")},
                                            {"GPUBK_GPU_IDS", JoinInts(gpus)}};
  if (run.selected.size() == 1) env["BK_RESERVATION_ID"] = run.selected[0].id;
  if (memory.size() == 1 && *memory.begin())
    env["BK_EXPECTED_GPU_MEMORY_MB"] = std::to_string(**memory.begin());
  return env;
}

namespace {

// The booking is over (its end, a cancel): every group of ours carrying its
// exact marker goes with the command's own, wherever it was started from.
void SignalEscaped(const std::string& reservation_id, pid_t main_pgid, int sig, uid_t uid) {
  if (reservation_id.empty()) return;
  for (const auto& [pgid, pid] : FindMarkedGroups(reservation_id, uid, getpgrp()))
    if (pgid != main_pgid) SignalGroup(pgid, sig, uid);
}

}  // namespace

Result<int> RunAdhoc(client::Ledger& ledger, const sys::Clock& clock, const Settings& settings,
                     const AdhocRun& run, FILE* err) {
  char buf[8192];
  if (!getcwd(buf, sizeof(buf))) return Fail(ErrorKind::kIo, "cannot read the working directory");
  const char* path = getenv("PATH");
  SpawnOptions so;
  so.argv = run.argv;
  so.cwd = buf;
  so.path = path ? path : "/usr/local/bin:/usr/bin:/bin";
  so.env = MergeEnvironment(AdhocEnvironment(run));
  // SIGHUP (the terminal closed, SSH dropped) is only noted: the command
  // belongs to its booking and is supervised to its end all the same.
  StopHandlers handlers;
  // Orphans of the command come back to us: reaped here, and found as ours
  // when it has exited (LeftoverSweep).
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  BK_ASSIGN_OR_RETURN(pid_t pid, Spawn(so));
  uid_t uid = getuid();
  auto grace_ms = std::chrono::milliseconds(static_cast<int64_t>(settings.grace_seconds * 1000));
  std::string marker = run.selected.size() == 1 ? run.selected[0].id : "";
  LeftoverSweep leftovers(marker, uid, grace_ms);
  auto grace_s = static_cast<engine::Seconds>(std::ceil(settings.grace_seconds));
  engine::Seconds end = run.selected.front().end;
  for (const auto& r : run.selected) end = std::min(end, r.end);
  std::optional<int> status;
  std::optional<StopReason> reason;
  bool term_sent = false, kill_sent = false;
  auto term_at = std::chrono::steady_clock::now();
  auto last_read = std::chrono::steady_clock::now() - std::chrono::seconds(10);
  auto stop = [&](StopReason why, int sig) {
    if (!reason) reason = why;
    if (term_sent) return;
    term_sent = true;
    term_at = std::chrono::steady_clock::now();
    SignalGroup(pid, sig, uid);
    if (reason != StopReason::kStopRequested) SignalEscaped(marker, pid, sig, uid);
  };
  while (true) {
    int st = 0;
    pid_t got;
    while ((got = waitpid(-1, &st, WNOHANG)) > 0)
      if (got == pid) status = st;
    if (status && GroupMembers(ListProcesses(), pid).empty() && leftovers.Step()) break;
    engine::Seconds now = clock.Now();
    // The bookings as they stand now: a renewal moves the end, a cancel stops.
    if (std::chrono::steady_clock::now() - last_read >= std::chrono::seconds(1)) {
      last_read = std::chrono::steady_clock::now();
      auto mine = ledger.List(service::ListQuery{});
      if (mine) {
        engine::Seconds e = 0;
        bool gone = false;
        for (const auto& sel : run.selected) {
          auto it = std::find_if(mine->reservations.begin(), mine->reservations.end(),
                                 [&](const engine::Reservation& r) { return r.id == sel.id; });
          if (it == mine->reservations.end())
            gone = true;
          else
            e = e == 0 ? it->end : std::min(e, it->end);
        }
        if (gone && now < end) {
          if (!reason) std::fprintf(err, "run: reservation was cancelled; stopping the command\n");
          stop(StopReason::kCancelled, SIGTERM);
        } else if (e > 0) {
          end = e;
        }
      }
    }
    if (StopRequested() && !reason)
      stop(StopReason::kStopRequested, StopSignal() == SIGINT ? SIGINT : SIGTERM);
    if (!reason && now >= end - grace_s) {
      std::fprintf(err, "run: reservation ended; stopping the command\n");
      stop(StopReason::kDeadline, SIGTERM);
    }
    if (term_sent && !kill_sent) {
      bool due = reason == StopReason::kDeadline ? now >= end
                                                 : std::chrono::steady_clock::now() - term_at >= grace_ms;
      if (due) {
        kill_sent = true;
        SignalGroup(pid, SIGKILL, uid);
        if (reason != StopReason::kStopRequested) SignalEscaped(marker, pid, SIGKILL, uid);
      }
    }
    StopHandlers::Sleep(0.1);
  }
  if (leftovers.stuck())
    std::fprintf(err, "run: processes left behind by the command could not be confirmed stopped\n");
  if (reason == StopReason::kDeadline || reason == StopReason::kCancelled) return exit_code::kTimedOut;
  if (reason == StopReason::kStopRequested) return StopSignal() == SIGINT ? 130 : 143;
  if (WIFEXITED(*status)) return WEXITSTATUS(*status);
  if (WIFSIGNALED(*status)) return 128 + WTERMSIG(*status);
  return 1;
}

}  // namespace bk::worker
