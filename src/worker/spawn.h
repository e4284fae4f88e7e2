#pragma once
// Starting a command without a shell: argv[0] is
// resolved through the submitter's PATH, the child gets a new session (its
// PGID is its PID), default signal handling, only the listed environment, and
// no file descriptor of ours besides its stdio.

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "base/result.h"

namespace bk::worker {

struct SpawnOptions {
  std::vector<std::string> argv;
  std::string cwd;
  std::vector<std::string> env;  // complete, KEY=VALUE
  std::string path;              // PATH that resolves argv[0]
  int output_fd = -1;            // stdout+stderr; stdin becomes /dev/null. -1: inherit all three
};

// argv[0] through `path` (an empty entry is the working directory), relative
// results made absolute against `cwd`. kNotFound / kPermission when absent or
// not executable.
Result<std::string> ResolveExecutable(const std::string& argv0, const std::string& path,
                                      const std::string& cwd);

// This process's environment with `overlay` applied (values replace, never
// duplicate), as KEY=VALUE strings.
std::vector<std::string> MergeEnvironment(const std::map<std::string, std::string>& overlay);

// Forks and execs; returns the child's PID once exec has succeeded. An exec or
// chdir failure is reported as an error (the child is reaped).
Result<pid_t> Spawn(const SpawnOptions& options);

}  // namespace bk::worker
