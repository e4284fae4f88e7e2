#include "surface/doctor.h"

#include <fmt/format.h>

#include <cmath>

#include "base/strings.h"
#include "surface/documents.h"

namespace bk::surface {
namespace {

using nlohmann::json;

json FindingJson(const Finding& f, const char* name_key) {
  json j = f.details;
  j[name_key] = f.name;
  if (!f.status.empty()) j["status"] = f.status;
  if (!f.message.empty()) j["message"] = f.message;
  return j;
}

json FindingsJson(const std::vector<Finding>& list, const char* name_key) {
  json out = json::array();
  for (const auto& f : list) out.push_back(FindingJson(f, name_key));
  return out;
}

// A detail as `key=value`: strings bare, everything else as JSON.
std::string DetailsText(const json& details) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : details.items())
    parts.push_back(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  return Join(parts, " ");
}

std::string Spaced(const std::string& head, const std::string& tail) {
  return tail.empty() ? head : head + " " + tail;
}

// Seconds as the collector document gives them, without a trailing ".0".
std::string SecondsText(const json& v) {
  if (!v.is_number()) return "?";
  double s = v.get<double>();
  return s == std::floor(s) ? std::to_string(static_cast<int64_t>(s)) : fmt::format("{}", s);
}

}  // namespace

bool DoctorReport::Healthy() const {
  return storage_issues.empty() && policy_issues.empty() && privacy_issues.empty();
}

std::optional<bool> DoctorReport::Ready() const {
  if (!probed) return std::nullopt;
  bool all_pass = true;
  for (const auto& p : probes) all_pass = all_pass && p.status == "pass";
  return Healthy() && all_pass;
}

int DoctorReport::ExitCode(bool strict) const {
  bool ok = probed ? *Ready() : Healthy();
  return strict && !ok ? 2 : 0;
}

std::optional<Finding> MonitorIssue(const json& collector, bool required) {
  const std::string state = collector.value("state", "unknown");
  std::string message;
  if (state == "degraded") {
    message = "collector is running with incomplete GPU telemetry";
    if (collector.contains("detail") && collector["detail"].is_string() &&
        !collector["detail"].get<std::string>().empty())
      message += "; " + collector["detail"].get<std::string>();
  } else if (state == "stale") {
    message = fmt::format("collector heartbeat is stale ({}s old; limit {}s)",
                          SecondsText(collector.value("age_seconds", json())),
                          SecondsText(collector.value("stale_after_seconds", json())));
  } else if (state == "stopped") {
    json at = collector.value("stopped_at", json());
    message = fmt::format("collector stopped at {}", at.is_string() ? at.get<std::string>() : "None");
  } else if (state == "clock-skew") {
    json age = collector.value("age_seconds", json());
    message = fmt::format("collector clock is ahead by {}s",
                          age.is_number() ? SecondsText(json(-age.get<double>())) : "?");
  } else if (state == "not-recording") {
    message = "collector is sampling, but not recording: " + collector.value("not_recording", std::string());
  } else if (required && state == "not-seen") {
    message = "collector heartbeat has not been recorded; start the monitor and retry";
  } else if (required && state != "running" && state != "paused") {
    message =
        fmt::format("collector state is {}; {}", state, collector.value("error", std::string("unknown")));
  } else {
    return std::nullopt;
  }
  return Finding{.name = "monitor-health", .message = message};
}

std::optional<Finding> WorkerIssue(const json& worker, bool required) {
  if (!required || (worker.is_object() && worker.value("running", json()) == json(true))) return std::nullopt;
  std::string state = worker.is_object() ? worker.value("state", std::string("invalid")) : "invalid";
  std::string message = fmt::format(
      "current-user worker is not ready for this data directory (state={}); start bk-worker.service and "
      "retry",
      state);
  if (worker.is_object() && worker.value("warning", json()).is_string())
    message += "; " + worker["warning"].get<std::string>();
  return Finding{.name = "worker-health", .message = message};
}

json DeploymentKeys(const config::Config& c) {
  bool shared = c.deployment != config::Deployment::kPrivate;
  return {{"access_mode", shared ? "broker" : "private"},
          {"broker_socket", shared ? json(c.socket_path) : json()},
          {"broker_uid", shared ? json(c.owner_uid) : json()},
          {"broker_gid", shared && c.gid ? json(*c.gid) : json()},
          {"monitor_uid", shared ? json(c.owner_uid) : json()},
          {"storage_gid", json()},
          {"file_mode", "0600"},
          {"dir_mode", "0700"}};
}

std::string DoctorDoc(const config::Config& c, const DoctorReport& r) {
  json checks = json::array();
  for (const auto& ch : r.checks)
    checks.push_back({{"name", ch.name}, {"status", ch.status}, {"message", ch.message}});
  json d = DeploymentKeys(c);
  d.erase("broker_gid");  // not among the original's doctor keys
  std::optional<bool> ready = r.Ready();
  d.update({{"kind", "doctor"},
            {"schema_version", "gpubk.doctor.v1"},
            {"checks", checks},
            {"healthy", r.Healthy()},
            {"ready", ready ? json(*ready) : json()},
            {"probes", FindingsJson(r.probes, "name")},
            {"storage_issues", FindingsJson(r.storage_issues, "type")},
            {"policy_issues", FindingsJson(r.policy_issues, "type")},
            {"privacy_issues", FindingsJson(r.privacy_issues, "type")},
            {"monitor_required", r.monitor_required},
            {"worker_required", r.worker_required},
            {"data_dir", c.data_dir},
            {"storage_transport", r.transport},
            {"configured_gpu_count", c.policy.gpu_count},
            {"booking_slot_minutes", c.policy.slot / 60},
            {"collector", r.collector},
            {"worker", r.worker}});
  return Dump(d.dump(), JsonStyle::kPretty);
}

std::vector<std::string> DoctorText(const DoctorReport& r) {
  std::vector<std::string> lines;
  for (const auto& ch : r.checks)
    lines.push_back(fmt::format("{:<4} {}: {}", ch.status, ch.name, ch.message));
  if (r.probed) {
    lines.push_back(fmt::format("Deployment preflight: {}", *r.Ready() ? "ready" : "not ready"));
    for (const auto& p : r.probes)
      lines.push_back(
          Spaced(fmt::format("{:<4} {}: {}", p.status, p.name, p.message), DetailsText(p.details)));
  }
  if (r.Healthy()) {
    if (r.probed) return lines;
    if (r.monitor_required) lines.push_back("Monitor is running with fresh, complete telemetry.");
    if (r.worker_required) lines.push_back("Current-user worker is running for this data directory.");
    if (!r.monitor_required && !r.worker_required) lines.push_back("No policy issues found.");
    return lines;
  }
  lines.push_back(fmt::format("Found {} storage issue(s), {} policy issue(s), {} privacy issue(s):",
                              r.storage_issues.size(), r.policy_issues.size(), r.privacy_issues.size()));
  for (const auto* list : {&r.storage_issues, &r.privacy_issues, &r.policy_issues})
    for (const auto& f : *list) lines.push_back(Spaced(Spaced(f.name, DetailsText(f.details)), f.message));
  return lines;
}

}  // namespace bk::surface
