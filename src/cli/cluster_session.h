#pragma once
// What every `bk c` command shares: the catalog it routes through, the
// transport to its hosts, and the names a person reads (principals, NODE/ID).

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.h"
#include "cluster/catalog.h"
#include "cluster/fanout.h"
#include "cluster/remote.h"
#include "cluster/runner.h"

namespace bk::cli {

inline constexpr const char* kClusterSchema = "gpubk.cluster.v1";

struct ClusterSession {
  std::string path;
  cluster::Catalog catalog;
  cluster::ProcessRunner runner;
  std::unique_ptr<cluster::Remote> remote;

  const cluster::Node* Find(const std::string& name) const;
  // The principal a (node, UID) pair is mapped to, or "".
  std::string Principal(const std::string& node_id, int64_t uid) const;
  // `bk agent context --compact` on every enabled host at once.
  std::vector<cluster::NodeReply> Contexts() const;
};

// The catalog (with its trust checks) and a transport sharing SSH connections.
Result<std::unique_ptr<ClusterSession>> OpenCluster();

// A node reference "NODE/ID": the enabled node and the reservation ID.
struct NodeRef {
  const cluster::Node* node = nullptr;
  std::string id;
};
Result<NodeRef> ParseNodeRef(const ClusterSession& s, const std::string& text);

// {name, node_id, priority, enabled, available, error} of one reply.
nlohmann::json NodeHeader(const cluster::NodeReply& r);

// A remote's warning as printed on stderr: "warning [gpu-b]: ...".
void PrintRemoteWarnings(const Context& ctx, const std::string& node, const nlohmann::json& doc);

// "2026-12-02 14:00" in the local zone, from an ISO instant ("-" if unreadable).
std::string LocalIso(const Context& ctx, const nlohmann::json& iso);

// Prints a cluster document: indented, or on one line with --compact.
void PrintClusterDoc(const Context& ctx, const nlohmann::json& doc, bool compact);

}  // namespace bk::cli
