#pragma once
// Which deployment applies and every effective setting, with where each came
// from. Resolution (first match wins): BK_DATA_DIR (private) > BK_CONFIG_FILE >
// the server this user connected to > /etc/gpubk/config.json > private default.
// The keys themselves, with their types, ranges and defaults, are declared once
// in config/keys.h; each has a BK_<KEY> environment override.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "config/presets.h"
#include "engine/policy.h"
#include "sys/file_system.h"

namespace bk::config {

enum class Deployment { kPrivate, kServer, kSystem };
const char* DeploymentName(Deployment d);  // private | server | system

// Reads an environment variable; tests pass a map instead of the process env.
using EnvFn = std::function<std::optional<std::string>(const std::string&)>;
EnvFn ProcessEnv();

// The settings of this user's worker (keys of KeyScope::kUser): on a shared
// server every user runs their own, so BK_<KEY> applies there too.
struct WorkerSettings {
  double poll_seconds = 1.0;            // worker_poll_seconds
  double grace_seconds = 5.0;           // worker_termination_grace_seconds
  double claim_timeout_seconds = 30.0;  // worker_claim_timeout_seconds
  double recovery_grace_seconds = 5.0;  // worker_recovery_grace_seconds
  bool live_guard = true;               // worker_live_guard
  int max_parallel = 64;                // worker_max_parallel
  int64_t log_max_mb = 64;              // job_log_max_mb (0 = no rotation)
  int64_t log_retention_days = 30;      // job_log_retention_days (0 = keep)
};

// A key of GPUBK 0.2.8's config.json that this bk does not use, and what to
// do instead (config/original_config.h).
struct DroppedKey {
  std::string key;
  std::string how;  // one clause: "remove it: ..."
};

// Member initialisers equal the defaults declared in keys.cc (a test checks),
// so a Config built in a test is the one Load would give without settings.
struct Config {
  Deployment deployment = Deployment::kPrivate;
  std::string why;          // one line: why this deployment applies
  std::string data_dir;     // private: the ledger lives here
  std::string config_file;  // the file consulted (may be absent)
  bool config_file_present = false;
  std::string ledger_path;  // data_dir/ledger.db

  engine::Policy policy;
  bool gpu_count_detected = false;  // not configured: detected or defaulted
  std::string gpu_sim_file;         // BK_GPU_SIM_FILE
  int64_t ledger_retention_days = 90;
  double lock_timeout_seconds = 10.0;
  int64_t timeline_hours = 2;
  int64_t reclaim_after_seconds = 3600;
  bool pause_sampling_during_exclusive = false;
  double monitor_interval_seconds = 2.0;
  std::string usage_visibility = "self";  // self | lab: whose usage rows a server's users see
  std::string admin_group;        // its members administer a server ("": nobody besides root and owner)
  std::vector<Preset> presets;    // the lab's (the `presets` key); each user has their own besides
  std::string metrics_textfile;   // "" (off): the Prometheus textfile the monitor rewrites after each sample
  std::string calendar_feed_dir;  // "" (off): where the daemon keeps each user's iCalendar feed
  WorkerSettings worker;
  std::optional<std::string> test_now;  // BK_TEST_NOW (test builds, private mode)

  // Shared deployments (server/system): the daemon's config file.
  std::string server_config;  // .../config.json of `bk server init` or /etc/gpubk/config.json
  std::string socket_path;
  uint32_t owner_uid = 0;  // who runs `bk server serve`; an administrator
  std::string owner;
  std::string access = "world";  // world | group
  std::string group;
  std::optional<uint32_t> gid;
  std::optional<std::string> server_test_now;  // the daemon's clock in test builds
  // The server config is GPUBK 0.2.8's: the keys carried over and the ones not.
  bool original_format = false;
  std::vector<std::string> original_honoured;
  std::vector<DroppedKey> original_dropped;

  // key -> rendered JSON value, and key -> "default" | "file" | "environment" | "detected"
  std::map<std::string, std::string> values;
  std::map<std::string, std::string> sources;
  std::vector<std::string> env_overrides;  // BK_* names that were set
};

// Loads the configuration. Bad values fail with one line naming the key and
// the accepted range. The files it names are read through `fs`; the safety
// checks of sys/fs.h and sys/trust.h look at the real file system.
Result<Config> Load(const EnvFn& env, sys::FileSystem& fs = sys::RealFileSystem());
// Loads a server's config.json (for `bk server serve --config` and clients).
// With `trusted`, the file and its ancestors must be safe (sys/trust.h).
Result<Config> LoadServer(const std::string& path, const EnvFn& env, bool trusted,
                          sys::FileSystem& fs = sys::RealFileSystem());

// Jobs one worker runs at once: worker_max_parallel (or `requested`), but
// never more than could hold bookings at the same time (enabled GPUs times
// share slots), and at least one.
int EffectiveMaxParallel(const Config& c, std::optional<int> requested = std::nullopt);

// Where `bk server connect` remembers the choice: $XDG_CONFIG_HOME/gpubk/server.json.
std::string ConnectionFile(const EnvFn& env);
// The user's own presets: $XDG_CONFIG_HOME/gpubk/presets.json.
std::string PresetsFile(const EnvFn& env);
// A private ledger.json written by GPUBK 0.2.8 that `bk admin data import`
// would take: in this data directory (BK_DATA_DIR may name the original's),
// else the original's default ($XDG_DATA_HOME/bk or ~/.local/share/bk) when
// BK_DATA_DIR is unset. Empty when there is none or this is not private mode.
std::string OriginalLedger(const Config& config, const EnvFn& env);
// GPUBK 0.2.8's job log directory ($XDG_STATE_HOME/bk/jobs or
// ~/.local/state/bk/jobs) when it holds anything; empty otherwise. Its logs are
// not imported: they stay readable where they are.
std::string OriginalJobLogs(const EnvFn& env);
// The server config path named by the text of that file (`path` names it in
// errors): {"config": "/abs/config.json", ...}.
Result<std::string> ParseConnection(std::string_view text, const std::string& path);

// Applies the text of a private ledger's config.json (`path` names it in
// errors) over `c`: a JSON object of known keys, each parsed and range-checked;
// unknown keys are refused. Load() reads the file and calls this.
Status ApplyConfigText(std::string_view text, const std::string& path, Config& c);

// The documented server config format (gpubk.server.v1), written by `bk server init`.
struct ServerSpec {
  std::string directory;
  uint32_t owner_uid = 0;
  std::string owner;
  int gpu_count = 1;
  std::optional<int64_t> host_cpus;
  std::optional<int64_t> host_ram_mb;
  std::string access = "world";
  std::string group;
  std::optional<uint32_t> gid;
  int slot_minutes = 5;
  int max_shared = 2;
  // Empty: DIR/run/broker.sock and DIR/data, as `bk server init` lays them
  // out; a system install puts them in /run/gpubk and /var/lib/gpubk.
  std::string socket;
  std::string data_dir;
};
// Where a server directory keeps its socket.
std::string ServerSocketPath(const std::string& directory);
std::string RenderServerConfig(const ServerSpec& spec);

// The ledger-bound part of the policy, as canonical JSON, compared key by key
// with what a ledger recorded at its first write.
std::string BoundPolicyJson(const engine::Policy& policy);
// "" when equal, else "key: ledger=X local=Y; ..." for every differing key.
std::string ComparePolicy(const std::string& ledger_json, const std::string& local_json);

}  // namespace bk::config
