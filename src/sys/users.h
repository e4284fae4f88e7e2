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
// The passwd entry's UID; a decimal name without an entry is taken as that UID
// (the inverse of UserName's fallback). nullopt when neither applies.
std::optional<uid_t> UidForName(const std::string& name);
// The passwd entry of `uid` as chfn(1) writes it: the login name and the
// comma-separated GECOS fields (full name, room, work phone, home phone,
// other). `found` is false when the lookup failed or there is no entry.
struct Account {
  bool found = false;
  std::string username;  // the decimal UID when not found
  std::string gecos;
};
Account LookupAccount(uid_t uid);
// Whether `uid` administers a deployment whose ledger `owner` holds: root,
// the owner, and the members of `admin_group` (empty: no group), by their
// primary group or the group database's supplementary lists (getgrouplist),
// so a new member counts from their next command without a new login.
bool IsAdministrator(uid_t uid, uid_t owner, const std::string& admin_group);
// Whether `uid` is a member of the Unix group `name`, as IsAdministrator
// decides it for the admin group; false when there is no such group.
bool InGroup(uid_t uid, const std::string& name);
// $HOME when absolute, else the passwd home directory, else "".
std::string HomeDir();

}  // namespace bk::sys
