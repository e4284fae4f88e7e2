// bk worker, bk w [start|once|status], bk service install|show|uninstall worker.

#include <fmt/format.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "config/keys.h"
#include "sys/fs.h"
#include "sys/users.h"
#include "worker/lease.h"
#include "worker/live_clock.h"
#include "worker/settings.h"
#include "worker/unit.h"
#include "worker/worker.h"

extern char** environ;

namespace bk::cli {
namespace {

Result<double> PositiveNumber(const std::optional<std::string>& text, const char* name, double lo, double hi,
                              double def) {
  if (!text) return def;
  std::string s(Trim(*text));
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || v < lo || v > hi)
    return Invalid(fmt::format("{} must be a number between {:g} and {:g}", name, lo, hi));
  return v;
}

Result<int> Status(Context& ctx, const worker::Settings& settings, bool json, bool require_running) {
  worker::WorkerStatus s =
      worker::Inspect(settings.job_dir, worker::InstanceIdentity(ctx.config), getuid(), ctx.clock->Now());
  if (json)
    ctx.PrintDoc(worker::StatusJson(s, sys::UserName(getuid())));
  else
    ctx.Print(worker::StatusLine(s, *ctx.zone));
  if (require_running && !s.running.value_or(false)) return 2;
  return 0;
}

std::string UnitDir(const std::optional<std::string>& target) {
  if (target) return *target;
  const char* xdg = getenv("XDG_CONFIG_HOME");
  std::string base = xdg && xdg[0] == '/' ? xdg : sys::HomeDir() + "/.config";
  return base + "/systemd/user";
}

}  // namespace

Result<int> RunWorker(Context& ctx, const std::vector<std::string>& args) {
  bool once = false, quiet = false, status = false, require = false, json = false;
  std::optional<std::string> poll, parallel;
  ArgSpec spec("bk worker",
               "Run your worker: it launches your booked commands at their start on exactly the booked "
               "GPUs and stops them when the booking ends.");
  spec.Flag("--once", &once, "launch what is due, wait for it, then exit (3 when work is still waiting)");
  spec.Option("--poll", &poll, "seconds between checks (default worker_poll_seconds, 1)", "S");
  spec.Option("--max-parallel", &parallel, "at most N jobs at once (default worker_max_parallel, 64)", "N");
  spec.Flag("--quiet", &quiet, "no per-job lines");
  spec.Flag("--status", &status, "print the worker's status and exit");
  spec.Flag("--require-running", &require, "like --status, exit 2 unless it runs");
  spec.Flag("--json", &json, "with --status: the gpubk.worker.v1 document");
  spec.Footer(
      "Exit codes: 0 done, 1 a job failed, 3 work still waiting (--once), 75 another worker is active, 78 "
      "ledger policy mismatch.\nShortcuts: bk w (status), bk w start, bk w once.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (json && !status && !require) return Invalid("--json requires --status or --require-running");
  if ((status || require) && (once || quiet || poll || parallel))
    return Invalid("worker run options cannot be combined with status inspection");
  BK_ASSIGN_OR_RETURN(worker::Settings settings, worker::LoadSettings(ctx.config, config::ProcessEnv()));
  if (status || require) return Status(ctx, settings, json, require);
  worker::WorkerOptions o;
  o.once = once;
  o.quiet = quiet;
  BK_ASSIGN_OR_RETURN(o.poll, PositiveNumber(poll, "--poll", 0.1, 3600, settings.poll_seconds));
  BK_ASSIGN_OR_RETURN(double par, PositiveNumber(parallel, "--max-parallel", 1, 4096, settings.max_parallel));
  o.max_parallel = config::EffectiveMaxParallel(ctx.config, static_cast<int>(par));
  BK_ASSIGN_OR_RETURN(auto clock, worker::LiveClock(ctx.config));
  BK_ASSIGN_OR_RETURN(auto ledger, client::Open(ctx.config, *clock));
  worker::Worker w(*ledger, *clock, ctx.config, settings, o, *ctx.zone, ctx.out, ctx.err);
  return w.Run();
}

Result<int> RunW(Context& ctx, const std::vector<std::string>& args) {
  if (args.empty()) return RunWorker(ctx, {"--status"});
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "status") {
    rest.insert(rest.begin(), "--status");
    return RunWorker(ctx, rest);
  }
  if (args[0] == "once") {
    rest.insert(rest.begin(), "--once");
    return RunWorker(ctx, rest);
  }
  if (args[0] == "start") return RunWorker(ctx, rest);
  return RunWorker(ctx, args);
}

