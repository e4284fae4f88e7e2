#include "cluster/remote.h"

#include <gtest/gtest.h>

#include "cluster/cluster_testing.h"

namespace bk::cluster {
namespace {

using nlohmann::json;

const std::string kId = "0123456789abcdef0123";

Node SshNode() {
  return {.name = "gpu-b",
          .node_id = kId,
          .transport = Transport::kSsh,
          .target = "gpu-b.lab",
          .executable = "/opt/bk bin/bk",
          .timeout_seconds = 2.5};
}

json Doc(const std::string& id = kId) { return {{"kind", "context"}, {"node", {{"id", id}}}}; }

TEST(Remote, SshArgvQuotesEveryRemoteWordAndNeverPrompts) {
  FakeRunner runner;
  Remote remote(runner, {.control_dir = "/run/user/5/gpubk-ssh"});
  auto argv = remote.Argv(SshNode(), {"1", "1h", "--op-id", "x; touch /tmp/p", "--", "it's", "$(id)"});
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv[0], "ssh");
  auto has = [&](const std::string& o) { return std::find(argv.begin(), argv.end(), o) != argv.end(); };
  EXPECT_TRUE(has("BatchMode=yes"));
  EXPECT_TRUE(has("StrictHostKeyChecking=yes"));
  EXPECT_TRUE(has("ConnectTimeout=2"));
  EXPECT_TRUE(has("ControlPath=/run/user/5/gpubk-ssh/%C"));
  EXPECT_EQ(argv[argv.size() - 3], "--");  // the target can never be read as an option
  EXPECT_EQ(argv[argv.size() - 2], "gpu-b.lab");
  EXPECT_EQ(argv.back(), "'/opt/bk bin/bk' '1' '1h' '--op-id' 'x; touch /tmp/p' '--' 'it'\\''s' '$(id)'");
}

TEST(Remote, WithoutSharingThereIsNoControlMaster) {
  FakeRunner runner;
  Remote remote(runner, {});
  for (const auto& a : remote.Argv(SshNode(), {"agent"}))
    EXPECT_EQ(a.find("ControlMaster"), std::string::npos);
}

TEST(Remote, LocalNodeRunsThisBkWithRoutingOff) {
  FakeRunner runner;
  runner.Queue("agent", JsonReply(Doc()));
  Remote remote(runner, {.self_exe = "/usr/bin/bk"});
  Node local{.name = "gpu-a", .node_id = kId, .transport = Transport::kLocal};
  ASSERT_TRUE(remote.Call(local, {"agent", "context"}));
  EXPECT_EQ(runner.calls[0], (std::vector<std::string>{"/usr/bin/bk", "agent", "context"}));
}

TEST(Remote, RefusesAReplyFromAnotherHost) {
  FakeRunner runner;
  runner.Queue("agent", JsonReply(Doc("ffffffffffffffffffff")));
  Remote remote(runner, {});
  auto r = remote.Call(SshNode(), {"agent", "context"});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().cls, FailClass::kIdentity);
  EXPECT_NE(r.error().message.find("does not match the catalog"), std::string::npos);
}

TEST(Remote, ProbeLearnsTheIdentityButStillNeedsAWellFormedOne) {
  FakeRunner runner;
  runner.Queue("agent", JsonReply(Doc("ffffffffffffffffffff")));
  runner.Queue("agent", JsonReply({{"kind", "context"}, {"node", {{"id", "NOT-HEX"}}}}));
  Remote remote(runner, {});
  EXPECT_TRUE(remote.Call(SshNode(), {"agent"}, std::nullopt));
  auto bad = remote.Call(SshNode(), {"agent"}, std::nullopt);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "returned an invalid stable node identity");
}

TEST(Remote, ClassifiesFailures) {
  Node n = SshNode();
  RunResult timeout;
  timeout.end = RunResult::End::kTimedOut;
  EXPECT_EQ(CheckReply(timeout, n, kId).error().cls, FailClass::kTimeout);
  EXPECT_EQ(CheckReply(timeout, n, kId).error().message, "timed out after 2.5s");

  RunResult hostkey;
  hostkey.end = RunResult::End::kExited;
  hostkey.code = 255;
  hostkey.err =
      "@@@@@@@\r\nWARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!\nHost key verification failed.\n";
  auto e = CheckReply(hostkey, n, kId).error();
  EXPECT_EQ(e.cls, FailClass::kTransport);
  EXPECT_EQ(e.message, "Host key verification failed.");

  RunResult garbage = JsonReply(json::array({1}));
  EXPECT_EQ(CheckReply(garbage, n, kId).error().message, "returned a non-object JSON response");
  garbage.out = "bash: bk: command not found";
  EXPECT_EQ(CheckReply(garbage, n, kId).error().cls, FailClass::kProtocol);

  json refused = Doc();
  refused["kind"] = "error";
  refused["error"] = {{"message", "GPU 3 is\tbusy\nuntil 14:00"}};
  auto r = CheckReply(JsonReply(refused, 2), n, kId).error();
  EXPECT_EQ(r.cls, FailClass::kRemote);
  EXPECT_EQ(r.message, "GPU 3 is busy until 14:00");

  RunResult overflow;
  overflow.end = RunResult::End::kOverflow;
  EXPECT_EQ(CheckReply(overflow, n, kId).error().message, "response exceeds 8 MiB");
}

TEST(Remote, ExitThreeWithADocumentIsAnAnswer) {
  json d = Doc();
  d["available"] = false;
  auto r = CheckReply(JsonReply(d, 3), SshNode(), kId);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 3);
}

TEST(Remote, SanitizeKeepsOneShortLine) {
  EXPECT_EQ(Sanitize("a\x1b[31m b\r\n\tc  "), "a [31m b c");
  EXPECT_EQ(Sanitize(std::string(2000, 'x')).size(), 1000u);
  EXPECT_EQ(Sanitize(std::string(2000, 'x')).back(), '~');
}

}  // namespace
}  // namespace bk::cluster
