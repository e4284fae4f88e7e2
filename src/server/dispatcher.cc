#include "server/dispatcher.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <stdexcept>

#include "base/json_strict.h"
#include "base/version.h"
#include "rpc/codec.h"

namespace bk::server {
namespace {

using rpc::json;

// What one cache entry costs beyond its key and answer (map node, hash,
// string headers), so that many tiny entries are bounded too.
constexpr size_t kCacheEntryOverhead = 128;

struct Call {
  bool write = false;
  bool cacheable = false;  // a pure function of (caller, params, ledger generation, second)
  std::function<Result<json>(service::BookingService&, const service::Actor&, const json&,
                             const config::Config&)>
      fn;
};

// Small strict readers for the methods whose params are not a service request.
Result<int64_t> IntParam(const json& p, const char* key, int64_t lo, int64_t hi, int64_t def) {
  if (!p.contains(key) || p[key].is_null()) return def;
  if (!p[key].is_number_integer()) return Invalid(fmt::format("{} must be an integer", key));
  int64_t v = p[key].get<int64_t>();
  if (v < lo || v > hi) return Invalid(fmt::format("{} must be between {} and {}", key, lo, hi));
  return v;
}

Result<std::string> StrParam(const json& p, const char* key) {
  if (!p.contains(key) || !p[key].is_string() || p[key].get<std::string>().empty())
    return Invalid(fmt::format("{} must be a non-empty string", key));
  return p[key].get<std::string>();
}

Status OnlyFields(const json& p, std::initializer_list<const char*> allowed) {
  std::vector<std::string> unknown;
  for (const auto& [k, v] : p.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (!ok) unknown.push_back(k);
  }
  if (unknown.empty()) return Ok();
  std::string list;
  for (const auto& u : unknown) list += (list.empty() ? "" : ", ") + u;
  return Invalid("params contain unknown field(s): " + list);
}

template <class T>
Result<json> Wrap(Result<T> r) {
  if (!r) return std::unexpected(r.error());
  return rpc::Encode(*r);
}

const std::map<std::string, Call>& Methods() {
  using service::Actor;
  using service::BookingService;
  static const std::map<std::string, Call> methods = {
      {"server.ping",
       {false, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config& c) -> Result<json> {
          BK_TRY(OnlyFields(p, {}));
          return json{{"version", kVersion},
                      {"deployment", config::DeploymentName(c.deployment)},
                      {"owner_uid", c.owner_uid},
                      {"owner", c.owner},
                      {"actor", {{"uid", a.uid}, {"username", a.username}, {"admin", a.admin}}},
                      {"now", s.Now()},
                      {"policy", rpc::Encode(s.policy())},
                      {"telemetry", s.TelemetrySource()}};
        }}},
      {"booking.create",
       {true, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_ASSIGN_OR_RETURN(auto r, rpc::DecodeCreate(p));
          return Wrap(s.Create(a, r));
        }}},
      {"booking.edit",
       {true, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_ASSIGN_OR_RETURN(auto r, rpc::DecodeEdit(p));
          return Wrap(s.Edit(a, r));
        }}},
      {"booking.renew",
       {true, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_ASSIGN_OR_RETURN(auto r, rpc::DecodeRenew(p));
          return Wrap(s.Renew(a, r));
        }}},
      {"booking.cancel",
       {true, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_ASSIGN_OR_RETURN(auto r, rpc::DecodeCancel(p));
          return Wrap(s.Cancel(a, r));
        }}},
      {"placement.recommend",
       {false, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_ASSIGN_OR_RETURN(auto r, rpc::DecodeCreate(p));
          return Wrap(s.Recommend(a, r));
        }}},
      {"placement.slots",
       {false, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {"request", "from", "limit"}));
          if (!p.contains("request")) return Invalid("request is required");
          BK_ASSIGN_OR_RETURN(auto r, rpc::DecodeCreate(p["request"]));
          BK_ASSIGN_OR_RETURN(int64_t from, IntParam(p, "from", 0, int64_t{1} << 40, s.Now()));
          BK_ASSIGN_OR_RETURN(int64_t limit, IntParam(p, "limit", 1, 20, 5));
          return Wrap(s.Slots(a, r, from, static_cast<int>(limit)));
        }}},
      {"reservations.list",
       {false, true,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_ASSIGN_OR_RETURN(auto q, rpc::DecodeList(p));
          return Wrap(s.List(a, q));
        }}},
      {"reservation.history",
       {false, true,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {"ref"}));
          BK_ASSIGN_OR_RETURN(std::string ref, StrParam(p, "ref"));
          return Wrap(s.History(a, ref));
        }}},
      {"audit.log",
       {false, true,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {"limit"}));
          BK_ASSIGN_OR_RETURN(int64_t limit, IntParam(p, "limit", 1, 1000, 100));
          return Wrap(s.Log(a, static_cast<int>(limit)));
        }}},
      {"notifications.list",
       {false, true,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {"limit"}));
          BK_ASSIGN_OR_RETURN(int64_t limit, IntParam(p, "limit", 1, 1000, 20));
          return Wrap(s.Notifications(a, static_cast<int>(limit)));
        }}},
      {"operation.get",
       {false, true,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {"op_id"}));
          BK_ASSIGN_OR_RETURN(std::string op, StrParam(p, "op_id"));
          return Wrap(s.Operation(a, op));
        }}},
      {"status.get",
       {false, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {"from", "to"}));
          BK_ASSIGN_OR_RETURN(int64_t from, IntParam(p, "from", 0, int64_t{1} << 40, s.Now()));
          BK_ASSIGN_OR_RETURN(int64_t to, IntParam(p, "to", 0, int64_t{1} << 40, s.Now() + engine::kDay));
          return Wrap(s.Status(a, from, to));
        }}},
      {"policy.check",
       {false, true,
        [](BookingService& s, const Actor&, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {}));
          return Wrap(s.CheckPolicy());
        }}},
      {"job.list",
       {false, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_ASSIGN_OR_RETURN(auto q, rpc::DecodeJobsQuery(p));
          return Wrap(s.Jobs(a, q));
        }}},
      {"job.update",
       {true, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          // The service refuses anyone but the booking's owner (SO_PEERCRED identity).
          BK_ASSIGN_OR_RETURN(auto patch, rpc::DecodeJobPatch(p));
          return Wrap(s.UpdateJob(a, patch));
        }}},
      {"job.retry",
       {true, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_ASSIGN_OR_RETURN(auto r, rpc::DecodeJobRetry(p));
          return Wrap(s.RetryJob(a, r));
        }}},
      {"admin.verify",
       {false, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {"path"}));
          std::string path;
          if (p.contains("path") && !p["path"].is_null()) {
            BK_ASSIGN_OR_RETURN(path, StrParam(p, "path"));
          }
          return Wrap(s.Verify(a, path));
        }}},
      {"admin.backup",
       {false, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {"path"}));
          BK_ASSIGN_OR_RETURN(std::string path, StrParam(p, "path"));
          BK_ASSIGN_OR_RETURN(std::string done, s.Backup(a, path));
          return json{{"path", done}};
        }}},
      {"admin.import",
       {true, false,
        [](BookingService& s, const Actor& a, const json& p, const config::Config&) -> Result<json> {
          BK_TRY(OnlyFields(p, {"ledger_json"}));
          BK_ASSIGN_OR_RETURN(std::string text, StrParam(p, "ledger_json"));
          return Wrap(s.ImportUpstream(a, text));
        }}},
  };
  return methods;
}

