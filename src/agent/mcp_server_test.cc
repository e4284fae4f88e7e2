#include "agent/mcp_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agent/agent_testing.h"
#include "agent/mcp_catalog.h"
#include "worker/job_dir.h"

namespace bk::agent {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class McpTest : public LedgerFixture {
 protected:
  void SetUp() override {
    LedgerFixture::SetUp();
    // No cluster catalog, whatever this machine has: the local tools only.
    setenv("BK_CLUSTER_CONFIG", (dir_ + "/no-cluster.json").c_str(), 1);
    ToolEnv env;
    env.ledger = [this]() -> Result<client::Ledger*> {
      ++opens_;
      return ledger_.get();
    };
    env.config = &config_;
    env.zone = &zone_;
    job_env_ = {{"BK_JOB_DIR", dir_ + "/jobs"}};
    env.env = [this](const std::string& k) -> std::optional<std::string> {
      auto it = job_env_.find(k);
      if (it == job_env_.end()) return std::nullopt;
      return it->second;
    };
    server_ = std::make_unique<McpServer>(std::move(env));
  }

  json Send(const json& msg) {
    auto reply = server_->HandleLine(msg.dump());
    EXPECT_TRUE(reply.has_value()) << msg.dump();
    return reply ? json::parse(*reply) : json();
  }
  json Request(const std::string& method, json params = json::object()) {
    return Send({{"jsonrpc", "2.0"}, {"id", ++id_}, {"method", method}, {"params", params}});
  }
  json Call(const std::string& tool, json args) {
    json r = Request("tools/call", {{"name", tool}, {"arguments", args}});
    EXPECT_TRUE(r.contains("result")) << r.dump();
    return r["result"];
  }
  static std::string ErrorText(const json& result) {
    EXPECT_EQ(result.value("isError", false), true) << result.dump();
    return result["content"][0]["text"];
  }

  std::unique_ptr<McpServer> server_;
  std::map<std::string, std::string> job_env_;  // what the tools read the worker settings from
  int id_ = 0;
  int opens_ = 0;
};

TEST_F(McpTest, InitializeEchoesASupportedVersionElseTheLatest) {
  json r = Send({{"jsonrpc", "2.0"},
                 {"id", 0},
                 {"method", "initialize"},
                 {"params", {{"protocolVersion", "2025-06-18"}, {"capabilities", json::object()}}}});
  EXPECT_EQ(r["id"], 0);  // id 0 is a request, not a notification
  EXPECT_EQ(r["result"]["protocolVersion"], "2025-06-18");
  EXPECT_EQ(r["result"]["serverInfo"]["name"], "GPUBK");
  EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
  EXPECT_THAT(r["result"]["instructions"].get<std::string>(), HasSubstr("operation_id"));
  EXPECT_EQ(server_->negotiated(), "2025-06-18");
  for (const char* v : {"2025-11-25", "2025-03-26"})
    EXPECT_EQ(Request("initialize", {{"protocolVersion", v}})["result"]["protocolVersion"], v);
  EXPECT_EQ(Request("initialize", {{"protocolVersion", "2024-11-05"}})["result"]["protocolVersion"],
            "2025-11-25");
  EXPECT_EQ(opens_, 0) << "initialize must not open the ledger";
}

TEST_F(McpTest, NotificationsAndResponsesGetNoReply) {
  EXPECT_FALSE(server_->HandleLine(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  EXPECT_FALSE(server_->HandleLine(R"({"jsonrpc":"2.0","id":7,"result":{}})"));
  EXPECT_FALSE(server_->HandleLine("   \r\n"));
}

// Found by fuzzing: {"jsonrpc": 1} made json::value() throw out of
// HandleLine, ending `bk mcp`.
TEST_F(McpTest, MembersOfTheWrongTypeGetAnAnswer) {
  json bad = json::parse(*server_->HandleLine(R"({"jsonrpc": 1, "id": 3, "method": "ping"})"));
  EXPECT_EQ(bad["id"], 3);
  EXPECT_EQ(bad["error"]["code"], -32600) << bad.dump();
  EXPECT_FALSE(server_->HandleLine(R"({"jsonrpc": 1, "method": "prompts/get"})"));
  json prompt = Request("prompts/get", {{"name", 5}});
  EXPECT_EQ(prompt["error"]["code"], -32602) << prompt.dump();
  json init = Request("initialize", {{"protocolVersion", 20250618}});
  EXPECT_EQ(init["result"]["protocolVersion"], "2025-11-25") << init.dump();
}

TEST_F(McpTest, ProtocolErrorsKeepTheServerAlive) {
  json bad = json::parse(*server_->HandleLine("{not json"));
  EXPECT_EQ(bad["error"]["code"], -32700);
  EXPECT_TRUE(bad["id"].is_null());
  EXPECT_EQ(Request("no/such/method")["error"]["code"], -32601);
  EXPECT_EQ(json::parse(*server_->HandleLine("[1,2]"))[0]["error"]["code"], -32600);
  EXPECT_EQ(json::parse(*server_->HandleLine("[]"))["error"]["code"], -32600);
  EXPECT_EQ(Send({{"jsonrpc", "1.0"}, {"id", 1}, {"method", "ping"}})["error"]["code"], -32600);
  EXPECT_EQ(Request("tools/call", {{"name", "no_such_tool"}})["error"]["code"], -32602);
  EXPECT_EQ(Request("ping")["result"], json::object());
}

TEST_F(McpTest, BatchesAnswerEachRequest) {
  json r = json::parse(*server_->HandleLine(
      R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},)"
      R"({"jsonrpc":"2.0","id":2,"method":"nope"}])"));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0]["id"], 1);
  EXPECT_EQ(r[1]["error"]["code"], -32601);
}

