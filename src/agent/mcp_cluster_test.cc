#include "agent/mcp_cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/mcp_server.h"
#include "base/temp_dir_testing.h"
#include "cluster/cluster_testing.h"
#include "cluster/remote.h"

namespace bk::agent {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Argv = std::vector<std::string>;

Result<Argv> ArgvOf(const std::string& tool, const json& args) {
  const ToolSpec* spec = FindClusterTool(tool);
  EXPECT_NE(spec, nullptr) << tool;
  return ClusterArgv(*spec, args.dump());
}

std::string Problem(const std::string& tool, const json& args) {
  auto r = ArgvOf(tool, args);
  EXPECT_FALSE(r.has_value()) << tool << " " << args.dump();
  return r ? "" : r.error().message;
}

TEST(ClusterArgv, ReadsRunTheirBkCCommands) {
  EXPECT_EQ(*ArgvOf("get_gpu_cluster_context", json::object()), (Argv{"c", "status", "--json"}));
  EXPECT_EQ(*ArgvOf("check_gpu_cluster_readiness", json()), (Argv{"c", "check", "--json"}));
  EXPECT_EQ(*ArgvOf("check_gpu_cluster_readiness", {{"require_jobs", true}}),
            (Argv{"c", "check", "--jobs", "--json"}));
  EXPECT_EQ(*ArgvOf("get_my_cluster_gpu_usage", json::object()),
            (Argv{"c", "u", "--since", "24h", "--limit", "1000", "--json", "--compact"}));
  EXPECT_EQ(*ArgvOf("get_my_cluster_gpu_usage", {{"since", "7d"}, {"limit", 5.0}}),
            (Argv{"c", "u", "--since", "7d", "--limit", "5", "--json", "--compact"}));
}

TEST(ClusterArgv, RecommendNormalisesTheModeAndPassesEachOption) {
  EXPECT_EQ(*ArgvOf("recommend_cluster_gpu_booking", {{"count", 2}, {"duration", "1h"}}),
            (Argv{"c", "rec", "2", "1h", "--mode", "shared", "--json"}));
  EXPECT_EQ(*ArgvOf("recommend_cluster_gpu_booking", {{"count", 1},
                                                      {"duration", "30m"},
                                                      {"mode", "x"},
                                                      {"start", "2026-12-01T10:00:00Z"},
                                                      {"expected_memory", "24g"},
                                                      {"share", 2},
                                                      {"exclude_gpus", {0, 3}}}),
            (Argv{"c", "rec", "1", "30m", "--mode", "exclusive", "--start", "2026-12-01T10:00:00Z", "--mem",
                  "24g", "--share", "2", "--exclude-gpu", "0,3", "--json"}));
}

TEST(ClusterArgv, CreatePutsTheJobAfterTheSeparator) {
  EXPECT_EQ(*ArgvOf("create_cluster_gpu_booking",
                    {{"count", 1}, {"duration", "2h"}, {"operation_id", " exp-1 "}, {"gpus", {1}}}),
            (Argv{"c", "1", "2h", "--mode", "shared", "--op-id", "exp-1", "--gpu", "1", "--json"}));
  // Job words that look like bk's options stay the job's.
  EXPECT_EQ(*ArgvOf("create_cluster_gpu_booking", {{"count", 1},
                                                   {"duration", "1h"},
                                                   {"operation_id", "j"},
                                                   {"mode", "s"},
                                                   {"command", {"python", "--json", "--", "a b"}}}),
            (Argv{"c", "1", "1h", "--mode", "shared", "--op-id", "j", "--json", "--", "python", "--json",
                  "--", "a b"}));
}

TEST(ClusterArgv, EditAndCancelNameTheNodeQualifiedReservation) {
  EXPECT_EQ(
      *ArgvOf("edit_my_cluster_gpu_booking", {{"reservation_id", "gpu-a/1a2b3c"},
                                              {"operation_id", "e1"},
                                              {"duration", "3h"},
                                              {"start", "+30m"},
                                              {"count", 2},
                                              {"mode", "exclusive"},
                                              {"expected_memory", "-"},
                                              {"share", 1},
                                              {"gpus", {2, 3}},
                                              {"allow_queue", true}}),
      (Argv{"c",       "e",       "gpu-a/1a2b3c", "--op-id",   "e1",    "-d", "3h",      "--start", "+30m",
            "--count", "2",       "--mode",       "exclusive", "--mem", "-",  "--share", "1",       "--gpu",
            "2,3",     "--queue", "--json"}));
  // allow_queue alone is a change: move to the next legal slot.
  EXPECT_EQ(*ArgvOf("edit_my_cluster_gpu_booking",
                    {{"reservation_id", "gpu-a/1a"}, {"operation_id", "e2"}, {"allow_queue", true}}),
            (Argv{"c", "e", "gpu-a/1a", "--op-id", "e2", "--queue", "--json"}));
  EXPECT_EQ(
      *ArgvOf("cancel_my_cluster_gpu_booking", {{"reservation_id", "gpu-b/ff"}, {"operation_id", "d1"}}),
      (Argv{"c", "d", "gpu-b/ff", "--op-id", "d1", "--json"}));
}

TEST(ClusterArgv, BadArgumentsAreRefusedBeforeAnythingRuns) {
  json rec = {{"count", 1}, {"duration", "1h"}};
  auto with = [](json base, const json& extra) {
    base.update(extra);
    return base;
  };
  const std::string r = "recommend_cluster_gpu_booking";
  EXPECT_EQ(Problem(r, with(rec, {{"gpus", {1}}, {"exclude_gpus", {2}}})),
            "gpus and exclude_gpus are mutually exclusive");
  EXPECT_EQ(Problem(r, with(rec, {{"gpus", json::array()}})), "GPU list must not be empty");
  EXPECT_EQ(Problem(r, with(rec, {{"exclude_gpus", {1, -1}}})), "GPU indexes must be non-negative integers");
  EXPECT_EQ(Problem(r, with(rec, {{"gpus", {true}}})), "GPU indexes must be non-negative integers");
  EXPECT_EQ(Problem(r, with(rec, {{"gpus", {1.5}}})), "GPU indexes must be non-negative integers");
  EXPECT_EQ(Problem(r, with(rec, {{"gpus", "1"}})),
            "gpus must be a list of GPU indexes such as [1] or [0, 3]");
  EXPECT_EQ(Problem(r, with(rec, {{"mode", "turbo"}})), "mode must be s/shared or x/exclusive");
  EXPECT_EQ(Problem(r, with(rec, {{"count", true}})), "count must be an integer");
  EXPECT_EQ(Problem(r, with(rec, {{"count", 0}})), "GPU count must be at least 1");
  EXPECT_EQ(Problem(r, with(rec, {{"share", 0}})), "share must be a whole number of slots >= 1");
  EXPECT_EQ(Problem(r, with(rec, {{"duration", "--"}})), "duration must not start with '-'");
  EXPECT_EQ(Problem(r, with(rec, {{"start", "--json"}})), "start must not start with '-'");
  EXPECT_EQ(
      Problem(r, with(rec, {{"cpus", 2}})),
      "unknown argument: cpus; recommend_cluster_gpu_booking accepts: count, duration, mode, start, gpus, "
      "exclude_gpus, expected_memory, share");
  EXPECT_EQ(Problem(r, {{"count", 1}}), "missing required argument: duration");
  EXPECT_EQ(Problem(r, json::array()), "arguments must be a JSON object");

  const std::string c = "create_cluster_gpu_booking";
  EXPECT_EQ(Problem(c, rec), "operation_id is required for retry-safe cluster MCP writes");
  EXPECT_EQ(Problem(c, with(rec, {{"operation_id", "  "}})),
            "operation_id is required for retry-safe cluster MCP writes");
  json create = with(rec, {{"operation_id", "x"}});
  for (const json& bad :
       {json(json::array()), json("python train.py"), json({"python", 3}), json({"python", ""})})
    EXPECT_EQ(Problem(c, with(create, {{"command", bad}})), "command must be a non-empty argv list")
        << bad.dump();

  const std::string e = "edit_my_cluster_gpu_booking";
  EXPECT_EQ(Problem(e, {{"reservation_id", "gpu-a/1a"}, {"duration", "1h"}}),
            "operation_id is required for retry-safe cluster MCP writes");
  for (const char* ref : {"1a2b3c", "/1a2b3c", "gpu-a/", "gpu-a"})
    EXPECT_EQ(Problem(e, {{"reservation_id", ref}, {"operation_id", "o"}, {"duration", "1h"}}),
              "use a node-qualified reservation ID such as gpu-a/1a2b3c")
        << ref;
  EXPECT_EQ(Problem(e, {{"reservation_id", "gpu-a/1a"}, {"operation_id", "o"}}),
            "cluster edit requires at least one changed field");
  EXPECT_EQ(Problem(e, {{"reservation_id", "gpu-a/1a"}, {"operation_id", "o"}, {"allow_queue", false}}),
            "cluster edit requires at least one changed field");
  EXPECT_EQ(Problem("cancel_my_cluster_gpu_booking", {{"reservation_id", "1a2b"}, {"operation_id", "o"}}),
            "use a node-qualified reservation ID such as gpu-a/1a2b3c");
  EXPECT_EQ(Problem("cancel_my_cluster_gpu_booking", {{"reservation_id", "gpu-a/1a2b"}}),
            "operation_id is required for retry-safe cluster MCP writes");
}

TEST(ClusterTimeout, FiveTimesTheSlowestEnabledHostWithinBounds) {
  EXPECT_EQ(ClusterTimeoutSeconds(std::nullopt), 160);
  cluster::Catalog c;
  c.nodes.push_back({.name = "a", .node_id = std::string(20, 'a'), .timeout_seconds = 8});
  EXPECT_EQ(ClusterTimeoutSeconds(c), 160);  // never under 30 s per host
  c.nodes.push_back({.name = "b", .node_id = std::string(20, 'b'), .timeout_seconds = 60});
  EXPECT_EQ(ClusterTimeoutSeconds(c), 310);
  c.nodes.push_back({.name = "c", .node_id = std::string(20, 'c'), .timeout_seconds = 300, .enabled = false});
  EXPECT_EQ(ClusterTimeoutSeconds(c), 310);  // a disabled host is never contacted
  c.nodes[2].enabled = true;
  EXPECT_EQ(ClusterTimeoutSeconds(c), 600);
}

cluster::RunResult Exited(int code, std::string out, std::string err = "") {
  cluster::RunResult r;
  r.end = cluster::RunResult::End::kExited;
  r.code = code;
  r.out = std::move(out);
  r.err = std::move(err);
  return r;
}

std::string ErrorOf(const cluster::RunResult& run) {
  ToolOutcome o = ClusterOutcome("t", run);
  EXPECT_TRUE(o.is_error) << o.document;
  return o.message;
}

TEST(ClusterOutcome, ADocumentIsTheAnswerAndStatusThreeOnlyForReports) {
  ToolOutcome ok = ClusterOutcome("t", Exited(0, R"({"kind": "cluster-recommendation", "nodes": []})"));
  ASSERT_FALSE(ok.is_error) << ok.message;
  EXPECT_EQ(json::parse(ok.document)["kind"], "cluster-recommendation");
  for (const char* kind : {"cluster-check", "cluster-context", "cluster-usage"}) {
    ToolOutcome o = ClusterOutcome("t", Exited(3, json{{"kind", kind}, {"ready", false}}.dump()));
    EXPECT_FALSE(o.is_error) << kind << ": " << o.message;
    EXPECT_EQ(json::parse(o.document)["kind"], kind);
  }
  EXPECT_EQ(
      ErrorOf(Exited(3, R"({"kind": "cluster-recommendation"})", "bk: no cluster node can satisfy this\n")),
      "Error executing tool t: cluster request failed: no cluster node can satisfy this");
  // A recommendation no host can satisfy: its per-host reasons, not the document.
  json none = {
      {"kind", "cluster-recommendation"},
      {"selected_node", nullptr},
      {"nodes",
       {{{"name", "gpu-a"}, {"error", "GPU count must be between 1 and 4"}, {"rejected_reason", nullptr}},
        {{"name", "gpu-b"}, {"error", nullptr}, {"rejected_reason", "starts too late"}}}}};
  EXPECT_EQ(
      ErrorOf(Exited(3, none.dump(2))),
      "Error executing tool t: cluster request failed: no cluster node can satisfy this request (gpu-a: GPU "
      "count must be between 1 and 4; gpu-b: starts too late)");
  EXPECT_EQ(ErrorOf(Exited(0, "usage: bk c ...")),
            "Error executing tool t: cluster request failed: bk printed no JSON document");
}

TEST(ClusterOutcome, TheChildsEndIsNamed) {
  cluster::RunResult r;
  r.end = cluster::RunResult::End::kTimedOut;
  EXPECT_EQ(ErrorOf(r), "Error executing tool t: cluster MCP request timed out");
  r.end = cluster::RunResult::End::kOverflow;
  EXPECT_EQ(ErrorOf(r), "Error executing tool t: cluster MCP response exceeded the safe output limit");
  r.end = cluster::RunResult::End::kSpawnFailed;
  r.why_spawn = "No such file or directory";
  EXPECT_EQ(ErrorOf(r),
            "Error executing tool t: cannot start cluster MCP request: No such file or directory");
  r = {};
  r.end = cluster::RunResult::End::kSignaled;
  r.code = 9;
  EXPECT_EQ(ErrorOf(r), "Error executing tool t: cluster request failed: bk ended by signal 9");
}

TEST(ClusterOutcome, FailureDetailIsOneShortCleanLine) {
  // bk --json reports errors as a document on stdout: its message wins.
  json doc = {{"kind", "error"}, {"error", {{"message", "cluster booking on gpu-a was rejected: full"}}}};
  EXPECT_EQ(ErrorOf(Exited(4, doc.dump(), "noise\n")),
            "Error executing tool t: cluster request failed: cluster booking on gpu-a was rejected: full");
  EXPECT_EQ(ErrorOf(Exited(2, "", "bk:  no cluster node\tnamed 'x'\x1b[0m\n\n")),
            "Error executing tool t: cluster request failed: no cluster node named 'x' [0m");
  EXPECT_EQ(ErrorOf(Exited(2, "plain words on stdout\n")),
            "Error executing tool t: cluster request failed: plain words on stdout");
  EXPECT_EQ(ErrorOf(Exited(5, "", " \n")),
            "Error executing tool t: cluster request failed: bk exited with status 5");
  // Only the end of a long error: at most 1000 characters of detail.
  std::string err = "bk: " + std::string(3000, 'a') + std::string(3000, 'b') + "\n";
  std::string m = ErrorOf(Exited(2, "", err));
  std::string prefix = "Error executing tool t: cluster request failed: ";
  ASSERT_TRUE(m.starts_with(prefix));
  EXPECT_EQ(m.substr(prefix.size()), std::string(1000, 'b'));
}

// --------------------------------------------------------------- the server

// BK_CLUSTER_CONFIG for one test, restored after.
class ClusterEnv {
 public:
  explicit ClusterEnv(const std::string& path) {
    if (const char* v = getenv("BK_CLUSTER_CONFIG")) old_ = v;
    setenv("BK_CLUSTER_CONFIG", path.c_str(), 1);
  }
  ~ClusterEnv() {
    if (old_)
      setenv("BK_CLUSTER_CONFIG", old_->c_str(), 1);
    else
      unsetenv("BK_CLUSTER_CONFIG");
  }

