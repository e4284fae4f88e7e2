#include "server/unix_socket.h"

#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bk::server {
namespace {

Result<sockaddr_un> Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path))
    return Invalid(
        fmt::format("socket path {} is too long ({} bytes, at most {}); choose a shorter server directory",
                    path, path.size(), sizeof(addr.sun_path) - 1));
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

}  // namespace

Status CheckSocketPath(const std::string& path) {
  BK_TRY(Address(path));
  return Ok();
}

Result<int> ListenUnix(const std::string& path, mode_t mode, std::optional<gid_t> gid, uid_t owner) {
  BK_ASSIGN_OR_RETURN(sockaddr_un addr, Address(path));
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    // The caller holds the single-instance lock, so a socket here is stale.
    if (!S_ISSOCK(st.st_mode) || st.st_uid != owner)
      return Invalid(fmt::format("{} exists and is not this server's socket; move it away", path));
    if (unlink(path.c_str()) != 0)
      return Fail(ErrorKind::kIo,
                  fmt::format("cannot remove stale socket {}: {}", path, std::strerror(errno)));
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Fail(ErrorKind::kIo, fmt::format("socket: {}", std::strerror(errno)));
  // Bind under a tight umask so the socket is never briefly open to everyone.
  mode_t old = umask(0177);
  int rc = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  umask(old);
  if (rc != 0) {
    int e = errno;
    close(fd);
    return Fail(ErrorKind::kIo, fmt::format("cannot bind {}: {}", path, std::strerror(e)));
  }
  if ((gid && chown(path.c_str(), static_cast<uid_t>(-1), *gid) != 0) || chmod(path.c_str(), mode) != 0) {
    int e = errno;
    close(fd);
    unlink(path.c_str());
    return Fail(ErrorKind::kIo, fmt::format("cannot set permissions of {}: {}", path, std::strerror(e)));
  }
  if (listen(fd, 128) != 0) {
    int e = errno;
    close(fd);
    return Fail(ErrorKind::kIo, fmt::format("listen on {}: {}", path, std::strerror(e)));
  }
  return fd;
}

Result<PeerCred> PeerCredentials(int fd) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof(cred) || cred.pid <= 0)
    return Fail(ErrorKind::kPermission, "the kernel gave no peer credentials for this connection");
  return PeerCred{cred.pid, cred.uid, cred.gid};
}

Result<int> ConnectUnix(const std::string& path, int timeout_ms) {
  BK_ASSIGN_OR_RETURN(sockaddr_un addr, Address(path));
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(ErrorKind::kIo, fmt::format("socket: {}", std::strerror(errno)));
  timeval tv{timeout_ms / 1000, static_cast<suseconds_t>(timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int e = errno;
    close(fd);
    ErrorKind kind = (e == ENOENT || e == ECONNREFUSED) ? ErrorKind::kUnavailable
                     : (e == EACCES)                    ? ErrorKind::kPermission
                                                        : ErrorKind::kIo;
    return Fail(kind, std::strerror(e));
  }
  return fd;
}

}  // namespace bk::server
