#include "cluster/catalog.h"

#include <gtest/gtest.h>

namespace bk::cluster {
namespace {

constexpr const char* kExample = R"({
  "nodes": [
    {"name": "gpu-a", "node_id": "82abd97fc668a3c587a8", "transport": "local"},
    {"enabled": false, "name": "gpu-b", "node_id": "bbbbbbbbbbbbbbbbbbbb", "priority": 5,
     "target": "gpu-b", "timeout_seconds": 12.0, "transport": "ssh"}
  ],
  "principals": [{"id": "lab-user", "members": [{"node_id": "bbbbbbbbbbbbbbbbbbbb", "uid": 2042}]}],
  "history_root": "/srv/gpubk-cluster-history",
  "schema_version": "gpubk.cluster.v1"
})";

std::string Error(std::string_view text) {
  auto c = ParseCatalog(text, "/etc/gpubk/cluster.json");
  return c ? std::string("parsed") : c.error().message;
}

TEST(Catalog, ParsesTheDocumentAndItsDefaults) {
  auto c = ParseCatalog(kExample, "cluster.json");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_EQ(c->nodes.size(), 2u);
  EXPECT_EQ(c->nodes[0].transport, Transport::kLocal);
  EXPECT_EQ(c->nodes[0].executable, kDefaultExecutable);
  EXPECT_EQ(c->nodes[0].timeout_seconds, 8);
  EXPECT_TRUE(c->nodes[0].enabled);
  EXPECT_EQ(c->nodes[1].target, "gpu-b");
  EXPECT_EQ(c->nodes[1].priority, 5);
  EXPECT_FALSE(c->nodes[1].enabled);
  EXPECT_EQ(c->principals[0].members[0].uid, 2042);
  EXPECT_EQ(c->history_root, "/srv/gpubk-cluster-history");
}

TEST(Catalog, RendersSortedWithDefaultsLeftOutAndParsesBack) {
  auto c = ParseCatalog(kExample, "cluster.json");
  ASSERT_TRUE(c.has_value());
  std::string text = Render(*c);
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find("executable"), std::string::npos);
  EXPECT_LT(text.find("\"history_root\""), text.find("\"nodes\""));  // keys sorted
  auto again = ParseCatalog(text, "cluster.json");
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(*again, *c);
}

