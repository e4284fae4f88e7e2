#pragma once
// Whether a path can be trusted as configuration: nobody but its owner (or
// root) can have replaced any directory on the way to it.

#include <sys/types.h>

#include <string>

#include "base/result.h"

namespace bk::sys {

// Every ancestor of `path` (from / down to its parent) must be a real directory
// owned by root or `owner`, not writable by group or others unless sticky.
Status CheckTrustedAncestors(const std::string& path, uid_t owner);
// A directory for a server's socket: trusted ancestors, and the directory
// itself writable by nobody but its owner, sticky or not: in a shared sticky
// directory anyone may bind the socket's name while the daemon is down.
Status CheckSocketDirectory(const std::string& socket_path, uid_t owner);
// A trusted regular file: not a symlink, one link, owned by `owner` or root
// (a system deployment's /etc/gpubk/config.json is root's), not writable by
// group or others, with trusted ancestors.
Status CheckTrustedFile(const std::string& path, uid_t owner);

}  // namespace bk::sys
