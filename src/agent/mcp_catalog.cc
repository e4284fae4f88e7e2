#include "agent/mcp_catalog.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "agent/mcp_cluster.h"

namespace bk::agent {
namespace {

using nlohmann::json;

// Shared input descriptions, worded for a model choosing arguments.
constexpr std::string_view kCount = "Number of GPUs (a count, not a GPU index).";
constexpr std::string_view kDuration = "Duration such as 30m, 2h or 1h30m (a multiple of the booking slot).";
constexpr std::string_view kMode = "shared (default) or exclusive; s and x are accepted.";
constexpr std::string_view kStart =
    "Exact start (ISO 8601, naive = UTC, or now, +30m, 20:00 in server local time). Omit to take the "
    "earliest legal "
    "slot from now.";
constexpr std::string_view kGpus =
    "Book exactly these GPU indexes, e.g. [1] for GPU 1. Excludes exclude_gpus.";
constexpr std::string_view kExclude = "Never use these GPU indexes.";
constexpr std::string_view kMemory = "Expected VRAM per GPU, e.g. 24g or 4096m.";
constexpr std::string_view kShare = "Integer shared slots per GPU (shared mode only; default 1).";
constexpr std::string_view kCpus =
    "Host CPUs this booking declares (enforced when the host has a CPU budget).";
constexpr std::string_view kRam =
    "Host RAM this booking declares, e.g. 32g (enforced when the host has a RAM budget).";
constexpr std::string_view kOpId =
    "Stable operation ID (1-128 of A-Z a-z 0-9 . _ : -). Reuse it for an exact retry; a new intent needs a "
    "new ID.";
constexpr std::string_view kRef = "Reservation ID (full, or a unique short prefix) or list number.";
constexpr std::string_view kCommand =
    "Optional argv list, e.g. [\"python\", \"train.py\"] (no shell): your bk worker starts it on the booked "
    "GPUs at the booking's start. Only a digest and a summary enter the shared ledger.";
constexpr std::string_view kWorkingDirectory =
    "Absolute directory the command starts in (default: this MCP server's working directory).";

// Long on purpose: a table, one entry per tool.
std::vector<ToolSpec> BuildTools() {
  using A = ArgType;
  return {
      {"get_gpu_context",
       "GPU context",
       "Read policy, host CPU/RAM budgets, live GPU state, memory and active reservations.",
       ToolKind::kReadOnly,
       {},
       "context"},
      {"recommend_gpu_booking",
       "Recommend a GPU booking",
       "Read-only recommendation. Omit start to allow earliest-slot queueing; explicit start is exact.",
       ToolKind::kReadOnly,
       {{"count", A::kInteger, true, kCount},
        {"duration", A::kString, true, kDuration},
        {"mode", A::kString, false, kMode},
        {"start", A::kString, false, kStart},
        {"gpus", A::kIntegerList, false, kGpus},
        {"exclude_gpus", A::kIntegerList, false, kExclude},
        {"expected_memory", A::kString, false, kMemory},
        {"share", A::kInteger, false, kShare},
        {"cpus", A::kInteger, false, kCpus},
        {"ram", A::kString, false, kRam}},
       "recommendation"},
      {"create_gpu_booking",
       "Create a GPU booking",
       "Create an idempotent booking as this MCP process UID; optionally attach an argv command. Call "
       "recommend first and book only after the user approves.",
       ToolKind::kIdempotentWrite,
       {{"count", A::kInteger, true, kCount},
        {"duration", A::kString, true, kDuration},
        {"operation_id", A::kString, true, kOpId},
        {"mode", A::kString, false, kMode},
        {"start", A::kString, false, kStart},
        {"gpus", A::kIntegerList, false, kGpus},
        {"exclude_gpus", A::kIntegerList, false, kExclude},
        {"expected_memory", A::kString, false, kMemory},
        {"share", A::kInteger, false, kShare},
        {"cpus", A::kInteger, false, kCpus},
        {"ram", A::kString, false, kRam},
        {"command", A::kStringList, false, kCommand},
        {"working_directory", A::kString, false, kWorkingDirectory}},
       "booking_result"},
      {"list_gpu_reservations",
       "List GPU reservations",
       "List active reservations using the stable privacy-safe schema.",
       ToolKind::kReadOnly,
       {{"mine_only", A::kBoolean, false, "Only this UID's reservations (default false: everyone's)."}},
       "reservations"},
      {"get_my_gpu_usage",
       "My GPU usage",
       "Read the current UID's historical GPU usage; never accepts another UID.",
       ToolKind::kReadOnly,
       {{"since", A::kString, false, "How far back, e.g. 24h or 7d.", "\"24h\""},
        {"resolution", A::kString, false, "Sample resolution: auto (1m up to 2 days, else 1h), 1m or 1h.",
         "\"auto\""},
        {"include_events", A::kBoolean, false, "Also return this UID's process and reclaim events.", "false"},
        {"limit", A::kInteger, false, "At most this many sample records (1-200000); events at most 5000.",
         "1000"}},
       "my-usage"},
      {"edit_my_gpu_booking",
       "Edit my GPU booking",
       "Idempotently edit this UID's booking; a started one may only change its end. queue never repairs "
       "past "
       "starts.",
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
        {"allow_queue", A::kBoolean, false, "Move to the next legal slot when the change conflicts."},
        {"share", A::kInteger, false, kShare},
        {"cpus", A::kInteger, false, kCpus},
        {"ram", A::kString, false, kRam}},
       "booking_result"},
      {"renew_my_gpu_booking",
       "Renew my GPU booking",
       "Idempotently extend this UID's reservation by duration on the same GPUs, with the same checks.",
       ToolKind::kIdempotentWrite,
       {{"reservation_id", A::kString, true, kRef},
        {"duration", A::kString, true, "How much longer, e.g. 30m."},
        {"operation_id", A::kString, true, kOpId}},
       "booking_result"},
      {"cancel_my_gpu_booking",
       "Cancel my GPU booking",
       "Cancel only a reservation owned by this MCP process UID; short IDs are accepted when unique. With an "
       "operation_id a retry returns the same cancelled reservation.",
       ToolKind::kDestructiveWrite,
       {{"reservation_id", A::kString, true, kRef}, {"operation_id", A::kString, false, kOpId}},
       "cancellation_result"},
      {"cleanup_my_job_specs",
       "Clean up my job specs",
       "Prune only this UID's terminal, expired, or old orphaned private command specs.",
       ToolKind::kIdempotentCleanup,
       {},
       "job-spec-cleanup"},
      {"cleanup_my_job_logs",
       "Clean up my job logs",
       "Apply this UID's age and quota policy to terminal private job logs.",
       ToolKind::kIdempotentCleanup,
       {},
       "job-log-cleanup"},
      {"read_my_job_log",
       "Read my job log",
       "Read a bounded tail of this UID's private scheduled-job log.",
       ToolKind::kReadOnly,
       {{"reservation_id", A::kString, true,
         "Reservation ID (full, or a unique prefix) of a booking with a command."},
        {"max_chars", A::kInteger, false, "Return at most this many characters from the end (1-128000).",
         "32000"}},
       "job_log"},
      {"get_my_gpu_operation",
       "Look up my operation",
       "Read whether this UID's operation ID committed, and the reservation it touched. Use it before "
       "retrying an "
       "uncertain write.",
       ToolKind::kReadOnly,
       {{"operation_id", A::kString, true, "The operation ID of an earlier write."}},
       "operation_status"},
  };
}

// "operation_id" -> "Operation Id", the original's generated titles.
std::string TitleCase(std::string_view name) {
  std::string out;
  bool up = true;
  for (char c : name) {
    if (c == '_') {
      out += ' ';
      up = true;
    } else {
      out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      up = false;
    }
  }
  return out;
}

json ParamSchema(const ToolParam& p) {
  json s;
  switch (p.type) {
    case ArgType::kInteger: s = {{"type", "integer"}}; break;
    case ArgType::kString: s = {{"type", "string"}}; break;
    case ArgType::kBoolean: s = {{"type", "boolean"}}; break;
    case ArgType::kIntegerList:
      s = {{"type", "array"}, {"items", {{"type", "integer"}, {"minimum", 0}}}};
      break;
    case ArgType::kStringList:
      s = {{"type", "array"}, {"items", {{"type", "string"}, {"minLength", 1}}}, {"minItems", 1}};
      break;
  }
  s["title"] = TitleCase(p.name);
  s["description"] = p.description;
  if (!p.default_json.empty()) s["default"] = json::parse(p.default_json);
  return s;
}

json InputSchema(const ToolSpec& t) {
  json props = json::object();
  json required = json::array();
  for (const auto& p : t.params) {
    props[std::string(p.name)] = ParamSchema(p);
    if (p.required) required.push_back(p.name);
  }
  json s = {{"type", "object"},
            {"title", fmt::format("{}Arguments", t.name)},
            {"properties", props},
            {"additionalProperties", false}};
  if (!required.empty()) s["required"] = required;
  return s;
}

// Output schemas: the fields an agent relies on, typed; everything else is
// allowed so documents can grow without breaking clients.
json Nullable(const std::string& type) { return {{"type", {type, "null"}}}; }
json IntList() { return {{"type", "array"}, {"items", {{"type", "integer"}}}}; }
json Str() { return {{"type", "string"}}; }

json ReservationSchema() {
  return {{"type", "object"},
          {"required",
           {"id", "short_id", "uid", "username", "mine", "gpus", "mode", "start_at", "end_at", "status"}},
          {"properties",
           {{"id", Str()},
            {"short_id", Str()},
            {"uid", {{"type", "integer"}}},
            {"username", Str()},
            {"mine", {{"type", "boolean"}}},
            {"gpus", IntList()},
            {"mode", {{"enum", {"shared", "exclusive"}}}},
            {"start_at", Str()},
            {"end_at", Str()},
            {"status", {{"enum", {"active", "cancelled", "expired"}}}},
            {"expected_memory_mb_per_gpu", Nullable("integer")},
            {"share_units_per_gpu", Nullable("integer")},
            {"share_capacity_units_per_gpu", Nullable("integer")},
            {"cpus", Nullable("integer")},
            {"ram_mb", Nullable("integer")},
            {"edit_count", Nullable("integer")},
            {"cancellation", Nullable("object")}}},
          {"additionalProperties", true}};
}

json Envelope(std::string_view kind, json props, json required, std::string_view schema = "bk.agent.v1") {
  props["schema_version"] = {{"const", schema}};
  props["kind"] = {{"const", kind}};
  required.push_back("schema_version");
  required.push_back("kind");
  return {{"type", "object"}, {"properties", props}, {"required", required}, {"additionalProperties", true}};
}

// The documents of the usage and scheduled-job tools.
json UsageOrJobSchema(std::string_view kind) {
  if (kind == "my-usage") {
    json part = {{"type", "object"}};
    return Envelope(kind, {{"generated_at", Str()}, {"summary", part}, {"samples", part}, {"events", part}},
                    {"generated_at", "summary", "samples"}, "gpubk.usage.v1");
  }
  if (kind == "job_log") {
    return Envelope(kind,
                    {{"reservation_id", Str()},
                     {"status", Str()},
                     {"available", {{"type", "boolean"}}},
                     {"segments", {{"type", "integer"}}},
                     {"text", Str()},
                     {"truncated_to_chars", {{"type", "integer"}}}},
                    {"reservation_id", "status", "available", "segments", "text", "truncated_to_chars"});
  }
  // job-spec-cleanup or job-log-cleanup
  json counts = {{"type", "object"},
                 {"required", {"removed", "retained", "failed", "warnings"}},
                 {"properties",
                  {{"removed", {{"type", "integer"}}},
                   {"retained", {{"type", "integer"}}},
                   {"failed", {{"type", "integer"}}},
                   {"warnings", {{"type", "array"}, {"items", Str()}}}}}};
  std::string key = kind == "job-spec-cleanup" ? "private_job_cleanup" : "private_job_log_cleanup";
  return Envelope(kind, {{key, counts}}, {key});
}

json OutputSchema(std::string_view kind) {
  if (kind.starts_with("cluster-")) return ClusterOutputSchema(kind);
  if (kind == "my-usage" || kind == "job_log" || kind.starts_with("job-")) return UsageOrJobSchema(kind);
  json warnings = {{"type", "array"}, {"items", Str()}};
  if (kind == "context") {
    json policy = {
        {"type", "object"},
        {"required", {"gpu_count", "enabled_gpus", "granularity_minutes", "host_cpus", "host_ram_mb"}},
        {"properties",
         {{"gpu_count", {{"type", "integer"}}},
          {"enabled_gpus", IntList()},
          {"disabled_gpus", IntList()},
          {"granularity_minutes", {{"type", "integer"}}},
          {"host_cpus", Nullable("integer")},
          {"host_ram_mb", Nullable("integer")}}}};
    return Envelope(
        kind,
        {{"generated_at", Str()},
         {"deployment", {{"enum", {"private", "server", "system"}}}},
         {"actor",
          {{"type", "object"},
           {"required", {"uid", "username"}},
           {"properties", {{"uid", {{"type", "integer"}}}, {"username", Str()}}}}},
         {"policy", policy},
         {"host_budget", {{"type", "object"}}},
         {"gpu_advice",
          {{"type", "object"},
           {"required", {"order", "gpus"}},
           {"properties",
            {{"order", IntList()}, {"gpus", {{"type", "array"}, {"items", {{"type", "object"}}}}}}}}},
         {"reservations", {{"type", "array"}, {"items", ReservationSchema()}}},
         {"announcements",
          {{"type", "array"},
           {"items",
            {{"type", "object"},
             {"required", {"id", "level", "message", "starts_at", "expires_at"}},
             {"properties",
              {{"id", Str()},
               {"level", {{"enum", {"info", "warning", "critical"}}}},
               {"message", Str()},
               {"starts_at", Str()},
               {"expires_at", Str()}}}}}}},
         {"capabilities", {{"type", "object"}}}},
        {"generated_at", "deployment", "actor", "policy", "gpu_advice", "reservations", "announcements"});
  }
  if (kind == "recommendation") {
    json rec = {
        {"type", {"object", "null"}},
        {"required", {"gpus", "start_at", "end_at", "queued"}},
        {"properties",
         {{"gpus", IntList()}, {"start_at", Str()}, {"end_at", Str()}, {"queued", {{"type", "boolean"}}}}}};
    return Envelope(kind,
                    {{"available", {{"type", "boolean"}}},
                     {"recommendation", rec},
                     {"nearest_available", Nullable("object")},
                     {"request", {{"type", "object"}}},
                     {"warnings", warnings}},
                    {"available", "recommendation", "request", "warnings"});
  }
  if (kind == "booking_result") {
    return Envelope(kind,
                    {{"status", {{"enum", {"created", "queued", "exists", "updated"}}}},
                     {"reservation", ReservationSchema()},
                     {"allocation", {{"type", "object"}}},
                     {"allocator", {{"type", "object"}}},
                     {"warnings", warnings}},
                    {"status", "reservation", "allocation", "allocator", "warnings"});
  }
  if (kind == "reservations") {
    return Envelope(kind, {{"reservations", {{"type", "array"}, {"items", ReservationSchema()}}}},
                    {"reservations"});
  }
  if (kind == "cancellation_result") {
    return Envelope(kind, {{"reservation", ReservationSchema()}}, {"reservation"});
  }
  // operation_status
  json res = ReservationSchema();
  res["type"] = {"object", "null"};
  return Envelope(kind,
                  {{"found", {{"type", "boolean"}}}, {"action", Nullable("string")}, {"reservation", res}},
                  {"found", "action", "reservation"});
}

json Annotations(const ToolSpec& t) {
  bool read_only = t.kind == ToolKind::kReadOnly;
  // A cleanup removes files, but running it twice removes nothing more.
  bool destructive = t.kind == ToolKind::kDestructiveWrite || t.kind == ToolKind::kIdempotentCleanup;
  return {{"title", t.title},
          {"readOnlyHint", read_only},
          {"destructiveHint", destructive},
          {"idempotentHint", t.kind != ToolKind::kDestructiveWrite},
          {"openWorldHint", false}};
}

}  // namespace