TEST_F(McpTest, StatelessRevision) {
  json meta = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
               {"io.modelcontextprotocol/clientCapabilities", json::object()}};
  json d = Request("server/discover", {{"_meta", meta}})["result"];
  EXPECT_EQ(d["resultType"], "complete");
  EXPECT_EQ(d["supportedVersions"], json({"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}));
  EXPECT_EQ(d["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "GPUBK");
  EXPECT_TRUE(d.contains("ttlMs"));
  EXPECT_TRUE(d.contains("cacheScope"));

  json tools = Request("tools/list", {{"_meta", meta}})["result"];
  EXPECT_EQ(tools["resultType"], "complete");
  EXPECT_EQ(tools["cacheScope"], "public");
  EXPECT_EQ(tools["tools"].size(), Tools().size());

  json call = Request("tools/call",
                      {{"_meta", meta}, {"name", "list_gpu_reservations"}, {"arguments", json::object()}});
  EXPECT_EQ(call["result"]["resultType"], "complete");
  EXPECT_EQ(call["result"]["structuredContent"]["kind"], "reservations");

  meta["io.modelcontextprotocol/protocolVersion"] = "1900-01-01";
  json bad = Request("tools/list", {{"_meta", meta}});
  EXPECT_EQ(bad["error"]["code"], -32022);
  EXPECT_EQ(bad["error"]["data"]["requested"], "1900-01-01");
  EXPECT_EQ(bad["error"]["data"]["supported"], json({"2026-07-28"}));
  EXPECT_TRUE(server_->negotiated().empty()) << "stateless requests never set up a session";
}

TEST_F(McpTest, ToolsHaveSchemasAndAnnotations) {
  json tools = Request("tools/list")["result"]["tools"];
  std::vector<std::string> names;
  for (const auto& t : tools) {
    names.push_back(t["name"]);
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t["name"];
    EXPECT_EQ(t["inputSchema"]["additionalProperties"], false) << t["name"];
    EXPECT_EQ(t["outputSchema"]["type"], "object") << t["name"];
    EXPECT_EQ(t["outputSchema"]["properties"]["schema_version"]["const"],
              t["name"] == "get_my_gpu_usage" ? "gpubk.usage.v1" : "bk.agent.v1")
        << t["name"];
    for (const char* hint : {"readOnlyHint", "idempotentHint", "destructiveHint"})
      EXPECT_TRUE(t["annotations"][hint].is_boolean()) << t["name"] << " " << hint;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"get_gpu_context", "recommend_gpu_booking", "create_gpu_booking",
                                      "list_gpu_reservations", "get_my_gpu_usage", "edit_my_gpu_booking",
                                      "renew_my_gpu_booking", "cancel_my_gpu_booking", "cleanup_my_job_specs",
                                      "cleanup_my_job_logs", "read_my_job_log", "get_my_gpu_operation"}));
  json create = tools[2];
  EXPECT_EQ(create["inputSchema"]["required"], json({"count", "duration", "operation_id"}));
  EXPECT_EQ(create["inputSchema"]["properties"]["operation_id"]["title"], "Operation Id");
  EXPECT_EQ(create["inputSchema"]["properties"]["command"]["type"], "array");
  EXPECT_EQ(create["inputSchema"]["properties"]["command"]["items"]["type"], "string");
  EXPECT_EQ(create["inputSchema"]["properties"]["working_directory"]["type"], "string");
  EXPECT_EQ(create["annotations"]["idempotentHint"], true);
  EXPECT_EQ(tools[0]["annotations"]["readOnlyHint"], true);
  EXPECT_EQ(tools[7]["annotations"]["destructiveHint"], true);
  EXPECT_EQ(tools[7]["annotations"]["idempotentHint"], false);

  json usage = tools[4];
  EXPECT_EQ(usage["annotations"]["readOnlyHint"], true);
  EXPECT_FALSE(usage["inputSchema"].contains("required"));
  json props = usage["inputSchema"]["properties"];
  EXPECT_EQ(props["since"]["default"], "24h");
  EXPECT_EQ(props["resolution"]["default"], "auto");
  EXPECT_EQ(props["include_events"]["default"], false);
  EXPECT_EQ(props["limit"]["default"], 1000);
  EXPECT_FALSE(props.contains("uid")) << "never another UID";
  // The original's idempotent_cleanup preset: removes files, harmless to repeat.
  for (size_t i : {8u, 9u}) {
    EXPECT_EQ(tools[i]["annotations"]["readOnlyHint"], false) << tools[i]["name"];
    EXPECT_EQ(tools[i]["annotations"]["destructiveHint"], true) << tools[i]["name"];
    EXPECT_EQ(tools[i]["annotations"]["idempotentHint"], true) << tools[i]["name"];
    EXPECT_EQ(tools[i]["inputSchema"]["properties"], json::object()) << tools[i]["name"];
  }
  json log = tools[10];
  EXPECT_EQ(log["annotations"]["readOnlyHint"], true);
  EXPECT_EQ(log["inputSchema"]["required"], json({"reservation_id"}));
  EXPECT_EQ(log["inputSchema"]["properties"]["max_chars"]["default"], 32000);
}

TEST_F(McpTest, BookEditRenewCancelAndReplay) {
  json args = {{"count", 1},
               {"duration", "2h"},
               {"gpus", {1}},
               {"expected_memory", "24g"},
               {"operation_id", "experiment-001"}};
  json created = Call("create_gpu_booking", args)["structuredContent"];
  EXPECT_EQ(created["kind"], "booking_result");
  EXPECT_EQ(created["status"], "created");
  EXPECT_EQ(created["reservation"]["gpus"], json({1}));
  std::string id = created["reservation"]["id"];

  json replay = Call("create_gpu_booking", args)["structuredContent"];
  EXPECT_EQ(replay["status"], "exists");
  EXPECT_EQ(replay["reservation"]["id"], id);
  EXPECT_EQ(replay["allocator"]["source"], "idempotent-replay");

  args["duration"] = "3h";
  EXPECT_THAT(ErrorText(Call("create_gpu_booking", args)), HasSubstr("different write"));

  json listed = Call("list_gpu_reservations", {{"mine_only", true}})["structuredContent"];
  ASSERT_EQ(listed["reservations"].size(), 1u);

  json edited = Call("edit_my_gpu_booking",
                     {{"reservation_id", id.substr(0, 8)}, {"operation_id", "edit-001"}, {"duration", "3h"}});
  EXPECT_EQ(edited["structuredContent"]["status"], "updated") << edited.dump();
  EXPECT_EQ(edited["structuredContent"]["reservation"]["end_at"], "2026-11-29T21:45:00Z");

  json renewed = Call("renew_my_gpu_booking",
                      {{"reservation_id", id}, {"operation_id", "renew-001"}, {"duration", "30m"}});
  EXPECT_EQ(renewed["structuredContent"]["reservation"]["end_at"], "2026-11-29T22:15:00Z") << renewed.dump();
  json renew_again = Call("renew_my_gpu_booking",
                          {{"reservation_id", id}, {"operation_id", "renew-001"}, {"duration", "30m"}});
  EXPECT_EQ(renew_again["structuredContent"]["status"], "exists");
  EXPECT_EQ(renew_again["structuredContent"]["reservation"]["end_at"], "2026-11-29T22:15:00Z");

  json op = Call("get_my_gpu_operation", {{"operation_id", "renew-001"}})["structuredContent"];
  EXPECT_EQ(op["found"], true);
  EXPECT_EQ(op["action"], "renew");

  json cancelled = Call("cancel_my_gpu_booking", {{"reservation_id", id}, {"operation_id", "cancel-001"}});
  EXPECT_EQ(cancelled["structuredContent"]["kind"], "cancellation_result");
  EXPECT_EQ(cancelled["structuredContent"]["reservation"]["status"], "cancelled");
  json again = Call("cancel_my_gpu_booking", {{"reservation_id", id}, {"operation_id", "cancel-001"}});
  EXPECT_EQ(again["structuredContent"]["reservation"]["id"], id);
}

TEST_F(McpTest, BadArgumentsAreToolErrors) {
  EXPECT_THAT(ErrorText(Call("create_gpu_booking", {{"count", 1}, {"duration", "1h"}})),
              HasSubstr("operation_id is required"));
  EXPECT_THAT(
      ErrorText(Call("create_gpu_booking", {{"count", 1}, {"duration", "1h"}, {"operation_id", "  "}})),
      HasSubstr("operation_id is required"));
  EXPECT_THAT(ErrorText(Call("recommend_gpu_booking", {{"count", "one"}, {"duration", "1h"}})),
              HasSubstr("count must be an integer"));
  EXPECT_THAT(ErrorText(Call("recommend_gpu_booking", {{"count", 1}, {"duration", "1h"}, {"colour", "red"}})),
              HasSubstr("unknown argument: colour"));
  EXPECT_THAT(ErrorText(Call("recommend_gpu_booking", {{"count", 1}, {"duration", "7m"}})),
              HasSubstr("multiple of 5 minutes"));
  EXPECT_THAT(ErrorText(Call("recommend_gpu_booking", {{"count", 1}, {"duration", "1h"}, {"mode", "turbo"}})),
              HasSubstr("mode must be s/shared or x/exclusive"));
  EXPECT_THAT(ErrorText(Call("recommend_gpu_booking",
                             {{"count", 1}, {"duration", "1h"}, {"gpus", {1}}, {"exclude_gpus", {2}}})),
              HasSubstr("mutually exclusive"));
  EXPECT_THAT(ErrorText(Call(
                  "create_gpu_booking",
                  {{"count", 1}, {"duration", "1h"}, {"operation_id", "a"}, {"command", "python train.py"}})),
              HasSubstr("command must be a non-empty argv list"));
  EXPECT_THAT(
      ErrorText(Call("create_gpu_booking",
                     {{"count", 1}, {"duration", "1h"}, {"operation_id", "a"}, {"command", {"python", ""}}})),
      HasSubstr("command must be a non-empty argv list"));
  for (const char* relative : {"runs/1", ""})
    EXPECT_THAT(ErrorText(Call("create_gpu_booking", {{"count", 1},
                                                      {"duration", "1h"},
                                                      {"operation_id", "a"},
                                                      {"command", {"python", "train.py"}},
                                                      {"working_directory", relative}})),
                HasSubstr("job working directory must be absolute"))
        << relative;
  EXPECT_THAT(ErrorText(Call("edit_my_gpu_booking",
                             {{"reservation_id", "abc"}, {"operation_id", "e1"}, {"allow_queue", true}})),
              HasSubstr("at least one changed field"));
  EXPECT_THAT(ErrorText(Call("edit_my_gpu_booking",
                             {{"reservation_id", "abc"}, {"operation_id", "e1"}, {"count", 0}})),
              HasSubstr("GPU count must be >= 1"));
  EXPECT_THAT(ErrorText(Call("cancel_my_gpu_booking", {{"reservation_id", "ffffffff"}})),
              HasSubstr("not found for current user"));
  EXPECT_THAT(ErrorText(Call("get_gpu_context", {{"x", 1}})),
              StartsWith("Error executing tool get_gpu_context: "));
  EXPECT_THAT(
      ErrorText(Request("tools/call", {{"name", "get_gpu_context"}, {"arguments", {1, 2}}})["result"]),
      HasSubstr("arguments must be a JSON object"));
  // Still serving.
  EXPECT_EQ(Call("get_gpu_context", json::object())["structuredContent"]["kind"], "context");
}

TEST_F(McpTest, NullArgumentsCountAsAbsent) {
  json r =
      Call("recommend_gpu_booking",
           {{"count", 2}, {"duration", "1h"}, {"start", nullptr}, {"share", nullptr}, {"gpus", nullptr}});
  EXPECT_EQ(r["structuredContent"]["available"], true) << r.dump();
  EXPECT_EQ(r["structuredContent"]["recommendation"]["gpus"].size(), 2u);
}

TEST_F(McpTest, RecommendationThatDoesNotFitIsAResultNotAnError) {
  ASSERT_TRUE(Call("create_gpu_booking",
                   {{"count", 1}, {"duration", "2h"}, {"gpus", {1}}, {"mode", "x"}, {"operation_id", "hold"}})
                  .value("isError", true) == false);
  json r = Call("recommend_gpu_booking",
                {{"count", 1}, {"duration", "1h"}, {"gpus", {1}}, {"start", "2026-11-29T19:00:00Z"}});
  EXPECT_EQ(r.value("isError", true), false) << r.dump();
  EXPECT_EQ(r["structuredContent"]["available"], false);
  EXPECT_TRUE(r["structuredContent"]["recommendation"].is_null());
}

TEST_F(McpTest, ContextResourceAndPlanningPrompt) {
  json list = Request("resources/list")["result"]["resources"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["uri"], "bk://context");
  EXPECT_EQ(list[1]["uri"], "bk://usage/me/recent");
  EXPECT_EQ(list[1]["description"], "Current UID's versioned 24-hour usage summary.");
  json read = Request("resources/read", {{"uri", "bk://context"}})["result"]["contents"][0];
  EXPECT_EQ(read["mimeType"], "application/json");
  EXPECT_EQ(json::parse(read["text"].get<std::string>())["kind"], "context");
  EXPECT_EQ(Request("resources/read", {{"uri", "bk://nope"}})["error"]["code"], -32002);

  json prompts = Request("prompts/list")["result"]["prompts"];
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts[0]["name"], "plan_gpu_experiment");
  json msg =
      Request("prompts/get", {{"name", "plan_gpu_experiment"},
                              {"arguments", {{"count", "2"}, {"duration", "4h"}}}})["result"]["messages"][0];
  EXPECT_EQ(msg["role"], "user");
  EXPECT_THAT(msg["content"]["text"].get<std::string>(),
              HasSubstr("needing 2 GPU(s) for 4h, expected memory unknown per GPU"));
  EXPECT_EQ(Request("prompts/get", {{"name", "plan_gpu_experiment"}})["error"]["code"], -32602);
}

TEST_F(McpTest, ServeAnswersLineByLineUntilEof) {
  std::string input = R"({"jsonrpc":"2.0","id":1,"method":"ping"})"
                      "\n\n"
                      R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                      "\r\n"
                      R"({"jsonrpc":"2.0","id":"b","method":"ping"})";  // last line without a newline
  FILE* in = fmemopen(input.data(), input.size(), "r");
  char* out_buf = nullptr;
  size_t out_size = 0;
  FILE* out = open_memstream(&out_buf, &out_size);
  EXPECT_EQ(server_->Serve(in, out), 0);
  fclose(in);
  fclose(out);
  std::string output(out_buf, out_size);
  free(out_buf);
  EXPECT_EQ(
      output,
      "{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":{}}\n{\"id\":\"b\",\"jsonrpc\":\"2.0\",\"result\":{}}\n");
}

TEST_F(McpTest, MyUsageIsThisUidsOwnVersionedDocument) {
  json r = Call("get_my_gpu_usage", json::object());
  ASSERT_EQ(r.value("isError", true), false) << r.dump();
  json doc = r["structuredContent"];
  EXPECT_EQ(doc["schema_version"], "gpubk.usage.v1");
  EXPECT_EQ(doc["kind"], "my-usage");
  EXPECT_EQ(doc["generated_at"], "2026-11-29T18:49:00Z");
  uint32_t uid = ledger_->actor().uid;
  EXPECT_EQ(doc["summary"]["kind"], "usage-users");
  EXPECT_EQ(doc["summary"]["query"]["uid"], uid);
  EXPECT_EQ(doc["summary"]["query"]["limit"], 1);
  EXPECT_EQ(doc["summary"]["query"]["start_at"], "2026-11-28T18:49:01Z");  // 24h back from now + 1s
  EXPECT_EQ(doc["samples"]["kind"], "usage-samples");
  EXPECT_EQ(doc["samples"]["query"]["uid"], uid);
  EXPECT_EQ(doc["samples"]["query"]["resolution_seconds"], 60);
  EXPECT_EQ(doc["samples"]["query"]["limit"], 1000);
  EXPECT_FALSE(doc.contains("events"));

  json wide = Call("get_my_gpu_usage", {{"since", "7d"}, {"include_events", true}, {"limit", 9000}});
  ASSERT_EQ(wide.value("isError", true), false) << wide.dump();
  EXPECT_EQ(wide["structuredContent"]["samples"]["query"]["resolution_seconds"], 3600)
      << "auto: hourly past 2 days";
  EXPECT_EQ(wide["structuredContent"]["events"]["kind"], "usage-events");
  EXPECT_EQ(wide["structuredContent"]["events"]["query"]["uid"], uid);
  EXPECT_EQ(wide["structuredContent"]["events"]["query"]["limit"], 5000);
  json minutes = Call("get_my_gpu_usage", {{"since", "7d"}, {"resolution", "1m"}})["structuredContent"];
  EXPECT_EQ(minutes["samples"]["query"]["resolution_seconds"], 60);

  EXPECT_THAT(ErrorText(Call("get_my_gpu_usage", {{"limit", 0}})),
              HasSubstr("limit must be between 1 and 200000"));
  EXPECT_THAT(ErrorText(Call("get_my_gpu_usage", {{"limit", 200001}})),
              HasSubstr("limit must be between 1 and 200000"));
  EXPECT_THAT(ErrorText(Call("get_my_gpu_usage", {{"resolution", "5s"}})),
              HasSubstr("resolution must be auto, 1m, 5m, 10m, 1h or 1d"));
  EXPECT_THAT(ErrorText(Call("get_my_gpu_usage", {{"since", "soon"}})), HasSubstr("duration"));
  EXPECT_THAT(ErrorText(Call("get_my_gpu_usage", {{"uid", 0}})), HasSubstr("unknown argument: uid"));

  json read = Request("resources/read", {{"uri", "bk://usage/me/recent"}})["result"]["contents"][0];
  EXPECT_EQ(read["uri"], "bk://usage/me/recent");
  EXPECT_EQ(read["mimeType"], "application/json");
  json recent = json::parse(read["text"].get<std::string>());
  EXPECT_EQ(recent["kind"], "my-usage");
  EXPECT_EQ(recent["samples"]["query"]["start_at"], "2026-11-28T18:49:01Z");
}

TEST_F(McpTest, BookingWithACommandLeavesAPendingJobAndItsPrivateSpec) {
  json args = {{"count", 1},
               {"duration", "1h"},
               {"start", "2026-11-29T20:00:00Z"},
               {"operation_id", "train-001"},
               {"command", {"python", "train.py", "--epochs", "3"}},
               {"working_directory", dir_}};
  json created = Call("create_gpu_booking", args);
  ASSERT_EQ(created.value("isError", true), false) << created.dump();
  EXPECT_EQ(created["structuredContent"]["status"], "created");
  EXPECT_EQ(created["structuredContent"]["worker"]["schema_version"], "gpubk.worker.v1");
  std::string id = created["structuredContent"]["reservation"]["id"];

  auto jobs = ledger_->Jobs({false});
  ASSERT_TRUE(jobs.has_value());
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].reservation.id, id);
  EXPECT_EQ((*jobs)[0].job.status, store::JobStatus::kPending);
  EXPECT_EQ((*jobs)[0].job.summary, "python train.py (+2 args)");
  std::string specs = worker::SpecsDir(dir_ + "/jobs");
  std::string spec_file = specs + "/" + (*jobs)[0].job.spec_id + ".json";
  ASSERT_TRUE(std::filesystem::exists(spec_file));
  std::ifstream in(spec_file);
  json spec = json::parse(in);
  EXPECT_EQ(spec["cwd"], dir_);
  EXPECT_EQ(spec["argv"], json({"python", "train.py", "--epochs", "3"}));

  // A replay binds nothing new, so its own spec is withdrawn.
  json replay = Call("create_gpu_booking", args)["structuredContent"];
  EXPECT_EQ(replay["status"], "exists");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(specs), {}), 1);

  json bad = args;
  bad["operation_id"] = "train-002";
  bad["working_directory"] = dir_ + "/missing";
  EXPECT_THAT(ErrorText(Call("create_gpu_booking", bad)),
              HasSubstr("job working directory does not exist: " + dir_ + "/missing"));
  std::ofstream(dir_ + "/file") << "x";
  bad["working_directory"] = dir_ + "/file";
  EXPECT_THAT(ErrorText(Call("create_gpu_booking", bad)), HasSubstr("job working directory does not exist"));
  if (geteuid() != 0) {  // root reads every directory
    std::filesystem::create_directory(dir_ + "/closed");
    chmod((dir_ + "/closed").c_str(), 0);
    bad["working_directory"] = dir_ + "/closed";
    EXPECT_THAT(ErrorText(Call("create_gpu_booking", bad)),
                HasSubstr("job working directory is not readable: " + dir_ + "/closed"));
    chmod((dir_ + "/closed").c_str(), 0700);
  }
  EXPECT_EQ(ledger_->Jobs({false})->size(), 1u) << "a refused directory books nothing";
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(specs), {}), 1);
}

