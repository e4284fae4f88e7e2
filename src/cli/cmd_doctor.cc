// bk doctor: a read-only health check of this user's deployment. Each check
// prints `pass|warn|fail NAME: message`; nothing is created or repaired.

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "monitor/usage_view.h"
#include "worker/lease.h"
#include "worker/settings.h"

namespace bk::cli {
namespace {

using nlohmann::json;

struct Check {
  std::string name;
  std::string level;  // pass | warn | fail | skip
  std::string message;
};

// The collector's state from the usage document (gpubk.usage.v1 "collector").
// The collector's state and, when it samples without recording, why.
std::pair<std::string, std::string> CollectorState(const std::string& usage_json) {
  try {
    json j = json::parse(usage_json);
    const json& c = j.at("collector");
    return {c.value("state", "unknown"), c.value("not_recording", "")};
  } catch (const json::exception&) {
    return {"unknown", ""};
  }
}

}  // namespace

// Long on purpose: one check after another, each a line of the report.
Result<int> RunDoctor(Context& ctx, const std::vector<std::string>& args) {
  bool json_out = false, strict = false;
  ArgSpec spec("bk doctor",
               "Read-only health check: configuration, ledger policy and integrity, the server's daemon, the "
               "monitor's heartbeat and your worker. Changes nothing.");
  spec.Flag("--json", &json_out, "print a gpubk.doctor.v1 document");
  spec.Flag("--strict", &strict, "exit 2 when any check warns or fails");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  const config::Config& c = ctx.config;
  std::vector<Check> checks;
  checks.push_back(
      {"configuration", "pass", fmt::format("{} ({})", config::DeploymentName(c.deployment), c.why)});

  auto ledger = ctx.Ledger();
  if (!ledger) {
    checks.push_back(
        {c.deployment == config::Deployment::kPrivate ? "ledger" : "daemon", "fail", ledger.error().message});
  } else {
    client::Ledger* l = *ledger;
    if (c.deployment != config::Deployment::kPrivate)
      checks.push_back({"daemon", "pass",
                        fmt::format("reachable at {}; you are {}{}", c.socket_path, l->actor().username,
                                    l->actor().admin ? " (administrator)" : "")});
    auto policy = l->CheckPolicy();
    if (!policy)
      checks.push_back({"ledger-policy", "fail", policy.error().message});
    else if (policy->state == service::PolicyState::kMismatch)
      checks.push_back({"ledger-policy", "fail", policy->message});
    else
      checks.push_back({"ledger-policy", "pass", std::string(policy->name())});
    if (l->actor().admin) {
      auto v = l->Verify("");
      if (!v)
        checks.push_back({"ledger-integrity", "fail", v.error().message});
      else if (!v->ok())
        checks.push_back({"ledger-integrity", "fail",
                          fmt::format("integrity {}; {} invariant violation(s): {}", v->integrity,
                                      v->violations.size(), v->violations.empty() ? "" : v->violations[0])});
      else
        checks.push_back({"ledger-integrity", "pass",
                          fmt::format("ok ({} reservations, {} active)", v->reservations, v->active)});
    } else {
      checks.push_back({"ledger-integrity", "skip", "the ledger's owner checks it (bk admin data verify)"});
    }

    // The monitor: its heartbeat, as `bk u` reads it.
    monitor::UsageQuery q;
    q.kind = monitor::UsageKind::kMe;
    q.to = l->Now() + 1;
    q.from = q.to - 60;
    q.uid = l->actor().uid;
    q.limit = 1;
    std::string state = "unknown", why;
    if (auto doc = UsageDocument(ctx, q, false)) std::tie(state, why) = CollectorState(*doc);
    bool private_mode = c.deployment == config::Deployment::kPrivate;
    std::string level = state == "running" || state == "paused" ? "pass" : private_mode ? "warn" : "fail";
    checks.push_back(
        {"monitor", level,
         fmt::format("collector {}{}", state,
                     !why.empty()      ? ": sampling, but not recording: " + why
                     : level == "pass" ? ""
                     : private_mode    ? "; run `bk m` (e.g. in tmux) for usage history and reclamation"
                                       : "; the server's daemon should be sampling: see its log")});
    // A failed sample leaves bookings on integer slots and the worker's guard waiting: say why.
    if (auto view = l->Status(l->Now(), l->Now() + 1); view && !view->snapshot.ok())
      checks.push_back({"gpu-telemetry", "warn", "unavailable: " + Printable(view->snapshot.error)});
  }

  // This user's worker for scheduled commands.
  if (auto settings = worker::LoadSettings(c, config::ProcessEnv())) {
    worker::WorkerStatus ws =
        worker::Inspect(settings->job_dir, worker::InstanceIdentity(c), getuid(), ctx.clock->Now());
    checks.push_back(
        {"worker", ws.running.value_or(false) ? "pass" : "warn",
         ws.running.value_or(false)
             ? "running"
             : fmt::format("{}; needed only for `bk N DUR -- CMD` (start it with `bk w start`)", ws.state)});
  } else {
    checks.push_back({"worker", "fail", settings.error().message});
  }

  bool bad = false;
  for (const auto& ch : checks) bad = bad || ch.level == "fail" || (strict && ch.level == "warn");
  if (json_out) {
    json list = json::array();
    for (const auto& ch : checks)
      list.push_back({{"name", ch.name}, {"status", ch.level}, {"message", ch.message}});
    ctx.Print(
        json{{"kind", "doctor"}, {"schema_version", "gpubk.doctor.v1"}, {"checks", list}, {"healthy", !bad}}
            .dump(2));
  } else {
    for (const auto& ch : checks) ctx.Print(fmt::format("{:<4} {}: {}", ch.level, ch.name, ch.message));
  }
  return bad ? 2 : 0;
}

}  // namespace bk::cli