 private:
  std::optional<std::string> old_;
};

class ClusterServerTest : public TempDirTest {
 protected:
  void WriteCatalog(double timeout) {
    std::ofstream(Path("cluster.json")) << json{
        {"schema_version", "gpubk.cluster.v1"},
        {"nodes",
         {{{"name", "gpu-a"},
           {"node_id", std::string(20, 'a')},
           {"transport", "local"},
           {"timeout_seconds", timeout}}}}}.dump();
    chmod(Path("cluster.json").c_str(), 0644);
  }
  std::unique_ptr<McpServer> Server() {
    ToolEnv env;
    env.ledger = []() -> Result<client::Ledger*> { return Fail(ErrorKind::kInternal, "no ledger here"); };
    env.cluster_runner = &runner_;
    return std::make_unique<McpServer>(std::move(env));
  }
  static json Ask(McpServer& s, const std::string& method, json params) {
    auto line =
        s.HandleLine(json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", params}}.dump());
    EXPECT_TRUE(line.has_value());
    return line ? json::parse(*line) : json();
  }
  static std::vector<std::string> ToolNames(McpServer& s) {
    std::vector<std::string> names;
    json list = Ask(s, "tools/list", json::object());
    EXPECT_TRUE(list.contains("result")) << list.dump();
    for (const auto& t : list["result"]["tools"]) names.push_back(t["name"]);
    return names;
  }

  cluster::FakeRunner runner_;
};

TEST_F(ClusterServerTest, ClusterToolsAreListedOnlyWithACatalog) {
  ClusterEnv env(Path("cluster.json"));
  auto without = Server();
  EXPECT_EQ(ToolNames(*without).size(), Tools().size());
  json unknown =
      Ask(*without, "tools/call", {{"name", "get_gpu_cluster_context"}, {"arguments", json::object()}});
  EXPECT_EQ(unknown["error"]["message"], "Unknown tool: get_gpu_cluster_context");
  EXPECT_TRUE(runner_.calls.empty());

  WriteCatalog(8);
  auto with = Server();
  std::vector<std::string> names = ToolNames(*with);
  ASSERT_EQ(names.size(), Tools().size() + 7);
  EXPECT_THAT(
      std::vector<std::string>(names.begin() + static_cast<long>(Tools().size()), names.end()),
      ElementsAre("get_gpu_cluster_context", "check_gpu_cluster_readiness", "recommend_cluster_gpu_booking",
                  "create_cluster_gpu_booking", "get_my_cluster_gpu_usage", "edit_my_cluster_gpu_booking",
                  "cancel_my_cluster_gpu_booking"));
  json listed = Ask(*with, "tools/list", json::object());
  for (const auto& t : listed["result"]["tools"]) {
    std::string name = t["name"];
    if (FindTool(name)) continue;
    EXPECT_EQ(t["outputSchema"]["properties"]["schema_version"]["const"], "gpubk.cluster.v1") << name;
    EXPECT_EQ(t["inputSchema"]["additionalProperties"], false) << name;
    bool write = name.starts_with("create_") || name.starts_with("edit_") || name.starts_with("cancel_");
    EXPECT_EQ(t["annotations"]["readOnlyHint"], !write) << name;
    EXPECT_EQ(t["annotations"]["idempotentHint"], true) << name;
    EXPECT_EQ(t["annotations"]["destructiveHint"], name.starts_with("cancel_")) << name;
    if (write) {
      EXPECT_THAT(t["inputSchema"]["required"].dump(), HasSubstr("operation_id")) << name;
    }
  }
}

TEST_F(ClusterServerTest, ACallRunsThisBkWithTheCallersEnvironment) {
  ClusterEnv env(Path("cluster.json"));
  WriteCatalog(90);
  auto server = Server();
  cluster::RunSpec seen;
  runner_.fallback = [&](const cluster::RunSpec& spec) {
    seen = spec;
    return cluster::JsonReply(
        {{"schema_version", "gpubk.cluster.v1"}, {"kind", "cluster-context"}, {"nodes", json::array()}});
  };
  json r = Ask(*server, "tools/call",
               {{"name", "get_gpu_cluster_context"}, {"arguments", json::object()}})["result"];
  EXPECT_EQ(r["isError"], false) << r.dump();
  EXPECT_EQ(r["structuredContent"]["kind"], "cluster-context");
  EXPECT_EQ(seen.argv, (Argv{cluster::SelfExecutable(), "c", "status", "--json"}));
  EXPECT_EQ(seen.timeout_seconds, 460);  // 90 s per host, five times, plus 10
  EXPECT_EQ(seen.stdout_cap, cluster::kMaxReplyBytes);
  EXPECT_EQ(seen.stderr_tail, cluster::kStderrTailBytes);
  EXPECT_THAT(seen.env, ::testing::Contains("NO_COLOR=1"));
  EXPECT_THAT(seen.env, ::testing::Contains("BK_CLUSTER_CONFIG=" + Path("cluster.json")));

  // A refused argument never starts a child.
  runner_.calls.clear();
  json bad = Ask(*server, "tools/call",
                 {{"name", "cancel_my_cluster_gpu_booking"},
                  {"arguments", {{"reservation_id", "1a"}, {"operation_id", "o"}}}})["result"];
  EXPECT_EQ(bad["isError"], true);
  EXPECT_EQ(bad["content"][0]["text"],
            "Error executing tool cancel_my_cluster_gpu_booking: use a node-qualified reservation ID such as "
            "gpu-a/1a2b3c");
  EXPECT_TRUE(runner_.calls.empty());
}

}  // namespace
}  // namespace bk::agent
