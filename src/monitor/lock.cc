#include "monitor/lock.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/fs.h"
#include "sys/pid_lock.h"

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
  BK_TRY(sys::LockNamingPid(fd, path, [&](const std::string& pid) {
    return fmt::format("another monitor is writing usage history in {} (pid {})", sys::Dirname(path), pid);
  }));
  return UsageLock(fd);
}

UsageLock::~UsageLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace bk::monitor
