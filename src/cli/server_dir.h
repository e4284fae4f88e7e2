#pragma once
// The directory `bk server init` creates: DIR (new, or existing and empty),
// DIR/run for the socket, DIR/data for the ledger and DIR/config.json. All of
// it or none: a step that fails removes what the earlier ones created.

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

#include "base/result.h"
#include "config/config.h"
#include "sys/file_system.h"

namespace bk::cli {

// The policy and access options `bk server init` and `bk admin install`
// share, as given on the command line.
struct SpecOptions {
  std::optional<std::string> gpus, cpus, ram, access, group;
};
// Fill spec's GPU count (`default_gpus` without --gpu-count) and host
// budgets, then its access and group (name and GID), from `o`; one line
// naming a bad value. Whether the right account is in the group is the
// caller's check.
Status ApplyPolicyOptions(const SpecOptions& o, int default_gpus, config::ServerSpec& spec);
Status ApplyAccessOptions(const SpecOptions& o, config::ServerSpec& spec);

// A whole-number option between lo and hi (`def` when absent), the error naming it.
Result<int64_t> PositiveInt(const std::optional<std::string>& text, const char* name, int64_t lo, int64_t hi,
                            int64_t def);

// Refuses a DIR that exists and is a symlink, not a directory, someone
// else's or not empty.
Status CheckServerDirectory(sys::FileSystem& fs, const std::string& dir, uid_t me);

// Creates spec.directory's tree with spec's modes and group, writes
// config.json atomically, then calls `fill` (which creates the ledger in
// DIR/data). On failure, the error is the failed step's, and what this call
// created is removed again; the message names anything that could not be.
Status CreateServerDirectory(sys::FileSystem& fs, const config::ServerSpec& spec,
                             const std::function<Status()>& fill);

}  // namespace bk::cli
