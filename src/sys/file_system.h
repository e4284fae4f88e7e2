#pragma once
// The file-system calls of code that creates, installs or replaces files and
// trees, behind an interface (as ninja's DiskInterface and LevelDB's Env) so
// that a test can make any one step fail and watch the rollback, without a
// hook in the production code. Failures are errno values: the caller words the
// message (ReadFile alone words its own, as sys::ReadSmallFile does).

#include <sys/stat.h>
#include <sys/types.h>

#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace bk::sys {

template <class T>
using ErrnoResult = std::expected<T, int>;  // the value, or the errno of the failed call

struct FileInfo {
  mode_t mode = 0;  // type and permission bits, as st_mode
  uid_t uid = 0;
  nlink_t nlink = 1;
  bool IsDir() const { return S_ISDIR(mode); }
  bool IsLink() const { return S_ISLNK(mode); }
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // lstat: a symlink is reported as one, never followed.
  virtual ErrnoResult<FileInfo> Lstat(const std::string& path) = 0;
  // stat: follows symlinks (for directories above the data, such as /home).
  virtual ErrnoResult<FileInfo> Stat(const std::string& path) = 0;
  // mkdir with exactly `mode`, whatever the umask; EEXIST when it exists.
  virtual ErrnoResult<void> MakeDir(const std::string& path, mode_t mode) = 0;
  // Creates a new file (never through a symlink, never over an existing one)
  // with exactly `mode` and `content`, synced to disk; on failure the file
  // is not left behind.
  virtual ErrnoResult<void> WriteNewFile(const std::string& path, std::string_view content, mode_t mode) = 0;
  virtual ErrnoResult<void> Rename(const std::string& from, const std::string& to) = 0;
  virtual ErrnoResult<void> SetMode(const std::string& path, mode_t mode) = 0;
  // chown to `gid`, the owner unchanged.
  virtual ErrnoResult<void> SetGroup(const std::string& path, gid_t gid) = 0;
  // access(2): whether the real user may read, write or search (`how`: R_OK,
  // W_OK, X_OK or'ed) the file; EACCES when not.
  virtual ErrnoResult<void> Access(const std::string& path, int how) = 0;
  // The names in a directory, without "." and "..", in no particular order.
  virtual ErrnoResult<std::vector<std::string>> ReadDir(const std::string& path) = 0;
  // A whole regular file (never through a symlink) of at most max_bytes; the
  // error names the path, as sys::ReadSmallFile's do.
  virtual Result<std::string> ReadFile(const std::string& path, size_t max_bytes) = 0;
  // fsync of a directory (or file) opened without following a symlink.
  virtual ErrnoResult<void> Sync(const std::string& path) = 0;
  // rm -r that never follows a symlink; absence is success.
  virtual ErrnoResult<void> RemoveTree(const std::string& path) = 0;
};

// The process's real file system.
FileSystem& RealFileSystem();

}  // namespace bk::sys
