#pragma once
// A write to one host that survives a lost reply. Every write carries an
// operation ID; when the connection drops, or the reply is garbled, after the
// host may have committed, the client asks that same host what became of the
// operation and replays it at most once. It never books elsewhere instead:
// a booking that might exist on one host must not be made on a second.

#include <expected>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/remote.h"

namespace bk::cluster {

struct WriteError {
  bool uncertain = false;  // the host may or may not have committed it
  std::string message;
};

// Runs `args` (a write carrying --op-id `op_id`) on `node`; `action` is what
// the host records the operation as: "create", "edit", "renew" or "cancel".
// The host's reply (after a lost reply and a commit, its reply to the
// replay), or, when even that is lost, its record of the operation with
// "status": "exists".
std::expected<nlohmann::json, WriteError> IdempotentWrite(const Remote& remote, const Node& node,
                                                          const std::vector<std::string>& args,
                                                          const std::string& op_id,
                                                          const std::string& action);

// A fresh operation ID (a random UUID).
std::string NewOperationId();

}  // namespace bk::cluster