// Protocol-level errors are the client's input errors too: kind "invalid".
std::string ErrorLine(const json& id, int code, const std::string& message,
                      std::optional<ErrorKind> kind = ErrorKind::kInvalid) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", rpc::ErrorObject(code, message, kind)}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

Dispatcher::Dispatcher(service::BookingService& service, const config::Config& config, size_t cache_max_bytes)
    : service_(service), config_(config), cache_max_bytes_(cache_max_bytes) {}

// The cached answer for `key`, or null. Answers of another ledger generation
// or another second are dropped first: they can never be asked for again.
const std::string* Dispatcher::Cached(const std::string& key) {
  if (service_.Generation() != cache_generation_ || service_.Now() != cache_now_) {
    cache_.clear();
    cache_bytes_ = 0;
    cache_generation_ = service_.Generation();
    cache_now_ = service_.Now();
  }
  auto hit = cache_.find(key);
  return hit == cache_.end() ? nullptr : &hit->second;
}

// Keeps `answer` unless it is larger than a quarter of the bound (one huge
// list would otherwise evict everything else); older entries make room.
void Dispatcher::Remember(std::string key, const std::string& answer) {
  size_t cost = key.size() + answer.size() + kCacheEntryOverhead;
  if (cost > cache_max_bytes_ / 4) return;
  while (!cache_.empty() && cache_bytes_ + cost > cache_max_bytes_) {
    auto victim = cache_.begin();
    cache_bytes_ -= victim->first.size() + victim->second.size() + kCacheEntryOverhead;
    cache_.erase(victim);
  }
  if (cache_.try_emplace(std::move(key), answer).second) cache_bytes_ += cost;
}

