#include "monitor/report.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/json_opt.h"
#include "base/strings.h"
#include "engine/parse.h"
#include "gpu/device_json.h"

namespace bk::monitor {

namespace {

using nlohmann::json;

std::string IsoMs(int64_t ms) { return engine::FormatIsoUtc(ms / 1000); }

json ProcessJson(const gpu::ProcessSample& p, const Classified& c) {
  return {{"pid", p.pid},
          {"uid", OptJson(p.uid)},
          {"username", p.username},
          {"host_uid", OptJson(p.host_uid)},
          {"identity_source", p.identity_source},
          {"container_runtime", p.container_runtime.empty() ? json() : json(p.container_runtime)},
          {"container_id", p.container_id.empty() ? json() : json(p.container_id)},
          {"command", Printable(p.command)},
          {"gpu_memory_mb", p.gpu_memory_mb},
          {"sm_utilization_percent", OptJson(p.sm_utilization_percent)},
          {"kind", p.kind},
          {"host_start_id", p.host_start_id},
          {"status", c.status},
          {"reservation_id", c.reservation_id.empty() ? json() : json(c.reservation_id)}};
}

json EventJson(const store::UsageEvent& e) {
  return {{"timestamp", IsoMs(e.ts_ms)},
          {"ts_ms", e.ts_ms},
          {"event", e.kind},
          {"gpu", OptJson(e.gpu)},
          {"pid", OptJson(e.pid)},
          {"uid", OptJson(e.uid)},
          {"username", e.username},
          {"identity_source", e.identity_source},
          {"status", e.status},
          {"reservation_id", e.reservation_id},
          {"message", e.message}};
}

json HeartbeatJson(const Collector& c) {
  json j = {{"state", c.state},
            {"fresh", c.fresh},
            {"age_seconds", c.age_ms ? json(*c.age_ms / 1000.0) : json()},
            {"stale_after_seconds", c.stale_after_ms / 1000.0}};
  if (c.row) {
    const store::HeartbeatRow& h = *c.row;
    j["reported_status"] = h.status;
    j["monitor_id"] = h.monitor_id;
    j["pid"] = h.pid;
    j["uid"] = h.uid;
    j["sample_interval_seconds"] = h.interval_ms / 1000.0;
    j["started_at"] = IsoMs(h.started_ms);
    j["sampled_at"] = IsoMs(h.sampled_ms);
    j["written_at"] = IsoMs(h.written_ms);
    j["stopped_at"] = h.stopped_ms ? json(IsoMs(*h.stopped_ms)) : json();
    j["samples"] = h.samples;
    j["detail"] = h.detail;
  }
  return j;
}

json DecisionJson(const ReclaimDecision& d) {
  return {{"reservation_id", d.reservation_id},
          {"uid", d.uid},
          {"username", d.username},
          {"gpus", d.gpus},
          {"verdict", d.verdict},
          {"why", d.why},
          {"gap", d.gap},
          {"streak_since", d.since_ms ? json(IsoMs(*d.since_ms)) : json()},
          {"streak_seconds", d.streak_ms / 1000.0},
          {"threshold_seconds", d.threshold_ms / 1000.0},
          {"used", d.used},
          {"reclaimed", d.reclaimed},
          {"reason", d.reason.empty() ? json() : json(d.reason)},
          {"error", d.error.empty() ? json() : json(d.error)}};
}

}  // namespace

std::string TickJson(const TickReport& r, const Collector& collector, const std::string& usage_path) {
  json devices = json::array();
  for (size_t i = 0; i < r.snapshot.devices.size(); ++i) {
    const gpu::DeviceSample& d = r.snapshot.devices[i];
    json procs = json::array();
    for (size_t j = 0; j < d.processes.size(); ++j)
      procs.push_back(
          ProcessJson(d.processes[j], j < r.classified[i].size() ? r.classified[i][j] : Classified{}));
    json device = gpu::DeviceFieldsJson(d);
    device["processes"] = procs;
    devices.push_back(device);
  }
  json events = json::array();
  for (const auto& e : r.events) events.push_back(EventJson(e));
  json decisions = json::array();
  for (const auto& d : r.decisions) decisions.push_back(DecisionJson(d));
  json doc = {{"schema_version", "gpubk.monitor.v1"},
              {"kind", "monitor-sample"},
              {"sampled_at", IsoMs(r.at_ms)},
              {"sampled_at_ms", r.at_ms},
              {"state", r.paused   ? "paused"
                        : r.failed ? "failed"
                                   : "ok"},
              {"paused", r.paused},
              {"error", r.snapshot.error.empty() ? json() : json(r.snapshot.error)},
              {"snapshot", {{"ok", r.snapshot.ok()}, {"error", r.snapshot.error}, {"devices", devices}}},
              {"heartbeat", HeartbeatJson(collector)},
              {"events", events},
              {"reclaim", decisions},
              {"warnings", r.warnings},
              {"usage_db", usage_path}};
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string TickText(const TickReport& r, bool verbose) {
  int processes = 0, unbooked = 0;
  for (size_t i = 0; i < r.classified.size(); ++i)
    for (const Classified& c : r.classified[i]) {
      if (c.status == "system") continue;
      ++processes;
      if (Unbooked(c.status)) ++unbooked;
    }
  int reclaimed = 0;
  for (const auto& d : r.decisions) reclaimed += d.reclaimed;
  const char* state = r.paused ? " paused" : r.failed ? " failed" : "";
  std::string out =
      fmt::format("sample {}:{} gpus={} processes={} unbooked={} events={} reclaimed={}\n", IsoMs(r.at_ms),
                  state, r.snapshot.devices.size(), processes, unbooked, r.events.size(), reclaimed);
  if (r.failed) out += "  error: " + Printable(r.snapshot.error) + "\n";
  for (const auto& e : r.events) {
    std::string who = e.uid ? fmt::format(" user={}", Printable(e.username)) : "";
    std::string where = e.gpu ? fmt::format(" gpu={}", *e.gpu) : "";
    std::string pid = e.pid ? fmt::format(" pid={}", *e.pid) : "";
    std::string source =
        !e.identity_source.empty() && e.identity_source != "host" ? " source=" + e.identity_source : "";
    std::string tail = !e.status.empty() ? " " + e.status : "";
    if (!e.message.empty()) tail += " " + Printable(e.message);
    out += fmt::format("  {}{}{}{}{}{}\n", e.kind, where, pid, who, source, tail);
  }
  for (const auto& d : r.decisions) {
    if (!verbose && !d.reclaimed && d.error.empty()) continue;
    if (d.reclaimed) {
      out += fmt::format("  reclaimed {} of {}: {}\n", d.reservation_id.substr(0, 8), Printable(d.username),
                         Printable(d.reason));
    } else {
      out += fmt::format(
          "  booking {} of {}: {}{}{}{}\n", d.reservation_id.substr(0, 8), Printable(d.username), d.verdict,
          d.why.empty() ? "" : " (" + Printable(d.why) + ")",
          d.since_ms ? fmt::format(" streak={}s/{}s", d.streak_ms / 1000, d.threshold_ms / 1000) : "",
          d.error.empty() ? "" : " error: " + Printable(d.error));
    }
  }
  for (const auto& w : r.warnings) out += "  warning: " + Printable(w) + "\n";
  return out;
}

}  // namespace bk::monitor
