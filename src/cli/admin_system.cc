#include "cli/admin_system.h"

#include <fmt/format.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iostream>

#include "admin/unit.h"
#include "base/json_strict.h"
#include "base/strings.h"
#include "sys/fs.h"
#include "sys/users.h"

namespace bk::cli {

using nlohmann::json;

Result<ServiceAccount> FindServiceAccount(const std::string& name) {
  std::optional<uid_t> uid = sys::UidForName(name);
  struct passwd pw {};
  struct passwd* res = nullptr;
  char buf[16384];
  if (!uid || getpwuid_r(*uid, &pw, buf, sizeof(buf), &res) != 0 || !res)
    return Invalid(fmt::format(
        "no such account: {}; create the service account first (e.g. useradd --system {}) or name another "
        "with --service-user",
        name, name));
  if (res->pw_uid == 0)
    return Invalid(
        "the service account must not be root: the daemon runs unprivileged; name an ordinary account with "
        "--service-user (e.g. one made with useradd --system gpubk)");
  return ServiceAccount{res->pw_uid, res->pw_gid, res->pw_name};
}

bool InGroup(const ServiceAccount& a, gid_t gid) {
  if (a.gid == gid) return true;
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  if (getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));
    if (getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) return false;
  }
  return std::find(groups.begin(), groups.begin() + n, gid) != groups.begin() + n;
}

Result<std::optional<json>> ReadInstalledConfig(const std::string& path) {
  if (!sys::Exists(path)) return std::optional<json>();
  BK_ASSIGN_OR_RETURN(std::string text, sys::ReadSmallFile(path, 1 << 20));
  auto doc = ParseStrictJson(text);
  if (!doc || !doc->is_object() || doc->value("schema_version", json()) != "gpubk.server.v1" ||
      !doc->contains("owner_uid") || !(*doc)["owner_uid"].is_number_unsigned())
    return Invalid(
        fmt::format("{} is not a GPUBK server config (schema_version gpubk.server.v1, owner_uid); fix it or "
                    "move it away, "
                    "then install again",
                    path));
  return std::optional<json>(std::move(*doc));
}

Result<admin::Want> UnitWant(const admin::Layout& layout, const json& doc) {
  BK_ASSIGN_OR_RETURN(ServiceAccount svc,
                      FindServiceAccount(std::to_string(doc["owner_uid"].get<uint32_t>())));
  admin::SystemUnitSpec u{.bk_path = SelfPath(),
                          .config_path = admin::Layout::kConfig,
                          .data_dir = admin::Layout::kDataDir,
                          .user = svc.name,
                          .group = svc.name,
                          .group_access = doc.value("access", "world") == "group"};
  // With group access the runtime directory carries the group its members reach the socket through.
  if (u.group_access) {
    u.group = doc.value("group", "");
  } else if (struct group* g = getgrgid(svc.gid)) {
    u.group = g->gr_name;
  }
  BK_TRY(admin::CheckUnitSpec(u));
  return admin::Want{.path = layout.On(admin::Layout::kUnit),
                     .what = "systemd unit",
                     .kind = admin::Kind::kManaged,
                     .mode = 0644,
                     .content = admin::RenderSystemUnit(u),
                     .marker = admin::kUnitMarker};
}

Result<admin::Layout> ChooseLayout(const std::optional<std::string>& root) {
  std::string r = root.value_or("");
  while (!r.empty() && r.back() == '/') r.pop_back();
  if (root && (r.empty() || r[0] != '/'))
    return Invalid(fmt::format("--root must be an absolute path other than /, not {}", *root));
  return admin::Layout{r};
}

Status NeedRoot(const char* command, bool dry_run) {
  if (dry_run || geteuid() == 0) return Ok();
  return Invalid(fmt::format(
      "{} changes system files: run it with sudo (or add --dry-run to see what it would do)", command));
}

Status CanConfirm(bool yes, const std::string& what) {
  if (yes || isatty(STDIN_FILENO)) return Ok();
  return Invalid(
      fmt::format("{} asks for confirmation and stdin is not a terminal; add --yes to go ahead (or "
                  "--dry-run to see the plan)",
                  what));
}

bool Confirmed(Context& ctx, bool yes, const std::string& question, const std::string& word) {
  return yes || TypedWord(ctx, fmt::format("{}? Type {} to continue: ", question, word), word);
}

std::string Systemctl() {
  // sd_booted(3)'s test: systemd made this directory at boot.
  if (!sys::Exists("/run/systemd/system")) return "";
  const char* path = std::getenv("PATH");
  for (const auto& dir : Split(path ? path : "/usr/sbin:/usr/bin:/sbin:/bin", ':')) {
    std::string candidate = sys::JoinPath(dir, "systemctl");
    if (!dir.empty() && dir[0] == '/' && access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

int RunSystemctl(const std::string& systemctl, const std::vector<std::string>& args) {
  std::fflush(stdout);
  std::vector<char*> argv = {const_cast<char*>(systemctl.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) {
    execv(systemctl.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

std::string StartUnit(const std::optional<std::string>& root, bool no_start, bool changed,
                      bool unit_updated) {
  if (root) return fmt::format("staged under {}; nothing started", *root);
  std::string by_hand = "systemctl daemon-reload && systemctl enable --now gpubk.service";
  if (no_start) return "not started (--no-start); start it with: " + by_hand;
  std::string systemctl = Systemctl();
  if (systemctl.empty()) return "not started: systemd does not run here; start it with: " + by_hand;
  if (changed && RunSystemctl(systemctl, {"daemon-reload"}) != 0) return "systemctl daemon-reload failed";
  if (RunSystemctl(systemctl, {"enable", "--now", "gpubk.service"}) != 0)
    return "systemctl enable --now gpubk.service failed; see `journalctl -u gpubk.service`";
  // A running daemon keeps the unit it was started with.
  if (unit_updated && RunSystemctl(systemctl, {"try-restart", "gpubk.service"}) != 0)
    return "systemctl try-restart gpubk.service failed; see `journalctl -u gpubk.service`";
  return "started: gpubk.service is enabled and running";
}

}  // namespace bk::cli
