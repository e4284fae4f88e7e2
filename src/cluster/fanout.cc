#include "cluster/fanout.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace bk::cluster {

std::vector<Node> RoutingOrder(std::vector<Node> nodes) {
  std::stable_sort(nodes.begin(), nodes.end(), [](const Node& a, const Node& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    return a.name < b.name;
  });
  return nodes;
}

std::vector<NodeReply> FanOut(const std::vector<Node>& nodes,
                              const std::function<NodeResult(const Node&)>& call) {
  std::vector<Node> order = RoutingOrder(nodes);
  std::vector<NodeReply> replies;
  replies.reserve(order.size());
  for (const Node& n : order)
    replies.push_back({n, std::unexpected(NodeError{FailClass::kDisabled, "disabled by administrator"})});
  std::vector<size_t> todo;
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i].enabled) todo.push_back(i);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k = next++; k < todo.size(); k = next++)
      replies[todo[k]].result = call(replies[todo[k]].node);
  };
  size_t threads = std::min(kMaxParallelHosts, todo.size());
  if (threads <= 1) {
    worker();
    return replies;
  }
  std::vector<std::thread> pool;
  for (size_t i = 0; i < threads; ++i) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  return replies;
}

}  // namespace bk::cluster
