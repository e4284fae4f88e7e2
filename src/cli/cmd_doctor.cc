// bk doctor: a read-only health check of this user's deployment. Each check
// prints `pass|warn|fail NAME: message`; what is wrong is also listed as an
// issue (surface/doctor.h), and --probe adds the deployment preflight
// (surface/preflight.h). Nothing is created or repaired.

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "monitor/usage_view.h"
#include "surface/doctor.h"
#include "surface/preflight.h"
#include "sys/users.h"
#include "worker/lease.h"
#include "worker/settings.h"

namespace bk::cli {
namespace {

using nlohmann::json;
using surface::DoctorReport;
using surface::Finding;

void AddCheck(DoctorReport& r, std::string name, std::string status, std::string message) {
  r.checks.push_back({.name = std::move(name), .status = std::move(status), .message = std::move(message)});
}

// The ledger's bound policy and, for its administrators, its integrity.
void LedgerChecks(client::Ledger& l, const config::Config& c, DoctorReport& r) {
  if (c.deployment != config::Deployment::kPrivate)
    AddCheck(r, "daemon", "pass",
             fmt::format("reachable at {}; you are {}{}", c.socket_path, l.actor().username,
                         l.actor().admin ? " (administrator)" : ""));
  auto policy = l.CheckPolicy();
  if (!policy) {
    AddCheck(r, "ledger-policy", "fail", policy.error().message);
    r.storage_issues.push_back(
        {.name = "ledger-read", .message = policy.error().message, .details = {{"path", c.ledger_path}}});
  } else if (policy->state == service::PolicyState::kMismatch) {
    AddCheck(r, "ledger-policy", "fail", policy->message);
    r.policy_issues.push_back({.name = "ledger-policy-mismatch", .message = policy->message});
  } else {
    AddCheck(r, "ledger-policy", "pass", std::string(policy->name()));
  }
  if (!l.actor().admin) {
    AddCheck(r, "ledger-integrity", "skip", "the ledger's owner checks it (bk admin data verify)");
    return;
  }
  auto v = l.Verify("");
  if (!v) {
    AddCheck(r, "ledger-integrity", "fail", v.error().message);
    r.storage_issues.push_back(
        {.name = "ledger-read", .message = v.error().message, .details = {{"path", c.ledger_path}}});
    return;
  }
  if (v->ok()) {
    AddCheck(r, "ledger-integrity", "pass",
             fmt::format("ok ({} reservations, {} active)", v->reservations, v->active));
    return;
  }
  AddCheck(r, "ledger-integrity", "fail",
           fmt::format("integrity {}; {} invariant violation(s): {}", v->integrity, v->violations.size(),
                       v->violations.empty() ? "" : v->violations[0]));
  if (v->integrity != "ok")
    r.storage_issues.push_back(
        {.name = "ledger-integrity", .message = v->integrity, .details = {{"path", c.ledger_path}}});
  for (const auto& violation : v->violations)
    r.policy_issues.push_back({.name = "ledger-invariant", .message = violation});
}

// The monitor: its heartbeat, as `bk u` reads it.
void MonitorCheck(Context& ctx, client::Ledger& l, DoctorReport& r) {
  auto doc = UsageDocument(ctx, CollectorQuery(l.Now(), l.actor().uid), false);
  try {
    r.collector =
        doc ? json::parse(*doc).at("collector") : json{{"state", "unavailable"}, {"fresh", nullptr}};
  } catch (const json::exception&) {
    r.collector = {{"state", "unknown"}, {"fresh", nullptr}};
  }
  if (!doc) r.collector["error"] = doc.error().message;
  r.collector["schema_version"] = "gpubk.collector.v1";
  const std::string state = r.collector.value("state", "unknown");
  const std::string why = r.collector.value("not_recording", "");
  auto issue = surface::MonitorIssue(r.collector, r.monitor_required);
  std::string level = state == "running" || state == "paused" ? "pass" : issue ? "fail" : "warn";
  bool private_mode = ctx.config.deployment == config::Deployment::kPrivate;
  AddCheck(r, "monitor", level,
           fmt::format("collector {}{}", state,
                       !why.empty()      ? ": sampling, but not recording: " + why
                       : level == "pass" ? ""
                       : private_mode    ? "; run `bk m` (e.g. in tmux) for usage history and reclamation"
                                         : "; the server's daemon should be sampling: see its log"));
  if (issue) r.policy_issues.push_back(*issue);
  // A failed sample leaves bookings on integer slots and the worker's guard waiting: say why.
  if (auto view = l.Status(l.Now(), l.Now() + 1, 0); view && !view->snapshot.ok())
    AddCheck(r, "gpu-telemetry", "warn", "unavailable: " + Printable(view->snapshot.error));
}

// This user's worker for scheduled commands.
void WorkerCheck(Context& ctx, DoctorReport& r) {
  const config::Config& c = ctx.config;
  auto settings = worker::LoadSettings(c, config::ProcessEnv());
  if (!settings) {
    AddCheck(r, "worker", "fail", settings.error().message);
    r.worker = nullptr;
    r.policy_issues.push_back({.name = "worker-health", .message = settings.error().message});
    return;
  }
  worker::WorkerStatus ws =
      worker::Inspect(settings->job_dir, worker::InstanceIdentity(c), getuid(), ctx.clock->Now());
  r.worker = json::parse(worker::StatusJson(ws, sys::UserName(getuid())));
  auto issue = surface::WorkerIssue(r.worker, r.worker_required);
  bool running = ws.running.value_or(false);
  AddCheck(r, "worker",
           running ? "pass"
           : issue ? "fail"
                   : "warn",
           running
               ? "running"
               : fmt::format("{}; needed only for `bk N DUR -- CMD` (start it with `bk w start`)", ws.state));
  if (issue) r.policy_issues.push_back(*issue);
}

}  // namespace

Result<int> RunDoctor(Context& ctx, const std::vector<std::string>& args) {
  bool json_out = false, strict = false, probe = false;
  DoctorReport r;
  ArgSpec spec(
      "bk doctor",
      "Read-only health check: configuration, storage, ledger policy and integrity, the server's daemon, "
      "the monitor's heartbeat and your worker. Changes nothing.");
  spec.Flag(
      "--probe", &probe,
      "deployment preflight: data directory, atomic replace and locks (in a temporary file it removes), "
      "disk space, the daemon, GPU telemetry");
  spec.Flag("--json", &json_out, "print a gpubk.doctor.v1 document");
  spec.Flag("--strict", &strict, "exit 2 when there is any issue (with --probe: when not ready)");
  spec.Flag("--require-monitor", &r.monitor_required, "an issue unless the monitor's heartbeat is fresh");
  spec.Flag("--require-worker", &r.worker_required,
            "an issue unless your worker runs for this data directory");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  const config::Config& c = ctx.config;
  r.probed = probe;
  AddCheck(r, "configuration", "pass", fmt::format("{} ({})", config::DeploymentName(c.deployment), c.why));
  surface::DataDirExpectation want = surface::ExpectedDataDir(c, getuid());
  surface::StorageFindings storage = surface::InspectStorage(c, want);
  r.storage_issues = storage.issues;
  bool private_mode = c.deployment == config::Deployment::kPrivate;

  client::Ledger* ledger = nullptr;
  std::string ledger_error;
  if (private_mode && storage.unsafe) {
    // Never read through a data root that is not a real directory.
    ledger_error = "skipped because the data root is unsafe";
    AddCheck(r, "ledger", "fail", fmt::format("not opened: {} is not a real directory", want.path));
  } else if (auto opened = ctx.Ledger()) {
    ledger = *opened;
  } else {
    ledger_error = opened.error().message;
    AddCheck(r, private_mode ? "ledger" : "daemon", "fail", ledger_error);
  }
  if (ledger) {
    r.transport = ledger->Transport();
    LedgerChecks(*ledger, c, r);
    MonitorCheck(ctx, *ledger, r);
  } else {
    r.transport = private_mode ? "direct" : "socket";
    r.storage_issues.push_back({.name = "ledger-read",
                                .message = ledger_error,
                                .details = {{"path", private_mode ? c.ledger_path : c.socket_path}}});
    r.collector = {{"schema_version", "gpubk.collector.v1"}, {"state", "unavailable"}, {"fresh", nullptr}};
    if (auto issue = surface::MonitorIssue(r.collector, r.monitor_required))
      r.policy_issues.push_back(*issue);
  }
  WorkerCheck(ctx, r);
  if (probe) r.probes = surface::RunProbes(c, want, ledger, ledger_error);

  if (json_out)
    ctx.Print(surface::DoctorDoc(c, r));
  else
    for (const auto& line : surface::DoctorText(r)) ctx.Print(line);
  return r.ExitCode(strict);
}

}  // namespace bk::cli
