#include "agent/mcp_server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/agent_testing.h"
#include "agent/mcp_catalog.h"

namespace bk::agent {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class McpTest : public LedgerFixture {
 protected:
  void SetUp() override {
    LedgerFixture::SetUp();
    ToolEnv env;
    env.ledger = [this]() -> Result<client::Ledger*> {
      ++opens_;
      return ledger_.get();
    };
    env.config = &config_;
    env.zone = &zone_;
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
    EXPECT_EQ(t["outputSchema"]["properties"]["schema_version"]["const"], "bk.agent.v1");
    for (const char* hint : {"readOnlyHint", "idempotentHint", "destructiveHint"})
      EXPECT_TRUE(t["annotations"][hint].is_boolean()) << t["name"] << " " << hint;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"get_gpu_context", "recommend_gpu_booking", "create_gpu_booking",
                                      "list_gpu_reservations", "edit_my_gpu_booking", "renew_my_gpu_booking",
                                      "cancel_my_gpu_booking", "get_my_gpu_operation"}));
  json create = tools[2];
  EXPECT_EQ(create["inputSchema"]["required"], json({"count", "duration", "operation_id"}));
  EXPECT_EQ(create["inputSchema"]["properties"]["operation_id"]["title"], "Operation Id");
  EXPECT_EQ(create["annotations"]["idempotentHint"], true);
  EXPECT_EQ(tools[0]["annotations"]["readOnlyHint"], true);
  EXPECT_EQ(tools[6]["annotations"]["destructiveHint"], true);
  EXPECT_EQ(tools[6]["annotations"]["idempotentHint"], false);
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
  EXPECT_THAT(
      ErrorText(Call(
          "create_gpu_booking",
          {{"count", 1}, {"duration", "1h"}, {"operation_id", "a"}, {"command", {"python", "train.py"}}})),
      HasSubstr("cannot schedule commands"));
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
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["uri"], "bk://context");
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

}  // namespace
}  // namespace bk::agent
