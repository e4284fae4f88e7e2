#include "sys/pid_lock.h"

#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

namespace bk::sys {

Status LockNamingPid(int fd, const std::string& path,
                     const std::function<std::string(const std::string& pid)>& busy) {
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char buf[32] = {};
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    close(fd);
    std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : "?";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
    return Fail(ErrorKind::kBusy, busy(pid));
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    close(fd);
    return Fail(ErrorKind::kIo, fmt::format("cannot write lock {}", path));
  }
  return Ok();
}

}  // namespace bk::sys
