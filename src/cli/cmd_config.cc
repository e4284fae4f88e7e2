// bk config and bk admin data import.

#include <fmt/format.h>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "engine/parse.h"
#include "surface/documents.h"
#include "sys/fs.h"

namespace bk::cli {
Result<int> RunConfig(Context& ctx, const std::vector<std::string>& args) {
  bool json = false, compact = false;
  ArgSpec spec("bk config", "The deployment in use, every effective setting and where it came from.");
  spec.Flag("--json", &json, "print the gpubk.config.v1 document (indented)");
  spec.Flag("--compact", &compact, "the same document on one line");
  BK_ASSIGN_OR_RETURN(bool help, ParseOrHelp(ctx, spec, args));
  if (help) return 0;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::PolicyStatus status, ledger->CheckPolicy());
  const config::Config& c = ctx.config;
  if (json || compact) {
    std::string doc = surface::ConfigDoc(c, status, ledger->Transport());
    ctx.Print(compact ? doc : surface::Dump(doc, surface::JsonStyle::kPretty));
    return status.status == "mismatch" ? 2 : 0;
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
  ctx.Print(fmt::format("telemetry: {}",
                        c.gpu_sim_file.empty() ? "none (GPU count only)" : "simulation " + c.gpu_sim_file));
  if (!p.disabled_gpus.empty()) ctx.Print("disabled GPUs: " + JoinInts(p.disabled_gpus));
  if (!p.blackouts.empty()) {
    ctx.Print(fmt::format("booking blackouts: {}", p.blackouts.size()));
    for (const auto& b : p.blackouts)
      ctx.Print(
          fmt::format("  {} -> {} {}", engine::FormatIsoUtc(b.start), engine::FormatIsoUtc(b.end), b.reason));
  }
  ctx.Print(fmt::format("monitor: sample={}s reclaim-after={}s", c.monitor_interval_seconds,
                        c.reclaim_after_seconds));
  ctx.Print("ledger policy: " + status.status + (status.message.empty() ? "" : " (" + status.message + ")"));
  ctx.Print("Use `bk config --json` for every effective setting.");
  return status.status == "mismatch" ? 2 : 0;
}

Result<int> RunAdmin(Context& ctx, const std::vector<std::string>& args) {
  if (args.size() < 2 || args[0] != "data" || args[1] != "import") {
    if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
      ctx.Print("usage: bk admin data import LEDGER.json [--json]\n\nAdministration of this deployment.");
      return 0;
    }
    return Invalid("usage: bk admin data import LEDGER.json [--json]");
  }
  std::vector<std::string> rest(args.begin() + 2, args.end());
  std::optional<std::string> file;
  bool json = false, compact = false;
  ArgSpec spec(
      "bk admin data import",
      "Load a ledger.json written by GPUBK 0.2.8 into an empty ledger: every record is validated first and "
      "nothing is imported when any is invalid.");
  spec.Positional("ledger", &file, "path to the original's ledger.json");
  spec.Flag("--json", &json, "print a gpubk.import.v1 summary document");
  spec.Flag("--compact", &compact, "JSON on one line");
  BK_ASSIGN_OR_RETURN(bool help, ParseOrHelp(ctx, spec, rest));
  if (help) return 0;
  if (!file)
    return Invalid("give the ledger.json to import, e.g. `bk admin data import /var/lib/gpubk/ledger.json`");
  auto text = sys::ReadSmallFile(*file, 256u << 20);
  if (!text) return Invalid(text.error().message);
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::ImportSummary s, ledger->ImportUpstream(*text));
  if (json || compact) {
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
