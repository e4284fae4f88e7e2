#include "server/dispatcher.h"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <map>
#include <stdexcept>

#include "base/json_strict.h"
#include "rpc/methods.h"

namespace bk::server {
namespace {

using rpc::json;

// What one cache entry costs beyond its key and answer (map node, hash,
// string headers), so that many tiny entries are bounded too.
constexpr size_t kCacheEntryOverhead = 128;

struct Call {
  bool write = false;
  bool cacheable = false;
  std::function<Result<std::string>(const rpc::Context&, const json&)> fn;
};

// Decode the params, run the service call, write its reply's JSON text.
template <class M>
Call Generic(const M& m) {
  return {m.write, m.cacheable, [m](const rpc::Context& c, const json& params) -> Result<std::string> {
            BK_ASSIGN_OR_RETURN(auto request, m.decode_request(params));
            BK_ASSIGN_OR_RETURN(auto reply, m.run(c, request));
            if (m.write_reply) return m.write_reply(reply);
            return m.encode_reply(reply).dump(-1, ' ', false, json::error_handler_t::replace);
          }};
}

const std::map<std::string, Call, std::less<>>& Methods() {
  static const auto methods = std::apply(
      [](const auto&... m) {
        std::map<std::string, Call, std::less<>> out;
        (out.emplace(std::string(m.name), Generic(m)), ...);
        return out;
      },
      rpc::methods::kAll);
  return methods;
}

// Protocol-level errors are the client's input errors too: kind "invalid".
std::string ErrorLine(const json& id, int code, const std::string& message,
                      std::optional<ErrorKind> kind = ErrorKind::kInvalid) {
  return json{{"jsonrpc", "2.0"}, {"id", id}, {"error", rpc::ErrorObject(code, message, kind)}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
}

// The response line to request `id`: its result, or its error. Validation
// failures are invalid params; the rest are application errors.
// A reply line from the result's JSON text: members in nlohmann's order (id,
// jsonrpc, result), as every other line.
std::string Answer(const json& id, const Result<std::string>& result) {
  if (!result) {
    // Validation failures are invalid params; the rest are application errors.
    int code = result.error().kind == ErrorKind::kInvalid ? rpc::kInvalidParams : rpc::kApplicationError;
    return ErrorLine(id, code, result.error().message, result.error().kind);
  }
  return fmt::format(R"({{"id":{},"jsonrpc":"2.0","result":{}}})",
                     id.dump(-1, ' ', false, json::error_handler_t::replace), *result);
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

std::string Dispatcher::Unwritten(const std::string& reply, const Error& error) {
  json parsed = json::parse(reply, nullptr, /*allow_exceptions=*/false);
  json id = parsed.is_object() && parsed.contains("id") ? parsed["id"] : json();
  return ErrorLine(id, rpc::kApplicationError, error.message, error.kind);
}

namespace {

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

std::optional<std::string> Dispatcher::Handle(const service::Actor& actor, const std::string& line,
                                              sys::UniqueFd passed) {
  // Whatever a client sends, the daemon answers and stays up for everyone else.
  try {
    return HandleUnchecked(actor, line, std::move(passed));
  } catch (const std::exception& e) {
    return ErrorLine(nullptr, rpc::kInvalidRequest, fmt::format("malformed request ({})", e.what()));
  }
}

std::optional<std::string> Dispatcher::HandleUnchecked(const service::Actor& actor, const std::string& line,
                                                       sys::UniqueFd passed) {
  const auto began = std::chrono::steady_clock::now();
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
  auto it = Methods().find(method);
  if (it == Methods().end()) {
    if (notification) return std::nullopt;
    return ErrorLine(id, rpc::kMethodNotFound, fmt::format("unknown method {}", method));
  }
  if (it->second.write && !refuse_writes_.empty()) {
    if (notification) return std::nullopt;
    return ErrorLine(id, rpc::kApplicationError, refuse_writes_, ErrorKind::kBusy);
  }
  last_write_ = it->second.write;
  if (method == rpc::methods::kImport.name) {
    auto request = rpc::methods::kImport.decode_request(params);
    if (request && request->descriptor) {
      last_write_ = false;  // the job writes, when it finishes
      if (notification) return std::nullopt;
      ::bk::Status started = Invalid("this server takes no ledger.json as a descriptor");
      if (!passed.ok())
        started = Invalid("no descriptor came with this import request");
      else if (start_import_)
        started = start_import_(actor, id.dump(), std::move(passed));
      if (started) return std::nullopt;
      return Answer(id, std::unexpected(started.error()));
    }
  }
  if (before_run_) before_run_(last_write_);
  std::string key;
  if (it->second.cacheable && !notification) {
    key = fmt::format("{}\n{}\n{}", method, actor.uid, params.dump());
    if (const std::string* hit = Cached(key)) {
      stats_.Record(it->first, Seconds(began), true);
      return Answer(id, *hit);
    }
  }
  Result<std::string> result = Fail(ErrorKind::kInternal, "not run");
  try {
    result = it->second.fn(rpc::Context{service_, actor, config_, usage_ ? &usage_ : nullptr, passed.get()},
                           params);
  } catch (const std::exception& e) {
    // A bug must not take the daemon down for everyone.
    result = Fail(ErrorKind::kInternal, fmt::format("internal error: {}", e.what()));
  }
  // Only methods of the table are named: a client cannot add series.
  stats_.Record(it->first, Seconds(began), result.has_value());
  if (notification) return std::nullopt;
  if (result && !key.empty()) Remember(std::move(key), *result);
  return Answer(id, std::move(result));
}

std::string Dispatcher::ImportAnswer(const std::string& id, const Result<service::ImportSummary>& result) {
  if (!result) return Answer(json::parse(id), std::unexpected(result.error()));
  return Answer(json::parse(id), rpc::methods::kImport.encode_reply(*result).dump(
                                     -1, ' ', false, json::error_handler_t::replace));
}

std::string Dispatcher::ImportProgress(const std::string& id, service::ImportPhase phase, int64_t done,
                                       int64_t total) {
  json params = {{"id", json::parse(id)},
                 {"phase", service::kImportPhaseNames.Name(phase)},
                 {"done", done},
                 {"total", total}};
  return json{{"jsonrpc", "2.0"}, {"method", rpc::methods::kImportProgress}, {"params", std::move(params)}}
      .dump();
}

}  // namespace bk::server