// usage.query params: {view: me|users|events|samples, from, to, uid?, gpu?, resolution?, limit?, text?}.
// "me" always means the caller: nobody asks for "me" as someone else.
Result<std::string> Dispatcher::Usage(const service::Actor& actor, const json& p) {
  if (!usage_)
    return Fail(ErrorKind::kUnavailable, "this daemon records no usage (its monitor is not running)");
  BK_TRY(OnlyFields(p, {"view", "from", "to", "uid", "gpu", "resolution", "limit", "text"}));
  monitor::UsageQuery q;
  BK_ASSIGN_OR_RETURN(std::string view, StrParam(p, "view"));
  if (view == "me")
    q.kind = monitor::UsageKind::kMe;
  else if (view == "users")
    q.kind = monitor::UsageKind::kUsers;
  else if (view == "events")
    q.kind = monitor::UsageKind::kEvents;
  else if (view == "samples")
    q.kind = monitor::UsageKind::kSamples;
  else
    return Invalid("view must be me, users, events or samples");
  BK_ASSIGN_OR_RETURN(q.from, IntParam(p, "from", 0, int64_t{1} << 40, 0));
  BK_ASSIGN_OR_RETURN(q.to, IntParam(p, "to", 0, int64_t{1} << 40, service_.Now() + 1));
  if (q.from >= q.to) return Invalid("from must be before to");
  BK_ASSIGN_OR_RETURN(int64_t uid, IntParam(p, "uid", -1, 0xfffffffeLL, -1));
  if (uid >= 0) q.uid = static_cast<uint32_t>(uid);
  if (q.kind == monitor::UsageKind::kMe) q.uid = actor.uid;
  BK_ASSIGN_OR_RETURN(int64_t gpu, IntParam(p, "gpu", -1, 1023, -1));
  if (gpu >= 0) q.gpu = static_cast<int>(gpu);
  BK_ASSIGN_OR_RETURN(q.resolution, IntParam(p, "resolution", 60, 3600, 60));
  if (q.resolution != 60 && q.resolution != 3600) return Invalid("resolution must be 60 or 3600");
  BK_ASSIGN_OR_RETURN(int64_t limit, IntParam(p, "limit", 1, 200000, 1000));
  q.limit = static_cast<int>(limit);
  bool text = p.contains("text") && p["text"].is_boolean() && p["text"].get<bool>();
  return usage_(q, text);
}

std::optional<std::string> Dispatcher::Handle(const service::Actor& actor, const std::string& line) {
  // Whatever a client sends, the daemon answers and stays up for everyone else.
  try {
    return HandleUnchecked(actor, line);
  } catch (const std::exception& e) {
    return ErrorLine(nullptr, rpc::kInvalidRequest, fmt::format("malformed request ({})", e.what()));
  }
}

