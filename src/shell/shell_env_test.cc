#include "shell/shell_env.h"

#include <gtest/gtest.h>

#include "shell/init_script.h"

namespace bk::shell {
namespace {

constexpr engine::Seconds kNow = 1795977000;

engine::Reservation R(std::string id, std::vector<int> gpus, engine::Seconds start, engine::Seconds end) {
  engine::Reservation r;
  r.id = std::move(id);
  r.gpus = std::move(gpus);
  r.start = start;
  r.end = end;
  return r;
}

gpu::Snapshot Uuids() {
  gpu::Snapshot s;
  for (int i = 0; i < 4; ++i) {
    gpu::DeviceSample d;
    d.index = i;
    d.uuid = "GPU-" + std::to_string(i);
    s.devices.push_back(d);
  }
  return s;
}

std::string Clock(engine::Seconds t) { return std::to_string(t); }

TEST(ShellEnvTest, OnlyBookingsActiveNow) {
  std::vector<engine::Reservation> mine = {R("a", {2}, kNow - 60, kNow + 600),
                                           R("b", {0, 2}, kNow - 60, kNow + 300),
                                           R("future", {3}, kNow + 120, kNow + 900)};
  ShellEnv e = ComputeShellEnv(mine, kNow, Uuids(), Clock);
  EXPECT_EQ(e.state, "ok");
  EXPECT_EQ(e.gpus, (std::vector<int>{2, 0}));
  EXPECT_EQ(e.tokens, (std::vector<std::string>{"GPU-2", "GPU-0"}));
  EXPECT_EQ(e.next_boundary, kNow + 120);  // the future booking's start comes first
  EXPECT_EQ(e.until, kNow + 300);
}

TEST(ShellEnvTest, NothingActiveIsEmptyWithOneNotice) {
  std::vector<engine::Reservation> mine = {R("future", {3}, kNow + 120, kNow + 900)};
  ShellEnv e = ComputeShellEnv(mine, kNow, Uuids(), Clock);
  EXPECT_EQ(e.state, "none");
  EXPECT_TRUE(e.tokens.empty());
  EXPECT_EQ(e.next_boundary, kNow + 120);
  EXPECT_NE(e.notice.find("CUDA_VISIBLE_DEVICES is empty"), std::string::npos);
  // Cancelled or ended bookings are neither visible nor boundaries.
  mine[0].status = engine::Status::kCancelled;
  mine.push_back(R("old", {1}, kNow - 900, kNow));
  ShellEnv none = ComputeShellEnv(mine, kNow, Uuids(), Clock);
  EXPECT_FALSE(none.next_boundary.has_value());
}

TEST(ShellEnvTest, IndexesWhenAUuidIsMissing) {
  gpu::Snapshot s = Uuids();
  s.devices[1].uuid.clear();
  ShellEnv e = ComputeShellEnv({R("a", {1, 2}, kNow - 1, kNow + 60)}, kNow, s, Clock);
  EXPECT_EQ(e.tokens, (std::vector<std::string>{"1", "2"}));
}

TEST(ShellEnvTest, PlainAndUnreachable) {
  ShellEnv u = Unreachable(kNow, "the GPUBK server at /s is not reachable (refused); its owner must run it");
  EXPECT_EQ(u.next_boundary, kNow + kUnreachableRetry);
  std::string text = RenderPlain(u);
  EXPECT_NE(text.find("BK_SHELL_STATE=unreachable\nCUDA_VISIBLE_DEVICES=\n"), std::string::npos);
  EXPECT_EQ(text.find("its owner"), std::string::npos);  // one short line
  EXPECT_NE(RenderJson(u).find("\"schema_version\":\"gpubk.shell-env.v1\""), std::string::npos);
}

TEST(InitScriptTest, BashAndZshOnly) {
  auto bash = InitScript("bash", "/opt/it's/bk");
  ASSERT_TRUE(bash.has_value());
  EXPECT_NE(bash->find("__bk_gpu_bin='/opt/it'\\''s/bk'"), std::string::npos);
  EXPECT_NE(bash->find("PROMPT_COMMAND="), std::string::npos);
  EXPECT_NE(bash->find("BK_SHELL_TEST_EPOCH"), std::string::npos);
  auto zsh = InitScript("zsh", "/bk");
  ASSERT_TRUE(zsh.has_value());
  EXPECT_NE(zsh->find("precmd_functions+=(__bk_gpu_hook)"), std::string::npos);
  EXPECT_NE(zsh->find("zmodload zsh/datetime"), std::string::npos);
  EXPECT_FALSE(InitScript("fish", "/bk").has_value());
}

}  // namespace
}  // namespace bk::shell
