#include "cluster/write.h"

#include <gtest/gtest.h>

#include "cluster/cluster_testing.h"

namespace bk::cluster {
namespace {

using nlohmann::json;

const std::string kId = "0123456789abcdef0123";
const Node kNode{.name = "gpu-b", .node_id = kId, .target = "gpu-b"};

json Booked() { return {{"kind", "booking_result"}, {"status", "created"}, {"node", {{"id", kId}}}}; }
json Op(bool found, const std::string& action = "create") {
  return {{"kind", "operation_status"},
          {"node", {{"id", kId}}},
          {"found", found},
          {"action", found ? json(action) : json()},
          {"reservation", found ? json{{"short_id", "1a2b3c"}} : json()}};
}

int Writes(const FakeRunner& r) {
  int n = 0;
  for (const auto& argv : r.calls)
    if (argv.back().find("--json") != std::string::npos) ++n;
  return n;
}

struct WriteTest : ::testing::Test {
  FakeRunner runner;
  Remote remote{runner, {}};
  std::vector<std::string> args = {"1", "1h", "--op-id", "op-7", "--json"};
  std::expected<json, WriteError> Run(const std::string& action = "create") {
    return IdempotentWrite(remote, kNode, args, "op-7", action);
  }
};

TEST_F(WriteTest, AnAnswerIsTheResult) {
  runner.Queue("--json", JsonReply(Booked()));
  auto r = Run();
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["status"], "created");
  EXPECT_EQ(runner.calls.size(), 1u);
}

TEST_F(WriteTest, ADroppedReplyAfterACommitIsFoundOnTheSameHost) {
  runner.Queue("--json", Dropped());
  runner.Queue("operation", JsonReply(Op(true)));
  json replayed = Booked();
  replayed["status"] = "exists";
  runner.Queue("--json", JsonReply(replayed));
  auto r = Run();
  ASSERT_TRUE(r);
  // The host's own booking document for the replay, as if nothing was lost.
  EXPECT_EQ((*r)["kind"], "booking_result");
  EXPECT_EQ((*r)["status"], "exists");
  EXPECT_EQ(Writes(runner), 2);
}

TEST_F(WriteTest, WhenTheReplayIsLostTooTheOperationRecordAnswers) {
  runner.Queue("--json", Dropped());
  runner.Queue("operation", JsonReply(Op(true)));
  runner.Queue("--json", Dropped());
  auto r = Run();
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["kind"], "operation_status");
  EXPECT_EQ((*r)["status"], "exists");
}

TEST_F(WriteTest, ARequestThatNeverArrivedIsReplayedOnce) {
  runner.Queue("--json", Dropped());
  runner.Queue("operation", JsonReply(Op(false)));
  runner.Queue("--json", JsonReply(Booked()));
  auto r = Run();
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)["status"], "created");
  EXPECT_EQ(Writes(runner), 2);
}

TEST_F(WriteTest, UnknownWhenTheHostCannotSay) {
  runner.Queue("--json", Dropped());  // and the lookup falls back to "connection refused"
  auto r = Run();
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().uncertain);
  EXPECT_NE(r.error().message.find("operation status is unknown"), std::string::npos);
  EXPECT_EQ(Writes(runner), 1);
}

TEST_F(WriteTest, UnknownAfterOneReplay) {
  runner.Queue("--json", Dropped());
  runner.Queue("--json", Dropped());
  runner.Queue("operation", JsonReply(Op(false)));
  runner.Queue("operation", JsonReply(Op(false)));
  auto r = Run();
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().uncertain);
  EXPECT_NE(r.error().message.find("operation ID was not found"), std::string::npos);
  EXPECT_EQ(Writes(runner), 2);
}

TEST_F(WriteTest, ARefusalIsFinal) {
  json refused = Booked();
  refused["kind"] = "error";
  refused["error"] = {{"message", "no room"}};
  runner.Queue("--json", JsonReply(refused, 2));
  auto r = Run();
  ASSERT_FALSE(r);
  EXPECT_FALSE(r.error().uncertain);
  EXPECT_EQ(r.error().message, "no room");
  EXPECT_EQ(runner.calls.size(), 1u);  // no lookup, no replay
}

TEST_F(WriteTest, AnOperationBoundToAnotherActionIsRefused) {
  runner.Queue("--json", Dropped());
  runner.Queue("operation", JsonReply(Op(true, "cancel")));
  auto r = Run();
  ASSERT_FALSE(r);
  EXPECT_FALSE(r.error().uncertain);
  EXPECT_EQ(r.error().message, "operation ID is already bound to cancel, not create");
}

TEST(OperationId, IsAFreshUuid) {
  std::string a = NewOperationId(), b = NewOperationId();
  EXPECT_EQ(a.size(), 36u);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace bk::cluster
