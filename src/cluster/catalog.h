#pragma once
// The cluster catalog (gpubk.cluster.v1): the GPU hosts a client may book on,
// each an independent GPUBK server reached locally or over SSH, and the
// principals that map one person's UIDs across hosts for reports (never for
// authorization). Root-owned at /etc/gpubk/cluster.json, or BK_CLUSTER_CONFIG.
//
// This file only parses, checks and renders the document; reading it with
// its trust checks and writing it atomically belong to the callers.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace bk::cluster {

inline constexpr std::string_view kCatalogSchema = "gpubk.cluster.v1";
inline constexpr std::string_view kDefaultExecutable = "/usr/local/bin/bk";
inline constexpr double kDefaultTimeoutSeconds = 8;
inline constexpr size_t kMaxNodes = 128;
inline constexpr size_t kMaxCatalogBytes = size_t{1} << 20;

enum class Transport { kLocal, kSsh };

struct Node {
  std::string name;     // [A-Za-z0-9][A-Za-z0-9_.-]{0,62}, unique
  std::string node_id;  // 20 lowercase hex (the host's stable identity), unique
  Transport transport = Transport::kSsh;
  std::string target;  // ssh only: a host, an address or an alias of ssh_config
  std::string executable = std::string(kDefaultExecutable);
  int64_t priority = 0;                             // 0..1,000,000; lower is preferred
  double timeout_seconds = kDefaultTimeoutSeconds;  // 1..300
  bool enabled = true;
  bool operator==(const Node&) const = default;
};

struct Member {
  std::string node_id;
  int64_t uid = 0;
  bool operator==(const Member&) const = default;
};

struct Principal {
  std::string id;
  std::vector<Member> members;
  bool operator==(const Principal&) const = default;
};

struct Catalog {
  std::vector<Node> nodes;
  std::vector<Principal> principals;
  std::optional<std::string> history_root;
  bool operator==(const Catalog&) const = default;
};

// The document in `text` (named `path` in errors), checked: every rule of
// Check plus the document's shape (known keys only, right types). Errors are
// one line: "<path>: nodes[1] (gpu-b): timeout_seconds must be 1-300".
Result<Catalog> ParseCatalog(std::string_view text, const std::string& path);

// The rules a catalog obeys, for one built in memory too: 1-128 nodes, names
// and node IDs unique and well formed, ssh nodes with a target that cannot be
// read as an ssh option, local ones without, at most one local node, ranges,
// principals with known node IDs and each (node ID, UID) in one principal.
Status Check(const Catalog& c);

// As written: keys sorted, two-space indent, a trailing newline; defaults
// (executable, priority 0, timeout 8, enabled) left out.
std::string Render(const Catalog& c);

// `name` as a node name or principal ID ("" when valid, else why not).
std::string NameProblem(std::string_view name);

}  // namespace bk::cluster