const std::vector<ToolSpec>& Tools() {
  static const std::vector<ToolSpec> tools = BuildTools();
  return tools;
}

const ToolSpec* FindTool(std::string_view name) {
  for (const auto& t : Tools())
    if (t.name == name) return &t;
  return nullptr;
}

std::string ToolListJson(bool with_cluster) {
  json list = json::array();
  std::vector<const ToolSpec*> tools;
  for (const auto& t : Tools()) tools.push_back(&t);
  if (with_cluster)
    for (const auto& t : ClusterTools()) tools.push_back(&t);
  for (const ToolSpec* tool : tools) {
    const ToolSpec& t = *tool;
    list.push_back({{"name", t.name},
                    {"title", t.title},
                    {"description", t.description},
                    {"inputSchema", InputSchema(t)},
                    {"outputSchema", OutputSchema(t.output_kind)},
                    {"annotations", Annotations(t)}});
  }
  return list.dump();
}

std::string PlanPromptText(std::string_view count, std::string_view duration,
                           std::string_view expected_memory) {
  return fmt::format(
      "Plan a GPU experiment needing {} GPU(s) for {}, expected memory {} per GPU. First inspect "
      "bk://context, "
      "then call recommend_gpu_booking. Explain live-load, memory and host CPU/RAM budget warnings. Only "
      "call "
      "create_gpu_booking after the user approves, and reuse one stable operation_id on retries.",
      count, duration, expected_memory);
}

}  // namespace bk::agent
