#include "cluster/usage.h"

#include <gtest/gtest.h>

namespace bk::cluster {
namespace {

using nlohmann::json;

const std::string kA(20, 'a'), kB(20, 'b');

NodeReply Users(const std::string& name, const std::string& id, json users) {
  return {Node{.name = name, .node_id = id}, Reply{0, {{"kind", "usage-users"}, {"users", users}}}};
}

TEST(AggregateUsage, SumsMappedAccountsAndKeepsOthersApart) {
  Catalog c;
  c.principals = {{"alice", {{kA, 1001}, {kB, 2042}}}};
  json u1 = {{"uid", 1001},
             {"username", "alice"},
             {"active_gpu_seconds", 3600},
             {"sampled_gpu_seconds", 100},
             {"avg_sm_percent", 50},
             {"max_gpu_memory_mb", 1000}};
  json u2 = {{"uid", 2042},
             {"username", "al"},
             {"active_gpu_seconds", 1800},
             {"sampled_gpu_seconds", 300},
             {"avg_sm_percent", 10},
             {"max_gpu_memory_mb", 4000}};
  json bob_a = {{"uid", 1002}, {"username", "bob"}, {"active_gpu_seconds", 60}};
  json bob_b = {{"uid", 1002}, {"username", "bob"}, {"active_gpu_seconds", -5}};  // nonsense counts as 0
  NodeReply down{Node{.name = "gpu-c", .node_id = std::string(20, 'c')},
                 std::unexpected(NodeError{FailClass::kTimeout, "timed out"})};
  json p = AggregateUsage(c, {Users("gpu-a", kA, {u1, bob_a}), Users("gpu-b", kB, {u2, bob_b}), down});
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0]["id"], "alice");
  EXPECT_EQ(p[0]["active_gpu_seconds"], 5400.0);
  EXPECT_EQ(p[0]["max_gpu_memory_mb"], 4000.0);
  EXPECT_EQ(p[0]["avg_sm_percent"], 20.0);  // weighted by sampled seconds
  EXPECT_EQ(p[0]["nodes"], json({"gpu-a", "gpu-b"}));
  EXPECT_EQ(p[1]["id"], kA + ":1002");  // the same name on two hosts is not one person
  EXPECT_EQ(p[2]["id"], kB + ":1002");
  EXPECT_EQ(p[2]["active_gpu_seconds"], 0.0);
}

}  // namespace
}  // namespace bk::cluster
