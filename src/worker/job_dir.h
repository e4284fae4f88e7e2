#pragma once
// The user's private job directory: specs/ with the
// command specs, <reservation>.log(.1) with the logs, the worker leases.
// Directories are 0700 and must belong to the user; files are 0600.

#include <sys/types.h>

#include <string>

#include "base/result.h"

namespace bk::worker {

// Creates (or checks and tightens to 0700) `root` and `root/specs`.
Status EnsureJobDir(const std::string& root, uid_t uid);
// True when `root` exists and is a private directory of `uid` (no changes).
bool JobDirExists(const std::string& root);
// Before a cleanup removes anything: `root` and `root/specs`, where they
// exist, must be real directories of `uid` (never a symbolic link, which
// would lead the cleanup elsewhere) that nobody else can enter. Read-only.
Status CheckJobDir(const std::string& root, uid_t uid);

std::string SpecsDir(const std::string& root);
// <root>/<reservation-id>.log; an ID that is not a plain UUID is hashed so the
// file always lands directly inside root.
std::string LogPath(const std::string& root, const std::string& reservation_id);

}  // namespace bk::worker
