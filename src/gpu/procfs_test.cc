#include "gpu/procfs.h"

#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "gpu/nvml_fake_test.h"
#include "gpu/nvml_source.h"
#include "sys/users.h"

namespace bk::gpu {
namespace {

const std::string kHex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// ---- parsing ------------------------------------------------------------------

TEST(ParseStartTime, ReadsField22AfterTheLastParen) {
  EXPECT_EQ(ParseStartTime("42 (sleep) S 1 42 42 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 1 0 987654 1000 100"),
            987654u);
  // A command name with spaces and parens must not shift the fields.
  EXPECT_EQ(
      ParseStartTime("42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 1 0 31337 1000 100\n"),
      31337u);
  EXPECT_FALSE(ParseStartTime("42 (x) S 1 2 3").has_value());
  EXPECT_FALSE(ParseStartTime("no paren at all").has_value());
  EXPECT_FALSE(ParseStartTime("1 (x) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 -5 0 0").has_value());
}

TEST(ParseContainer, RecognisesTheRuntimes) {
  auto docker = ParseContainer("0::/system.slice/docker-" + kHex64 + ".scope\n");
  ASSERT_TRUE(docker);
  EXPECT_EQ(docker->runtime, "docker");
  EXPECT_EQ(docker->id, kHex64);

  auto v1 = ParseContainer("12:memory:/docker/" + kHex64 + "\n11:cpu:/docker/" + kHex64 + "\n");
  ASSERT_TRUE(v1);
  EXPECT_EQ(v1->runtime, "docker");

  auto containerd = ParseContainer(
      "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/cri-containerd-" +
      kHex64 + ".scope\n");
  ASSERT_TRUE(containerd);
  EXPECT_EQ(containerd->runtime, "containerd");

  auto podman = ParseContainer("0::/machine.slice/libpod-ABCDEF0123456789.scope/container\n");
  ASSERT_TRUE(podman);
  EXPECT_EQ(podman->runtime, "podman");
  EXPECT_EQ(podman->id, "abcdef0123456789");  // lower-cased

  auto kube = ParseContainer("0::/kubepods/burstable/pod0b1e-77/" + kHex64 + "\n");
  ASSERT_TRUE(kube);
  EXPECT_EQ(kube->runtime, "containerd");
  EXPECT_EQ(kube->id, kHex64);
}

TEST(ParseContainer, IgnoresHostsAndLookalikes) {
  EXPECT_FALSE(ParseContainer("0::/user.slice/user-1000.slice/session-2.scope\n"));
  EXPECT_FALSE(ParseContainer("0::/system.slice/docker.service\n"));
  EXPECT_FALSE(ParseContainer("0::/system.slice/docker-abc.scope\n"));  // id too short
  EXPECT_FALSE(ParseContainer("0::/machine.slice/libpod-conmon-" + kHex64 + ".scope\n"));
  EXPECT_FALSE(ParseContainer("4:memory:/process_api/a29fc4ef00e6fc400064f458dfc530ff\n0::/\n"));
  EXPECT_FALSE(ParseContainer("0::/system.slice/" + kHex64 + "\n"));  // 64 hex outside kubepods
  EXPECT_FALSE(ParseContainer(""));
}

TEST(CommandFromCmdline, JoinsArgumentsAndRepairsUtf8) {
  EXPECT_EQ(CommandFromCmdline(std::string("python\0-m\0torch.distributed.run\0", 33)),
            "python -m torch.distributed.run");
  EXPECT_EQ(CommandFromCmdline("caf\xc3\xa9"), "caf\xc3\xa9");
  EXPECT_EQ(CommandFromCmdline("bad\xff"
                               "byte"),
            "bad\xef\xbf\xbd"
            "byte");
  EXPECT_EQ(CommandFromCmdline("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");  // overlong '/'
  EXPECT_EQ(CommandFromCmdline(std::string(5000, 'x')).size(), 4096u);
}

// ---- identities through a fake /proc ----------------------------------------------

class IdentityTest : public ::testing::Test {
 protected:
  IdentityTest()
      : ids_(&proc_, [this](uid_t u) {
          ++name_lookups_;
          return u == 1001 ? std::string("alice") : std::to_string(u);
        }) {}
  FakeProcReader proc_;
  int name_lookups_ = 0;
  ProcIdentities ids_;
  int64_t now_ = 1'000'000'000;
};

TEST_F(IdentityTest, ResolvesUidNameCommandTokenAndContainer) {
  proc_.Add(10, 1001, std::string("python\0a.py\0", 12), 777,
            "0::/system.slice/docker-" + kHex64 + ".scope\n");
  const HostIdentity& id = ids_.Resolve(10, now_);
  EXPECT_EQ(id.uid, 1001u);
  EXPECT_EQ(id.username, "alice");
  EXPECT_EQ(id.command, "python a.py");
  EXPECT_EQ(id.start_token, "777");
  ASSERT_TRUE(id.container);
  EXPECT_EQ(id.container->runtime, "docker");
}

TEST_F(IdentityTest, MissingPidIsUnknown) {
  const HostIdentity& id = ids_.Resolve(99, now_);
  EXPECT_FALSE(id.uid.has_value());
  EXPECT_EQ(id.username, "?");
  EXPECT_EQ(id.start_token, "");
  EXPECT_FALSE(ids_.Resolve(0, now_).uid.has_value());
  EXPECT_FALSE(ids_.Resolve(-1, now_).uid.has_value());
}

TEST_F(IdentityTest, UnreadableFilesKeepTheUid) {
  proc_.Add(11, 1001, "x", 1);
  proc_.procs[11].files.clear();  // hidepid-like: the directory is visible, its files are not
  const HostIdentity& id = ids_.Resolve(11, now_);
  EXPECT_EQ(id.uid, 1001u);
  EXPECT_EQ(id.command, "");
  EXPECT_EQ(id.start_token, "100011:10000000");  // ino:ctime_ns fallback
  EXPECT_FALSE(id.container);
}

TEST_F(IdentityTest, EmptyCmdlineFallsBackToComm) {
  proc_.Add(12, 0, "", 1);
  proc_.procs[12].files["comm"] = "kworker/0:1\n";
  EXPECT_EQ(ids_.Resolve(12, now_).command, "kworker/0:1");
}

TEST_F(IdentityTest, CacheCostsOneStatPerSampleAndRefreshesCommandAfterTtl) {
  proc_.Add(10, 1001, "old", 777);
  ids_.Resolve(10, now_);
  const int reads = proc_.read_calls;
  const int stats = proc_.stat_calls;
  ids_.NextSample();
  ids_.Resolve(10, now_ + 1'000'000'000);
  ids_.Resolve(10, now_ + 1'000'000'000);  // same sample: no second stat
  EXPECT_EQ(proc_.read_calls, reads);
  EXPECT_EQ(proc_.stat_calls, stats + 1);

  proc_.procs[10].files["cmdline"] = "new";  // exec: same process, new command
  ids_.NextSample();
  const HostIdentity& id = ids_.Resolve(10, now_ + ProcIdentities::kTtlNs);
  EXPECT_EQ(id.command, "new");
  EXPECT_EQ(proc_.read_calls, reads + 1);  // only cmdline
  EXPECT_EQ(id.start_token, "777");
  EXPECT_EQ(name_lookups_, 1);
}

TEST_F(IdentityTest, PidReuseIsDetectedByTheInode) {
  proc_.Add(10, 1001, "first", 777);
  EXPECT_EQ(ids_.Resolve(10, now_).start_token, "777");
  proc_.Add(10, 1002, "second", 888);
  proc_.procs[10].stat.ino += 1;  // a new /proc/10 directory
  ids_.NextSample();
  const HostIdentity& id = ids_.Resolve(10, now_ + 1);
  EXPECT_EQ(id.start_token, "888");
  EXPECT_EQ(id.uid, 1002u);
  EXPECT_EQ(id.command, "second");
  proc_.procs.erase(10);
  ids_.NextSample();
  EXPECT_FALSE(ids_.Resolve(10, now_ + 2).uid.has_value());
  EXPECT_EQ(ids_.size(), 0u);
}

TEST_F(IdentityTest, CacheIsBounded) {
  for (int pid = 1; pid <= static_cast<int>(ProcIdentities::kMaxEntries) + 50; ++pid) {
    proc_.Add(pid, 1001, "w", pid);
    ids_.Resolve(pid, now_ + pid);
  }
  EXPECT_LE(ids_.size(), ProcIdentities::kMaxEntries);
  EXPECT_EQ(ids_.Resolve(static_cast<int>(ProcIdentities::kMaxEntries) + 50, now_).uid, 1001u);
}

// ---- container attribution ----------------------------------------------------------

ProcessSample RootContainerProcess(int pid) {
  ProcessSample p;
  p.pid = pid;
  p.uid = 0;
  p.host_uid = 0;
  p.username = "root";
  p.container_runtime = "docker";
  p.container_id = kHex64;
  return p;
}

TEST(Attribute, SingleBookingHolderOwnsARootContainerProcess) {
  std::vector<ProcessSample> ps = {RootContainerProcess(1)};
  std::vector<GpuBooking> b = {{1001, "alice", "r1"}, {1001, "alice", "r2"}, {0, "root", "r3"}};
  Attribute(ps, b);
  EXPECT_EQ(ps[0].uid, 1001u);
  EXPECT_EQ(ps[0].username, "alice");
  EXPECT_EQ(ps[0].host_uid, 0u);
  EXPECT_EQ(ps[0].identity_source, "container-reservation");
  Attribute(ps, b);  // idempotent
  EXPECT_EQ(ps[0].uid, 1001u);
}

TEST(Attribute, SeveralHoldersMakeItAmbiguous) {
  std::vector<ProcessSample> ps = {RootContainerProcess(1)};
  std::vector<GpuBooking> b = {{1001, "alice", "r1"}, {1002, "bob", "r2"}};
  Attribute(ps, b);
  EXPECT_EQ(ps[0].uid, 0u);
  EXPECT_EQ(ps[0].identity_source, "container-ambiguous");
}

TEST(Attribute, EligibilityNarrowsTheCandidates) {
  std::vector<ProcessSample> ps = {RootContainerProcess(1)};
  std::vector<GpuBooking> b = {{1001, "alice", "r1"}, {1002, "bob", "r2"}};
  Attribute(ps, b, [](uid_t u, const std::string& runtime) { return u == 1002 && runtime == "docker"; });
  EXPECT_EQ(ps[0].uid, 1002u);
  EXPECT_EQ(ps[0].identity_source, "container-reservation");
  std::vector<ProcessSample> none = {RootContainerProcess(1)};
  Attribute(none, b, [](uid_t, const std::string&) { return false; });
  EXPECT_EQ(none[0].identity_source, "host");
  EXPECT_EQ(none[0].uid, 0u);
}

TEST(Attribute, LeavesEverythingElseAlone) {
  ProcessSample host_root = RootContainerProcess(1);
  host_root.container_runtime.clear();
  host_root.container_id.clear();
  ProcessSample rootless = RootContainerProcess(2);
  rootless.uid = 1003;
  rootless.host_uid = 1003;
  ProcessSample unknown;
  unknown.pid = 3;
  std::vector<ProcessSample> ps = {host_root, rootless, unknown};
  std::vector<GpuBooking> b = {{1001, "alice", "r1"}};
  Attribute(ps, b);
  EXPECT_EQ(ps[0].uid, 0u);
  EXPECT_EQ(ps[0].identity_source, "host");
  EXPECT_EQ(ps[1].uid, 1003u);
  EXPECT_EQ(ps[1].identity_source, "host");
  EXPECT_FALSE(ps[2].uid.has_value());
  std::vector<ProcessSample> nobody = {RootContainerProcess(1)};
  Attribute(nobody, {});
  EXPECT_EQ(nobody[0].identity_source, "host");
}

// ---- real processes of real users -----------------------------------------------------

// Creates a system user if missing (CI runs these tests as root).
std::optional<std::pair<uid_t, gid_t>> EnsureUser(const std::string& name) {
  auto lookup = [&]() -> std::optional<std::pair<uid_t, gid_t>> {
    std::vector<char> buf(16384);
    passwd pw{};
    passwd* out = nullptr;
    if (getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &out) != 0 || out == nullptr)
      return std::nullopt;
    return std::make_pair(pw.pw_uid, pw.pw_gid);
  };
  if (auto u = lookup()) return u;
  std::string cmd =
      "useradd --system --no-create-home --user-group --shell /usr/sbin/nologin " + name + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) return std::nullopt;
  return lookup();
}

// `sleep 300` running as uid:gid; returns once exec has happened, so /proc
// shows the new credentials and command.
pid_t SpawnAs(uid_t uid, gid_t gid) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setgid(gid) != 0 || setuid(uid) != 0) _exit(127);
    // Die with the test binary even if it crashes (set after setuid, which
    // clears it), and keep the test's output pipe free.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int null = open("/dev/null", O_RDWR);
    dup2(null, 1);
    dup2(null, 2);
    execl("/bin/sleep", "sleep", "300", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  char c;
  while (read(fds[0], &c, 1) < 0 && errno == EINTR) {
  }
  close(fds[0]);
  return pid;
}

class RealUsersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root to run processes as other users";
    auto a = EnsureUser("bkattr1");
    auto b = EnsureUser("bkattr2");
    if (!a || !b) GTEST_SKIP() << "could not create users bkattr1/bkattr2 (useradd)";
    users_ = {*a, *b};
    for (auto [uid, gid] : users_) {
      pid_t pid = SpawnAs(uid, gid);
      ASSERT_GT(pid, 0);
      children_.push_back(pid);
    }
  }
  void TearDown() override {
    for (pid_t pid : children_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  std::vector<std::pair<uid_t, gid_t>> users_;
  std::vector<pid_t> children_;
};

TEST_F(RealUsersTest, ProcAttributesEachChildToItsUser) {
  RealProcReader reader;
  ProcIdentities ids(&reader);
  const std::optional<ContainerRef> ours =
      ParseContainer(reader.Read(getpid(), "cgroup", 65536).value_or(""));
  std::string tokens[2];
  for (int i = 0; i < 2; ++i) {
    const HostIdentity& id = ids.Resolve(children_[i], 1);
    EXPECT_EQ(id.uid, users_[i].first);
    EXPECT_EQ(id.username, i == 0 ? "bkattr1" : "bkattr2");
    EXPECT_EQ(id.command, "sleep 300");
    auto stat = reader.Read(children_[i], "stat", 4096);
    ASSERT_TRUE(stat);
    EXPECT_EQ(id.start_token, std::to_string(ParseStartTime(*stat).value()));
    EXPECT_EQ(id.container.has_value(), ours.has_value());  // children share our cgroup
    tokens[i] = id.start_token;
  }
  // Our own process, for comparison.
  EXPECT_EQ(ids.Resolve(getpid(), 1).uid, geteuid());

  kill(children_[0], SIGKILL);
  waitpid(children_[0], nullptr, 0);
  ids.NextSample();
  EXPECT_FALSE(ids.Resolve(children_[0], 2).uid.has_value());
  children_.erase(children_.begin());
}

TEST_F(RealUsersTest, NvmlProcessesOfRealUsersAreAttributed) {
  fake::Nvml nvml;
  nvml.gpus.resize(1);
  nvml.gpus[0].compute = {{static_cast<unsigned>(children_[0]), 300ULL << 20},
                          {static_cast<unsigned>(children_[1]), 200ULL << 20}};
  fake::g = &nvml;
  NvmlOptions o;
  o.load = fake::Loader(fake::Api());
  Snapshot s;
  {
    NvmlSource src(o);  // real /proc, real passwd
    s = src.Sample(1);
  }
  fake::g = nullptr;
  ASSERT_TRUE(s.ok()) << s.error;
  const auto& ps = s.devices[0].processes;
  ASSERT_EQ(ps.size(), 2u);
  for (const auto& p : ps) {
    int i = p.pid == children_[0] ? 0 : 1;
    EXPECT_EQ(p.pid, children_[i]);
    EXPECT_EQ(p.uid, users_[i].first);
    EXPECT_EQ(p.username, i == 0 ? "bkattr1" : "bkattr2");
    EXPECT_EQ(p.command, "sleep 300");
    EXPECT_FALSE(p.host_start_id.empty());
  }
}

}  // namespace
}  // namespace bk::gpu
