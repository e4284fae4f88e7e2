#pragma once
// Who administers this deployment and how to reach them, from the Linux
// account (GECOS, as `chfn` sets it): `bk info`, and the agent context's
// `administrator` (gpubk.administrator.v1).

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "sys/users.h"

namespace bk::surface {

struct Administrator {
  uid_t uid = 0;
  bool resolved = false;  // the account lookup answered
  std::string username;
  // GECOS fields, printable and at most 256 characters; nullopt when empty.
  std::optional<std::string> full_name, room, work_phone, home_phone, other;
};

// The administrator's UID: a server's owner (the daemon's account), else the
// caller, who owns a private ledger.
uid_t AdministratorUid(const config::Config& config, uid_t caller);
// Splits and cleans the GECOS of `account`.
Administrator ReadAdministrator(uid_t uid, const sys::Account& account);

// The gpubk.administrator.v1 document (one line).
std::string AdministratorDoc(const Administrator& a);
// `bk info`'s lines; `server` says whether a daemon serves this deployment.
std::vector<std::string> AdministratorLines(const Administrator& a, bool server);

}  // namespace bk::surface
