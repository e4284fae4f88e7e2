#include "agent/mcp_server.h"

#include <fmt/format.h>

#include <csignal>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "agent/documents.h"
#include "agent/mcp_catalog.h"
#include "agent/mcp_cluster.h"
#include "agent/mcp_usage.h"
#include "base/json_strict.h"
#include "base/version.h"
#include "cluster/catalog_file.h"

namespace bk::agent {
namespace {

using nlohmann::json;

// JSON-RPC 2.0 and MCP error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kResourceNotFoundLegacy = -32002;  // 2025-11-25 and earlier
constexpr int kUnsupportedProtocol = -32022;     // 2026-07-28

// Far above any real message (the TS SDK caps its buffer at 10 MiB), low
// enough that a runaway client cannot exhaust memory.
constexpr size_t kMaxLine = 16 << 20;

constexpr const char* kVersionKey = "io.modelcontextprotocol/protocolVersion";
constexpr const char* kServerInfoKey = "io.modelcontextprotocol/serverInfo";
constexpr const char* kContextUri = "bk://context";
constexpr const char* kMyUsageUri = "bk://usage/me/recent";

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The string at `key`, or "" when it is absent or not a string: json::value()
// would throw on a number there, and a client's type mistake must get an
// answer, not end the server.
std::string StringOr(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A failed request: code, message and optional data.
struct RpcError {
  int code;
  std::string message;
  json data;
};

json ErrorResponse(const json& id, const RpcError& e) {
  json err = {{"code", e.code}, {"message", e.message}};
  if (!e.data.is_null()) err["data"] = e.data;
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", err}};
}

json SupportedVersions() {
  json v = json::array({kModernProtocol});
  for (auto p : kLegacyProtocols) v.push_back(p);
  return v;
}

json ServerInfo() { return {{"name", kServerName}, {"title", "GPUBK GPU booking"}, {"version", kVersion}}; }

json Capabilities() {
  return {{"tools", {{"listChanged", false}}},
          {"resources", {{"subscribe", false}, {"listChanged", false}}},
          {"prompts", {{"listChanged", false}}}};
}

json ResourceList() {
  return json::array(
      {{{"uri", kContextUri},
        {"name", "context"},
        {"title", "GPU context"},
        {"description", "Current privacy-safe GPU allocation context (bk.agent.v1 context document)."},
        {"mimeType", "application/json"}},
       {{"uri", kMyUsageUri},
        {"name", "my_usage"},
        {"title", "My recent GPU usage"},
        {"description", "Current UID's versioned 24-hour usage summary."},
        {"mimeType", "application/json"}}});
}

json PromptList() {
  return json::array(
      {{{"name", "plan_gpu_experiment"},
        {"title", "Plan a GPU experiment"},
        {"description", "Plan a booking: inspect the context, recommend, then book only after approval."},
        {"arguments",
         {{{"name", "count"}, {"description", "Number of GPUs"}, {"required", true}},
          {{"name", "duration"}, {"description", "How long, e.g. 2h"}, {"required", true}},
          {{"name", "expected_memory"}, {"description", "VRAM per GPU, e.g. 24g"}, {"required", false}}}}}});
}

// A string argument of prompts/get (clients send strings; numbers are tolerated).
std::optional<std::string> PromptArg(const json& args, const char* name) {
  if (!args.is_object() || !args.contains(name) || args[name].is_null()) return std::nullopt;
  const json& v = args[name];
  return v.is_string() ? v.get<std::string>() : Dump(v);
}

// One request's handling, with the era it arrived in.
class Request {
 public:
  Request(ToolEnv& env, bool cluster, std::string& negotiated, const json& params, bool modern)
      : env_(env), cluster_(cluster), negotiated_(negotiated), params_(params), modern_(modern) {}

  std::expected<json, RpcError> Dispatch(const std::string& method) {
    if (method == "initialize") return Initialize();
    if (method == "server/discover") {
      return json{{"supportedVersions", SupportedVersions()},
                  {"capabilities", Capabilities()},
                  {"instructions", kInstructions}};
    }
    if (method == "ping" || method == "logging/setLevel") return json::object();
    if (method == "tools/list") return json{{"tools", json::parse(ToolListJson(cluster_))}};
    if (method == "tools/call") return CallTool();
    if (method == "resources/list") return json{{"resources", ResourceList()}};
    if (method == "resources/templates/list") return json{{"resourceTemplates", json::array()}};
    if (method == "resources/read") return ReadResource();
    if (method == "prompts/list") return json{{"prompts", PromptList()}};
    if (method == "prompts/get") return GetPrompt();
    return std::unexpected(RpcError{kMethodNotFound, fmt::format("Method not found: {}", method), json()});
  }

 private:
  std::expected<json, RpcError> Initialize() {
    std::string requested = StringOr(params_, "protocolVersion");
    std::string chosen(kLegacyProtocols[0]);
    for (auto v : kLegacyProtocols)
      if (requested == v) chosen = requested;
    negotiated_ = chosen;
    return json{{"protocolVersion", chosen},
                {"capabilities", Capabilities()},
                {"serverInfo", ServerInfo()},
                {"instructions", kInstructions}};
  }

  std::expected<json, RpcError> CallTool() {
    if (!params_.contains("name") || !params_["name"].is_string())
      return std::unexpected(RpcError{kInvalidParams, "tools/call needs a tool name", json()});
    std::string name = params_["name"];
    bool cluster_tool = cluster_ && FindClusterTool(name);
    if (!FindTool(name) && !cluster_tool)
      return std::unexpected(RpcError{kInvalidParams, "Unknown tool: " + name, json()});
    json args = params_.contains("arguments") ? params_["arguments"] : json();
    ToolOutcome o = cluster_tool ? CallClusterTool(*env_.cluster_runner, name, Dump(args))
                                 : agent::CallTool(env_, name, Dump(args));
    if (o.is_error)
      return json{{"content", json::array({{{"type", "text"}, {"text", o.message}}})}, {"isError", true}};
    json doc = json::parse(o.document);
    return json{{"content", json::array({{{"type", "text"}, {"text", Dump(doc)}}})},
                {"structuredContent", doc},
                {"isError", false}};
  }

  std::expected<json, RpcError> ReadResource() {
    std::string uri =
        params_.contains("uri") && params_["uri"].is_string() ? params_["uri"].get<std::string>() : "";
    if (uri != kContextUri && uri != kMyUsageUri) {
      return std::unexpected(RpcError{modern_ ? kInvalidParams : kResourceNotFoundLegacy,
                                      "Resource not found", json{{"uri", uri}}});
    }
    auto ledger = env_.ledger();
    if (!ledger) return std::unexpected(RpcError{kInternalError, ledger.error().message, json()});
    auto doc =
        uri == kContextUri ? ContextDoc(**ledger, *env_.config) : MyUsageDoc(**ledger, MyUsageRequest{});
    if (!doc) return std::unexpected(RpcError{kInternalError, doc.error().message, json()});
    return json{
        {"contents", json::array({{{"uri", uri}, {"mimeType", "application/json"}, {"text", *doc}}})}};
  }

  std::expected<json, RpcError> GetPrompt() {
    std::string name = StringOr(params_, "name");
    if (name != "plan_gpu_experiment")
      return std::unexpected(RpcError{kInvalidParams, "Unknown prompt: " + name, json()});
    json args = params_.contains("arguments") ? params_["arguments"] : json::object();
    auto count = PromptArg(args, "count");
    auto duration = PromptArg(args, "duration");
    if (!count || !duration)
      return std::unexpected(
          RpcError{kInvalidParams, "plan_gpu_experiment needs count and duration", json()});
    std::string text =
        PlanPromptText(*count, *duration, PromptArg(args, "expected_memory").value_or("unknown"));
    return json{
        {"description", "Plan a GPU experiment with GPUBK"},
        {"messages", json::array({{{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}}})}};
  }

  ToolEnv& env_;
  bool cluster_;
  std::string& negotiated_;
  const json& params_;
  bool modern_;
};

// The stateless revision's additions to every result: resultType, the server
// identity, and cache hints on discover, list and read results.
void DecorateModern(const std::string& method, json& result) {
  result["resultType"] = "complete";
  result["_meta"][kServerInfoKey] = ServerInfo();
  if (method == "server/discover" || method == "tools/list" || method == "resources/list" ||
      method == "resources/templates/list" || method == "prompts/list") {
    result["ttlMs"] = 3600000;  // fixed for the life of this binary
    result["cacheScope"] = "public";
  } else if (method == "resources/read") {
    result["ttlMs"] = 0;  // live state, and specific to this user
    result["cacheScope"] = "private";
  }
}

}  // namespace

McpServer::McpServer(ToolEnv env) : env_(std::move(env)), cluster_(cluster::CatalogConfigured()) {
  if (!env_.cluster_runner) env_.cluster_runner = &process_runner_;
}

std::optional<std::string> McpServer::HandleLine(std::string_view line) {
  while (!line.empty() &&
         (line.back() == '\r' || line.back() == '\n' || line.back() == ' ' || line.back() == '\t'))
    line.remove_suffix(1);
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  if (line.empty()) return std::nullopt;
  if (line.size() > kMaxLine)
    return Dump(ErrorResponse(json(), {kInvalidRequest, "Invalid Request: message too large", json()}));
  // Deeply nested values (copying or freeing them would recurse past the
  // stack) and keys named twice are refused while parsing.
  auto parsed = ParseStrictJson(line);
  if (!parsed && parsed.error().problem == JsonProblem::kSyntax)
    return Dump(ErrorResponse(json(), {kParseError, "Parse error", json()}));
  if (!parsed && parsed.error().problem == JsonProblem::kTooDeep)
    return Dump(
        ErrorResponse(json(), {kInvalidRequest, "Invalid Request: nesting deeper than 64 levels", json()}));
  if (!parsed)
    return Dump(ErrorResponse(
        json(), {kInvalidRequest, "Invalid Request: message " + parsed.error().Phrase(), json()}));
  json msg = std::move(*parsed);

  auto handle = [this](const json& m) -> std::optional<json> {
    if (!m.is_object()) return ErrorResponse(json(), {kInvalidRequest, "Invalid Request", json()});
    if (!m.contains("method")) return std::nullopt;  // a response to us: we send no requests
    bool is_request = m.contains("id");
    json id = is_request ? m["id"] : json();
    if (is_request && !id.is_string() && !id.is_number_integer())
      return ErrorResponse(json(),
                           {kInvalidRequest, "Invalid Request: id must be a string or an integer", json()});
    if (!m["method"].is_string() || StringOr(m, "jsonrpc") != "2.0") {
      if (!is_request) return std::nullopt;
      return ErrorResponse(id,
                           {kInvalidRequest, "Invalid Request: needs jsonrpc \"2.0\" and a method", json()});
    }
    if (!is_request) return std::nullopt;  // notifications/initialized, cancelled, ...: nothing to answer
    std::string method = m["method"];
    json params = m.contains("params") ? m["params"] : json::object();
    if (!params.is_object()) return ErrorResponse(id, {kInvalidParams, "params must be an object", json()});

    // A request carrying its protocol version in _meta is the stateless era.
    bool modern = false;
    if (params.contains("_meta") && params["_meta"].is_object() && params["_meta"].contains(kVersionKey)) {
      const json& v = params["_meta"][kVersionKey];
      std::string requested = v.is_string() ? v.get<std::string>() : Dump(v);
      if (requested != kModernProtocol) {
        return ErrorResponse(id, {kUnsupportedProtocol,
                                  "Unsupported protocol version",
                                  {{"supported", json::array({kModernProtocol})}, {"requested", requested}}});
      }
      modern = true;
    }
    // Discovery is the stateless era's own method, whatever the client sent.
    if (method == "server/discover") modern = true;
    std::expected<json, RpcError> result;
    try {
      result = Request(env_, cluster_, negotiated_, params, modern).Dispatch(method);
    } catch (const std::exception& e) {
      result = std::unexpected(RpcError{kInternalError, fmt::format("internal error: {}", e.what()), json()});
    }
    if (!result) return ErrorResponse(id, result.error());
    if (modern) DecorateModern(method, *result);
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", *result}};
  };

  if (msg.is_array()) {
    if (msg.empty())
      return Dump(ErrorResponse(json(), {kInvalidRequest, "Invalid Request: empty batch", json()}));
    json replies = json::array();
    for (const auto& m : msg)
      if (auto r = handle(m)) replies.push_back(*r);
    if (replies.empty()) return std::nullopt;
    return Dump(replies);
  }
  if (auto r = handle(msg)) return Dump(*r);
  return std::nullopt;
}

int McpServer::Serve(std::FILE* in, std::FILE* out) {
  // A client that goes away mid-reply ends the server quietly, not by signal.
  std::signal(SIGPIPE, SIG_IGN);
  char* buf = nullptr;
  size_t cap = 0;
  ssize_t n;
  while ((n = getline(&buf, &cap, in)) >= 0) {
    auto reply = HandleLine(std::string_view(buf, static_cast<size_t>(n)));
    if (!reply) continue;
    reply->push_back('\n');
    if (std::fwrite(reply->data(), 1, reply->size(), out) != reply->size() || std::fflush(out) != 0) break;
  }
  std::free(buf);
  return 0;
}

}  // namespace bk::agent
