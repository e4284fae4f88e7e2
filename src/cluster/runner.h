#pragma once
// Runs one child (ssh to a GPU host, or this bk for the local host) with
// every bound a remote end could break: no stdin, its own session and process
// group, no inherited descriptors, a deadline, a cap on what it may print and
// only the tail of its errors kept. Whatever the child leaves behind in its
// group is killed and reaped before Run returns, so a hung host costs a
// timeout, never a process or a thread.

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

namespace bk::cluster {

inline constexpr size_t kMaxReplyBytes = size_t{8} << 20;  // a host's whole JSON reply
inline constexpr size_t kStderrTailBytes = size_t{64} << 10;

struct RunSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH when it has no '/'
  std::vector<std::string> env;   // the whole environment, "NAME=value"
  double timeout_seconds = 8;
  size_t stdout_cap = kMaxReplyBytes;
  size_t stderr_tail = kStderrTailBytes;
  // Checked at least every 100 ms; set ends the child as "cancelled".
  const std::atomic<bool>* cancel = nullptr;
};

struct RunResult {
  enum class End { kExited, kSignaled, kTimedOut, kOverflow, kCancelled, kSpawnFailed };
  End end = End::kSpawnFailed;
  int code = -1;          // the exit status (kExited) or the signal (kSignaled)
  std::string out;        // stdout, at most stdout_cap bytes
  std::string err;        // the last stderr_tail bytes of stderr
  std::string why_spawn;  // kSpawnFailed: the system's reason
};

// The seam tests replace: production runs processes, a fake answers from a table.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual RunResult Run(const RunSpec& spec) = 0;
};

class ProcessRunner final : public Runner {
 public:
  RunResult Run(const RunSpec& spec) override;
};

// This process's environment as "NAME=value" strings, with `extra` added
// (an entry of the same name replaced).
std::vector<std::string> EnvironmentWith(const std::vector<std::string>& extra);

}  // namespace bk::cluster
