#pragma once
// Single-instance lock files: a non-blocking flock held for the holder's life,
// the file naming the holder's pid for whoever finds the lock taken.

#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace bk::sys {

// Takes the exclusive lock on `fd`, the open lock file at `path`, and writes
// this process's pid into it. When another process holds the lock: kBusy
// with the message busy(pid), pid as LockHolderPid reads the file. `fd` is
// closed on every failure and kept open on success.
Status LockNamingPid(int fd, const std::string& path,
                     const std::function<std::string(const std::string& pid)>& busy);

// The holder's pid in a lock file's text: a bare number (what this bk
// writes), or the "pid" of a JSON object (what GPUBK 0.2.8 writes, such as
// {"pid": 123, "locked_at": "..."}). "?" when the text names no pid.
std::string LockHolderPid(std::string_view content);

}  // namespace bk::sys
