#pragma once
// Single-instance lock files: a non-blocking flock held for the holder's life,
// the file naming the holder's pid for whoever finds the lock taken.

#include <functional>
#include <string>

#include "base/result.h"

namespace bk::sys {

// Takes the exclusive lock on `fd`, the open lock file at `path`, and writes
// this process's pid into it. When another process holds the lock: kBusy
// with the message busy(pid), pid as the holder wrote it ("?" when the file
// says nothing). `fd` is closed on every failure and kept open on success.
Status LockNamingPid(int fd, const std::string& path,
                     const std::function<std::string(const std::string& pid)>& busy);

}  // namespace bk::sys
