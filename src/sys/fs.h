#pragma once
// File-system access for data files: tight modes, no symlinks followed, no
// foreign owners. Every managed path goes through here.

#include <sys/stat.h>
#include <sys/types.h>

#include <optional>
#include <string>

#include "base/result.h"
#include "sys/file_system.h"
#include "sys/unique_fd.h"

namespace bk::sys {

bool Exists(const std::string& path);  // lstat succeeds
// Like dirname(1): "/a/b" -> "/a", "/a" -> "/", "a" -> ".", "a/b/" -> "a".
std::string Dirname(const std::string& path);
// Last component: "/a/b/" -> "b".
std::string Basename(const std::string& path);
// dir + "/" + name (no doubled slash; either may be empty).
std::string JoinPath(const std::string& dir, const std::string& name);

// Creates `dir` (and missing parents) with exactly `mode` whatever the umask,
// refusing symlinks (the directory itself, or the deepest existing component
// when creating below it). Existing parents are never changed. An existing
// directory must be a real directory owned by `owner`, and not writable by
// group or others unless `mode` itself grants that write bit (shared setups).
// Parents created before a failure stay, empty.
Status EnsurePrivateDir(FileSystem& fs, const std::string& dir, mode_t mode, uid_t owner);
// The same on the real file system.
Status EnsurePrivateDir(const std::string& dir, mode_t mode, uid_t owner);

// Checks an existing directory without creating it: real directory (not a
// symlink), owned by `owner`, not group/other-writable.
Status CheckPrivateDir(const std::string& dir, uid_t owner);

// Checks an existing data file: regular, not a symlink, one hard link, owned by
// `owner`, no group/other write bits. The message names the path and the fix.
Status CheckDataFile(const std::string& path, uid_t owner);

// Creates an empty file with exactly `mode` (O_EXCL|O_NOFOLLOW); ok when it
// already exists and passes CheckDataFile.
Status CreateDataFile(const std::string& path, mode_t mode, uid_t owner);

// Reads a whole regular file (no symlink), at most max_bytes.
Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes);
// ReadSmallFile in two steps, with the same errors: open and check the file
// (to read it elsewhere: another thread, another process), then read what is
// left of it.
Result<UniqueFd> OpenSmallFile(const std::string& path, size_t max_bytes);
Result<std::string> ReadOpenFile(int fd, const std::string& path, size_t max_bytes);

// Writes atomically: temp file with `mode` in the same directory, fsync,
// rename, fsync of the directory; on failure the temp file is gone and the
// old file untouched.
Status WriteFileAtomic(FileSystem& fs, const std::string& path, const std::string& data, mode_t mode);
// The same on the real file system.
Status WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode);

}  // namespace bk::sys
