#include "agent/mcp_tools.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "agent/documents.h"
#include "agent/mcp_catalog.h"
#include "agent/mcp_jobs.h"
#include "agent/mcp_usage.h"
#include "base/strings.h"
#include "engine/parse.h"
#include "surface/documents.h"
#include "worker/cleanup.h"

namespace bk::agent {
namespace {

using nlohmann::json;

const char* TypeWord(ArgType t) {
  switch (t) {
    case ArgType::kInteger: return "an integer";
    case ArgType::kString: return "a string";
    case ArgType::kBoolean: return "true or false";
    case ArgType::kIntegerList: return "a list of GPU indexes such as [1] or [0, 3]";
    case ArgType::kStringList: return "a non-empty argv list";
  }
  return "";
}

// The JSON shape of an argument; a GPU list's elements are each family's to
// check (the local and the cluster tools word that error differently).
bool HasShape(const json& v, ArgType t) {
  switch (t) {
    case ArgType::kInteger: return IsInteger(v);
    case ArgType::kString: return v.is_string();
    case ArgType::kBoolean: return v.is_boolean();
    case ArgType::kIntegerList: return v.is_array();
    case ArgType::kStringList:
      if (!v.is_array() || v.empty()) return false;
      for (const auto& e : v)
        if (!e.is_string() || e.get<std::string>().empty() ||
            e.get<std::string>().find('\0') != std::string::npos)
          return false;
      return true;
  }
  return false;
}

bool GpuIndexes(const json& list) {
  for (const auto& e : list)
    if (!IsInteger(e) || e.get<double>() < 0) return false;
  return true;
}

// The arguments of one call, checked against the tool's inputs. A null value
// counts as absent (clients send null for "not given").
class Args {
 public:
  static Result<Args> Check(const ToolSpec& tool, const json& raw) {
    Args a;
    BK_ASSIGN_OR_RETURN(a.values_,
                        CheckArguments(tool, raw, "operation_id is required for retry-safe MCP writes"));
    for (const auto& p : tool.params)
      if (p.type == ArgType::kIntegerList && a.Has(std::string(p.name).c_str()) &&
          !GpuIndexes(a.values_.at(std::string(p.name))))
        return Invalid(fmt::format("{} must be {}", p.name, TypeWord(p.type)));
    return a;
  }

  bool Has(const char* name) const { return values_.contains(name); }
  std::optional<int64_t> Int(const char* name) const {
    if (!Has(name)) return std::nullopt;
    const json& v = values_.at(name);
    return v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>());
  }
  std::optional<std::string> Str(const char* name) const {
    if (!Has(name)) return std::nullopt;
    return values_.at(name).get<std::string>();
  }
  bool Bool(const char* name) const { return Has(name) && values_.at(name).get<bool>(); }
  std::optional<std::vector<std::string>> Strs(const char* name) const {
    if (!Has(name)) return std::nullopt;
    return values_.at(name).get<std::vector<std::string>>();
  }
  std::optional<std::vector<int>> Ints(const char* name) const {
    if (!Has(name)) return std::nullopt;
    std::vector<int> out;
    for (const auto& e : values_.at(name)) {
      double d = e.get<double>();
      if (d > 1'000'000) return std::vector<int>{1'000'000};  // out of range; the service names it
      out.push_back(static_cast<int>(d));
    }
    return out;
  }

