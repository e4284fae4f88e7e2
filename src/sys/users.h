#pragma once
// Account lookups. Identity itself comes only from the kernel: getuid() here,
// SO_PEERCRED in the daemon.

#include <sys/types.h>

#include <optional>
#include <string>

namespace bk::sys {

uid_t CurrentUid();
// The passwd name, or the decimal UID when there is none.
std::string UserName(uid_t uid);
std::optional<uid_t> UidForName(const std::string& name);
// $HOME when absolute, else the passwd home directory.
std::string HomeDir();

}  // namespace bk::sys
