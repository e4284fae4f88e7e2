#pragma once
// What `bk admin install`, `uninstall` and `services` share: the service
// account, the configuration already installed, the unit they render, the
// confirmation and systemctl.

#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "admin/plan.h"
#include "base/result.h"
#include "cli/context.h"

namespace bk::cli {

// The unprivileged account the daemon runs as.
struct ServiceAccount {
  uid_t uid = 0;
  gid_t gid = 0;  // its primary group
  std::string name;
};
// The account called `name` (or a decimal UID); one line when there is none
// or it is root.
Result<ServiceAccount> FindServiceAccount(const std::string& name);
// Whether `a` is a member of group `gid` (primary or supplementary).
bool InGroup(const ServiceAccount& a, gid_t gid);

// The installed configuration's JSON object, or nothing when there is none.
Result<std::optional<nlohmann::json>> ReadInstalledConfig(const std::string& path);

// The unit of an installed configuration `doc` (its owner_uid, access and
// group), running this bk.
Result<admin::Want> UnitWant(const admin::Layout& layout, const nlohmann::json& doc);

// The layout on this system, or staged under --root DIR (absolute, not /).
Result<admin::Layout> ChooseLayout(const std::optional<std::string>& root);

// Refuses a non-root caller (changing system files needs root) unless `dry_run`.
Status NeedRoot(const char* command, bool dry_run);
// Whether consent can be asked for: with --yes it is given; without a
// terminal on stdin, one line naming --yes (before anything is printed).
Status CanConfirm(bool yes, const std::string& what);
// The caller's consent: with --yes, yes; else the typed word must be `word`
// (end of input is a no).
bool Confirmed(Context& ctx, bool yes, const std::string& question, const std::string& word);

// systemctl, when this host runs systemd and has it: the tool's path, else "".
std::string Systemctl();
// Runs systemctl with `args`, its output going where ours goes; the exit status.
int RunSystemctl(const std::string& systemctl, const std::vector<std::string>& args);

// Starts gpubk.service where systemd runs (daemon-reload first when
// anything changed, a restart when the unit file was rewritten); else, or
// with --no-start or a staging root, says how.
std::string StartUnit(const std::optional<std::string>& root, bool no_start, bool changed, bool unit_updated);

}  // namespace bk::cli
