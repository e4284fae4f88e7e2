// bk config and bk admin data import.

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/output.h"
#include "config/keys.h"
#include "engine/parse.h"
#include "surface/documents.h"
#include "sys/fs.h"

namespace bk::cli {
namespace {

// The key tables of the administrator's guide, generated from the declarations.
void PrintKeys(Context& ctx) {
  const char* head = "| key | default | environment | meaning | accepted values |\n|---|---|---|---|---|";
  ctx.Print(head);
  for (const auto& row : config::KeyRows(config::KeyScope::kDeployment)) ctx.Print(row);
  ctx.Print("");
  ctx.Print(head);
  for (const auto& row : config::KeyRows(config::KeyScope::kUser)) ctx.Print(row);
  ctx.Print("");
  ctx.Print("| variable | meaning |\n|---|---|");
  for (const auto& var : config::EnvironmentVariables())
    ctx.Print(fmt::format("| `{}` | {} |", var.name, var.doc));
}

}  // namespace

Result<int> RunConfig(Context& ctx, const std::vector<std::string>& args) {
  JsonOutput out;
  bool keys = false;
  ArgSpec spec("bk config", "The deployment in use, every effective setting and where it came from.");
  out.AddTo(spec, "print the gpubk.config.v1 document (indented)", "the same document on one line");
  spec.Flag("--keys", &keys, "list every key: default, environment variable, meaning, accepted values");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (keys) {
    PrintKeys(ctx);
    return 0;
  }
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::PolicyStatus status, ledger->CheckPolicy());
  const config::Config& c = ctx.config;
  if (out.wanted()) {
    std::string doc = surface::ConfigDoc(c, status, ledger->Transport(), ledger->Telemetry());
    ctx.Print(out.compact ? doc : surface::Dump(doc, surface::JsonStyle::kPretty));
    return status.state == service::PolicyState::kMismatch ? 2 : 0;
  }
  const engine::Policy& p = c.policy;
  ctx.Print("GPUBK configuration");
  ctx.Print(fmt::format("deployment: {} ({})", config::DeploymentName(c.deployment), c.why));
  if (ledger->Transport() == "socket") {
    ctx.Print(
        fmt::format("transport: socket {} (daemon of {}; identity from the kernel)", c.socket_path, c.owner));
    ctx.Print(fmt::format("ledger: {} (held by the daemon)", c.ledger_path));
  } else {
    ctx.Print("transport: direct (in-process SQLite ledger)");
    ctx.Print(fmt::format("ledger: {}{}", c.ledger_path,
                          sys::Exists(c.ledger_path) ? "" : " (created at the first booking)"));
  }
  ctx.Print(fmt::format("source: {} ({})", c.config_file,
                        c.config_file_present ? "present" : "absent: defaults/environment"));
  if (!c.env_overrides.empty()) ctx.Print("environment overrides: " + Join(c.env_overrides, ", "));
  if (c.original_format) {
    ctx.Print("GPUBK 0.2.8 config: honoured " + Join(c.original_honoured, ", "));
    for (const auto& d : c.original_dropped) ctx.Print(fmt::format("  not used: {}: {}", d.key, d.how));
  }
  ctx.Print(fmt::format("scheduling: GPUs={} ({}) slice={} shared={} queue={}h horizon={}d", p.gpu_count,
                        c.sources.at("gpu_count"), engine::FormatDuration(p.slot), p.share_capacity,
                        p.queue_search / 3600, p.horizon / 86400));
  ctx.Print(fmt::format("maximum booking duration: {}h", p.max_duration / 3600));
  if (p.host_cpus || p.host_ram_mb)
    ctx.Print(fmt::format("host budgets: cpus={} ram={} (per booking default {} CPU, {})",
                          p.host_cpus ? std::to_string(*p.host_cpus) : "off",
                          p.host_ram_mb ? engine::FormatSizeMb(*p.host_ram_mb) : "off",
                          p.default_booking_cpus, engine::FormatSizeMb(p.default_booking_ram_mb)));
  else
    ctx.Print("host budgets: off (set host_cpus / host_ram_mb to enable)");
  ctx.Print("telemetry: " + ledger->Telemetry());
  if (!p.disabled_gpus.empty()) ctx.Print("disabled GPUs: " + JoinInts(p.disabled_gpus));
  if (!p.blackouts.empty()) {
    ctx.Print(fmt::format("booking blackouts: {}", p.blackouts.size()));
    for (const auto& b : p.blackouts)
      ctx.Print(
          fmt::format("  {} -> {} {}", engine::FormatIsoUtc(b.start), engine::FormatIsoUtc(b.end), b.reason));
  }
  ctx.Print(fmt::format("monitor: sample={}s reclaim-after={}s", c.monitor_interval_seconds,
                        c.reclaim_after_seconds));
  ctx.Print("ledger policy: " + std::string(status.name()) +
            (status.message.empty() ? "" : " (" + status.message + ")"));
  ctx.Print("Use `bk config --json` for every effective setting.");
  return status.state == service::PolicyState::kMismatch ? 2 : 0;
}

