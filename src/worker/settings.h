#pragma once
// The worker's settings: each key has a
// BK_<KEY> environment override. Values a configuration file set win when the
// config layer knows the key; otherwise the environment, then the default.

#include <cstdint>
#include <string>

#include "base/result.h"
#include "config/config.h"

namespace bk::worker {

struct Settings {
  double poll_seconds = 1.0;            // worker_poll_seconds (0.1..3600)
  double grace_seconds = 5.0;           // worker_termination_grace_seconds (0.1..60)
  double claim_timeout_seconds = 30.0;  // worker_claim_timeout_seconds (1..604800)
  double recovery_grace_seconds = 5.0;  // worker_recovery_grace_seconds (0.05..86400)
  bool live_guard = true;               // worker_live_guard
  int max_parallel = 64;                // worker_max_parallel (1..4096)
  int64_t log_max_mb = 64;              // job_log_max_mb (0 = no rotation)
  int64_t log_retention_days = 30;      // job_log_retention_days (0 = keep)
  std::string job_dir;                  // BK_JOB_DIR, else $XDG_STATE_HOME/gpubk/jobs
};

// Reads every key; a bad value fails with one line naming the key and range.
Result<Settings> LoadSettings(const config::Config& config, const config::EnvFn& env);

// The private job directory of this user (absolute): BK_JOB_DIR, BK_JOB_LOG_DIR
// (the original's name), else $XDG_STATE_HOME/gpubk/jobs when absolute, else
// ~/.local/state/gpubk/jobs.
Result<std::string> JobDir(const config::EnvFn& env);

// What identifies "one worker per user and data dir": the private ledger's
// directory, or the server's socket.
std::string InstanceIdentity(const config::Config& config);

}  // namespace bk::worker
