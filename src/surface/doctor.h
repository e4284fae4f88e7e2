#pragma once
// `bk doctor`'s report: the checks (one line each), the deployment probes of
// --probe and the issues, in three kinds as GPUBK 0.2.8 sorted them (storage,
// policy, privacy). Issues decide: the deployment is healthy when there are
// none, and ready when it is healthy and every probe passed. This file only
// classifies and renders; what is looked at on disk is in preflight.h.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"

namespace bk::surface {

// A check, a probe or an issue: `name` is the check's or probe's name, or the
// issue's type; `status` is pass | warn | fail (skip for a check not run;
// empty for an issue). `details` are the extra keys of the JSON object,
// printed `key=value` after the message.
struct Finding {
  std::string name;
  std::string status;
  std::string message;
  nlohmann::json details = nlohmann::json::object();
};

struct DoctorReport {
  std::vector<Finding> checks;
  bool probed = false;  // --probe
  std::vector<Finding> probes;
  std::vector<Finding> storage_issues, policy_issues, privacy_issues;
  bool monitor_required = false, worker_required = false;
  nlohmann::json collector;  // gpubk.collector.v1
  nlohmann::json worker;     // gpubk.worker.v1, or null
  std::string transport;     // direct | socket

  bool Healthy() const;
  // Only with --probe: healthy and every probe passed.
  std::optional<bool> Ready() const;
  // 0, or 2 with --strict when not healthy (with --probe: not ready).
  int ExitCode(bool strict) const;
};

// The monitor-health issue for the collector's state, as the usage document
// reports it: a heartbeat never recorded only when the monitor is required;
// one that is degraded, stale, stopped, ahead of the clock or not recording,
// always.
std::optional<Finding> MonitorIssue(const nlohmann::json& collector, bool required);
// The worker-health issue when the worker is required and not running.
std::optional<Finding> WorkerIssue(const nlohmann::json& worker, bool required);

// The gpubk.doctor.v1 document, indented.
std::string DoctorDoc(const config::Config& c, const DoctorReport& r);
// The text: the checks, then the preflight (with --probe), then the issues
// or the all-clear.
std::vector<std::string> DoctorText(const DoctorReport& r);

// GPUBK 0.2.8's deployment keys (access_mode, broker_socket, broker_uid,
// broker_gid, monitor_uid, storage_gid, file_mode, dir_mode) with what they
// are here: `bk config --json` and `bk doctor --json` print the same values.
nlohmann::json DeploymentKeys(const config::Config& c);

}  // namespace bk::surface
