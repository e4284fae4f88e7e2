#include "monitor/lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/fs.h"

namespace bk::monitor {

Result<UsageLock> UsageLock::Take(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (errno == ELOOP)
      return Fail(ErrorKind::kPermission, fmt::format("{} is a symbolic link; refusing to follow it", path));
    return Fail(ErrorKind::kIo, fmt::format("cannot open lock {}: {}", path, std::strerror(errno)));
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022)) {
    close(fd);
    return Fail(ErrorKind::kPermission,
                fmt::format("{} is not a private regular file of this user; remove it and retry", path));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    close(fd);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return Fail(ErrorKind::kBusy, fmt::format("another monitor is writing usage history in {} (pid {})",
                                              sys::Dirname(path), pid));
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    close(fd);
    return Fail(ErrorKind::kIo, fmt::format("cannot write lock {}", path));
  }
  return UsageLock(fd);
}

UsageLock::~UsageLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace bk::monitor
