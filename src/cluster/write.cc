#include "cluster/write.h"

#include <fmt/format.h>

#include "cluster/reply_fields.h"
#include "sys/random.h"

namespace bk::cluster {
namespace {

using nlohmann::json;

bool Final(const NodeError& e) {
  return e.cls == FailClass::kRemote || e.cls == FailClass::kIdentity || e.cls == FailClass::kCancelled ||
         e.cls == FailClass::kDisabled;
}

enum class Lookup { kCommitted, kOtherAction, kNotFound, kUnknown };

}  // namespace

std::expected<json, WriteError> IdempotentWrite(const Remote& remote, const Node& node,
                                                const std::vector<std::string>& args,
                                                const std::string& op_id, const std::string& action) {
  json committed;
  std::string other_action, lookup_error;
  auto lookup = [&]() -> Lookup {
    NodeResult q = remote.Call(node, {"agent", "operation", op_id, "--compact"});
    if (!q) {
      lookup_error = q.error().message;
      return Lookup::kUnknown;
    }
    const json& d = q->doc;
    if (StrField(d, "kind") != "operation_status") {
      lookup_error = "the host answered the lookup with something else";
      return Lookup::kUnknown;
    }
    if (!BoolField(d, "found", false)) return Lookup::kNotFound;
    std::string got = d.contains("action") && d["action"].is_string() ? d["action"].get<std::string>() : "";
    if (got != action) {
      other_action = got;
      return Lookup::kOtherAction;
    }
    committed = d;
    committed["status"] = "exists";
    return Lookup::kCommitted;
  };

  std::string write_error;
  for (int attempt = 0; attempt < 2; ++attempt) {
    NodeResult r = remote.Call(node, args);
    if (r) return std::move(r->doc);
    if (Final(r.error())) return std::unexpected(WriteError{false, r.error().message});
    write_error = r.error().message;
    switch (lookup()) {
      case Lookup::kCommitted: {
        // Committed: the same write with the same ID is now a replay, which
        // the host answers with its own document for the operation (the
        // shape a caller got had the reply not been lost). Only when that
        // answer is lost too does the caller get the operation record.
        NodeResult replay = remote.Call(node, args);
        if (replay) return std::move(replay->doc);
        return committed;
      }
      case Lookup::kOtherAction:
        return std::unexpected(WriteError{
            false, fmt::format("operation ID is already bound to {}, not {}", other_action, action)});
      case Lookup::kUnknown:
        return std::unexpected(
            WriteError{true, fmt::format("operation {}: {}; operation status is unknown ({})", op_id,
                                         write_error, lookup_error)});
      case Lookup::kNotFound: break;  // never reached the host's ledger: replay once
    }
  }
  return std::unexpected(WriteError{
      true, fmt::format("operation {}: {}; operation status is unknown (operation ID was not found)", op_id,
                        write_error)});
}

std::string NewOperationId() { return sys::NewUuid(); }

}  // namespace bk::cluster
