#pragma once
// The worker's settings: the keys config::Load parsed into Config::worker
// (each declared, with its range and BK_<KEY> override, in config/keys.cc),
// plus the private job directory, which is not a key.

#include <cstdint>
#include <string>

#include "base/result.h"
#include "config/config.h"

namespace bk::worker {

struct Settings : config::WorkerSettings {
  std::string job_dir;  // BK_JOB_DIR, else $XDG_STATE_HOME/gpubk/jobs
};

// The configured settings with the job directory. Only the directory can fail
// here (it is resolved when a command needs it); the keys were checked by Load.
Result<Settings> LoadSettings(const config::Config& config, const config::EnvFn& env);

// The private job directory of this user (absolute): BK_JOB_DIR, BK_JOB_LOG_DIR
// (the original's name), else $XDG_STATE_HOME/gpubk/jobs when absolute, else
// ~/.local/state/gpubk/jobs.
Result<std::string> JobDir(const config::EnvFn& env);

// What identifies "one worker per user and data dir": the private ledger's
// directory, or the server's socket.
std::string InstanceIdentity(const config::Config& config);

}  // namespace bk::worker
