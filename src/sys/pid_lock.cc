#include "sys/pid_lock.h"

#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/json_strict.h"
#include "base/strings.h"

namespace bk::sys {
namespace {

// A pid is a positive decimal that fits pid_t; anything else names nobody.
bool IsPid(std::string_view s) {
  if (s.empty() || s.size() > 10 || s[0] == '0') return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return std::stoll(std::string(s)) <= 0x7fffffff;
}

}  // namespace

std::string LockHolderPid(std::string_view content) {
  std::string_view text = Trim(content);
  if (IsPid(text)) return std::string(text);
  auto j = ParseStrictJson(text);
  if (!j || !j->is_object()) return "?";
  auto pid = j->find("pid");
  if (pid == j->end() || !pid->is_number_unsigned()) return "?";
  std::string digits = std::to_string(pid->get<uint64_t>());
  return IsPid(digits) ? digits : "?";
}

Status LockNamingPid(int fd, const std::string& path,
                     const std::function<std::string(const std::string& pid)>& busy) {
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    // Enough for any holder's metadata; a longer file names nobody we trust.
    char buf[4096];
    ssize_t n = pread(fd, buf, sizeof(buf), 0);
    close(fd);
    std::string_view content(buf, n > 0 ? static_cast<size_t>(n) : 0);
    return Fail(ErrorKind::kBusy, busy(LockHolderPid(content)));
  }
  std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    close(fd);
    return Fail(ErrorKind::kIo, fmt::format("cannot write lock {}", path));
  }
  return Ok();
}

}  // namespace bk::sys