namespace {

// One self-overwriting line on a terminal while an import runs, updated at
// most a few times a second and gone before anything else is printed.
class ProgressLine {
 public:
  ProgressLine(FILE* err, bool shown) : err_(err), shown_(shown) {}
  service::ImportProgressFn Fn() {
    if (!shown_) return {};
    return [this](service::ImportPhase phase, int64_t done, int64_t total) { Show(phase, done, total); };
  }
  void Clear() {
    if (!drawn_) return;
    std::fputs("\r\033[K", err_);
    std::fflush(err_);
    drawn_ = false;
  }

 private:
  void Show(service::ImportPhase phase, int64_t done, int64_t total) {
    auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    std::string what = phase == service::ImportPhase::kReading
                           ? fmt::format("{} of {} MiB", done >> 20, total >> 20)
                       : total > 0 ? fmt::format("{} of {}", done, total)
                                   : std::string("(parsing the file)");
    std::fprintf(err_, "\r\033[Kimporting: %s %s",
                 std::string(service::kImportPhaseNames.Name(phase)).c_str(), what.c_str());
    std::fflush(err_);
    drawn_ = true;
  }
  FILE* err_;
  bool shown_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

constexpr const char* kAdminUsage =
    "usage: bk admin data import LEDGER.json [--json]\n"
    "       bk admin data verify [LEDGER.db] [--json]\n"
    "       bk admin data backup NEW-FILE.db\n"
    "       sudo bk admin install [--dry-run] [--json] [--yes] [--service-user USER] [--login-hook] ...\n"
    "       sudo bk admin uninstall [--purge-data] [--dry-run] [--yes]\n"
    "       sudo bk admin services install|status|uninstall\n"
    "       bk admin policy [--disabled-gpus LIST] [--max-booking-hours N] ... [--dry-run] [--yes]\n"
    "       bk admin blackout list|add START END REASON|edit ID|rm ID [--gpus LIST]\n"
    "       bk admin notice publish|list|edit|archive ... (`bk admin notice -h`)\n"
    "       bk admin cancel REF --reason TEXT [--yes] [--json]\n"
    "       bk admin maintain [--reason TEXT] [--start TIME] [--duration DUR] [--gpus LIST] [--yes]\n"
    "       bk admin data restore BACKUP.db [--yes] [--json]\n"
    "       bk admin data clear --yes [--backup-to NEW-FILE.db] [--json]\n"
    "       bk admin transfer REF USER --reason TEXT [--yes] [--json]\n"
    "       sudo bk admin cluster status|init NAME|add NAME HOST NODE_ID|rm|enable|disable NAME [--yes]\n";

Result<int> AdminVerify(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> path;
  bool json = false;
  ArgSpec spec(
      "bk admin data verify",
      "Check a ledger: SQLite's integrity check, then the calendar's invariants (no instant where a GPU or "
      "the host budget is over-admitted). Without a path, the live ledger.");
  spec.Positional("ledger", &path, "a backup to check instead of the live ledger");
  spec.Flag("--json", &json, "print a gpubk.verify.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (path && (*path).front() != '/') return Invalid("give the backup as an absolute path");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::VerifyReport r, ledger->Verify(path.value_or("")));
  if (json) {
    ctx.Print(surface::VerifyDoc(r));
  } else {
    ctx.Print(fmt::format("ledger: {}", r.path));
    ctx.Print(fmt::format("integrity: {}", r.integrity));
    ctx.Print(fmt::format("invariants: {} ({} reservations, {} active)",
                          r.violations.empty() ? "ok" : fmt::format("{} violation(s)", r.violations.size()),
                          r.reservations, r.active));
    for (const auto& v : r.violations) ctx.Print("  " + v);
  }
  return r.ok() ? 0 : 2;
}

Result<int> AdminBackup(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> path;
  ArgSpec spec(
      "bk admin data backup",
      "Copy the live ledger into a new file, consistently, while bk (or the server's daemon) keeps running.");
  spec.Positional("file", &path, "absolute path of the new backup file");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!path)
    return Invalid("give the new backup file, e.g. bk admin data backup /srv/backups/ledger-2026-11-29.db");
  if ((*path).front() != '/') return Invalid("give the backup file as an absolute path");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(std::string done, ledger->Backup(*path));
  ctx.Print(fmt::format("backup: {}", done));
  ctx.Print(fmt::format("check it with: bk admin data verify {}", done));
  return 0;
}

}  // namespace

Result<int> RunAdmin(Context& ctx, const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    ctx.Print(std::string(kAdminUsage) + "\nAdministration of this deployment's ledger.");
    return 0;
  }
  // `bk admin WORD ...`: each word's command, in a file of its own.
  static const std::map<std::string, Command> kCommands = {
      {"policy", RunAdminPolicy},     {"gpu-policy", RunAdminPolicy},   {"blackout", RunAdminBlackout},
      {"install", RunAdminInstall},   {"uninstall", RunAdminUninstall}, {"services", RunAdminServices},
      {"notice", RunAdminNotice},     {"cancel", RunAdminCancel},       {"maintain", RunAdminMaintain},
      {"transfer", RunAdminTransfer}, {"cluster", RunAdminCluster},
  };
  if (!args.empty()) {
    if (auto it = kCommands.find(args[0]); it != kCommands.end())
      return it->second(ctx, {args.begin() + 1, args.end()});
  }
  if (args.size() < 2 || args[0] != "data")
    return Invalid("usage: bk admin data import|verify|backup|restore|clear ...; see `bk admin --help`");
  std::vector<std::string> tail(args.begin() + 2, args.end());
  if (args[1] == "verify") return AdminVerify(ctx, tail);
  if (args[1] == "backup") return AdminBackup(ctx, tail);
  if (args[1] == "restore") return RunAdminRestore(ctx, tail);
  if (args[1] == "clear") return RunAdminClear(ctx, tail);
  if (args[1] != "import")
    return Invalid(
        fmt::format("unknown data command {}; use import, verify, backup, restore or clear", args[1]));
  std::optional<std::string> file;
  JsonOutput out;
  ArgSpec spec(
      "bk admin data import",
      "Load a ledger.json written by GPUBK 0.2.8 into an empty ledger: every record is validated first and "
      "nothing is imported when any is invalid.");
  spec.Positional("ledger", &file, "path to the original's ledger.json");
  out.AddTo(spec, "print a gpubk.import.v1 summary document");
  if (auto done = ParseOrHelp(ctx, spec, tail)) return *done;
  if (!file) {
    // Without a file: the original's own private ledger, as it would have found it.
    std::string original = config::OriginalLedger(ctx.config, config::ProcessEnv());
    if (original.empty())
      return Invalid(
          "give the ledger.json to import, e.g. `bk admin data import /var/lib/gpubk/ledger.json` (no GPUBK "
          "0.2.8 ledger in ~/.local/share/bk or this data directory)");
    file = original;
  }
  auto opened = sys::OpenSmallFile(*file, client::kMaxImportBytes);
  if (!opened) return Invalid(opened.error().message);
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  ProgressLine line(ctx.err, !out.wanted() && isatty(fileno(ctx.err)));
  auto imported = ledger->ImportFile(*file, std::move(*opened), line.Fn());
  line.Clear();
  BK_ASSIGN_OR_RETURN(service::ImportSummary s, std::move(imported));
  if (out.wanted()) {
    ctx.Print(surface::ImportDoc(s));
    return 0;
  }
  ctx.Print(fmt::format(
      "imported: {} reservations ({} active, {} cancelled, {} expired), {} edits, {} notifications, "
      "{} operation IDs",
      s.reservations, s.active, s.cancelled, s.expired, s.edits, s.notifications, s.operations));
  return 0;
}

}  // namespace bk::cli
