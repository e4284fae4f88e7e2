#pragma once
// Asking every host at once: a slow or dead host costs its own timeout, not
// the sum of everyone's. Replies come back in the catalog's routing order.

#include <functional>
#include <vector>

#include "cluster/catalog.h"
#include "cluster/remote.h"

namespace bk::cluster {

inline constexpr size_t kMaxParallelHosts = 16;

struct NodeReply {
  Node node;
  NodeResult result;
};

// Runs `call` for each enabled node, at most 16 at a time; a disabled node is
// never contacted and gets a kDisabled error. Sorted by (priority, name).
std::vector<NodeReply> FanOut(const std::vector<Node>& nodes,
                              const std::function<NodeResult(const Node&)>& call);

// `nodes` in routing order: priority (lower first), then name.
std::vector<Node> RoutingOrder(std::vector<Node> nodes);

}  // namespace bk::cluster