std::optional<std::string> Dispatcher::HandleUnchecked(const service::Actor& actor, const std::string& line) {
  last_write_ = false;
  // Deep nesting would make copies and destruction recurse past the stack,
  // and a key named twice would mean whichever copy a reader picks: both are
  // refused while parsing.
  auto parsed = ParseStrictJson(line);
  if (!parsed && parsed.error().problem == JsonProblem::kSyntax)
    return ErrorLine(nullptr, rpc::kParseError, "parse error: the line is not valid JSON");
  if (!parsed) return ErrorLine(nullptr, rpc::kInvalidRequest, "request " + parsed.error().Phrase());
  json req = std::move(*parsed);
  if (!req.is_object()) return ErrorLine(nullptr, rpc::kInvalidRequest, "a request must be a JSON object");
  json id = req.contains("id") ? req["id"] : json();
  bool notification = !req.contains("id");
  if (!id.is_null() && !id.is_string() && !id.is_number_integer())
    return ErrorLine(nullptr, rpc::kInvalidRequest, "id must be a string or an integer");
  for (const auto& [k, v] : req.items())
    if (k != "jsonrpc" && k != "id" && k != "method" && k != "params")
      return ErrorLine(id, rpc::kInvalidRequest, fmt::format("unknown request field {}", k));
  if (!req.contains("jsonrpc") || !req["jsonrpc"].is_string() || req["jsonrpc"].get<std::string>() != "2.0")
    return ErrorLine(id, rpc::kInvalidRequest, "jsonrpc must be \"2.0\"");
  if (!req.contains("method") || !req["method"].is_string())
    return ErrorLine(id, rpc::kInvalidRequest, "method must be a string");
  // A notification is never answered, not even with an error (JSON-RPC 2.0 section 4.1).
  json params = req.contains("params") ? req["params"] : json::object();
  if (!params.is_object()) {
    if (notification) return std::nullopt;
    return ErrorLine(id, rpc::kInvalidParams, "params must be a JSON object");
  }
  std::string method = req["method"].get<std::string>();
  if (method == "usage.query") {
    if (notification) return std::nullopt;
    auto doc = Usage(actor, params);
    if (!doc) {
      int code = doc.error().kind == ErrorKind::kInvalid ? rpc::kInvalidParams : rpc::kApplicationError;
      return ErrorLine(id, code, doc.error().message, doc.error().kind);
    }
    return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", {{"document", *doc}}}}.dump(
        -1, ' ', false, json::error_handler_t::replace);
  }
  auto it = Methods().find(method);
  if (it == Methods().end()) {
    if (notification) return std::nullopt;
    return ErrorLine(id, rpc::kMethodNotFound, fmt::format("unknown method {}", method));
  }
  last_write_ = it->second.write;
  std::string key;
  if (it->second.cacheable && !notification) {
    key = fmt::format("{}\n{}\n{}", method, actor.uid, params.dump());
    if (const std::string* hit = Cached(key))
      return fmt::format(R"({{"id":{},"jsonrpc":"2.0","result":{}}})", id.dump(), *hit);
  }
  Result<json> result = Fail(ErrorKind::kInternal, "not run");
  try {
    result = it->second.fn(service_, actor, params, config_);
  } catch (const std::exception& e) {
    // A bug must not take the daemon down for everyone.
    result = Fail(ErrorKind::kInternal, fmt::format("internal error: {}", e.what()));
  }
  if (notification) return std::nullopt;
  if (!result) {
    // Validation failures are invalid params; the rest are application errors.
    int code = result.error().kind == ErrorKind::kInvalid ? rpc::kInvalidParams : rpc::kApplicationError;
    return ErrorLine(id, code, result.error().message, result.error().kind);
  }
  if (!key.empty()) {
    std::string text = result->dump(-1, ' ', false, json::error_handler_t::replace);
    Remember(std::move(key), text);
    return fmt::format(R"({{"id":{},"jsonrpc":"2.0","result":{}}})", id.dump(), text);
  }
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(*result)}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

}  // namespace bk::server
