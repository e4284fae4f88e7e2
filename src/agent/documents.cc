#include "agent/documents.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "agent/gpu_history.h"
#include "base/exit_codes.h"
#include "base/json_opt.h"
#include "base/version.h"
#include "config/keys.h"
#include "engine/parse.h"
#include "surface/administrator.h"
#include "surface/doctor.h"
#include "surface/documents.h"
#include "sys/local_zone.h"
#include "sys/node.h"
#include "sys/users.h"
#include "worker/lease.h"
#include "worker/settings.h"

namespace bk::agent {
namespace {

using nlohmann::json;

// Invalid UTF-8 (a hostname, a username) must never abort a document.
std::string DumpLine(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

json NodeJson() {
  const sys::NodeIdentity& n = sys::LocalNode();
  return {{"schema", 1}, {"id", n.id}, {"hostname", n.hostname}};
}

json PolicyJson(const engine::Policy& p, const config::Config& c, const std::string& transport) {
  json blackouts = json::array();
  for (const auto& b : p.blackouts) {
    json window = config::BlackoutJson(b);
    window["gpus"] = b.gpus;  // always there for agents: empty means every GPU
    blackouts.push_back(window);
  }
  json priority = json::object();
  for (const auto& [gpu, prio] : p.gpu_priority) priority[std::to_string(gpu)] = prio;
  return {{"booking_blackouts", blackouts},
          {"booking_horizon_days", p.horizon / engine::kDay},
          {"default_booking_cpus", p.host_cpus ? json(p.default_booking_cpus) : json()},
          {"default_booking_ram_mb", p.host_ram_mb ? json(p.default_booking_ram_mb) : json()},
          {"default_mode", "shared"},
          {"default_share_units_per_gpu", 1},
          {"disabled_gpus", p.disabled_gpus},
          {"enabled_gpus", p.EnabledGpus()},
          {"gpu_count", p.gpu_count},
          {"gpu_priority", priority},
          {"granularity_minutes", p.slot / engine::kMinute},
          {"host_cpus", OptJson(p.host_cpus)},
          {"host_ram_mb", OptJson(p.host_ram_mb)},
          {"ledger_retention_days", c.ledger_retention_days},
          {"max_booking_duration_hours", p.max_duration / engine::kHour},
          {"max_shared_reservations_per_gpu", p.share_capacity},
          {"modes", {"shared", "exclusive"}},
          {"monitoring",
           {{"sample_interval_seconds", c.monitor_interval_seconds},
            {"reclaim_after_seconds", c.reclaim_after_seconds}}},
          {"queue_search_hours", p.queue_search / engine::kHour},
          {"require_shared_memory", p.require_shared_memory},
          {"shared_capacity_units_per_gpu", p.share_capacity},
          {"shared_memory_reserve_mb", p.shared_memory_reserve_mb},
          {"storage_transport", transport}};
}

// The original's policy keys that are facts of this deployment and of this
// user's worker, beside the scheduling policy above.
void AddDeploymentPolicy(const config::Config& c, json& policy) {
  policy.update(surface::DeploymentKeys(c));
  const config::WorkerSettings& w = c.worker;
  policy.update({{"daemon_policy_exit_code", exit_code::kPolicyDrift},
                 {"job_log_max_mb", w.log_max_mb},
                 {"job_log_retention_days", w.log_retention_days},
                 {"worker_busy_exit_code", exit_code::kBusy},
                 {"worker_effective_max_parallel", config::EffectiveMaxParallel(c)},
                 {"worker_live_guard", w.live_guard},
                 {"worker_max_parallel", w.max_parallel},
                 {"worker_recovery_grace_seconds", w.recovery_grace_seconds},
                 {"worker_termination_grace_seconds", w.grace_seconds},
                 {"worker_waiting_exit_code", exit_code::kNoSlot}});
}

// This user's worker (gpubk.worker.v1), or null when its directory cannot be
// known (no home directory).
json WorkerJson(const config::Config& c, engine::Seconds now, const std::string& username) {
  auto settings = worker::LoadSettings(c, config::ProcessEnv());
  if (!settings) return json();
  worker::WorkerStatus ws = worker::Inspect(settings->job_dir, worker::InstanceIdentity(c), getuid(), now);
  return json::parse(worker::StatusJson(ws, username), nullptr, false);
}

// One budget: total (null when the host declares none), what bookings active
// now declare, and what is left now.
json Budget(const std::optional<int64_t>& total, int64_t booked) {
  return {{"total", OptJson(total)},
          {"booked_now", booked},
          {"free_now", total ? json(std::max<int64_t>(0, *total - booked)) : json()},
          {"enforced", total.has_value()}};
}

json HistoryJson(const GpuHistory& h) {
  return {{"predicted_percent", h.predicted_percent},
          {"average_utilization_percent", h.average_utilization_percent},
          {"busy_fraction", h.busy_fraction},
          {"memory_percent", h.memory_percent},
          {"sample_count", h.sample_count}};
}

json GpuJson(const gpu::DeviceSample& d, const service::GpuView& v, const GpuHistory& history,
             const engine::Policy& p) {
  json memory = {
      {"used_mb", OptJson(d.memory_used_mb)}, {"total_mb", OptJson(d.memory_total_mb)}, {"free_mb", json()}};
  if (d.memory_used_mb && d.memory_total_mb)
    memory["free_mb"] = std::max<int64_t>(0, *d.memory_total_mb - *d.memory_used_mb);
  json mem_percent;
  if (d.memory_used_mb && d.memory_total_mb && *d.memory_total_mb > 0)
    mem_percent = std::round(1000.0 * static_cast<double>(*d.memory_used_mb) / *d.memory_total_mb) / 10.0;
  gpu::LiveState live = gpu::ClassifyLive(d);
  bool known = d.source != gpu::Source::kNone;
  return {{"index", d.index},
          {"name", d.name},
          {"uuid", gpu::IsValidDeviceUuid(d.uuid) ? json(d.uuid) : json()},
          {"enabled", p.GpuEnabled(d.index)},
          {"administrator_priority", p.Priority(d.index)},
          {"score", v.load_score},
          {"temperature_c", OptJson(d.temperature_c)},
          {"source", gpu::SourceName(d.source)},
          {"live",
           {{"status", gpu::LiveStatusName(v.live_status)},
            {"reason", v.live_reason},
            {"utilization_percent", OptJson(d.utilization_percent)},
            {"memory_percent", mem_percent},
            {"process_count", known ? json(live.process_count) : json()}}},
          {"history", HistoryJson(history)},
          {"memory", memory},
          {"capabilities",
           {{"stable_device_identifier", gpu::IsValidDeviceUuid(d.uuid)},
            {"process_telemetry", d.process_telemetry},
            {"process_utilization", known && d.utilization_percent.has_value()}}}};
}

json GpuAdviceJson(const service::StatusView& s, const std::vector<GpuHistory>& history,
                   const engine::Policy& p) {
  json gpus = json::array();
  std::vector<int> order;
  for (const auto& d : s.snapshot.devices) {
    if (d.index < 0 || static_cast<size_t>(d.index) >= s.gpus.size()) continue;
    GpuHistory h = static_cast<size_t>(d.index) < history.size() ? history[d.index] : GpuHistory();
    gpus.push_back(GpuJson(d, s.gpus[d.index], h, p));
    if (p.GpuEnabled(d.index)) order.push_back(d.index);
  }
  // The order automatic placement prefers right now: priority tier first,
  // then the live load score, then the index.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (p.Priority(a) != p.Priority(b)) return p.Priority(a) < p.Priority(b);
    return s.gpus[a].load_score < s.gpus[b].load_score;
  });
  return {{"generated_at", engine::FormatIsoUtc(s.now)},
          {"order", order},
          {"gpus", gpus},
          {"telemetry_error", s.snapshot.ok() ? json() : json(s.snapshot.error)}};
}

json CapabilitiesObject(const client::Ledger& ledger) {
  bool socket = ledger.Transport() == "socket";
  return {{"audit_api_schema", "gpubk.audit.v1"},
          {"configurable_booking_granularity", true},
          {"federated_node_identity", true},
          {"host_budgets", ledger.policy().BudgetsOn()},
          {"idempotent_booking", true},
          {"idempotent_cancel", true},
          {"idempotent_edit", true},
          {"idempotent_renew", true},
          {"kernel_peer_credentials", socket},
          {"mcp_stdio", true},
          {"operation_status", true},
          {"preflight_idempotent_replay", true},
          {"read_only_recommendation", true},
          {"renew", true},
          {"request_gpu_exclusions", true},
          {"scheduled_jobs", true},
          {"service_broker", socket},
          {"service_owned_ledger", socket},
          {"structured_cancel", true},
          {"weighted_shared_capacity", true},
          // The original's names for what this bk does as well.
          {"administrator_gpu_eligibility_policy", true},
          {"bounded_personal_audit_log", true},
          {"bounded_private_job_logs", true},
          {"collector_liveness", true},
          {"configurable_monitor_cadence", true},
          {"daemon_policy_guard", true},
          {"external_allocator_configured", false},
          {"private_job_log_cleanup", true},
          {"private_job_spec_cleanup", true},
          {"private_job_specs", true},
          {"scheduled_job_crash_recovery", true},
          {"scheduled_job_path_snapshot", true},
          {"single_worker_lease", true},
          {"usage_api_schema", "gpubk.usage.v1"},
          {"versioned_usage_history", true},
          {"worker_instance_binding", true},
          {"worker_liveness", true}};
}

// Who administers this deployment (bk info's document).
json AdministratorJson(const config::Config& config) {
  uid_t uid = surface::AdministratorUid(config, sys::CurrentUid());
  return json::parse(surface::AdministratorDoc(surface::ReadAdministrator(uid, sys::LookupAccount(uid))));
}

// The caller's zone: documents are UTC, but "tomorrow at 9" and the times a
// person reads from `bk` are local, so an agent must know which zone that is.
json TimeZoneJson(engine::Seconds now) {
  sys::LocalZone zone;
  int64_t offset = zone.OffsetAt(now);
  int64_t magnitude = std::llabs(offset);
  return {{"name", zone.Name(now)},
          {"utc_offset",
           fmt::format("{}{:02}:{:02}", offset < 0 ? '-' : '+', magnitude / 3600, magnitude % 3600 / 60)},
          {"utc_offset_seconds", offset}};
}

}  // namespace

