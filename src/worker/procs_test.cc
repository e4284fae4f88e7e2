// Real processes: a child in its own session carrying a marker, found and
// stopped through /proc, never anyone else's.

#include "worker/procs.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "worker/procs_testing.h"
#include "worker/spawn.h"

namespace bk::worker {
namespace {

bool WaitGone(int pgid, int ms) {
  for (int i = 0; i < ms / 20; ++i) {
    int st;
    while (waitpid(-1, &st, WNOHANG) > 0) {
    }
    if (GroupMembers(ListProcesses(), pgid).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(ProcsTest, FindsTheExactMarkerAndStopsTheGroup) {
  std::string id = "3f1e0c7a-1111-4000-8000-00000000abcd";
  pid_t pid = StartMarked(id, "sleep 30 & sleep 30; wait");
  ASSERT_GT(pid, 0);
  pid_t decoy = StartMarked(id + "x", "exec sleep 30");  // a longer value is not the marker
  std::map<int, int> groups;
  for (int i = 0; i < 50 && groups.empty(); ++i) {
    groups = FindMarkedGroups(id, getuid(), getpgrp());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups.begin()->first, pid);   // a new session: PGID == PID
  EXPECT_EQ(groups.begin()->second, pid);  // the lowest PID of the group
  EXPECT_GE(GroupMembers(ListProcesses(), pid).size(), 2u);
  EXPECT_GE(SignalGroup(pid, SIGTERM, getuid()), 2);
  EXPECT_TRUE(WaitGone(pid, 3000));
  EXPECT_TRUE(FindMarkedGroups(id, getuid(), getpgrp()).empty());
  EXPECT_EQ(GroupMembers(ListProcesses(), decoy).size(), 1u);
  SignalGroup(decoy, SIGKILL, getuid());
  EXPECT_TRUE(WaitGone(decoy, 3000));
}

TEST(ProcsTest, NeverSignalsOtherUsersOrItsOwnGroup) {
  pid_t pid = StartMarked("x", "exec sleep 30");
  ASSERT_GT(pid, 0);
  EXPECT_EQ(SignalGroup(pid, SIGKILL, getuid() + 4242), 0);  // not that user's processes
  EXPECT_EQ(GroupMembers(ListProcesses(), pid).size(), 1u);
  EXPECT_EQ(SignalGroup(getpgrp(), 0, getuid()), 0);
  EXPECT_EQ(SignalGroup(1, 0, getuid()), 0);
  EXPECT_EQ(SignalGroup(0, 0, getuid()), 0);
  EXPECT_EQ(SignalGroup(pid, SIGKILL, getuid()), 1);
  EXPECT_TRUE(WaitGone(pid, 3000));
}

// Waits for `want` groups carrying `id` anywhere (an orphan's reparenting
// happens when its parent exits, not at once).
std::map<int, int> WaitMarked(const std::string& id, size_t want) {
  std::map<int, int> groups;
  for (int i = 0; i < 150 && groups.size() != want; ++i) {
    int st;
    while (waitpid(-1, &st, WNOHANG) > 0) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    groups = FindMarkedGroups(id, getuid(), getpgrp());
  }
  return groups;
}

TEST(ProcsTest, DescendantsAreWhatThisProcessStartedOrInherited) {
  std::string id = "3f1e0c7a-2222-4000-8000-00000000abcd";
  pid_t mine = StartMarked(id, "exec sleep 30");
  ASSERT_GT(mine, 0);
  // Its parent exits at once: the escaped sleep goes to init, not to us.
  ASSERT_GT(StartMarked(id, "setsid sleep 30 & exit 0"), 0);
  auto all = WaitMarked(id, 2);
  ASSERT_EQ(all.size(), 2u);
  auto found = FindMarkedDescendants(id, getuid(), getpid());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.begin()->first, mine);
  EXPECT_TRUE(FindMarkedDescendants(id, getuid() + 4242, getpid()).empty());
  // As a subreaper we inherit the next escapee: now it is ours.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  ASSERT_GT(StartMarked(id, "setsid sleep 30 & exit 0"), 0);
  WaitMarked(id, 3);
  for (int i = 0; i < 150 && found.size() != 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    found = FindMarkedDescendants(id, getuid(), getpid());
  }
  prctl(PR_SET_CHILD_SUBREAPER, 0);
  EXPECT_EQ(found.size(), 2u);
  for (const auto& [pgid, pid] : FindMarkedGroups(id, getuid(), getpgrp()))
    SignalGroup(pgid, SIGKILL, getuid());
  EXPECT_TRUE(WaitMarked(id, 0).empty());
}

TEST(SpawnTest, ResolvesThroughTheGivenPathAndReportsExecFailures) {
  EXPECT_TRUE(ResolveExecutable("sh", "/nonexistent:/bin", "/").has_value());
  auto missing = ResolveExecutable("no-such-program-bk", "/bin:/usr/bin", "/");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  SpawnOptions o;
  o.argv = {"sh", "-c", "exit 0"};
  o.cwd = "/no/such/directory";
  o.path = "/bin:/usr/bin";
  auto bad = Spawn(o);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().kind, ErrorKind::kNotFound);
}

TEST(SpawnTest, OutputGoesToThePipeWithTheGivenEnvironment) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  SpawnOptions o;
  o.argv = {"sh", "-c", "echo \"$BK_T:$(ps -o sid= -p $$ | tr -d ' '):$$\"; cat; echo done >&2"};
  o.cwd = "/";
  o.path = "/bin:/usr/bin";
  o.env = {"BK_T=hello", "PATH=/bin:/usr/bin"};
  o.output_fd = fds[1];
  auto pid = Spawn(o);
  close(fds[1]);
  ASSERT_TRUE(pid.has_value());
  std::string out;
  char buf[256];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) out.append(buf, n);
  close(fds[0]);
  int st = 0;
  waitpid(*pid, &st, 0);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  // stdin is /dev/null (cat ends at once); the child leads its own session.
  EXPECT_EQ(out, "hello:" + std::to_string(*pid) + ":" + std::to_string(*pid) + "\ndone\n");
}

}  // namespace
}  // namespace bk::worker