TEST(Catalog, RefusalsNameThePlaceAndTheRule) {
  EXPECT_EQ(Error("[]"), "/etc/gpubk/cluster.json: must be a JSON object");
  EXPECT_EQ(Error(R"({"schema_version": "gpubk.cluster.v2", "nodes": []})"),
            "/etc/gpubk/cluster.json: schema_version must be \"gpubk.cluster.v1\"");
  EXPECT_EQ(Error(R"({"schema_version": "gpubk.cluster.v1", "nodes": [], "x": 1})"),
            "/etc/gpubk/cluster.json: unknown key \"x\"");
  EXPECT_EQ(Error(R"({"schema_version": "gpubk.cluster.v1", "nodes": []})"),
            "/etc/gpubk/cluster.json: nodes must list 1-128 GPU hosts");
  auto one = [](std::string node) {
    return Error(R"({"schema_version": "gpubk.cluster.v1", "nodes": [)" + node + "]}");
  };
  EXPECT_EQ(one(R"({"name": "a", "node_id": "bbbbbbbbbbbbbbbbbbbb", "transport": "ssh"})"),
            "/etc/gpubk/cluster.json: nodes[0] (a): an ssh node needs a target (host or ssh_config alias)");
  EXPECT_EQ(
      one(R"({"name": "a", "node_id": "bbbbbbbbbbbbbbbbbbbb", "transport": "ssh", "target": "-oProxyCommand=x"})"),
      "/etc/gpubk/cluster.json: nodes[0] (a): target must start with a letter or digit and be at most 255 "
      "characters");
  EXPECT_EQ(
      one(R"({"name": "a", "node_id": "bbbbbbbbbbbbbbbbbbbb", "transport": "ssh", "target": "h; rm -rf"})"),
      "/etc/gpubk/cluster.json: nodes[0] (a): target may hold only letters, digits and _ . @ : [ ] -");
  EXPECT_EQ(one(R"({"name": "a", "node_id": "BBBBBBBBBBBBBBBBBBBB", "transport": "local"})"),
            "/etc/gpubk/cluster.json: nodes[0] (a): node_id must be 20 lowercase hex digits (bk c probe "
            "prints it)");
  EXPECT_EQ(one(R"({"name": "a", "node_id": "bbbbbbbbbbbbbbbbbbbb", "transport": "local", "target": "h"})"),
            "/etc/gpubk/cluster.json: nodes[0] (a): a local node has no target");
  EXPECT_EQ(
      one(R"({"name": "a", "node_id": "bbbbbbbbbbbbbbbbbbbb", "transport": "local", "timeout_seconds": 0})"),
      "/etc/gpubk/cluster.json: nodes[0] (a): timeout_seconds must be 1-300");
  EXPECT_EQ(one(R"({"name": "a", "node_id": "bbbbbbbbbbbbbbbbbbbb", "transport": "local", "port": 22})"),
            "/etc/gpubk/cluster.json: nodes[0] (a): unknown key \"port\"");
  EXPECT_EQ(one(R"({"name": "a", "node_id": "bbbbbbbbbbbbbbbbbbbb", "transport": "local", "enabled": "no"})"),
            "/etc/gpubk/cluster.json: nodes[0] (a): enabled must be true or false");
  EXPECT_EQ(
      one(R"({"name": "-a", "node_id": "bbbbbbbbbbbbbbbbbbbb", "transport": "local"})"),
      "/etc/gpubk/cluster.json: nodes[0] (-a): name must start with a letter or digit and be at most 63 "
      "characters");
}

TEST(Catalog, NamesIdsAndLocalNodesAreUnique) {
  Catalog c;
  c.nodes = {{"a", "aaaaaaaaaaaaaaaaaaaa", Transport::kLocal},
             {"b", "bbbbbbbbbbbbbbbbbbbb", Transport::kLocal}};
  EXPECT_EQ(Check(c).error().message, "at most one node may be local");
  c.nodes[1] = {"a", "bbbbbbbbbbbbbbbbbbbb", Transport::kSsh, "host-b"};
  EXPECT_EQ(Check(c).error().message, "nodes[1] (a): name is listed twice");
  c.nodes[1] = {"b", "aaaaaaaaaaaaaaaaaaaa", Transport::kSsh, "host-b"};
  EXPECT_EQ(Check(c).error().message, "nodes[1] (b): node_id aaaaaaaaaaaaaaaaaaaa is listed twice");
  c.nodes[1].node_id = "bbbbbbbbbbbbbbbbbbbb";
  EXPECT_TRUE(Check(c).has_value());
}

TEST(Catalog, APersonsUidOnAHostBelongsToOnePrincipal) {
  Catalog c;
  c.nodes = {{"a", "aaaaaaaaaaaaaaaaaaaa", Transport::kLocal}};
  c.principals = {{"ada", {{"aaaaaaaaaaaaaaaaaaaa", 1001}}}, {"bob", {{"aaaaaaaaaaaaaaaaaaaa", 1001}}}};
  EXPECT_EQ(Check(c).error().message,
            "principals[1]: uid 1001 on aaaaaaaaaaaaaaaaaaaa already belongs to ada");
  c.principals[1].members[0] = {"cccccccccccccccccccc", 1002};
  EXPECT_EQ(Check(c).error().message, "principals[1]: node_id cccccccccccccccccccc is not a node");
  c.principals[1].members.clear();
  EXPECT_EQ(Check(c).error().message, "principals[1]: members must not be empty");
}

}  // namespace
}  // namespace bk::cluster
