#include "sys/fs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "sys/random.h"

namespace bk::sys {

namespace {

std::string ErrnoText(int err) {
  char buf[256];
  // GNU strerror_r: returns a pointer to the message (maybe not `buf`).
  return strerror_r(err, buf, sizeof buf);
}

std::string ModeText(mode_t mode) { return fmt::format("{:04o}", mode & 07777); }
std::string ChmodArg(mode_t mode) { return fmt::format("{:o}", mode & 07777); }

ErrorKind KindForErrno(int err) {
  switch (err) {
    case ENOENT: return ErrorKind::kNotFound;
    case EACCES:
    case EPERM:
    case ELOOP: return ErrorKind::kPermission;
    default: return ErrorKind::kIo;
  }
}

std::unexpected<Error> SysFail(int err, const std::string& what) {
  return Fail(KindForErrno(err), fmt::format("{}: {}", what, ErrnoText(err)));
}

// Closes a descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }
  // Closes now and reports close(2)'s result (write errors can surface here).
  int Close() {
    int rc = fd_ >= 0 ? close(fd_) : 0;
    fd_ = -1;
    return rc;
  }

 private:
  int fd_;
};

std::unexpected<Error> TooBig(const std::string& path, size_t max_bytes) {
  return Fail(ErrorKind::kInvalid, fmt::format("{} is larger than {} bytes", path, max_bytes));
}

std::string StripTrailingSlashes(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::unexpected<Error> SymlinkError(const std::string& path) {
  return Fail(ErrorKind::kPermission,
              fmt::format("data directory {} is a symbolic link; use the real path", path));
}

std::unexpected<Error> OwnerError(const std::string& path, uid_t actual, uid_t owner) {
  return Fail(ErrorKind::kPermission,
              fmt::format("{} is owned by UID {}, not you (UID {}); use your own data directory", path,
                          actual, owner));
}

std::unexpected<Error> WritableError(const std::string& path, mode_t mode, mode_t fix) {
  return Fail(ErrorKind::kPermission, fmt::format("{} is writable by other users (mode {}); run chmod {} {}",
                                                  path, ModeText(mode), ChmodArg(fix), path));
}

// Checks an lstat result for an existing directory. `allowed_write` are the
// group/other write bits the caller's mode grants on purpose.
Status CheckDirStat(const std::string& path, const FileInfo& st, uid_t owner, mode_t allowed_write,
                    mode_t fix_mode) {
  if (st.IsLink()) return SymlinkError(path);
  if (!st.IsDir()) {
    return Fail(
        ErrorKind::kCorrupt,
        fmt::format("{} exists but is not a directory; remove it or choose another data directory", path));
  }
  if (st.uid != owner) return OwnerError(path, st.uid, owner);
  if ((st.mode & (S_IWGRP | S_IWOTH)) & ~allowed_write) return WritableError(path, st.mode, fix_mode);
  return Ok();
}

Status CheckFileStat(const std::string& path, const struct stat& st, uid_t owner) {
  if (S_ISLNK(st.st_mode)) {
    return Fail(
        ErrorKind::kPermission,
        fmt::format("{} is a symbolic link; refusing to follow it; put the real file in its place", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return Fail(ErrorKind::kCorrupt,
                fmt::format("{} is not a regular file; remove it or choose another data directory", path));
  }
  if (st.st_nlink != 1) {
    return Fail(ErrorKind::kCorrupt,
                fmt::format("{} has {} hard links; refusing it; remove the other links", path, st.st_nlink));
  }
  if (st.st_uid != owner) return OwnerError(path, st.st_uid, owner);
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return WritableError(path, st.st_mode, 0600);
  return Ok();
}

}  // namespace

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string Dirname(const std::string& path) {
  if (path.empty()) return ".";
  std::string p = StripTrailingSlashes(path);
  auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  p.resize(slash);
  p = StripTrailingSlashes(p);
  return p.empty() ? "/" : p;
}

std::string Basename(const std::string& path) {
  std::string p = StripTrailingSlashes(path);
  if (p == "/") return p;
  auto slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (name.empty()) return dir;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

Status EnsurePrivateDir(FileSystem& fs, const std::string& dir, mode_t mode, uid_t owner) {
  if (dir.empty()) return Invalid("the data directory path is empty");
  const std::string path = StripTrailingSlashes(dir);
  const mode_t allowed_write = mode & (S_IWGRP | S_IWOTH);

  // Every prefix that names a component: "/a", "/a/b", "/a/b/c".
  std::vector<std::string> prefixes;
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || (path[i] == '/' && path[i - 1] != '/')) prefixes.push_back(path.substr(0, i));
  }
  if (prefixes.empty()) prefixes.push_back(path);

  // The deepest component that exists already.
  int deepest = -1;
  FileInfo st;
  for (int i = static_cast<int>(prefixes.size()) - 1; i >= 0; --i) {
    auto found = fs.Lstat(prefixes[i]);
    if (found) {
      st = *found;
      deepest = i;
      break;
    }
    if (found.error() != ENOENT) return SysFail(found.error(), fmt::format("cannot inspect {}", prefixes[i]));
  }
  const int last = static_cast<int>(prefixes.size()) - 1;
  if (deepest == last) return CheckDirStat(path, st, owner, allowed_write, mode);
  if (deepest >= 0) {
    // We are about to create entries inside it: it must be a real directory.
    if (st.IsLink()) {
      return Fail(ErrorKind::kPermission,
                  fmt::format("cannot create data directory {}: {} is a symbolic link; use the real path",
                              path, prefixes[deepest]));
    }
    if (!st.IsDir()) {
      return Fail(ErrorKind::kInvalid, fmt::format("cannot create data directory {}: {} is not a directory",
                                                   path, prefixes[deepest]));
    }
  }
  // Parents made before a failure stay: empty, private, and reused by the next try.
  for (int i = deepest + 1; i <= last; ++i) {
    auto made = fs.MakeDir(prefixes[i], mode);
    if (made) continue;
    // Someone else created it first: judge what is there now.
    if (auto now = fs.Lstat(prefixes[i]); made.error() == EEXIST && now) {
      if (i == last) return CheckDirStat(path, *now, owner, allowed_write, mode);
      if (now->IsLink()) return SymlinkError(prefixes[i]);
      if (now->IsDir()) continue;
    }
    if (made.error() == ELOOP) return SymlinkError(prefixes[i]);  // swapped in before the mode was set
    return SysFail(made.error(), fmt::format("cannot create directory {}", prefixes[i]));
  }
  return Ok();
}

Status EnsurePrivateDir(const std::string& dir, mode_t mode, uid_t owner) {
  return EnsurePrivateDir(RealFileSystem(), dir, mode, owner);
}

Status CheckPrivateDir(const std::string& dir, uid_t owner) {
  const std::string path = StripTrailingSlashes(dir);
  auto st = RealFileSystem().Lstat(path);
  if (!st) {
    if (st.error() == ENOENT)
      return Fail(ErrorKind::kNotFound, fmt::format("data directory {} does not exist", path));
    return SysFail(st.error(), fmt::format("cannot inspect {}", path));
  }
  return CheckDirStat(path, *st, owner, 0, 0700);
}

Status CheckDataFile(const std::string& path, uid_t owner) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Fail(ErrorKind::kNotFound, fmt::format("data file {} does not exist", path));
    return SysFail(errno, fmt::format("cannot inspect {}", path));
  }
  return CheckFileStat(path, st, owner);
}

