#include "cli/server_dir.h"

#include <fmt/format.h>
#include <grp.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "base/strings.h"
#include "cli/args.h"
#include "engine/parse.h"
#include "sys/fs.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

// mkdir that accepts an existing directory, then the group and the exact
// mode. Records the directory in `created` when this call made it.
Status MakeDir(sys::FileSystem& fs, const std::string& path, mode_t mode, std::optional<gid_t> gid,
               std::vector<std::string>& created) {
  if (auto made = fs.MakeDir(path, mode); made)
    created.push_back(path);
  else if (made.error() != EEXIST)
    return Fail(ErrorKind::kIo, fmt::format("cannot create {}: {}", path, std::strerror(made.error())));
  auto st = fs.Lstat(path);
  if (!st || !st->IsDir()) return Invalid(fmt::format("{} is not a directory", path));
  if (gid) {
    if (auto given = fs.SetGroup(path, *gid); !given)
      return Fail(ErrorKind::kIo,
                  fmt::format("cannot give {} to group {}: {}", path, *gid, std::strerror(given.error())));
  }
  if (!fs.SetMode(path, mode)) return Fail(ErrorKind::kIo, fmt::format("cannot chmod {}", path));
  return Ok();
}

Status CreateTree(sys::FileSystem& fs, const config::ServerSpec& s, std::vector<std::string>& created) {
  const std::string& d = s.directory;
  // Clients traverse the directory and connect to run/broker.sock; only the owner reads data/.
  mode_t pass = s.access == "group" ? 0710 : 0711;
  BK_TRY(MakeDir(fs, d, pass, s.gid, created));
  BK_TRY(MakeDir(fs, d + "/run", pass, s.gid, created));
  BK_TRY(MakeDir(fs, d + "/data", 0700, std::nullopt, created));
  std::string cfg_path = d + "/config.json";
  BK_TRY(
      sys::WriteFileAtomic(fs, cfg_path, config::RenderServerConfig(s), s.access == "group" ? 0640 : 0644));
  created.push_back(cfg_path);
  if (s.gid && !fs.SetGroup(cfg_path, *s.gid))
    return Fail(ErrorKind::kIo, fmt::format("cannot give {} to group {}", cfg_path, s.group));
  return Ok();
}

}  // namespace

Result<int64_t> PositiveInt(const std::optional<std::string>& text, const char* name, int64_t lo, int64_t hi,
                            int64_t def) {
  return WholeNumberOption(text, lo, hi, def,
                           fmt::format("{} must be a whole number between {} and {}", name, lo, hi));
}

Status ApplyPolicyOptions(const SpecOptions& o, int default_gpus, config::ServerSpec& s) {
  BK_ASSIGN_OR_RETURN(int64_t n, PositiveInt(o.gpus, "--gpu-count", 1, engine::kMaxGpus, default_gpus));
  s.gpu_count = static_cast<int>(n);
  if (o.cpus) {
    BK_ASSIGN_OR_RETURN(s.host_cpus, engine::ParseCpus(*o.cpus));
  }
  if (o.ram) {
    BK_ASSIGN_OR_RETURN(s.host_ram_mb, engine::ParseSizeMb(*o.ram, "--ram"));
  }
  return Ok();
}

Status ApplyAccessOptions(const SpecOptions& o, config::ServerSpec& s) {
  s.access = o.access.value_or(o.group ? "group" : "world");
  if (s.access == "group") {
    if (!o.group) return Invalid("--access group needs --group NAME");
    struct group g {};
    struct group* res = nullptr;
    char buf[16384];
    if (getgrnam_r(o.group->c_str(), &g, buf, sizeof(buf), &res) != 0 || !res)
      return Invalid(fmt::format("no such group: {}", *o.group));
    s.group = *o.group;
    s.gid = res->gr_gid;
  } else if (s.access != "world") {
    return Invalid("--access must be world or group");
  } else if (o.group) {
    return Invalid("--group goes with --access group");
  }
  return Ok();
}

Status CheckServerDirectory(sys::FileSystem& fs, const std::string& d, uid_t me) {
  auto st = fs.Lstat(d);
  if (!st) return Ok();
  if (st->IsLink()) return Invalid(fmt::format("{} is a symbolic link; use the real path", d));
  if (!st->IsDir()) return Invalid(fmt::format("{} exists and is not a directory", d));
  if (st->uid != me)
    return Invalid(fmt::format("{} belongs to {}; use a directory you own", d, sys::UserName(st->uid)));
  // An unreadable directory counts as empty: creating inside it fails with the reason.
  if (auto names = fs.ReadDir(d); names && !names->empty())
    return Invalid(fmt::format("{} is not empty; choose a new or empty directory", d));
  return Ok();
}

Status CreateServerDirectory(sys::FileSystem& fs, const config::ServerSpec& spec,
                             const std::function<Status()>& fill) {
  std::vector<std::string> created;
  Status done = CreateTree(fs, spec, created);
  if (done) done = fill();
  if (done) return Ok();
  // The ledger's files go with data/; when the directory itself is new,
  // removing it removes the rest.
  bool own_dir = !created.empty() && created.front() == spec.directory;
  std::vector<std::string> undo = own_dir ? std::vector<std::string>{spec.directory}
                                          : std::vector<std::string>(created.rbegin(), created.rend());
  std::vector<std::string> left;
  for (const auto& path : undo)
    if (!fs.RemoveTree(path)) left.push_back(path);
  Error e = done.error();
  if (!left.empty()) e.message += fmt::format("; could not remove what it created: {}", Join(left, ", "));
  return std::unexpected(e);
}

}  // namespace bk::cli