// Long on purpose: the options, what the unit captures, then each action with
// the lines the original prints after it.
Result<int> RunService(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> action, what, target;
  bool force = false;
  ArgSpec spec("bk service",
               "Write, show or remove the systemd user unit of your worker or (private ledger) your monitor. "
               "bk never runs systemctl.");
  spec.NeededPositional("action", &action, "install | show | uninstall");
  spec.NeededPositional("unit", &what, "worker | monitor");
  spec.Option("--target-dir", &target, "where the unit goes (default ~/.config/systemd/user)", "DIR");
  spec.Flag("--force", &force, "replace an existing unit");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!action || (*action != "install" && *action != "show" && *action != "uninstall"))
    return Invalid("give an action: bk service install|show|uninstall worker|monitor");
  if (!what || (*what != "worker" && *what != "monitor"))
    return Invalid("give the unit: bk service install worker (or monitor)");
  const bool monitor = *what == "monitor";
  if (monitor && ctx.config.deployment != config::Deployment::kPrivate && *action != "uninstall")
    return Invalid("the server's daemon samples the GPUs; a monitor unit is only for a private ledger");
  if (target && !StartsWith(*target, "/")) return Invalid("--target-dir must be an absolute path");
  BK_ASSIGN_OR_RETURN(worker::Settings settings, worker::LoadSettings(ctx.config, config::ProcessEnv()));
  worker::UnitSpec unit;
  unit.bk_path = SelfPath();
  std::vector<std::string> overrides;
  // What this shell's bk uses, so the unit serves the same ledger: the
  // variables bk reads, nothing else (the shell hook's BK_RESERVED_GPUS and
  // the like describe this shell, not the unit).
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    bool setting =
        std::ranges::any_of(config::Keys(), [&](const auto& key) { return config::EnvName(key) == k; });
    if (!setting && k != "BK_DATA_DIR" && k != "BK_CONFIG_FILE" && k != "BK_GPU_SIM_FILE") continue;
    unit.environment.emplace_back(k, kv.substr(eq + 1));
    if (setting) overrides.push_back(k);
  }
  // The original's name for the job directory, which this bk reads too.
  if (!monitor) unit.environment.emplace_back("BK_JOB_LOG_DIR", settings.job_dir);
  std::sort(unit.environment.begin(), unit.environment.end());
  std::string text = monitor ? worker::RenderMonitorUnit(unit) : worker::RenderWorkerUnit(unit);
  std::string dir = UnitDir(target);
  std::string name = monitor ? "bk-monitor.service" : "bk-worker.service";
  std::string path = dir + "/" + name;
  if (*action == "show") {
    std::fputs(text.c_str(), ctx.out);
    return 0;
  }
  if (*action == "uninstall") {
    if (!sys::Exists(path)) {
      ctx.Print(fmt::format("no unit at {}", path));
      return 0;
    }
    if (unlink(path.c_str()) != 0) return Fail(ErrorKind::kIo, fmt::format("cannot remove {}", path));
    ctx.Print("removed unit: " + path);
    ctx.Print(fmt::format(
        "not stopped or disabled; run systemctl --user disable --now {} and systemctl --user daemon-reload",
        name));
    return 0;
  }
  if (sys::Exists(path) && !force)
    return Invalid(fmt::format("systemd unit already exists: {}; pass --force to replace it", path));
  BK_TRY(sys::EnsurePrivateDir(dir, 0700, getuid()));
  BK_TRY(sys::WriteFileAtomic(path, text, 0644));
  ctx.Print("installed unit: " + path);
  if (ctx.config.deployment == config::Deployment::kPrivate)
    ctx.Print("captured data directory: " + ctx.config.data_dir);
  else
    ctx.Print("captured server config: " + ctx.config.server_config);
  if (!monitor) ctx.Print("captured job log directory: " + settings.job_dir);
  std::sort(overrides.begin(), overrides.end());
  ctx.Print("captured config overrides: " + (overrides.empty() ? std::string("none") : Join(overrides, ",")));
  ctx.Print(
      fmt::format("not enabled or started; review it, then run: systemctl --user daemon-reload && systemctl "
                  "--user enable "
                  "--now {}",
                  name));
  ctx.Print(fmt::format("after starting it, verify: bk doctor --require-{} --strict", *what));
  ctx.Print(
      fmt::format("temporary after SSH disconnect: keep `bk {}` running in tmux", monitor ? "m" : "w start"));
  ctx.Print(
      fmt::format("to keep it running after logout an administrator runs: sudo loginctl enable-linger {}",
                  sys::UserName(getuid())));
  return 0;
}

}  // namespace bk::cli