 private:
  json values_ = json::object();
};

Result<int> SmallInt(const Args& a, const char* name, int64_t min, const std::string& message) {
  int64_t v = *a.Int(name);
  if (v < min || v > 1'000'000) return Invalid(message);
  return static_cast<int>(v);
}

Result<std::string> OpId(const Args& a, bool required) {
  std::string id(Trim(a.Str("operation_id").value_or("")));
  if (id.empty() && required) return Invalid("operation_id is required for retry-safe MCP writes");
  return id;
}

Result<engine::Mode> ModeArg(const Args& a) {
  auto m = engine::ParseMode(*a.Str("mode"));
  if (!m) return Invalid("mode must be s/shared or x/exclusive");
  return *m;
}

Result<engine::Seconds> StartArg(const Args& a, const ToolEnv& env, const client::Ledger& l) {
  // Agents send machine times: a naive ISO time is UTC, as in the original.
  return engine::ParseStart(*a.Str("start"), l.Now(), l.policy().grid(), *env.zone, engine::NaiveIso::kUtc);
}

// GPU choice, memory and host budgets: shared by recommend, create and edit.
template <class Request>
Status FillCommon(const Args& a, Request& r) {
  if (a.Has("gpus") && a.Has("exclude_gpus")) return Invalid("gpus and exclude_gpus are mutually exclusive");
  if (a.Has("gpus")) r.gpus = *a.Ints("gpus");
  if (a.Has("exclude_gpus")) r.exclude = *a.Ints("exclude_gpus");
  if (a.Has("share")) {
    BK_ASSIGN_OR_RETURN(r.share_units, SmallInt(a, "share", 1, "share must be a whole number of slots >= 1"));
  }
  if (a.Has("cpus")) {
    BK_ASSIGN_OR_RETURN(r.cpus, engine::ParseCpus(std::to_string(*a.Int("cpus"))));
  }
  if (a.Has("ram")) {
    BK_ASSIGN_OR_RETURN(r.ram_mb, engine::ParseSizeMb(*a.Str("ram"), "ram"));
  }
  return Ok();
}

Result<service::CreateRequest> CreateFrom(const Args& a, const ToolEnv& env, const client::Ledger& l) {
  service::CreateRequest r;
  BK_ASSIGN_OR_RETURN(
      r.count,
      SmallInt(a, "count", 1, fmt::format("GPU count must be between 1 and {}", l.policy().gpu_count)));
  BK_ASSIGN_OR_RETURN(r.duration, engine::ParseDuration(*a.Str("duration")));
  if (a.Has("mode")) {
    BK_ASSIGN_OR_RETURN(r.mode, ModeArg(a));
  }
  if (a.Has("start")) {
    BK_ASSIGN_OR_RETURN(r.start, StartArg(a, env, l));
  }
  if (a.Has("expected_memory")) {
    BK_ASSIGN_OR_RETURN(r.memory_mb, engine::ParseSizeMb(*a.Str("expected_memory"), "expected_memory"));
  }
  BK_TRY(FillCommon(a, r));
  return r;
}

Result<service::EditRequest> EditFrom(const Args& a, const ToolEnv& env, const client::Ledger& l) {
  service::EditRequest r;
  r.ref = *a.Str("reservation_id");
  if (Trim(r.ref).empty()) return Invalid("reservation ID is required");
  BK_ASSIGN_OR_RETURN(r.op_id, OpId(a, true));
  bool changed = false;
  for (const char* field : {"duration", "mode", "start", "gpus", "exclude_gpus", "count", "expected_memory",
                            "share", "cpus", "ram"})
    changed = changed || a.Has(field);
  // allow_queue alone changes nothing (as in the original).
  if (!changed) return Invalid("edit requires at least one changed field");
  if (a.Has("duration")) {
    BK_ASSIGN_OR_RETURN(r.duration, engine::ParseDuration(*a.Str("duration")));
  }
  if (a.Has("mode")) {
    BK_ASSIGN_OR_RETURN(r.mode, ModeArg(a));
  }
  if (a.Has("start")) {
    BK_ASSIGN_OR_RETURN(r.start, StartArg(a, env, l));
  }
  if (a.Has("count")) {
    BK_ASSIGN_OR_RETURN(r.count, SmallInt(a, "count", 1, "GPU count must be >= 1"));
  }
  if (a.Has("expected_memory")) {
    r.update_memory = true;
    std::string text(Trim(*a.Str("expected_memory")));
    if (text != "-") {
      BK_ASSIGN_OR_RETURN(r.memory_mb, engine::ParseSizeMb(text, "expected_memory"));
    }
  }
  BK_TRY(FillCommon(a, r));
  r.allow_queue = a.Bool("allow_queue");
  return r;
}

// The usage and scheduled-job tools; Run has the booking ones.
Result<std::string> RunUsageOrJobs(const ToolEnv& env, const std::string& name, const Args& a,
                                   client::Ledger& l) {
  if (name == "get_my_gpu_usage") {
    MyUsageRequest req;
    if (a.Has("since")) {
      BK_ASSIGN_OR_RETURN(req.since, engine::ParseDuration(Trim(*a.Str("since"))));
    }
    req.resolution = a.Str("resolution").value_or("auto");
    req.include_events = a.Bool("include_events");
    req.limit = a.Int("limit").value_or(1000);
    return MyUsageDoc(l, req);
  }
  if (name == "read_my_job_log") {
    BK_ASSIGN_OR_RETURN(worker::Settings settings, worker::LoadSettings(*env.config, env.env));
    return JobLogDoc(l, settings, *a.Str("reservation_id"), a.Int("max_chars").value_or(32000));
  }
  if (name == "cleanup_my_job_specs") return SpecCleanupDoc(l, worker::LoadSettings(*env.config, env.env));
  if (name == "cleanup_my_job_logs") return LogCleanupDoc(l, worker::LoadSettings(*env.config, env.env));
  return Fail(ErrorKind::kInternal, "tool has no handler: " + name);
}

Result<std::string> Run(const ToolEnv& env, const ToolSpec& tool, const Args& a) {
  BK_ASSIGN_OR_RETURN(client::Ledger * l, env.ledger());
  std::string name(tool.name);
  uint32_t uid = l->actor().uid;
  const engine::Policy& p = l->policy();

  if (name == "get_my_gpu_usage" || name == "read_my_job_log" || name.starts_with("cleanup_my_job_"))
    return RunUsageOrJobs(env, name, a, *l);
  if (name == "get_gpu_context") return ContextDoc(*l, *env.config);
  if (name == "recommend_gpu_booking") {
    BK_ASSIGN_OR_RETURN(service::CreateRequest req, CreateFrom(a, env, *l));
    BK_ASSIGN_OR_RETURN(service::Recommendation rec, l->Recommend(req));
    return surface::RecommendationDoc(rec, p, l->Now());
  }
  if (name == "create_gpu_booking") {
    BK_ASSIGN_OR_RETURN(std::string op_id, OpId(a, true));
    BK_ASSIGN_OR_RETURN(service::CreateRequest req, CreateFrom(a, env, *l));
    req.op_id = op_id;
    if (a.Has("command")) {
      // As in the original, working_directory only means something with a command.
      BK_ASSIGN_OR_RETURN(worker::Settings settings, worker::LoadSettings(*env.config, env.env));
      return CreateWithCommand(*l, *env.config, settings, req, *a.Strs("command"),
                               a.Str("working_directory"));
    }
    BK_ASSIGN_OR_RETURN(service::BookingOutcome o, l->Create(req));
    return surface::BookingResultDoc(o, uid, p, l->Now());
  }
  if (name == "list_gpu_reservations") {
    service::ListQuery q;
    q.everyone = !a.Bool("mine_only");
    BK_ASSIGN_OR_RETURN(service::ListResult r, l->List(q));
    return surface::ReservationsDoc(r, uid, p, l->Now());
  }
  if (name == "edit_my_gpu_booking") {
    BK_ASSIGN_OR_RETURN(service::EditRequest req, EditFrom(a, env, *l));
    BK_ASSIGN_OR_RETURN(service::BookingOutcome o, l->Edit(req));
    return surface::BookingResultDoc(o, uid, p, l->Now());
  }
  if (name == "renew_my_gpu_booking") {
    service::RenewRequest req;
    req.ref = *a.Str("reservation_id");
    if (Trim(req.ref).empty()) return Invalid("reservation ID is required");
    BK_ASSIGN_OR_RETURN(req.op_id, OpId(a, true));
    BK_ASSIGN_OR_RETURN(req.extend_by, engine::ParseDuration(*a.Str("duration")));
    BK_ASSIGN_OR_RETURN(service::BookingOutcome o, l->Renew(req));
    return surface::BookingResultDoc(o, uid, p, l->Now());
  }
  if (name == "cancel_my_gpu_booking") {
    service::CancelRequest req;
    req.ref = *a.Str("reservation_id");
    if (Trim(req.ref).empty()) return Invalid("reservation ID is required");
    BK_ASSIGN_OR_RETURN(std::string op_id, OpId(a, false));
    if (!op_id.empty()) req.op_id = op_id;
    BK_ASSIGN_OR_RETURN(service::CancelOutcome o, l->Cancel(req));
    // As `bk d`: the private specs this cancellation leaves unlaunchable go now.
    std::vector<std::string> warnings =
        worker::SweepSpecsAfterCancel(*l, *env.config, env.env, o.reservation);
    std::string doc = surface::CancellationDoc(o, uid, p, l->Now());
    if (warnings.empty()) return doc;
    json d = json::parse(doc);
    d["warning"] = Join(warnings, "; ");
    return d.dump();
  }
  if (name == "get_my_gpu_operation") {
    BK_ASSIGN_OR_RETURN(std::string op_id, OpId(a, true));
    BK_ASSIGN_OR_RETURN(service::OperationView v, l->Operation(op_id));
    return surface::OperationDoc(v, uid, p, l->Now());
  }
  return Fail(ErrorKind::kInternal, "tool has no handler: " + name);
}

}  // namespace