Result<std::string> ContextDoc(client::Ledger& ledger, const config::Config& config) {
  engine::Seconds now = ledger.Now();
  BK_ASSIGN_OR_RETURN(service::StatusView status, ledger.Status(now, now + 1, 0));
  service::ListQuery everyone;
  everyone.everyone = true;
  BK_ASSIGN_OR_RETURN(service::ListResult active, ledger.List(everyone));
  const engine::Policy& p = ledger.policy();
  const service::Actor& actor = ledger.actor();
  std::vector<GpuHistory> history =
      ReadGpuHistory(config, ledger.Transport() == "direct", actor.uid, p.gpu_count, now * 1000);

  auto unread = ledger.UnreadNotifications(1);
  BK_ASSIGN_OR_RETURN(auto announcements, ledger.Announcements({}));
  json reservations = json::parse(surface::ReservationsDoc(active, actor.uid, p, now))["reservations"];
  json policy = PolicyJson(p, config, ledger.Transport());
  AddDeploymentPolicy(config, policy);
  int64_t cpus_now = 0, ram_now = 0;
  for (const auto& r : active.reservations) {
    if (r.start <= now && now < r.end) {
      cpus_now += r.cpus;
      ram_now += r.ram_mb;
    }
  }
  json d = {
      {"schema_version", "bk.agent.v1"},
      {"kind", "context"},
      {"generated_at", engine::FormatIsoUtc(now)},
      {"time_zone", TimeZoneJson(now)},
      {"software", {{"name", "gpubk"}, {"version", kVersion}}},
      {"node", NodeJson()},
      {"actor", {{"uid", actor.uid}, {"username", actor.username}, {"administrator", actor.admin}}},
      {"administrator", AdministratorJson(config)},
      {"deployment", config::DeploymentName(config.deployment)},
      {"policy", policy},
      {"host_budget", {{"cpus", Budget(p.host_cpus, cpus_now)}, {"ram_mb", Budget(p.host_ram_mb, ram_now)}}},
      {"gpu_advice", GpuAdviceJson(status, history, p)},
      {"reservations", reservations},
      // Admin cancels and reclaims the caller has not read with `bk n`
      // (counted, never marked read here: an agent reading the context is
      // not a person reading the notice).
      {"unread_notifications", unread ? json(unread->count) : json()},
      // The administrators' active announcements, most urgent first.
      {"announcements", json::parse(surface::AnnouncementsDoc(announcements))["announcements"]},
      {"worker", WorkerJson(config, now, actor.username)},
      {"capabilities", CapabilitiesObject(ledger)}};
  return DumpLine(d);
}

std::string CapabilitiesJson(const client::Ledger& ledger) { return DumpLine(CapabilitiesObject(ledger)); }

std::string WithCapabilities(const std::string& doc, const client::Ledger& ledger) {
  json d = json::parse(doc);
  d["capabilities"] = CapabilitiesObject(ledger);
  return DumpLine(d);
}

std::string Render(const std::string& doc, bool compact) {
  // One line with Python's separators and every key, as the original's --compact.
  if (compact) return surface::Dump(doc, surface::JsonStyle::kLine);
  return json::parse(doc).dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace bk::agent
