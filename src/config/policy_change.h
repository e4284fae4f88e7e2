#pragma once
// An administrator's change of a running server's policy, read from its
// config file. The file stays the one source of truth: `bk admin policy`
// rewrites it and the daemon reads it back, so a restart never undoes a
// change. Only the keys below take effect at once; the others wait for a
// restart and are named so.

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"

namespace bk::config {

// One key whose value changes: its config.json name and JSON texts.
struct KeyChange {
  std::string key;
  std::string before;
  std::string after;
};

struct PolicyProposal {
  Config config;                     // `current` with the live keys' new values
  std::vector<KeyChange> changes;    // of live keys, in key-table order
  std::vector<std::string> restart;  // other keys that differ: they apply after a restart
  std::string sha256;                // of the text read
};

// The keys a running daemon takes from its file without a restart.
const std::vector<std::string>& LivePolicyKeys();

// Reads the server config file of `current` (the configuration running now), or `text` in its place (a
// proposal checked before it is written), and says what would change. When `expect_sha256` is not empty the
// file must still hold that content (the text it was computed from). Private deployments have no server
// config.
Result<PolicyProposal> ProposePolicy(const Config& current, const std::optional<std::string>& text,
                                     const std::string& expect_sha256, const EnvFn& env);

}  // namespace bk::config
