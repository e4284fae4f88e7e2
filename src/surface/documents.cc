#include "surface/documents.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/json_opt.h"
#include "engine/parse.h"
#include "surface/doctor.h"
#include "sys/node.h"

namespace bk::surface {
namespace {

using engine::FormatIsoUtc;
using nlohmann::json;

json Node() {
  const sys::NodeIdentity& n = sys::LocalNode();
  return {{"schema", 1}, {"id", n.id}, {"hostname", n.hostname}};
}

// The public face of a job: never its spec ID, digest or command line. Shown
// to its owner only; other users see null.
json PublicJob(const store::JobRecord* job, bool mine) {
  if (!job || !mine) return json();
  auto text = [](const std::string& s) { return s.empty() ? json() : json(s); };
  auto when = [](const std::optional<engine::Seconds>& t) { return t ? json(FormatIsoUtc(*t)) : json(); };
  return {{"launch_guard_state", text(job->launch_guard_state)},
          {"message", text(job->message)},
          {"recovered_at", when(job->recovered_at)},
          {"recovery_state", text(job->recovery_state)},
          {"status", store::kJobStatusNames.Name(job->status)},
          {"summary", job->summary},
          {"waiting_since", when(job->waiting_since)},
          {"exit_code", OptJson(job->exit_code)},
          {"started_at", when(job->started_at)},
          {"finished_at", when(job->finished_at)}};
}

json PublicReservation(const engine::Reservation& r, uint32_t caller, const engine::Policy& p,
                       engine::Seconds now, const store::JobRecord* job = nullptr) {
  bool mine = r.uid == caller;
  bool shared = r.mode == engine::Mode::kShared;
  json cancel;
  if (r.cancellation && mine) {
    cancel = {{"at", FormatIsoUtc(r.cancellation->at)},
              {"kind", engine::kCancelKindNames.Name(r.cancellation->kind)},
              {"reason", r.cancellation->reason},
              {"actor_username", r.cancellation->actor_username}};
  }
  return {{"id", r.id},
          {"short_id", r.ShortId()},
          {"uid", r.uid},
          {"username", r.username},
          {"mine", mine},
          {"gpus", r.gpus},
          {"mode", engine::ModeName(r.mode)},
          {"start_at", FormatIsoUtc(r.start)},
          {"end_at", FormatIsoUtc(r.end)},
          {"status", engine::StatusName(r.StatusAt(now))},
          {"expected_memory_mb_per_gpu", OptJson(r.memory_mb)},
          {"share_units_per_gpu", shared ? json(r.share_units) : json()},
          {"share_capacity_units_per_gpu", shared ? json(p.share_capacity) : json()},
          {"cpus", r.cpus ? json(r.cpus) : json()},
          {"ram_mb", r.ram_mb ? json(r.ram_mb) : json()},
          {"edit_count", mine ? json(r.edit_count) : json()},
          {"cancellation", cancel},
          {"job", PublicJob(job, mine)}};
}

json Envelope(const std::string& kind) {
  return {{"kind", kind}, {"schema_version", "bk.agent.v1"}, {"node", Node()}};
}

json StateOrNull(const std::string& text) {
  if (text.empty()) return json();
  try {
    return json::parse(text);
  } catch (const json::exception&) {
    return json();
  }
}

json EventJson(const store::Event& e) {
  json j = {{"action", e.action},
            {"end_at", FormatIsoUtc(e.end)},
            {"event_id", e.event_id},
            {"gpus", e.gpus},
            {"message", e.message},
            {"mode", e.mode},
            {"op_id", e.op_id},
            {"reservation_id", e.reservation_id},
            {"result", e.result},
            {"share_units", OptJson(e.share_units)},
            {"start_at", FormatIsoUtc(e.start)},
            {"transaction_id", e.transaction_id},
            {"ts", FormatIsoUtc(e.ts)},
            {"uid", e.uid},
            {"username", e.username},
            {"actor_uid", e.actor_uid},
            {"actor_username", e.actor_username}};
  // A change of the server's own settings carries what it changed.
  if (e.reservation_id.empty()) {
    j["before"] = json::parse(e.before.empty() ? "null" : e.before, nullptr, false);
    j["after"] = json::parse(e.after.empty() ? "null" : e.after, nullptr, false);
  }
  return j;
}

json NotificationJson(const store::Notification& n) {
  return {{"actor_uid", n.actor_uid},
          {"actor_username", n.actor_username},
          {"created_at", FormatIsoUtc(n.created_at)},
          {"id", n.id},
          {"kind", "reservation"},
          {"message", n.message},
          {"reason", n.reason},
          {"reservation_id", n.reservation_id},
          {"type", n.type}};
}

json AnnouncementJson(const store::Announcement& a) {
  auto when = [](const std::optional<engine::Seconds>& t) { return t ? json(FormatIsoUtc(*t)) : json(); };
  return {{"id", a.id},
          {"kind", "announcement"},
          {"level", store::kAnnouncementLevelNames.Name(a.level)},
          {"message", a.message},
          {"created_at", FormatIsoUtc(a.created_at)},
          {"starts_at", FormatIsoUtc(a.starts_at)},
          {"expires_at", FormatIsoUtc(a.expires_at)},
          {"actor_uid", a.actor_uid},
          {"actor_username", a.actor_username},
          {"updated_at", when(a.updated_at)},
          {"archived_at", when(a.archived_at)},
          {"archived_by_uid", OptJson(a.archived_by_uid)},
          {"archived_by_username", OptJson(a.archived_by_username)}};
}

json GpuViewJson(const service::GpuView& v) {
  return {{"gpu", v.gpu},
          {"administrator_priority", v.priority},
          {"load_score", v.load_score},
          {"live_status", gpu::LiveStatusName(v.live_status)},
          {"live_reason", v.live_reason},
          {"history_sample_count", 0},
          {"recent_predicted_load_percent", 0.0},
          {"reservation_pressure_score", v.pressure},
          {"memory_total_mb", OptJson(v.memory_total_mb)},
          {"memory_free_now_mb", OptJson(v.memory_free_mb)},
          {"projected_memory_headroom_mb", OptJson(v.budget_after_mb)}};
}

}  // namespace

namespace {

void SpacedLine(const json& j, std::string& out) {
  if (j.is_object() || j.is_array()) {
    bool object = j.is_object();
    out += object ? '{' : '[';
    bool first = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (!first) out += ", ";
      first = false;
      if (object) out += json(it.key()).dump(-1, ' ', false, json::error_handler_t::replace) + ": ";
      SpacedLine(*it, out);
    }
    out += object ? '}' : ']';
    return;
  }
  out += j.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

std::string Dump(const std::string& compact_json, JsonStyle style) {
  json j = json::parse(compact_json);
  if (style == JsonStyle::kPretty) return j.dump(2, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(compact_json.size() * 5 / 4);
  SpacedLine(j, out);
  return out;
}

std::string BookingResultDoc(const service::BookingOutcome& o, uint32_t caller, const engine::Policy& p,
                             engine::Seconds now) {
  json d = Envelope("booking_result");
  json selected = json::array();
  for (const auto& v : o.selected) selected.push_back(GpuViewJson(v));
  d["allocation"] = {{"selected", selected}};
  d["allocator"] = {{"source", o.allocator_source},
                    {"reason", o.replayed ? "committed allocation reused without rerunning allocation" : ""}};
  d["reservation"] = PublicReservation(o.reservation, caller, p, now, o.job ? &*o.job : nullptr);
  d["status"] = o.status;
  d["warnings"] = o.warnings;
  if (!o.queued_reason.empty()) d["queued_reason"] = o.queued_reason;
  if (o.dry_run) d["dry_run"] = true;  // a preview: nothing was written
  d["worker"] = json();
  return d.dump();
}

std::string BookingResultDoc(const service::BookingOutcome& o, uint32_t caller, const engine::Policy& p,
                             engine::Seconds now, const std::string& worker_doc) {
  json d = json::parse(BookingResultDoc(o, caller, p, now));
  d["worker"] = json::parse(worker_doc, nullptr, false);
  if (d["worker"].is_discarded()) d["worker"] = json();
  return d.dump();
}

std::string JobsDoc(const std::vector<service::JobView>& jobs, uint32_t caller, const engine::Policy& p,
                    engine::Seconds now, const std::string& worker_doc, const std::string& spec_cleanup,
                    const std::string& log_cleanup) {
  auto parsed = [](const std::string& text) {
    json v = json::parse(text, nullptr, false);
    return v.is_discarded() ? json() : v;
  };
  json items = json::array();
  for (const auto& v : jobs) items.push_back(PublicReservation(v.reservation, caller, p, now, &v.job));
  json d = {{"kind", "jobs"},
            {"schema_version", "bk.agent.v1"},
            {"worker", parsed(worker_doc)},
            {"jobs", items},
            {"private_job_cleanup", parsed(spec_cleanup)},
            {"private_job_log_cleanup", parsed(log_cleanup)}};
  return d.dump();
}

std::string ReservationsDoc(const service::ListResult& r, uint32_t caller, const engine::Policy& p,
                            engine::Seconds now) {
  json d = Envelope("reservations");
  json items = json::array();
  for (const auto& x : r.reservations) {
    const store::JobRecord* job = nullptr;
    for (const auto& j : r.jobs)
      if (j.reservation_id == x.id) job = &j;
    items.push_back(PublicReservation(x, caller, p, now, job));
  }
  d.erase("node");
  d["reservations"] = items;
  d["total"] = r.total;
  d["truncated"] = r.truncated;
  return d.dump();
}

std::string CancellationDoc(const service::CancelOutcome& o, uint32_t caller, const engine::Policy& p,
                            engine::Seconds now) {
  json d = Envelope("cancellation_result");
  d["reservation"] = PublicReservation(o.reservation, caller, p, now);
  d["replayed"] = o.replayed;
  d["warning"] = json();
  return d.dump();
}

std::string HistoryDoc(const service::HistoryView& v, uint32_t caller, const engine::Policy& p,
                       engine::Seconds now) {
  json edits = json::array(), events = json::array(), notes = json::array();
  json cancellation;
  for (const auto& e : v.events) {
    events.push_back(EventJson(e));
    if (e.action == "edit" || e.action == "renew" || e.action == "release") {
      edits.push_back({{"action", e.action},
                       {"actor_uid", e.actor_uid},
                       {"actor_username", e.actor_username},
                       {"at", FormatIsoUtc(e.ts)},
                       {"before", StateOrNull(e.before)},
                       {"after", StateOrNull(e.after)},
                       {"op_id", e.op_id},
                       {"signature", e.signature}});
    }
    if (e.action == "cancel" || e.action == "admin-cancel" || e.action == "reclaim") {
      const auto& c = v.reservation.cancellation;
      cancellation = {{"action", e.action},
                      {"actor_uid", e.actor_uid},
                      {"actor_username", e.actor_username},
                      {"at", FormatIsoUtc(e.ts)},
                      {"kind", c                       ? std::string(engine::kCancelKindNames.Name(c->kind))
                               : e.action == "cancel"  ? "owner"
                               : e.action == "reclaim" ? "reclaimed"
                                                       : "administrator"},
                      {"op_id", e.op_id},
                      {"reason", c ? c->reason : e.message},
                      {"signature", e.signature}};
    }
  }
  for (const auto& n : v.notifications) notes.push_back(NotificationJson(n));
  json d = {{"kind", "reservation-history"},
            {"schema_version", "gpubk.reservation-history.v1"},
            {"reservation", PublicReservation(v.reservation, caller, p, now)},
            {"edits", edits},
            {"events", events},
            {"cancellation", cancellation},
            {"notifications", notes}};
  return d.dump();
}

std::string LogDoc(const std::vector<store::Event>& events, uint32_t uid, int limit) {
  json items = json::array();
  for (const auto& e : events) items.push_back(EventJson(e));
  json d = {{"kind", "operation-log"},
            {"schema_version", "gpubk.audit.v1"},
            {"uid", uid},
            {"limit", limit},
            {"events", items},
            {"warning", json()}};
  return d.dump();
}

std::string NotificationsDoc(const std::vector<store::Notification>& items,
                             const std::vector<store::Announcement>& announcements, int limit) {
  // Each item with when it appeared: a notice when written, an announcement when it starts.
  std::vector<std::pair<engine::Seconds, json>> merged;
  for (const auto& n : items) merged.emplace_back(n.created_at, NotificationJson(n));
  for (const auto& a : announcements) merged.emplace_back(a.starts_at, AnnouncementJson(a));
  std::stable_sort(merged.begin(), merged.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  json list = json::array();
  for (size_t i = 0; i < merged.size() && std::cmp_less(i, limit); ++i) list.push_back(merged[i].second);
  return json{
      {"kind", "notifications"}, {"schema_version", "gpubk.notifications.v1"}, {"notifications", list}}
      .dump();
}

std::string LoginDoc(const LoginNotice& n) {
  auto bookings = [](const std::vector<engine::Reservation>& list) {
    json out = json::array();
    for (const auto& r : list)
      out.push_back({{"id", r.id},
                     {"gpus", r.gpus},
                     {"mode", engine::ModeName(r.mode)},
                     {"start_at", FormatIsoUtc(r.start)},
                     {"end_at", FormatIsoUtc(r.end)},
                     {"username", r.username}});
    return out;
  };
  json notes = json::array(), announcements = json::array();
  for (const auto& x : n.notifications) notes.push_back(NotificationJson(x));
  for (const auto& a : n.announcements) announcements.push_back(AnnouncementJson(a));
  return json{{"schema_version", "gpubk.login-notice.v1"},
              {"kind", "login-notice"},
              {"generated_at", FormatIsoUtc(n.now)},
              {"within_seconds", n.within},
              {"active", bookings(n.active)},
              {"upcoming", bookings(n.upcoming)},
              {"notifications", notes},
              {"unread_notifications", n.unread},
              {"announcements", announcements}}
      .dump();
}

std::string AnnouncementDoc(const store::Announcement& a, std::string_view status) {
  return json{{"schema_version", "gpubk.admin.v1"},
              {"kind", "announcement"},
              {"status", status},
              {"announcement", AnnouncementJson(a)}}
      .dump();
}

std::string AnnouncementsDoc(const std::vector<store::Announcement>& list) {
  json out = json::array();
  for (const auto& a : list) out.push_back(AnnouncementJson(a));
  return json{{"schema_version", "gpubk.admin.v1"}, {"kind", "announcements"}, {"announcements", out}}.dump();
}

std::string OperationDoc(const service::OperationView& v, uint32_t caller, const engine::Policy& p,
                         engine::Seconds now) {
  json d = Envelope("operation_status");
  d["found"] = v.found;
  d["action"] = v.found ? json(v.action) : json();
  d["reservation"] = v.reservation ? PublicReservation(*v.reservation, caller, p, now) : json();
  return d.dump();
}

std::string RecommendationDoc(const service::Recommendation& r, const engine::Policy& p,
                              engine::Seconds now) {
  json d = Envelope("recommendation");
  d["generated_at"] = FormatIsoUtc(now);
  d["available"] = r.available;
  d["allocator"] = {
      {"reason", ""}, {"source", r.request.gpus.empty() ? "builtin" : "fixed-gpu"}, {"warning", ""}};
  if (r.placement) {
    json details = json::array();
    for (const auto& v : r.selected) details.push_back(GpuViewJson(v));
    d["recommendation"] = {{"gpus", r.placement->gpus},
                           {"start_at", FormatIsoUtc(r.placement->start)},
                           {"end_at", FormatIsoUtc(r.placement->end)},
                           {"queued", r.placement->queued},
                           {"confidence", r.confidence},
                           {"gpu_details", details}};
  } else {
    d["recommendation"] = json();
  }
  d["nearest_available"] = r.nearest ? json{{"gpus", r.nearest->gpus},
                                            {"start_at", FormatIsoUtc(r.nearest->start)},
                                            {"end_at", FormatIsoUtc(r.nearest->end)}}
                                     : json();
  d["reason"] = r.available ? json() : json(r.reason);
  const auto& q = r.request;
  d["request"] = {
      {"count", q.count},
      {"duration_seconds", q.duration},
      {"mode", engine::ModeName(q.mode)},
      {"start_at", FormatIsoUtc(r.start)},
      {"allow_queue", r.allow_queue},
      {"preferred_gpus", q.gpus.empty() ? json() : json(q.gpus)},
      {"excluded_gpus", q.exclude},
      {"expected_memory_mb_per_gpu", OptJson(q.memory_mb)},
      {"share_units_per_gpu", q.mode == engine::Mode::kShared ? json(q.share_units.value_or(1)) : json()},
      {"share_capacity_units_per_gpu", p.share_capacity},
      {"cpus", OptJson(q.cpus)},
      {"ram_mb", OptJson(q.ram_mb)}};
  d["warnings"] = r.warnings;
  return d.dump();
}

namespace {

// The `effective` values GPUBK 0.2.8 prints in the shapes it prints them
// (GPU lists as arrays, priorities as an object) and its broker keys with
// what they are here, so a script written for it reads the same fields.
void AddOriginalEffective(const config::Config& c, json& effective) {
  const engine::Policy& p = c.policy;
  json enabled = json::array();
  for (int g = 0; g < p.gpu_count; ++g)
    if (std::find(p.disabled_gpus.begin(), p.disabled_gpus.end(), g) == p.disabled_gpus.end())
      enabled.push_back(g);
  effective["enabled_gpus"] = enabled;
  effective["disabled_gpus"] = p.disabled_gpus;
  json priority = json::object();
  for (const auto& [gpu, rank] : p.gpu_priority) priority[std::to_string(gpu)] = rank;
  effective["gpu_priority"] = priority;
  effective.update(DeploymentKeys(c));
  effective["allocator_command_configured"] = false;
  effective["config_file"] = c.config_file;
  effective["worker_effective_max_parallel"] = config::EffectiveMaxParallel(c);
}

}  // namespace

std::string ConfigDoc(const config::Config& c, const service::PolicyStatus& status,
                      const std::string& transport, const std::string& telemetry) {
  json effective = json::object();
  for (const auto& [k, v] : c.values) {
    try {
      effective[k] = json::parse(v);
    } catch (const json::exception&) {
      effective[k] = v;
    }
  }
  effective["data_dir"] = c.data_dir;
  effective["storage_transport"] = transport;
  AddOriginalEffective(c, effective);
  json sources = c.sources;
  json d = {{"kind", "configuration"},
            {"schema_version", "gpubk.config.v1"},
            {"config_version", 1},
            {"deployment", config::DeploymentName(c.deployment)},
            {"why", c.why},
            {"transport", transport},
            {"telemetry", telemetry},
            {"config_file", {{"path", c.config_file}, {"present", c.config_file_present}}},
            {"ledger", c.ledger_path},
            {"effective", effective},
            {"sources", sources},
            {"environment_overrides", c.env_overrides},
            {"ledger_policy",
             {{"status", status.name()},
              {"bound", status.state != service::PolicyState::kUnbound},
              {"matches", status.state != service::PolicyState::kMismatch},
              {"message", status.message.empty() ? json() : json(status.message)}}},
            {"warning", json()}};
  return d.dump();
}

std::string SlotsDoc(const service::SlotsResult& r, const service::CreateRequest& q) {
  json d = Envelope("slots");
  json options = json::array();
  for (const auto& o : r.options)
    options.push_back({{"gpus", o.gpus},
                       {"start_at", FormatIsoUtc(o.start)},
                       {"end_at", FormatIsoUtc(o.end)},
                       {"live_status", gpu::LiveStatusName(o.live)},
                       {"memory_free_now_mb", OptJson(o.free_now_mb)}});
  d["options"] = options;
  d["truncated_combinations"] = r.truncated_combinations;
  d["request"] = {
      {"count", q.count},
      {"duration_seconds", q.duration},
      {"mode", engine::ModeName(q.mode)},
      {"share_units_per_gpu", q.mode == engine::Mode::kShared ? json(q.share_units.value_or(1)) : json()}};
  return d.dump();
}

std::string ErrorDoc(const Error& e) {
  std::string type = "BookingError";
  switch (e.kind) {
    case ErrorKind::kIo: type = "OSError"; break;
    case ErrorKind::kCorrupt: type = "LedgerCorruptionError"; break;
    case ErrorKind::kBusy: type = "TimeoutError"; break;
    case ErrorKind::kPolicy: type = "DaemonPolicyError"; break;
    default: break;
  }
  json d = Envelope("error");
  d["error"] = {{"message", e.message}, {"type", type}, {"code", ErrorKindName(e.kind)}};
  return d.dump();
}

namespace {

json VerifyJson(const service::VerifyReport& r) {
  return {{"kind", "verify"},
          {"schema_version", "gpubk.verify.v1"},
          {"path", r.path},
          {"integrity", r.integrity},
          {"violations", r.violations},
          {"reservations", r.reservations},
          {"active", r.active},
          {"ok", r.ok()}};
}

}  // namespace

std::string VerifyDoc(const service::VerifyReport& r) { return VerifyJson(r).dump(); }

std::string TransferDoc(const service::TransferOutcome& o, uint32_t caller, const engine::Policy& p,
                        engine::Seconds now) {
  json d = Envelope("transfer_result");
  d["reservation"] = PublicReservation(o.reservation, caller, p, now);
  d["from"] = {{"uid", o.from_uid}, {"username", o.from_username}};
  d["to"] = {{"uid", o.reservation.uid}, {"username", o.reservation.username}};
  return d.dump();
}

std::string LedgerSwapDoc(std::string_view kind, const service::LedgerSwap& s) {
  return json{{"kind", kind},
              {"schema_version", fmt::format("gpubk.{}.v1", kind)},
              {"kept", s.kept},
              {"checked", VerifyJson(s.checked)}}
      .dump();
}

std::string ImportDoc(const service::ImportSummary& s) {
  return json{{"kind", "import"},
              {"schema_version", "gpubk.import.v1"},
              {"reservations", s.reservations},
              {"active", s.active},
              {"cancelled", s.cancelled},
              {"expired", s.expired},
              {"edits", s.edits},
              {"notifications", s.notifications},
              {"operations", s.operations}}
      .dump();
}

}  // namespace bk::surface
