// bk info / contact / about / i: who administers this deployment and how to
// reach them, which deployment this is and the policy its configuration sets.
// Needs no ledger and starts no daemon: it reads the Linux account and the
// configuration, and at most knocks once at a server's socket.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/output.h"
#include "engine/parse.h"
#include "server/unix_socket.h"
#include "surface/administrator.h"
#include "surface/documents.h"
#include "sys/fs.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

using nlohmann::json;

// What a deployment is, as far as the configuration and one connection say.
struct Deployment {
  bool shared = false;
  std::optional<bool> daemon_answers;  // shared only
  int upcoming_blackouts = 0;          // not over yet
};

Deployment Inspect(const Context& ctx) {
  const config::Config& c = ctx.config;
  Deployment d{.shared = c.deployment != config::Deployment::kPrivate};
  if (d.shared) {
    // A connection accepted is a daemon serving; nothing is sent, so nothing starts or changes.
    Result<int> fd = server::ConnectUnix(c.socket_path, 1000);
    d.daemon_answers = fd.has_value();
    if (fd) ::close(*fd);
  }
  engine::Seconds now = ctx.clock->Now();
  d.upcoming_blackouts =
      static_cast<int>(std::count_if(c.policy.blackouts.begin(), c.policy.blackouts.end(),
                                     [&](const engine::Blackout& b) { return b.end > now; }));
  return d;
}

std::vector<std::string> DeploymentLines(const Context& ctx, const Deployment& d) {
  const config::Config& c = ctx.config;
  std::vector<std::string> lines = {
      fmt::format("Deployment: {} ({})", config::DeploymentName(c.deployment), c.why),
      fmt::format("Config file: {}{}", c.config_file.empty() ? "none" : c.config_file,
                  c.config_file.empty() || c.config_file_present ? "" : " (absent: defaults apply)"),
      fmt::format("Ledger: {}{}", c.ledger_path,
                  d.shared || sys::Exists(c.ledger_path) ? "" : " (not created yet)")};
  if (d.shared)
    lines.push_back(
        fmt::format("Socket: {} ({})", c.socket_path,
                    *d.daemon_answers ? "the daemon answers" : "no daemon answers; see `bk doctor`"));
  return lines;
}

std::vector<std::string> PolicyLines(const Context& ctx, const Deployment& d) {
  const engine::Policy& p = ctx.config.policy;
  std::vector<int> enabled = p.EnabledGpus();
  return {
      "Policy:",
      fmt::format("  GPUs: {} ({} enabled: {})", p.gpu_count, enabled.size(), JoinInts(enabled)),
      fmt::format("  Slot: {}; longest booking {}; bookings end within {}", engine::FormatDuration(p.slot),
                  engine::FormatDuration(p.max_duration), engine::FormatDuration(p.horizon)),
      fmt::format("  Shared slots per GPU: {}", p.share_capacity),
      fmt::format("  Blackouts not over yet: {}", d.upcoming_blackouts),
      fmt::format("  Lab presets: {}", ctx.config.presets.size())};
}

// gpubk.info.v1: the deployment, the administrator (gpubk.administrator.v1 as
// `bk info --json` prints it) and the policy.
json InfoJson(const Context& ctx, const Deployment& d, const surface::Administrator& admin) {
  const config::Config& c = ctx.config;
  const engine::Policy& p = c.policy;
  auto or_null = [](const std::string& s) { return s.empty() ? json() : json(s); };
  return {{"schema_version", "gpubk.info.v1"},
          {"kind", "info"},
          {"deployment",
           {{"mode", config::DeploymentName(c.deployment)},
            {"why", c.why},
            {"config_file", or_null(c.config_file)},
            {"config_file_present", c.config_file_present},
            {"ledger", c.ledger_path},
            {"socket", d.shared ? json(c.socket_path) : json()},
            {"daemon_answers", d.daemon_answers ? json(*d.daemon_answers) : json()}}},
          {"administrator", json::parse(surface::AdministratorDoc(admin))},
          {"policy",
           {{"gpu_count", p.gpu_count},
            {"enabled_gpus", p.EnabledGpus()},
            {"slot_seconds", p.slot},
            {"max_duration_seconds", p.max_duration},
            {"horizon_seconds", p.horizon},
            {"shared_slots_per_gpu", p.share_capacity},
            {"upcoming_blackouts", d.upcoming_blackouts},
            {"lab_presets", c.presets.size()}}}};
}

}  // namespace

Result<int> RunInfo(Context& ctx, const std::vector<std::string>& args) {
  ArgSpec spec("bk info",
               "The administrator of this deployment and how to reach them (from the Linux account), the "
               "deployment and its policy.");
  JsonOutput out;
  bool all = false;
  out.AddTo(spec, "print the gpubk.administrator.v1 document (indented)");
  spec.Flag("--all", &all,
            "with --json or --compact: the gpubk.info.v1 document (deployment, administrator, policy)");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (all && !out.wanted()) return UsageError("--all goes with --json or --compact");
  uid_t uid = surface::AdministratorUid(ctx.config, sys::CurrentUid());
  surface::Administrator admin = surface::ReadAdministrator(uid, sys::LookupAccount(uid));
  if (out.wanted() && !all) {
    std::string doc = surface::AdministratorDoc(admin);
    ctx.Print(out.compact ? doc : surface::Dump(doc, surface::JsonStyle::kPretty));
    return 0;
  }
  Deployment d = Inspect(ctx);
  if (out.wanted()) {
    std::string doc = InfoJson(ctx, d, admin).dump(-1, ' ', false, json::error_handler_t::replace);
    ctx.Print(out.compact ? doc : surface::Dump(doc, surface::JsonStyle::kPretty));
    return 0;
  }
  for (const auto& line : surface::AdministratorLines(admin, d.shared)) ctx.Print(line);
  ctx.Print("");
  for (const auto& line : DeploymentLines(ctx, d)) ctx.Print(line);
  for (const auto& line : PolicyLines(ctx, d)) ctx.Print(line);
  return 0;
}

}  // namespace bk::cli
