#include "agent/mcp_cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "agent/mcp_tools.h"
#include "base/strings.h"
#include "cluster/catalog_file.h"
#include "cluster/remote.h"
#include "engine/types.h"

namespace bk::agent {
namespace {

using nlohmann::json;

constexpr std::string_view kClusterSchema = "gpubk.cluster.v1";

// Input descriptions, worded for a model choosing arguments.
constexpr std::string_view kCount = "Number of GPUs on one host (a count, not a GPU index).";
constexpr std::string_view kDuration = "Duration such as 30m, 2h or 1h30m (a multiple of the booking slot).";
constexpr std::string_view kMode = "shared (default) or exclusive; s and x are accepted.";
constexpr std::string_view kStart =
    "Exact start (ISO 8601, naive = UTC, or now, +30m, 20:00 in this machine's local time), resolved once "
    "for every host. Omit to take the earliest legal slot.";
constexpr std::string_view kGpus =
    "Book exactly these GPU indexes on the chosen host. Excludes exclude_gpus.";
constexpr std::string_view kExclude = "Never use these GPU indexes.";
constexpr std::string_view kMemory = "Expected VRAM per GPU, e.g. 24g or 4096m.";
constexpr std::string_view kShare = "Integer shared slots per GPU (shared mode only; default 1).";
constexpr std::string_view kOpId =
    "Stable operation ID (1-128 of A-Z a-z 0-9 . _ : -). Reuse it for an exact retry: it goes to the host "
    "that took the first try, never books twice. A new intent needs a new ID.";
constexpr std::string_view kRef = "Node-qualified reservation ID NODE/ID, e.g. gpu-a/1a2b3c.";
constexpr std::string_view kCommand =
    "Optional argv list, e.g. [\"python\", \"train.py\"] (no shell): the chosen host's bk worker starts it "
    "on the booked GPUs at the booking's start.";

std::vector<ToolSpec> BuildClusterTools() {
  using A = ArgType;
  return {
      {"get_gpu_cluster_context",
       "GPU cluster context",
       "Read every cluster host's GPUs, policy and bookings in one document; a host that cannot be reached "
       "is listed with its error.",
       ToolKind::kReadOnly,
       {},
       "cluster-context"},
      {"check_gpu_cluster_readiness",
       "Check GPU cluster readiness",
       "Check each host: reachable, the catalog's identity, write capabilities, clock. ready=false is an "
       "answer, not a failure.",
       ToolKind::kReadOnly,
       {{"require_jobs", A::kBoolean, false, "Also require a running scheduled-command worker on each host.",
         "false"}},
       "cluster-check"},
      {"recommend_cluster_gpu_booking",
       "Recommend a cluster GPU booking",
       "Read-only: ask every host where the booking would land, best host first.",
       ToolKind::kReadOnly,
       {{"count", A::kInteger, true, kCount},
        {"duration", A::kString, true, kDuration},
        {"mode", A::kString, false, kMode, "\"shared\""},
        {"start", A::kString, false, kStart},
        {"gpus", A::kIntegerList, false, kGpus},
        {"exclude_gpus", A::kIntegerList, false, kExclude},
        {"expected_memory", A::kString, false, kMemory},
        {"share", A::kInteger, false, kShare}},
       "cluster-recommendation"},
      {"create_cluster_gpu_booking",
       "Create a cluster GPU booking",
       "Book on the one host that offers the earliest legal slot, as this user; optionally attach an argv "
       "command. Call recommend first and book only after the user approves.",
       ToolKind::kIdempotentWrite,
       {{"count", A::kInteger, true, kCount},
        {"duration", A::kString, true, kDuration},
        {"operation_id", A::kString, true, kOpId},
        {"mode", A::kString, false, kMode, "\"shared\""},
        {"start", A::kString, false, kStart},
        {"gpus", A::kIntegerList, false, kGpus},
        {"exclude_gpus", A::kIntegerList, false, kExclude},
        {"expected_memory", A::kString, false, kMemory},
        {"share", A::kInteger, false, kShare},
        {"command", A::kStringList, false, kCommand}},
       "cluster-booking-result"},
      {"get_my_cluster_gpu_usage",
       "My cluster GPU usage",
       "This user's GPU usage summed across hosts (per principal where the catalog maps accounts).",
       ToolKind::kReadOnly,
       {{"since", A::kString, false, "How far back, e.g. 24h or 7d.", "\"24h\""},
        {"limit", A::kInteger, false, "At most this many users per host (1-200000).", "1000"}},
       "cluster-usage"},
      {"edit_my_cluster_gpu_booking",
       "Edit my cluster GPU booking",
       "Idempotently edit this user's booking on the host that holds it (NODE/ID), never elsewhere.",
       ToolKind::kIdempotentWrite,
       {{"reservation_id", A::kString, true, kRef},
        {"operation_id", A::kString, true, kOpId},
        {"duration", A::kString, false, "New total duration, e.g. 3h."},
        {"mode", A::kString, false, kMode},
        {"start", A::kString, false, kStart},
        {"gpus", A::kIntegerList, false, kGpus},
        {"exclude_gpus", A::kIntegerList, false, kExclude},
        {"count", A::kInteger, false, "Re-pick this many GPUs automatically."},
        {"expected_memory", A::kString, false, "Expected VRAM per GPU, e.g. 24g, or - to clear it."},
        {"allow_queue", A::kBoolean, false, "Move to the next legal slot when the change conflicts.",
         "false"},
        {"share", A::kInteger, false, kShare}},
       "cluster-mutation-result"},
      {"cancel_my_cluster_gpu_booking",
       "Cancel my cluster GPU booking",
       "Cancel this user's booking on the host that holds it (NODE/ID); a retry with the same operation_id "
       "returns the same cancelled reservation.",
       ToolKind::kIdempotentCleanup,
       {{"reservation_id", A::kString, true, kRef}, {"operation_id", A::kString, true, kOpId}},
       "cluster-mutation-result"},
  };
}

// ------------------------------------------------------------ output schemas

json Str() { return {{"type", "string"}}; }
json Bool() { return {{"type", "boolean"}}; }
json Int() { return {{"type", "integer"}}; }
json Nullable(const std::string& type) { return {{"type", {type, "null"}}}; }
json Objects(json item = {{"type", "object"}}) { return {{"type", "array"}, {"items", std::move(item)}}; }

json Envelope(std::string_view kind, json props, json required) {
  props["schema_version"] = {{"const", kClusterSchema}};
  props["kind"] = {{"const", kind}};
  required.push_back("schema_version");
  required.push_back("kind");
  return {{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", true}};
}

// What every per-host entry of context, usage and recommendation starts with.
json NodeEntry(json extra) {
  json props = {{"name", Str()},     {"node_id", Str()},    {"priority", Int()},
                {"enabled", Bool()}, {"available", Bool()}, {"error", Nullable("string")}};
  json required = {"name", "node_id"};
  for (auto& [k, v] : extra.items()) {
    props[k] = v;
    required.push_back(k);
  }
  return {{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", true}};
}

// ------------------------------------------------------------------ arguments

int64_t AsInt(const json& v) {
  return v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(v.get<double>());
}

constexpr const char* kOpRequired = "operation_id is required for retry-safe cluster MCP writes";

// The call's values: the tools' common check, then the cluster's own rules
// on strings (they become words of a `bk c` command line).
Result<json> CheckTypes(const ToolSpec& tool, const json& raw) {
  BK_ASSIGN_OR_RETURN(json values, CheckArguments(tool, raw, kOpRequired));
  for (const auto& [key, value] : values.items()) {
    if (!value.is_string()) continue;
    const std::string& s = value.get_ref<const std::string&>();
    if (s.find('\0') != std::string::npos) return Invalid(fmt::format("{} must not contain NUL", key));
    // bk reads a leading - as an option and `--` as the start of a job's
    // argv: a value must never be able to become either. ("-" alone
    // clears expected_memory on edit.)
    if (s.starts_with('-') && s != "-") return Invalid(fmt::format("{} must not start with '-'", key));
  }
  if (values.contains("operation_id") && Trim(values["operation_id"].get<std::string>()).empty())
    return Invalid(kOpRequired);
  return values;
}

Result<std::string> GpuList(const json& list) {
  if (list.empty()) return Invalid("GPU list must not be empty");
  std::vector<std::string> out;
  for (const auto& e : list) {
    if (!IsInteger(e) || e.get<double>() < 0) return Invalid("GPU indexes must be non-negative integers");
    out.push_back(std::to_string(AsInt(e)));
  }
  return Join(out, ",");
}

Result<std::string> Mode(const json& v) {
  auto m = engine::ParseMode(v.get<std::string>());
  if (!m) return Invalid("mode must be s/shared or x/exclusive");
  return std::string(engine::ModeName(*m));
}

// Appends the options shared by recommend, create and edit.
Status AddPlacement(const json& v, std::vector<std::string>& argv, bool edit) {
  if (v.contains("gpus") && v.contains("exclude_gpus"))
    return Invalid("gpus and exclude_gpus are mutually exclusive");
  if (v.contains("start")) argv.insert(argv.end(), {"--start", v["start"].get<std::string>()});
  if (edit && v.contains("count")) {
    if (AsInt(v["count"]) < 1) return Invalid("GPU count must be at least 1");
    argv.insert(argv.end(), {"--count", std::to_string(AsInt(v["count"]))});
  }
  if (edit && v.contains("mode")) {
    BK_ASSIGN_OR_RETURN(std::string mode, Mode(v["mode"]));
    argv.insert(argv.end(), {"--mode", mode});
  }
  if (v.contains("expected_memory"))
    argv.insert(argv.end(), {"--mem", v["expected_memory"].get<std::string>()});
  if (v.contains("share")) {
    if (AsInt(v["share"]) < 1) return Invalid("share must be a whole number of slots >= 1");
    argv.insert(argv.end(), {"--share", std::to_string(AsInt(v["share"]))});
  }
  for (const char* key : {"gpus", "exclude_gpus"}) {
    if (!v.contains(key)) continue;
    BK_ASSIGN_OR_RETURN(std::string list, GpuList(v[key]));
    argv.insert(argv.end(), {std::string_view(key) == "gpus" ? "--gpu" : "--exclude-gpu", list});
  }
  return Ok();
}

// COUNT DUR --mode M, the words recommend and create start with.
Status AddRequest(const json& v, std::vector<std::string>& argv) {
  if (AsInt(v["count"]) < 1) return Invalid("GPU count must be at least 1");
  std::string mode = "shared";
  if (v.contains("mode")) {
    BK_ASSIGN_OR_RETURN(mode, Mode(v["mode"]));
  }
  argv.insert(argv.end(),
              {std::to_string(AsInt(v["count"])), v["duration"].get<std::string>(), "--mode", mode});
  return Ok();
}

Result<std::string> NodeRef(const json& v) {
  std::string ref = v["reservation_id"].get<std::string>();
  size_t slash = ref.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == ref.size())
    return Invalid("use a node-qualified reservation ID such as gpu-a/1a2b3c");
  return ref;
}

// ------------------------------------------------------------------ outcomes

ToolOutcome Failed(const std::string& tool, const std::string& message) {
  return {
      .is_error = true, .document = "", .message = fmt::format("Error executing tool {}: {}", tool, message)};
}

// The last `max` bytes of `text`, not starting inside a UTF-8 character.
std::string_view Tail(std::string_view text, size_t max) {
  if (text.size() <= max) return text;
  text.remove_prefix(text.size() - max);
  while (!text.empty() && (static_cast<unsigned char>(text.front()) & 0xC0) == 0x80) text.remove_prefix(1);
  return text;
}

// "gpu-a: REASON; gpu-b: REASON" from a per-host document (a recommendation
// no host could satisfy), or "" when it names no reason.
std::string NodeReasons(const json& doc) {
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array()) return "";
  std::vector<std::string> why;
  for (const auto& n : doc["nodes"]) {
    if (!n.is_object() || !n.contains("name") || !n["name"].is_string()) continue;
    for (const char* key : {"error", "rejected_reason"}) {
      if (n.contains(key) && n[key].is_string()) {
        why.push_back(n["name"].get<std::string>() + ": " + n[key].get<std::string>());
        break;
      }
    }
  }
  return Join(why, "; ");
}

// Why a child failed, in one short line: bk's own error document when it
// printed one, else the end of its stderr (or stdout).
std::string FailureDetail(const cluster::RunResult& run) {
  std::string raw;
  auto doc = json::parse(run.out, nullptr, false);
  if (doc.is_object() && doc.value("kind", "") == "error" && doc.contains("error") &&
      doc["error"].is_object() && doc["error"].contains("message") && doc["error"]["message"].is_string())
    raw = doc["error"]["message"].get<std::string>();
  else if (std::string why = NodeReasons(doc); !why.empty() && Trim(run.err).empty())
    raw = "no cluster node can satisfy this request (" + why + ")";
  else
    raw = std::string(Tail(Trim(run.err).empty() ? run.out : run.err, 4000));
  std::string line = cluster::Sanitize(raw, std::string::npos);
  if (line.starts_with("bk:")) line = std::string(Trim(line.substr(3)));
  line = std::string(Tail(line, 1000));
  if (line.empty())
    line = run.end == cluster::RunResult::End::kSignaled ? fmt::format("bk ended by signal {}", run.code)
                                                         : fmt::format("bk exited with status {}", run.code);
  return line;
}

}  // namespace

const std::vector<ToolSpec>& ClusterTools() {
  static const std::vector<ToolSpec> tools = BuildClusterTools();
  return tools;
}

const ToolSpec* FindClusterTool(std::string_view name) {
  for (const auto& t : ClusterTools())
    if (t.name == name) return &t;
  return nullptr;
}

json ClusterOutputSchema(std::string_view kind) {
  if (kind == "cluster-context")
    return Envelope(kind, {{"nodes", Objects(NodeEntry({{"context", Nullable("object")}}))}}, {"nodes"});
  if (kind == "cluster-check") {
    json summary = {{"type", "object"},
                    {"required", {"configured", "enabled", "disabled", "failed", "warnings"}},
                    {"properties",
                     {{"configured", Int()},
                      {"enabled", Int()},
                      {"disabled", Int()},
                      {"failed", Int()},
                      {"warnings", Int()}}}};
    json node = NodeEntry({{"status", {{"enum", {"ready", "failed", "disabled"}}}}});
    node["properties"]["missing_capabilities"] = {{"type", "array"}, {"items", Str()}};
    return Envelope(kind, {{"ready", Bool()}, {"summary", summary}, {"nodes", Objects(node)}},
                    {"ready", "summary", "nodes"});
  }
  if (kind == "cluster-recommendation") {
    json node = NodeEntry({{"recommendation", Nullable("object")}});
    node["properties"]["rejected_reason"] = Nullable("string");
    node["properties"]["write_compatible"] = Bool();
    return Envelope(kind,
                    {{"selected_node", Nullable("string")},
                     {"selected_write_compatible", Bool()},
                     {"nodes", Objects(node)}},
                    {"selected_node", "selected_write_compatible", "nodes"});
  }
  if (kind == "cluster-booking-result") {
    json node = {{"type", "object"},
                 {"required", {"name", "node_id"}},
                 {"properties", {{"name", Str()}, {"node_id", Str()}}}};
    return Envelope(kind, {{"node", node}, {"operation_id", Str()}, {"result", {{"type", "object"}}}},
                    {"node", "operation_id", "result"});
  }
  if (kind == "cluster-usage") {
    json range = {{"type", "object"},
                  {"required", {"start_at", "end_at"}},
                  {"properties", {{"start_at", Str()}, {"end_at", Str()}}}};
    return Envelope(kind,
                    {{"range", range},
                     {"principals", Objects()},
                     {"nodes", Objects(NodeEntry({{"usage", Nullable("object")}}))}},
                    {"range", "principals", "nodes"});
  }
  // cluster-mutation-result
  return Envelope(
      kind, {{"node", Str()}, {"node_id", Str()}, {"operation_id", Str()}, {"result", {{"type", "object"}}}},
      {"node", "node_id", "operation_id", "result"});
}

Result<std::vector<std::string>> ClusterArgv(const ToolSpec& tool, const std::string& arguments_json) {
  BK_ASSIGN_OR_RETURN(json v, CheckTypes(tool, json::parse(arguments_json)));
  std::string name(tool.name);
  std::vector<std::string> argv = {"c"};
  if (name == "get_gpu_cluster_context") {
    argv.insert(argv.end(), {"status", "--json"});
  } else if (name == "check_gpu_cluster_readiness") {
    argv.push_back("check");
    if (v.value("require_jobs", false)) argv.push_back("--jobs");
    argv.push_back("--json");
  } else if (name == "recommend_cluster_gpu_booking") {
    argv.push_back("rec");
    BK_TRY(AddRequest(v, argv));
    BK_TRY(AddPlacement(v, argv, false));
    argv.push_back("--json");
  } else if (name == "create_cluster_gpu_booking") {
    BK_TRY(AddRequest(v, argv));
    argv.insert(argv.end(), {"--op-id", std::string(Trim(v["operation_id"].get<std::string>()))});
    BK_TRY(AddPlacement(v, argv, false));
    argv.push_back("--json");
    // After `--` nothing is read by bk: a job word like --json stays the job's.
    if (v.contains("command")) {
      argv.push_back("--");
      for (const auto& w : v["command"]) argv.push_back(w.get<std::string>());
    }
  } else if (name == "get_my_cluster_gpu_usage") {
    argv.insert(argv.end(),
                {"u", "--since", v.value("since", std::string("24h")), "--limit",
                 std::to_string(v.contains("limit") ? AsInt(v["limit"]) : 1000), "--json", "--compact"});
  } else if (name == "edit_my_cluster_gpu_booking") {
    BK_ASSIGN_OR_RETURN(std::string ref, NodeRef(v));
    bool changed = v.value("allow_queue", false);
    for (const char* field :
         {"duration", "mode", "start", "gpus", "exclude_gpus", "count", "expected_memory", "share"})
      changed = changed || v.contains(field);
    if (!changed) return Invalid("cluster edit requires at least one changed field");
    argv.insert(argv.end(), {"e", ref, "--op-id", std::string(Trim(v["operation_id"].get<std::string>()))});
    if (v.contains("duration")) argv.insert(argv.end(), {"-d", v["duration"].get<std::string>()});
    BK_TRY(AddPlacement(v, argv, true));
    if (v.value("allow_queue", false)) argv.push_back("--queue");
    argv.push_back("--json");
  } else if (name == "cancel_my_cluster_gpu_booking") {
    BK_ASSIGN_OR_RETURN(std::string ref, NodeRef(v));
    argv.insert(argv.end(),
                {"d", ref, "--op-id", std::string(Trim(v["operation_id"].get<std::string>())), "--json"});
  } else {
    return Fail(ErrorKind::kInternal, "tool has no handler: " + name);
  }
  return argv;
}

double ClusterTimeoutSeconds(const std::optional<cluster::Catalog>& catalog) {
  double slowest = 30;
  if (catalog)
    for (const auto& n : catalog->nodes)
      if (n.enabled) slowest = std::max(slowest, n.timeout_seconds);
  // A write is a preflight, a replay lookup, the write and a status query:
  // several round trips to the slowest host, each within its own timeout.
  return std::clamp(slowest * 5 + 10, 30.0, 600.0);
}

ToolOutcome ClusterOutcome(const std::string& tool, const cluster::RunResult& run) {
  using End = cluster::RunResult::End;
  switch (run.end) {
    case End::kTimedOut: return Failed(tool, "cluster MCP request timed out");
    case End::kOverflow: return Failed(tool, "cluster MCP response exceeded the safe output limit");
    case End::kSpawnFailed: return Failed(tool, "cannot start cluster MCP request: " + run.why_spawn);
    case End::kCancelled: return Failed(tool, "cluster request failed: cancelled");
    case End::kSignaled: return Failed(tool, "cluster request failed: " + FailureDetail(run));
    case End::kExited: break;
  }
  auto doc = json::parse(run.out, nullptr, false);
  bool object = doc.is_object();
  // A host that is not ready, or a report with no answering host, is still
  // the answer to a read: bk says so with status 3 and its document.
  std::string kind = object ? doc.value("kind", "") : "";
  bool answered =
      run.code == 0 ||
      (run.code == 3 && (kind == "cluster-check" || kind == "cluster-context" || kind == "cluster-usage"));
  if (!answered) return Failed(tool, "cluster request failed: " + FailureDetail(run));
  if (!object) return Failed(tool, "cluster request failed: bk printed no JSON document");
  return {
      .is_error = false, .document = doc.dump(-1, ' ', false, json::error_handler_t::replace), .message = ""};
}

ToolOutcome CallClusterTool(cluster::Runner& runner, const std::string& name,
                            const std::string& arguments_json) {
  const ToolSpec* tool = FindClusterTool(name);
  if (!tool) return Failed(name, "unknown tool");
  try {
    auto args = ClusterArgv(*tool, arguments_json);
    if (!args) return Failed(name, args.error().message);
    std::optional<cluster::Catalog> catalog;
    if (auto path = cluster::CatalogPath(std::nullopt))
      if (auto loaded = cluster::LoadCatalog(*path); loaded && *loaded) catalog = std::move(**loaded);
    cluster::RunSpec spec;
    spec.argv = {cluster::SelfExecutable()};
    spec.argv.insert(spec.argv.end(), args->begin(), args->end());
    spec.env = cluster::EnvironmentWith({"NO_COLOR=1"});
    spec.timeout_seconds = ClusterTimeoutSeconds(catalog);
    spec.stdout_cap = cluster::kMaxReplyBytes;
    spec.stderr_tail = cluster::kStderrTailBytes;
    return ClusterOutcome(name, runner.Run(spec));
  } catch (const std::exception& e) {
    // A bug must cost one call, never the server.
    return Failed(name, fmt::format("internal error: {}", e.what()));
  }
}

}  // namespace bk::agent
