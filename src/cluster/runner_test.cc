#include "cluster/runner.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "base/temp_dir_testing.h"

namespace bk::cluster {
namespace {

RunSpec Sh(const std::string& script, double timeout = 10) {
  RunSpec s;
  s.argv = {"/bin/sh", "-c", script};
  s.env = EnvironmentWith({});
  s.timeout_seconds = timeout;
  return s;
}

TEST(Runner, CapturesOutputAndExitStatus) {
  ProcessRunner run;
  RunResult r = run.Run(Sh("printf 'out'; printf 'err' >&2; exit 3"));
  EXPECT_EQ(r.end, RunResult::End::kExited);
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "out");
  EXPECT_EQ(r.err, "err");
}

TEST(Runner, ArgumentsReachTheChildAsWordsAndStdinIsEmpty) {
  ProcessRunner run;
  RunSpec s = Sh("printf '%s|' \"$@\"; cat", 10);
  s.argv.insert(s.argv.end(), {"sh", "a b", "$(touch x); y", "'"});
  RunResult r = run.Run(s);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "a b|$(touch x); y|'|");  // and `cat` read an empty stdin
}

TEST(Runner, KeepsOnlyTheTailOfStderr) {
  ProcessRunner run;
  RunSpec s = Sh("i=0; while [ $i -lt 200 ]; do echo line$i >&2; i=$((i+1)); done; echo last >&2");
  s.stderr_tail = 16;
  RunResult r = run.Run(s);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err.size(), 16u);
  EXPECT_EQ(r.err.substr(r.err.size() - 5), "last\n");
}

TEST(Runner, StopsAChildThatPrintsTooMuch) {
  ProcessRunner run;
  RunSpec s = Sh("yes 0123456789");
  s.stdout_cap = 4096;
  RunResult r = run.Run(s);
  EXPECT_EQ(r.end, RunResult::End::kOverflow);
  EXPECT_EQ(r.out.size(), 4096u);
}

TEST(Runner, TimeoutKillsTheWholeGroup) {
  TempDir dir("bk-runner");
  std::string pidfile = dir.path() + "/grandchild";
  ProcessRunner run;
  auto start = std::chrono::steady_clock::now();
  // The grandchild keeps both pipes open and would outlive its parent.
  RunResult r = run.Run(Sh("sleep 60 & echo $! > " + pidfile + "; wait", 0.5));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.end, RunResult::End::kTimedOut);
  EXPECT_LT(took, 5.0);
  std::ifstream f(pidfile);
  pid_t grandchild = 0;
  ASSERT_TRUE(f >> grandchild);
  // Killed by the group kill; it is init's to reap, so poll until it is gone.
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string line;
    gone = !std::getline(stat, line) || line.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "the grandchild " << grandchild << " survived";
}

TEST(Runner, AnExitEndsTheCallEvenWhenADescendantHoldsThePipes) {
  ProcessRunner run;
  auto start = std::chrono::steady_clock::now();
  RunResult r = run.Run(Sh("sleep 30 & echo done", 20));
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.end, RunResult::End::kExited);
  EXPECT_EQ(r.out, "done\n");
  EXPECT_LT(took, 10.0);
}

TEST(Runner, CancelEndsTheChild) {
  ProcessRunner run;
  std::atomic<bool> cancel{false};
  RunSpec s = Sh("sleep 30", 20);
  s.cancel = &cancel;
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    cancel = true;
  });
  RunResult r = run.Run(s);
  t.join();
  EXPECT_EQ(r.end, RunResult::End::kCancelled);
}

TEST(Runner, ReportsAProgramThatCannotStart) {
  ProcessRunner run;
  RunSpec s;
  s.argv = {"/nonexistent/ssh"};
  RunResult r = run.Run(s);
  EXPECT_EQ(r.end, RunResult::End::kSpawnFailed);
  EXPECT_FALSE(r.why_spawn.empty());
}

TEST(Runner, ReportsASignal) {
  ProcessRunner run;
  RunResult r = run.Run(Sh("kill -TERM $$"));
  EXPECT_EQ(r.end, RunResult::End::kSignaled);
  EXPECT_EQ(r.code, SIGTERM);
}

TEST(Runner, EnvironmentWithReplacesByName) {
  setenv("BK_RUNNER_TEST", "old", 1);
  std::vector<std::string> env = EnvironmentWith({"BK_RUNNER_TEST=new"});
  int seen = 0;
  for (const auto& e : env)
    if (e.rfind("BK_RUNNER_TEST=", 0) == 0) {
      ++seen;
      EXPECT_EQ(e, "BK_RUNNER_TEST=new");
    }
  EXPECT_EQ(seen, 1);
  unsetenv("BK_RUNNER_TEST");
}

}  // namespace
}  // namespace bk::cluster