ToolOutcome CallTool(const ToolEnv& env, const std::string& name, const std::string& arguments_json) {
  ToolOutcome out;
  auto fail = [&](const std::string& message) {
    out.is_error = true;
    out.message = fmt::format("Error executing tool {}: {}", name, message);
    return out;
  };
  const ToolSpec* tool = FindTool(name);
  if (!tool) return fail("unknown tool");
  try {
    auto args = Args::Check(*tool, json::parse(arguments_json));
    if (!args) return fail(args.error().message);
    auto doc = Run(env, *tool, *args);
    if (!doc) return fail(doc.error().message);
    out.document = std::move(*doc);
    return out;
  } catch (const std::exception& e) {
    // A bug must cost one call, never the server.
    return fail(fmt::format("internal error: {}", e.what()));
  }
}

Result<json> CheckArguments(const ToolSpec& tool, const json& raw, std::string_view op_id_required) {
  if (!raw.is_null() && !raw.is_object()) return Invalid("arguments must be a JSON object");
  json values = json::object();
  if (raw.is_object()) {
    for (const auto& [key, value] : raw.items()) {
      const ToolParam* param = nullptr;
      for (const auto& p : tool.params)
        if (p.name == key) param = &p;
      if (!param) {
        std::vector<std::string> names;
        for (const auto& p : tool.params) names.emplace_back(p.name);
        return Invalid(fmt::format("unknown argument: {}; {} accepts: {}", Printable(key), tool.name,
                                   names.empty() ? "no arguments" : Join(names, ", ")));
      }
      if (value.is_null()) continue;
      if (!HasShape(value, param->type))
        return Invalid(fmt::format("{} must be {}", key, TypeWord(param->type)));
      values[key] = value;
    }
  }
  for (const auto& p : tool.params)
    if (p.required && !values.contains(std::string(p.name)))
      return Invalid(p.name == "operation_id" ? std::string(op_id_required)
                                              : fmt::format("missing required argument: {}", p.name));
  return values;
}

bool IsInteger(const json& v) {
  if (v.is_number_integer()) return true;
  // JSON has one number type; 2.0 from a client is still the integer 2.
  return v.is_number_float() && std::isfinite(v.get<double>()) &&
         v.get<double>() == std::floor(v.get<double>()) && std::fabs(v.get<double>()) < 9e15;
}

}  // namespace bk::agent
