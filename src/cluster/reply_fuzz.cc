// libFuzzer target: what a GPU host prints back. Any bytes must be refused
// or read without a crash by every consumer of a reply: the identity check,
// host choice (implicit and exact starts), the write capabilities and the
// usage sums.

#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/placement.h"
#include "cluster/remote.h"
#include "cluster/usage.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bk::cluster;
  RunResult run;
  run.end = RunResult::End::kExited;
  run.code = size > 0 && data[0] == '3' ? 3 : 0;
  run.out.assign(reinterpret_cast<const char*>(data), size);
  run.err = run.out;
  Node node{.name = "gpu-b", .node_id = "0123456789abcdef0123", .target = "gpu-b"};
  NodeResult r = CheckReply(run, node, node.node_id);
  if (!r) return 0;
  for (const char* action : {"book", "book-job", "edit", "renew", "cancel"})
    MissingCapabilities(r->doc, action);
  Intent implicit{.count = 2, .duration_seconds = 3600};
  Intent exact = implicit;
  exact.start = 1'796'000'000;
  exact.gpus = {0, 1};
  exact.memory_mb = 1024;
  for (const Intent& i : {implicit, exact}) Rank(i, {NodeReply{node, r}}, 1'796'000'000, i.start.has_value());
  Catalog c;
  c.principals = {{"p", {{node.node_id, 1000}}}};
  AggregateUsage(c, {NodeReply{node, r}});
  return 0;
}
