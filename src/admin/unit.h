#pragma once
// The files a system install writes beside the configuration: the systemd
// unit of the daemon and the login hook. Pure text; the install decides
// where they go.

#include <string>

#include "base/result.h"

namespace bk::admin {

// The first line of every file bk manages: a file without it is not ours and
// is never rewritten or removed.
inline constexpr const char* kUnitMarker =
    "# Managed by `bk admin services` (written by `bk admin install`); edits are replaced on the next "
    "install.";
inline constexpr const char* kHookMarker =
    "# Managed by `bk admin install` (GPUBK login hook); `bk admin uninstall` removes it.";

// gpubk.service: `bk server serve` runs the broker and the monitor in one
// process, so one unit serves the whole deployment.
struct SystemUnitSpec {
  std::string bk_path;      // absolute path of the bk that ExecStart runs
  std::string config_path;  // /etc/gpubk/config.json
  std::string data_dir;     // /var/lib/gpubk: the only path the daemon writes besides its socket
  std::string user;         // the service account
  std::string group;        // its primary group, or the access group
  bool group_access = false;
};
// Refuses values a unit line cannot hold as one word (paths with white space
// or control characters, account names with anything but [A-Za-z0-9._-]).
Status CheckUnitSpec(const SystemUnitSpec& spec);
std::string RenderSystemUnit(const SystemUnitSpec& spec);
// One ExecStart= argument: quoted, with systemd's `%` and `$` escaped.
std::string QuoteExecArgument(const std::string& word);

// /etc/profile.d/gpubk.sh: `bk login --hook` once per interactive login,
// bounded by timeout(1) so a stuck daemon never holds up a login.
std::string RenderLoginHook(const std::string& bk_path);

}  // namespace bk::admin
