#pragma once
// The per-user worker: launches this user's due
// jobs on exactly their booked GPUs and supervises them until the booking as
// it stands now ends. Each iteration re-reads the jobs and their bookings, so
// a renewal or edit moves a running job's deadline and a cancel stops it.
//
// The same loop runs the foreground half of `bk run N DUR -- CMD` (one job,
// the terminal's stdio, no log).

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/ledger.h"
#include "config/config.h"
#include "engine/civil_time.h"
#include "gpu/procfs.h"
#include "worker/job_log.h"
#include "worker/leftovers.h"
#include "worker/live_clock.h"
#include "worker/settings.h"
#include "worker/stop_reason.h"

namespace bk::worker {

struct WorkerOptions {
  bool once = false;   // run due work, wait for it, stop (exit 3 when work still waits)
  bool quiet = false;  // no per-job lines
  double poll = 1.0;   // seconds between ledger reads when idle
  int max_parallel = 64;
  // Foreground: only this reservation's job, with inherited stdio and no log;
  // waits for its start (and the launch guard) instead of stopping.
  std::string only_reservation;
  bool foreground = false;
};

struct WorkerCounts {
  int claimed = 0, started = 0, succeeded = 0, failed = 0, cancelled = 0, waiting = 0, recovered = 0,
      terminated_groups = 0;
};

// How the one foreground job ended (bk run).
struct ForegroundOutcome {
  std::optional<store::JobStatus> status;  // how the job ended; unset when it never launched
  std::optional<int> exit_code;            // negative: signal
  std::string message;
};

class Worker {
 public:
  Worker(client::Ledger& ledger, const sys::Clock& clock, const config::Config& config,
         const Settings& settings, WorkerOptions options, const engine::Zone& zone, FILE* out, FILE* err);
  ~Worker();

  // Takes the lease, recovers, loops until stopped (SIGINT/SIGTERM) or, with
  // `once`, until due work is done. Exit codes: 0, 1 (a job failed, timed out
  // or was interrupted), 3 (once: still waiting), 75 (lease busy), 78 (policy).
  int Run();

  const WorkerCounts& counts() const { return counts_; }
  const ForegroundOutcome& foreground() const { return foreground_; }
  // Lets the launch guard use the monitor's container rule.
  void set_container_eligibility(gpu::ContainerEligibility e) { eligible_ = std::move(e); }

 private:
  struct Child {
    std::string reservation_id;
    std::string claim_token;
    pid_t pid = 0;
    engine::Seconds end = 0;  // the booking's current end
    std::vector<int> gpus;
    std::unique_ptr<JobLog> log;
    std::optional<int> wait_status;
    std::optional<StopReason> reason;  // none until the worker stops it
    bool term_sent = false, kill_sent = false;
    std::chrono::steady_clock::time_point term_at;
    std::optional<LeftoverSweep> leftovers;  // once its group is gone
    bool keep_booking = false;               // --keep: the booking is not given back at the exit
  };

  // worker.cc: the loop.
  // One pass: reconcile, settle, guard, claim, launch; says whether to go on.
  void Iterate(bool stopping, bool* keep_going);
  void Settle(const std::vector<service::JobView>& jobs, engine::Seconds now);
  std::vector<const service::JobView*> Due(const std::vector<service::JobView>& jobs,
                                           engine::Seconds now) const;
  void Sleep(double seconds);
  void Cleanup(bool force);
  // worker_guard.cc: the live guard and claiming.
  std::map<std::string, std::vector<std::string>> Guard(const std::vector<const service::JobView*>& due,
                                                        engine::Seconds now);
  bool Claim(const service::JobView& job, std::string* token);
  // worker_launch.cc
  void Launch(const service::JobView& job, const std::string& token, const std::vector<std::string>& tokens);
  // `keep_booking`: the spec's --keep, false when the spec could not be read.
  void LaunchFailed(const service::JobView& job, const std::string& token, const std::string& public_message,
                    JobLog* log, const std::string& private_text, bool keep_booking);
  // worker_supervise.cc
  void Reap();
  void Reconcile(const std::optional<std::vector<service::JobView>>& jobs, engine::Seconds now,
                 bool stopping);
  void RequestTermination(Child& c, StopReason reason);
  void SignalEscaped(const Child& c, int sig);
  bool LeftoversGone(Child& c);
  void Finish(Child& c);
  // The command has exited: what is left of its booking goes back.
  void GiveBack(const std::string& reservation_id);
  // worker_recovery.cc
  void Recover();

  std::string Short(const std::string& id) const { return id.substr(0, 8); }
  void Say(const std::string& line);
  void Warn(const std::string& line);
  bool Mine(const service::JobView& v) const;
  service::JobPatch Patch(const service::JobView& v) const;
  bool Apply(const service::JobPatch& p, service::JobPatchResult* out = nullptr);

  client::Ledger& ledger_;
  const sys::Clock& clock_;
  const config::Config& config_;
  Settings settings_;
  WorkerOptions options_;
  const engine::Zone& zone_;
  FILE* out_;
  FILE* err_;
  std::string worker_id_;
  std::string host_;
  uid_t uid_;
  Sampler sampler_;
  gpu::ContainerEligibility eligible_;
  std::vector<std::unique_ptr<Child>> children_;
  std::map<std::string, std::string> waiting_;  // reservation -> guard key already recorded
  WorkerCounts counts_;
  ForegroundOutcome foreground_;
  bool claimed_this_round_ = false;
  bool policy_drift_ = false;
  std::chrono::steady_clock::time_point last_cleanup_{};
  bool cleaned_once_ = false;
  std::string last_read_error_;
};

// Set by SIGINT/SIGTERM while a worker or foreground run is active.
bool StopRequested();
int StopSignal();  // the signal that asked (SIGINT or SIGTERM), 0 when none
// Set by SIGHUP: the terminal is gone. Supervision goes on regardless (a job
// belongs to its booking); only what merely shows output to the terminal stops.
bool HangupSeen();
// Installs the stop handlers (only set a flag and wake the sleeper), notes
// SIGHUP and ignores SIGPIPE; restores all of them on destruction. Spawned
// commands start with default signal handling regardless.
class StopHandlers {
 public:
  StopHandlers();
  ~StopHandlers();
  // Sleeps up to `seconds`, returning early when a stop is requested.
  static void Sleep(double seconds);
};

}  // namespace bk::worker