Status CreateDataFile(const std::string& path, mode_t mode, uid_t owner) {
  Fd fd(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600));
  if (!fd.ok()) {
    if (errno == EEXIST) return CheckDataFile(path, owner);
    return SysFail(errno, fmt::format("cannot create {}", path));
  }
  if (fchmod(fd.get(), mode) != 0) {
    int err = errno;
    unlink(path.c_str());
    return SysFail(err, fmt::format("cannot set the mode of {}", path));
  }
  if (fd.Close() != 0) return SysFail(errno, fmt::format("cannot create {}", path));
  return Ok();
}

Result<UniqueFd> OpenSmallFile(const std::string& path, size_t max_bytes) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd.ok()) {
    if (errno == ELOOP) {
      return Fail(
          ErrorKind::kPermission,
          fmt::format("{} is a symbolic link; refusing to follow it; put the real file in its place", path));
    }
    return SysFail(errno, fmt::format("cannot read {}", path));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return SysFail(errno, fmt::format("cannot read {}", path));
  if (!S_ISREG(st.st_mode)) return Fail(ErrorKind::kInvalid, fmt::format("{} is not a regular file", path));
  if (static_cast<uint64_t>(st.st_size) > max_bytes) return TooBig(path, max_bytes);
  return fd;
}

Result<std::string> ReadOpenFile(int fd, const std::string& path, size_t max_bytes) {
  struct stat st;
  if (fstat(fd, &st) != 0) return SysFail(errno, fmt::format("cannot read {}", path));
  std::string out;
  out.reserve(static_cast<size_t>(std::min<uint64_t>(st.st_size, max_bytes)));
  char buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return SysFail(errno, fmt::format("cannot read {}", path));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > max_bytes)
      return TooBig(path, max_bytes);  // grew while we read
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Result<std::string> ReadSmallFile(const std::string& path, size_t max_bytes) {
  BK_ASSIGN_OR_RETURN(UniqueFd fd, OpenSmallFile(path, max_bytes));
  return ReadOpenFile(fd.get(), path, max_bytes);
}

Status WriteFileAtomic(FileSystem& fs, const std::string& path, const std::string& data, mode_t mode) {
  if (auto st = fs.Lstat(path)) {
    if (st->IsLink()) {
      return Fail(
          ErrorKind::kPermission,
          fmt::format("refusing to replace {}: it is a symbolic link; put the real file in its place", path));
    }
    if (!S_ISREG(st->mode)) {
      return Fail(ErrorKind::kCorrupt, fmt::format("refusing to replace {}: it is not a regular file", path));
    }
    if (st->nlink != 1) {
      return Fail(
          ErrorKind::kCorrupt,
          fmt::format("refusing to replace {}: it has {} hard links; remove the others", path, st->nlink));
    }
  } else if (st.error() != ENOENT) {
    return SysFail(st.error(), fmt::format("cannot inspect {}", path));
  }

  const std::string dir = Dirname(path);
  std::string tmp = JoinPath(dir, fmt::format(".{}.{}.tmp", Basename(path), NewUuid().substr(0, 8)));
  // Written and synced in full, or not left behind.
  if (auto written = fs.WriteNewFile(tmp, data, mode); !written)
    return SysFail(written.error(), fmt::format("cannot write {}", path));
  if (auto renamed = fs.Rename(tmp, path); !renamed) {
    (void)fs.RemoveTree(tmp);
    return SysFail(renamed.error(), fmt::format("cannot replace {}", path));
  }
  if (auto synced = fs.Sync(dir); !synced)
    return SysFail(synced.error(), fmt::format("cannot sync directory {}", dir));
  return Ok();
}

Status WriteFileAtomic(const std::string& path, const std::string& data, mode_t mode) {
  return WriteFileAtomic(RealFileSystem(), path, data, mode);
}

}  // namespace bk::sys
