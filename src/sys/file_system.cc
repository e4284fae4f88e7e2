#include "sys/file_system.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include <cerrno>

#include "sys/fs.h"

namespace bk::sys {

namespace {

ErrnoResult<void> Check(int rc) {
  if (rc == 0) return {};
  return std::unexpected(errno);
}

int RemoveEntry(const char* path, const struct stat*, int type, struct FTW*) {
  return (type == FTW_DP ? rmdir(path) : unlink(path)) == 0 ? 0 : -1;
}

class Real : public FileSystem {
 public:
  ErrnoResult<FileInfo> Lstat(const std::string& path) override {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return std::unexpected(errno);
    return FileInfo{st.st_mode, st.st_uid, st.st_nlink};
  }

  ErrnoResult<FileInfo> Stat(const std::string& path) override {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return std::unexpected(errno);
    return FileInfo{st.st_mode, st.st_uid, st.st_nlink};
  }

  ErrnoResult<void> MakeDir(const std::string& path, mode_t mode) override {
    if (mkdir(path.c_str(), mode) != 0) return std::unexpected(errno);
    // The mode is set through the new directory itself: a symlink swapped in
    // meanwhile fails (ELOOP or ENOTDIR) rather than lending its target the mode.
    int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return std::unexpected(errno);
    int rc = fchmod(fd, mode);
    int err = errno;
    close(fd);
    if (rc != 0) return std::unexpected(err);
    return {};
  }

  ErrnoResult<void> WriteNewFile(const std::string& path, std::string_view content, mode_t mode) override {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0) return std::unexpected(errno);
    size_t done = 0;
    int err = 0;
    while (done < content.size() && err == 0) {
      ssize_t n = write(fd, content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        err = n < 0 ? errno : EIO;
      else
        done += static_cast<size_t>(n);
    }
    // The umask must not decide the mode.
    if (err == 0 && (fchmod(fd, mode) != 0 || fsync(fd) != 0)) err = errno;
    if (close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
      unlink(path.c_str());  // ours: O_EXCL created it
      return std::unexpected(err);
    }
    return {};
  }

  ErrnoResult<void> Rename(const std::string& from, const std::string& to) override {
    return Check(rename(from.c_str(), to.c_str()));
  }

  ErrnoResult<void> SetMode(const std::string& path, mode_t mode) override {
    return Check(chmod(path.c_str(), mode));
  }

  ErrnoResult<void> SetGroup(const std::string& path, gid_t gid) override {
    return Check(chown(path.c_str(), static_cast<uid_t>(-1), gid));
  }

  ErrnoResult<void> Access(const std::string& path, int how) override {
    return Check(access(path.c_str(), how));
  }

  ErrnoResult<std::vector<std::string>> ReadDir(const std::string& path) override {
    DIR* d = opendir(path.c_str());
    if (d == nullptr) return std::unexpected(errno);
    std::vector<std::string> names;
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
    }
    closedir(d);
    return names;
  }

  Result<std::string> ReadFile(const std::string& path, size_t max_bytes) override {
    return ReadSmallFile(path, max_bytes);
  }

  ErrnoResult<void> Sync(const std::string& path) override {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return std::unexpected(errno);
    int rc = fsync(fd);
    int err = errno;
    close(fd);
    if (rc != 0) return std::unexpected(err);
    return {};
  }

  ErrnoResult<void> RemoveTree(const std::string& path) override {
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) return errno == ENOENT ? ErrnoResult<void>{} : std::unexpected(errno);
    if (!S_ISDIR(st.st_mode)) return Check(unlink(path.c_str()));
    return Check(nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS));
  }
};

}  // namespace

FileSystem& RealFileSystem() {
  static Real real;
  return real;
}

}  // namespace bk::sys
