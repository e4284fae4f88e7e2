// bk reset: empties this user's private ledger and usage history (a private
// or test data directory). Never a shared one, and never through a daemon.

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <string>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "monitor/lock.h"
#include "monitor/runner.h"
#include "store/ledger_store.h"
#include "store/usage_store.h"
#include "sys/fs.h"

namespace bk::cli {
namespace {

// GPUBK 0.2.8's words.
constexpr const char* kSharedData =
    "bk reset is disabled for shared data directories; stop writers, back up the data, and use an "
    "administrator-controlled maintenance procedure";

// Others may write to it, or it is the data directory of a `bk server`
// (beside the server's config.json and run/): its ledger is every user's.
bool SharedDataDir(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) == 0 && (st.st_mode & 022) != 0) return true;
  std::string server = sys::Dirname(dir);
  return sys::Exists(sys::JoinPath(server, "config.json")) && sys::Exists(sys::JoinPath(server, "run"));
}

// The original's question; only the word itself goes on. End of input is a no.
bool Confirmed(const Context& ctx, const std::string& dir) {
  return TypedWord(ctx, fmt::format("Clear all bk data in {}? Type reset to continue: ", dir), "reset");
}

struct Removed {
  int64_t reservations = 0, log_lines = 0, usage_events = 0, usage_rollups = 0;
};

// Each file in one transaction of its own: SQLite commits files in WAL mode
// one by one, so a failure between the two leaves the ledger empty and the
// usage history whole, and says so. Files stay: open handles and modes too.
Result<Removed> Clear(const config::Config& c) {
  Removed r;
  const int busy_ms = static_cast<int>(c.lock_timeout_seconds * 1000);
  const std::string usage_path = monitor::UsagePath(c);
  std::optional<monitor::UsageLock> lock;
  if (sys::Exists(usage_path)) {
    // A running monitor keeps what it tracks in memory and would write it back.
    auto taken = monitor::UsageLock::Take(monitor::UsageLockPath(c));
    if (!taken) {
      Error e = taken.error();
      e.message += "; stop it before bk reset";
      return std::unexpected(e);
    }
    lock.emplace(std::move(*taken));
  }
  if (sys::Exists(c.ledger_path)) {
    BK_ASSIGN_OR_RETURN(auto ledger, store::LedgerStore::Open({c.ledger_path, false, getuid(), busy_ms}));
    BK_ASSIGN_OR_RETURN(store::LedgerStore::Cleared cleared, ledger->Reset());
    r.reservations = cleared.reservations;
    r.log_lines = cleared.events;
  }
  if (lock) {
    auto usage = store::UsageStore::Open({usage_path, false, getuid(), busy_ms});
    auto cleared = usage ? (*usage)->Clear() : std::unexpected(usage.error());
    if (!cleared) {
      Error e = cleared.error();
      e.message =
          fmt::format("the ledger was reset, but not the usage history in {}: {}", usage_path, e.message);
      return std::unexpected(e);
    }
    r.usage_events = cleared->events;
    r.usage_rollups = cleared->rollups;
  }
  return r;
}

}  // namespace

Result<int> RunReset(Context& ctx, const std::vector<std::string>& args) {
  bool yes = false;
  ArgSpec spec("bk reset", "Clear every booking, the history and the usage history of this private ledger.");
  spec.Flag("--yes", &yes, "required to reset a private/test data directory without confirmation");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  const config::Config& c = ctx.config;
  if (c.deployment != config::Deployment::kPrivate)
    return Invalid(fmt::format(
        "bk reset clears only a private ledger, never a server's through its daemon; this bk uses the {} "
        "ledger of {} ({})",
        config::DeploymentName(c.deployment), c.server_config, c.why));
  if (SharedDataDir(c.data_dir)) return Invalid(kSharedData);
  if (!yes && !Confirmed(ctx, c.data_dir)) {
    ctx.Print("reset cancelled");
    return 1;
  }
  BK_ASSIGN_OR_RETURN(Removed r, Clear(c));
  // No backup files: backups are written where `bk admin data backup` is told.
  ctx.Print(
      fmt::format("reset: removed {} reservation record(s), {} log line(s), 0 backup file(s), {} usage "
                  "event(s), {} usage "
                  "rollup(s)",
                  r.reservations, r.log_lines, r.usage_events, r.usage_rollups));
  return 0;
}

}  // namespace bk::cli
