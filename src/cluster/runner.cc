#include "cluster/runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "sys/unique_fd.h"

extern char** environ;

namespace bk::cluster {
namespace {

using Clock = std::chrono::steady_clock;
using sys::UniqueFd;

// posix_spawn, not fork: the fan-out calls this from several threads at once,
// and posix_spawn needs nothing that is unsafe after fork in a threaded process.
class SpawnAttributes {
 public:
  SpawnAttributes() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnAttributes() {
    posix_spawnattr_destroy(&attr_);
    posix_spawn_file_actions_destroy(&actions_);
  }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;

  // Own session (so the whole group can be killed), default signal handling
  // and an empty mask, stdin /dev/null, the two pipes, nothing else open.
  int Prepare(int out_fd, int err_fd) {
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    int rc =
        posix_spawnattr_setflags(&attr_, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr_, &all);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attr_, &none);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions_, out_fd, 1);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions_, err_fd, 2);
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions_, 3);
    return rc;
  }
  const posix_spawnattr_t* attr() const { return &attr_; }
  const posix_spawn_file_actions_t* actions() const { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

bool MakePipe(UniqueFd& read_end, UniqueFd& write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  read_end.Reset(fds[0]);
  write_end.Reset(fds[1]);
  return fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0;
}

// Reads what is there now. False at end of file (or an error).
bool Drain(int fd, std::string& into, size_t cap, bool keep_tail, bool& overflow) {
  char buf[16384];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<size_t>(n));
      if (into.size() > cap) {
        if (keep_tail) {
          into.erase(0, into.size() - cap);
        } else {
          into.resize(cap);
          overflow = true;
          return true;
        }
      }
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    return false;
  }
}

}  // namespace

std::vector<std::string> EnvironmentWith(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    bool replaced = std::any_of(extra.begin(), extra.end(),
                                [&](const std::string& x) { return x.substr(0, x.find('=')) == name; });
    if (!replaced) env.push_back(std::move(entry));
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

RunResult ProcessRunner::Run(const RunSpec& spec) {
  RunResult r;
  if (spec.argv.empty()) {
    r.why_spawn = "nothing to run";
    return r;
  }
  UniqueFd out_r, out_w, err_r, err_w;
  if (!MakePipe(out_r, out_w) || !MakePipe(err_r, err_w)) {
    r.why_spawn = std::strerror(errno);
    return r;
  }
  SpawnAttributes attrs;
  if (int rc = attrs.Prepare(out_w.get(), err_w.get()); rc != 0) {
    r.why_spawn = std::strerror(rc);
    return r;
  }
  std::vector<char*> argv, envp;
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, argv[0], attrs.actions(), attrs.attr(), argv.data(), envp.data());
  out_w.Reset();
  err_w.Reset();
  if (rc != 0) {
    r.why_spawn = std::strerror(rc);
    return r;
  }

  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(std::max(0.0, spec.timeout_seconds)));
  bool out_open = true, err_open = true, overflow = false, exited = false;
  int status = 0;
  r.end = RunResult::End::kExited;
  for (;;) {
    // The child's own exit ends the call: a process it left behind (an
    // OpenSSH connection master, say) may hold the pipes open for minutes.
    // WNOWAIT: the child stays a zombie until its group is killed below, so
    // its PID (the group's ID) cannot be reused by a stranger meanwhile.
    if (!exited) {
      siginfo_t info{};
      exited = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
               info.si_pid == pid;
    }
    if (exited || (!out_open && !err_open)) {
      if (out_open) Drain(out_r.get(), r.out, spec.stdout_cap, false, overflow);
      if (err_open) Drain(err_r.get(), r.err, spec.stderr_tail, true, overflow);
      if (exited) break;
    }
    if (overflow) {
      r.end = RunResult::End::kOverflow;
      break;
    }
    if (spec.cancel && spec.cancel->load()) {
      r.end = RunResult::End::kCancelled;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r.end = RunResult::End::kTimedOut;
      break;
    }
    pollfd fds[2];
    nfds_t n = 0;
    if (out_open) fds[n++] = {out_r.get(), POLLIN, 0};
    if (err_open) fds[n++] = {err_r.get(), POLLIN, 0};
    // Both pipes closed but no exit yet: poll nothing, just wait a slice.
    int wait_ms = static_cast<int>(std::min<long long>(left, (out_open || err_open) ? 100 : 10));
    if (poll(fds, n, wait_ms) < 0 && errno != EINTR) break;
    for (nfds_t i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      bool is_out = fds[i].fd == out_r.get();
      bool open = is_out ? Drain(out_r.get(), r.out, spec.stdout_cap, false, overflow)
                         : Drain(err_r.get(), r.err, spec.stderr_tail, true, overflow);
      (is_out ? out_open : err_open) = open;
    }
  }
  // Whatever is still running in the child's group goes, the child with it.
  kill(-pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (r.end == RunResult::End::kExited) {
    if (WIFSIGNALED(status)) {
      r.end = RunResult::End::kSignaled;
      r.code = WTERMSIG(status);
    } else {
      r.code = WEXITSTATUS(status);
    }
  }
  return r;
}

}  // namespace bk::cluster
