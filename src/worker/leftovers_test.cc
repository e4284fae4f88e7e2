// Real processes: what a command leaves behind under its booking's marker is
// stopped, SIGTERM first and SIGKILL after the grace for what ignores it.

#include "worker/leftovers.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "worker/procs.h"
#include "worker/procs_testing.h"
#include "worker/spawn.h"

namespace bk::worker {
namespace {

using std::chrono::milliseconds;

void ReapAll() {
  int st;
  while (waitpid(-1, &st, WNOHANG) > 0) {
  }
}

// Steps the sweep as a supervisor's loop does; how long until it was done.
milliseconds Sweep(LeftoverSweep& sweep) {
  auto t0 = std::chrono::steady_clock::now();
  while (!sweep.Step() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    ReapAll();
    std::this_thread::sleep_for(milliseconds(20));
  }
  return std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
}

class LeftoverSweepTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0); }
  void TearDown() override {
    for (const auto& [pgid, pid] : FindMarkedGroups(id_, getuid(), getpgrp()))
      SignalGroup(pgid, SIGKILL, getuid());
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    ReapAll();
  }
  // Waits until the command itself has exited and left `want` marked groups:
  // at most 10 s, since on a loaded machine starting the shells alone can
  // take seconds.
  void WaitLeft(pid_t pid, size_t want) {
    int st;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    for (int i = 0; i < 500 && FindMarkedDescendants(id_, getuid(), getpid()).size() != want; ++i)
      std::this_thread::sleep_for(milliseconds(20));
    ASSERT_EQ(FindMarkedDescendants(id_, getuid(), getpid()).size(), want);
  }
  std::string id_ = "3f1e0c7a-3333-4000-8000-00000000abcd";
};

TEST_F(LeftoverSweepTest, NothingLeftIsDoneAtOnce) {
  pid_t pid = StartMarked(id_, "exit 0");
  WaitLeft(pid, 0);
  LeftoverSweep sweep(id_, getuid(), milliseconds(5000));
  EXPECT_TRUE(sweep.Step());
  EXPECT_FALSE(sweep.stuck());
  LeftoverSweep unmarked("", getuid(), milliseconds(5000));
  EXPECT_TRUE(unmarked.Step());
}

TEST_F(LeftoverSweepTest, TermStopsWhatLeftTheGroup) {
  pid_t pid = StartMarked(id_, "setsid sleep 30 & setsid sleep 30 & exit 0");
  WaitLeft(pid, 2);
  LeftoverSweep sweep(id_, getuid(), milliseconds(5000));
  EXPECT_LT(Sweep(sweep), milliseconds(4000));  // SIGTERM was enough
  EXPECT_FALSE(sweep.stuck());
  EXPECT_TRUE(FindMarkedGroups(id_, getuid(), getpgrp()).empty());
}

TEST_F(LeftoverSweepTest, KillAfterTheGraceForWhatIgnoresTerm) {
  // It says when its trap is set: a SIGTERM before that would simply end it.
  std::string ready = ::testing::TempDir() + "bk-leftover-ready-" + std::to_string(getpid());
  unlink(ready.c_str());
  pid_t pid = StartMarked(
      id_, "setsid sh -c 'trap \"\" TERM; : > " + ready + "; while :; do sleep 0.05; done' & exit 0");
  WaitLeft(pid, 1);
  for (int i = 0; i < 500 && access(ready.c_str(), F_OK) != 0; ++i)
    std::this_thread::sleep_for(milliseconds(20));
  ASSERT_EQ(access(ready.c_str(), F_OK), 0);
  unlink(ready.c_str());
  LeftoverSweep sweep(id_, getuid(), milliseconds(300));
  auto took = Sweep(sweep);
  EXPECT_GE(took, milliseconds(300));
  EXPECT_LT(took, milliseconds(3000));
  EXPECT_FALSE(sweep.stuck());
  EXPECT_TRUE(FindMarkedGroups(id_, getuid(), getpgrp()).empty());
}

}  // namespace
}  // namespace bk::worker
