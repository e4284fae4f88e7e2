#pragma once
// Unix stream sockets and the kernel's word on who is at the other end.

#include <sys/types.h>

#include <optional>
#include <string>

#include "base/result.h"

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

}  // namespace bk::server