TEST_F(McpTest, ReadMyJobLogReturnsABoundedTail) {
  json created = Call("create_gpu_booking", {{"count", 1},
                                             {"duration", "1h"},
                                             {"operation_id", "log-001"},
                                             {"command", {"sh", "-c", "echo hi"}},
                                             {"working_directory", dir_}});
  ASSERT_EQ(created.value("isError", true), false) << created.dump();
  std::string id = created["structuredContent"]["reservation"]["id"];

  json empty = Call("read_my_job_log", {{"reservation_id", id.substr(0, 8)}})["structuredContent"];
  EXPECT_EQ(empty["kind"], "job_log");
  EXPECT_EQ(empty["reservation_id"], id);
  EXPECT_EQ(empty["status"], "pending");
  EXPECT_EQ(empty["available"], false);
  EXPECT_EQ(empty["segments"], 0);
  EXPECT_EQ(empty["text"], "");
  EXPECT_EQ(empty["truncated_to_chars"], 32000);

  std::string log = worker::LogPath(dir_ + "/jobs", id);
  std::filesystem::create_directories(std::filesystem::path(log).parent_path());
  std::ofstream(log) << "header\nstep 1\nstep 2 \xC3\xA9t\xC3\xA9\n";
  chmod(log.c_str(), 0600);
  json tail = Call("read_my_job_log", {{"reservation_id", id}, {"max_chars", 7}})["structuredContent"];
  EXPECT_EQ(tail["available"], true);
  EXPECT_EQ(tail["segments"], 1);
  EXPECT_EQ(tail["text"], " 2 \xC3\xA9t\xC3\xA9\n") << "characters, not bytes";
  EXPECT_EQ(tail["truncated_to_chars"], 7);
  std::ofstream(log) << "x\xFFy\xE2\x82";  // a stray byte, then a character cut short
  json bad = Call("read_my_job_log", {{"reservation_id", id}, {"max_chars", 3}})["structuredContent"];
  EXPECT_EQ(bad["text"], "\xEF\xBF\xBDy\xEF\xBF\xBD") << "each ill-formed run is one U+FFFD";

  EXPECT_THAT(ErrorText(Call("read_my_job_log", {{"reservation_id", id}, {"max_chars", 0}})),
              HasSubstr("max_chars must be between 1 and 128000"));
  EXPECT_THAT(ErrorText(Call("read_my_job_log", {{"reservation_id", id}, {"max_chars", 128001}})),
              HasSubstr("max_chars must be between 1 and 128000"));
  EXPECT_THAT(ErrorText(Call("read_my_job_log", {{"reservation_id", "ffffffff"}})),
              HasSubstr("reservation not found for current UID"));
  EXPECT_THAT(ErrorText(Call("read_my_job_log", {{"reservation_id", " "}})),
              HasSubstr("reservation ID is required"));
  EXPECT_THAT(ErrorText(Call("read_my_job_log", json::object())),
              HasSubstr("missing required argument: reservation_id"));
}

