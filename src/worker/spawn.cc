#include "worker/spawn.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/strings.h"

extern char** environ;

namespace bk::worker {
namespace {

bool Executable(const std::string& file) {
  struct stat st {};
  return stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(file.c_str(), X_OK) == 0;
}

std::string Absolute(const std::string& p, const std::string& cwd) { return p[0] == '/' ? p : cwd + "/" + p; }

// Only async-signal-safe calls between fork and exec: the worker has threads.
[[noreturn]] void Child(const SpawnOptions& o, const char* file, char* const* argv, char* const* envp,
                        int report) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &dfl, nullptr);  // SIG_IGN would survive exec
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  setsid();
  int err = 0;
  if (chdir(o.cwd.c_str()) != 0) err = errno;
  if (!err && o.output_fd >= 0) {
    int null = open("/dev/null", O_RDONLY);
    if (null < 0 || dup2(null, 0) < 0 || dup2(o.output_fd, 1) < 0 || dup2(o.output_fd, 2) < 0) err = errno;
  }
  if (!err) {
    // Everything above stdio closes at exec; the report pipe then too, so an
    // exec failure can still be written to it.
    bool marked = false;
#ifdef SYS_close_range
    marked = syscall(SYS_close_range, 3u, ~0u, 4u /* CLOSE_RANGE_CLOEXEC */) == 0;
#endif
    if (!marked) {
      struct rlimit rl {};
      int max =
          getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? static_cast<int>(rl.rlim_cur) : 65536;
      for (int fd = 3; fd < max; ++fd)
        if (fd != report) close(fd);
    }
    execve(file, argv, envp);
    err = errno;
  }
  ssize_t ignored = write(report, &err, sizeof(err));
  (void)ignored;
  _exit(127);
}

}  // namespace

Result<std::string> ResolveExecutable(const std::string& argv0, const std::string& path,
                                      const std::string& cwd) {
  if (argv0.find('/') != std::string::npos) {
    std::string file = Absolute(argv0, cwd);
    if (Executable(file)) return file;
    return Fail(access(file.c_str(), F_OK) == 0 ? ErrorKind::kPermission : ErrorKind::kNotFound,
                fmt::format("{} is not an executable file", file));
  }
  bool seen = false;
  for (const auto& dir : Split(path, ':')) {
    std::string base = dir.empty() ? cwd : Absolute(dir, cwd);
    std::string file = base + "/" + argv0;
    if (Executable(file)) return file;
    seen = seen || access(file.c_str(), F_OK) == 0;
  }
  return Fail(seen ? ErrorKind::kPermission : ErrorKind::kNotFound,
              fmt::format("{} was not found in PATH={}", argv0, path));
}

std::vector<std::string> MergeEnvironment(const std::map<std::string, std::string>& overlay) {
  std::vector<std::string> out;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos || overlay.count(kv.substr(0, eq))) continue;
    out.push_back(kv);
  }
  for (const auto& [k, v] : overlay) out.push_back(k + "=" + v);
  return out;
}

Result<pid_t> Spawn(const SpawnOptions& o) {
  if (o.argv.empty()) return Invalid("empty command");
  BK_ASSIGN_OR_RETURN(std::string file, ResolveExecutable(o.argv[0], o.path, o.cwd));
  std::vector<char*> argv, envp;
  for (const auto& a : o.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : o.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0)
    return Fail(ErrorKind::kIo, fmt::format("pipe: {}", std::strerror(errno)));
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(pipefd[0]);
    close(pipefd[1]);
    return Fail(ErrorKind::kIo, fmt::format("cannot start the command: {}", std::strerror(e)));
  }
  if (pid == 0) {
    close(pipefd[0]);
    Child(o, file.c_str(), argv.data(), envp.data(), pipefd[1]);
  }
  close(pipefd[1]);
  int err = 0;
  ssize_t n;
  do n = read(pipefd[0], &err, sizeof(err));
  while (n < 0 && errno == EINTR);
  close(pipefd[0]);
  if (n == static_cast<ssize_t>(sizeof(err)) && err != 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    ErrorKind kind = err == ENOENT || err == ENOTDIR ? ErrorKind::kNotFound
                     : err == EACCES || err == EPERM ? ErrorKind::kPermission
                                                     : ErrorKind::kIo;
    return Fail(kind, fmt::format("cannot start {} in {}: {}", file, o.cwd, std::strerror(err)));
  }
  return pid;
}

}  // namespace bk::worker
