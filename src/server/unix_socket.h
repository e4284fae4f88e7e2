#pragma once
// Unix stream sockets and the kernel's word on who is at the other end.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sys/unique_fd.h"

namespace bk::server {

struct PeerCred {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

// Whether `path` fits a Unix socket address (at most 107 bytes on Linux).
Status CheckSocketPath(const std::string& path);
// Binds and listens on `path` with exactly `mode` (and group `gid` when set).
// A stale socket left by a dead daemon is replaced; anything else at the path
// is refused.
Result<int> ListenUnix(const std::string& path, mode_t mode, std::optional<gid_t> gid, uid_t owner);
// SO_PEERCRED: identity from the kernel, never from the request.
Result<PeerCred> PeerCredentials(int fd);
// Connects (blocking) with a send/receive timeout in milliseconds.
Result<int> ConnectUnix(const std::string& path, int timeout_ms);

// Sends all of `data` on a blocking socket with `fd` attached to its first
// byte (SCM_RIGHTS): the peer receives the descriptor with the start of the
// line it belongs to.
Status SendWithDescriptor(int sock, std::string_view data, int fd);

// One recvmsg(2) of at most `size` bytes. `n` is what read(2) would return
// (-1 with errno set); `fds` are the descriptors that came with those bytes,
// close-on-exec and owned by the caller. A sender that attaches more than
// kMaxReceived at once loses the rest: the kernel closes what does not fit.
struct Received {
  ssize_t n = 0;
  std::vector<sys::UniqueFd> fds;
};
inline constexpr size_t kMaxReceived = 4;
Received ReceiveWithDescriptors(int sock, char* buf, size_t size);

}  // namespace bk::server