TEST_F(McpTest, CleanupsReportAndFoldFailuresIntoTheDocument) {
  json specs = Call("cleanup_my_job_specs", json::object());
  ASSERT_EQ(specs.value("isError", true), false) << specs.dump();
  EXPECT_EQ(specs["structuredContent"]["kind"], "job-spec-cleanup");
  EXPECT_EQ(specs["structuredContent"]["private_job_cleanup"]["removed"], 0);
  EXPECT_EQ(specs["structuredContent"]["private_job_cleanup"]["failed"], 0);
  json logs = Call("cleanup_my_job_logs", json::object())["structuredContent"];
  EXPECT_EQ(logs["kind"], "job-log-cleanup");
  EXPECT_EQ(logs["private_job_log_cleanup"]["failed"], 0);
  EXPECT_TRUE(logs["private_job_log_cleanup"].contains("bytes_removed"));

  // A pending job's spec is kept; a cancelled booking's spec goes.
  json created = Call("create_gpu_booking", {{"count", 1},
                                             {"duration", "1h"},
                                             {"start", "2026-11-29T20:00:00Z"},
                                             {"operation_id", "c-001"},
                                             {"command", {"true"}}})["structuredContent"];
  auto jobs = ledger_->Jobs({false});
  ASSERT_TRUE(jobs.has_value() && jobs->size() == 1u);
  std::string spec_path = worker::SpecsDir(dir_ + "/jobs") + "/" + (*jobs)[0].job.spec_id + ".json";
  std::ifstream in(spec_path);
  EXPECT_EQ(json::parse(in)["cwd"], std::filesystem::current_path().string())
      << "without working_directory the command starts where the server runs";
  json kept = Call("cleanup_my_job_specs", json::object())["structuredContent"]["private_job_cleanup"];
  EXPECT_EQ(kept["removed"], 0);
  EXPECT_EQ(kept["retained"], 1);
  // The cancellation itself removes the spec, as `bk d` does: the cleanup finds nothing.
  ASSERT_TRUE(std::filesystem::exists(spec_path));
  json cancelled = Call("cancel_my_gpu_booking", {{"reservation_id", created["reservation"]["id"]}});
  EXPECT_TRUE(cancelled["structuredContent"]["warning"].is_null()) << cancelled.dump();
  EXPECT_FALSE(std::filesystem::exists(spec_path));
  EXPECT_EQ(
      Call("cleanup_my_job_specs", json::object())["structuredContent"]["private_job_cleanup"]["removed"], 0)
      << "idempotent";

  job_env_["BK_JOB_DIR"] = "relative/jobs";
  json failed = Call("cleanup_my_job_specs", json::object());
  ASSERT_EQ(failed.value("isError", true), false) << failed.dump();
  json report = failed["structuredContent"]["private_job_cleanup"];
  EXPECT_EQ(report["failed"], 1);
  EXPECT_THAT(report["warnings"][0].get<std::string>(),
              StartsWith("private job spec cleanup failed: BK_JOB_DIR must be an absolute path"));
  json log_failed =
      Call("cleanup_my_job_logs", json::object())["structuredContent"]["private_job_log_cleanup"];
  EXPECT_THAT(log_failed["warnings"][0].get<std::string>(), StartsWith("private job log cleanup failed: "));
}

}  // namespace
}  // namespace bk::agent
