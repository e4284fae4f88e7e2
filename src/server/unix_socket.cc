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

Status SendWithDescriptor(int sock, std::string_view data, int fd) {
  if (data.empty()) return Invalid("a descriptor needs at least one byte to travel with");
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  size_t off = 0;
  while (off < data.size()) {
    iovec iov{const_cast<char*>(data.data() + off), data.size() - off};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (off == 0) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* cm = CMSG_FIRSTHDR(&msg);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    }
    // MSG_NOSIGNAL: a peer gone meanwhile is an error to report, not a SIGPIPE.
    ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail(ErrorKind::kIo, fmt::format("send: {}", std::strerror(n < 0 ? errno : EPIPE)));
    off += static_cast<size_t>(n);
  }
  return Ok();
}

Received ReceiveWithDescriptors(int sock, char* buf, size_t size) {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxReceived)];
  iovec iov{buf, size};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  Received out;
  do out.n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (out.n < 0 && errno == EINTR);
  if (out.n < 0) return out;
  for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
    if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
      out.fds.emplace_back(fd);
    }
  }
  return out;
}

}  // namespace bk::server
