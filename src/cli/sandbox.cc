#include "cli/sandbox.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sys/file_system.h"

extern char** environ;

namespace bk::cli {
namespace {

// Subdirectories the sandbox's bk is pointed at (see Environment).
constexpr const char* kDirs[] = {"home", "config", "state", "share", "cache", "run"};

// Idle GPUs of 80 GiB each, in the format of BK_GPU_SIM_FILE.
std::string SimulationJson(int gpus) {
  std::string list;
  for (int i = 0; i < gpus; ++i)
    list += fmt::format(R"({}{{"index": {}, "name": "simulated GPU", "memory_total_mb": 81920}})",
                        i ? ", " : "", i);
  return fmt::format(R"({{"gpus": [{}]}})", list) + "\n";
}

std::string Errno(int err) { return std::strerror(err); }

// Names that could point a bk at another ledger, configuration or GPU set.
bool Foreign(const std::string& name) {
  static const char* const kNames[] = {
      "HOME",           "XDG_CONFIG_HOME", "XDG_DATA_HOME",       "XDG_STATE_HOME",
      "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "CUDA_VISIBLE_DEVICES"};
  if (name.starts_with("BK_") || name.starts_with("GPUBK_")) return true;
  for (const char* n : kNames)
    if (name == n) return true;
  return false;
}

}  // namespace

Result<std::unique_ptr<Sandbox>> Sandbox::Create(const std::string& parent, int gpus) {
  std::string pattern = parent + "/bk-tutorial-XXXXXX";
  if (!mkdtemp(pattern.data()))
    return Fail(ErrorKind::kIo, fmt::format("cannot create a sandbox in {}: {}", parent, Errno(errno)));
  std::unique_ptr<Sandbox> box(new Sandbox(pattern));
  sys::FileSystem& fs = sys::RealFileSystem();
  for (const char* d : kDirs)
    if (auto made = fs.MakeDir(box->dir_ + "/" + d, 0700); !made)
      return Fail(ErrorKind::kIo, fmt::format("cannot create {}/{}: {}", box->dir_, d, Errno(made.error())));
  if (auto written = fs.WriteNewFile(box->dir_ + "/gpus.json", SimulationJson(gpus), 0600); !written)
    return Fail(ErrorKind::kIo,
                fmt::format("cannot write {}/gpus.json: {}", box->dir_, Errno(written.error())));
  return box;
}

Sandbox::~Sandbox() {
  if (!removed_) (void)Remove();
}

std::vector<std::string> Sandbox::Environment(const std::vector<std::string>& base) const {
  std::vector<std::string> env;
  for (const auto& kv : base)
    if (!Foreign(kv.substr(0, kv.find('=')))) env.push_back(kv);
  for (const auto& [name, sub] : {std::pair{"HOME", "home"},
                                  {"XDG_CONFIG_HOME", "config"},
                                  {"XDG_STATE_HOME", "state"},
                                  {"XDG_DATA_HOME", "share"},
                                  {"XDG_CACHE_HOME", "cache"},
                                  {"XDG_RUNTIME_DIR", "run"},
                                  {"BK_DATA_DIR", "data"},
                                  {"BK_GPU_SIM_FILE", "gpus.json"}})
    env.push_back(fmt::format("{}={}/{}", name, dir_, sub));
  return env;
}

Status Sandbox::Remove() {
  removed_ = true;
  if (auto gone = sys::RealFileSystem().RemoveTree(dir_); !gone)
    return Fail(ErrorKind::kIo, fmt::format("cannot remove the sandbox {}: {}", dir_, Errno(gone.error())));
  return Ok();
}

std::string TempParent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && tmp[0] == '/' ? tmp : "/tmp";
}

std::vector<std::string> ProcessEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return env;
}

Result<int> RunAttached(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (int err = posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), envp.data()); err != 0)
    return Fail(ErrorKind::kIo, fmt::format("cannot start {}: {}", argv[0], Errno(err)));
  int status = 0;
  // A signal that interrupts the wait (Ctrl-C reaches the child too) does not
  // end it: the child's status is what is reported.
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return Fail(ErrorKind::kIo, fmt::format("waiting for {}: {}", argv[0], Errno(errno)));
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace bk::cli
