#pragma once
// A throwaway private deployment for `bk tutorial`: a temporary directory
// holding its own data directory, simulated GPUs and XDG directories. A bk
// started with Environment() books there and nowhere else: no setting of the
// user's (BK_*, a remembered server, a system install) reaches it, since a
// data directory outranks them all.

#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

namespace bk::cli {

class Sandbox {
 public:
  // A new directory bk-tutorial-XXXXXX under `parent` with `gpus` idle
  // simulated GPUs; on failure nothing is left behind.
  static Result<std::unique_ptr<Sandbox>> Create(const std::string& parent, int gpus);
  ~Sandbox();  // removes the directory if Remove() has not
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;

  const std::string& dir() const { return dir_; }
  // `base` (KEY=VALUE, as environ) less every BK_* and GPUBK_* setting, HOME,
  // the XDG directories and CUDA_VISIBLE_DEVICES, plus the sandbox's own.
  std::vector<std::string> Environment(const std::vector<std::string>& base) const;
  // Removes the directory and everything bk wrote into it.
  Status Remove();

 private:
  explicit Sandbox(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
  bool removed_ = false;
};

// $TMPDIR when it is an absolute path, else /tmp.
std::string TempParent();
// This process's environment as KEY=VALUE strings.
std::vector<std::string> ProcessEnvironment();

// Runs `argv` (argv[0] a path) with `env` on this process's stdin, stdout and
// stderr and in its process group, so that it reads the terminal and Ctrl-C
// reaches it too. Returns its exit status, 128+N when signal N ended it.
Result<int> RunAttached(const std::vector<std::string>& argv, const std::vector<std::string>& env);

}  // namespace bk::cli
