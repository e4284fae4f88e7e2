#include "agent/skill_install.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "agent/skill_bundle.h"
#include "base/strings.h"
#include "sys/file_system.h"
#include "sys/fs.h"
#include "sys/random.h"
#include "sys/users.h"

namespace bk::agent {
namespace {

constexpr std::string_view kSkillName = "gpubk";

std::string Errno(int err) { return std::strerror(err); }

std::unexpected<Error> IoFail(const std::string& what, int err) {
  return Fail(ErrorKind::kIo, fmt::format("{}: {}", what, Errno(err)));
}

bool ValidDir(const std::string& path) {
  if (path.empty() || path.size() > 4096 || path[0] != '/') return false;
  for (unsigned char c : path)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}

// Each existing component of `dir` must be a real directory (never a
// symlink), owned by this user or root, and not writable by others unless
// sticky (/tmp). The anchor (the home directory) and its ancestors are the
// account's business and are not judged. Missing components are fine: we
// create them.
Status CheckComponents(sys::FileSystem& fs, const std::string& dir, const std::string& anchor) {
  std::string a = anchor;
  while (a.size() > 1 && a.back() == '/') a.pop_back();
  bool inside = a.size() > 1 && StartsWith(dir + "/", a + "/");
  uid_t me = getuid();
  std::string path;
  for (const auto& part : Split(dir, '/')) {
    if (part.empty()) continue;
    if (part == "." || part == "..")
      return Invalid(fmt::format("skill path must not contain . or .. components: {}", dir));
    path += "/" + part;
    if (inside && StartsWith(a + "/", path + "/")) continue;
    auto st = fs.Lstat(path);
    if (!st) {
      if (st.error() == ENOENT) return Ok();
      return IoFail(fmt::format("cannot inspect {}", path), st.error());
    }
    if (st->IsLink()) return Invalid(fmt::format("refusing to install through a symlink: {}", path));
    if (!st->IsDir()) return Invalid(fmt::format("not a directory: {}", path));
    if (st->uid != me && st->uid != 0)
      return Fail(ErrorKind::kPermission, fmt::format("{} belongs to another user (uid {})", path, st->uid));
    if ((st->mode & (S_IWGRP | S_IWOTH)) && !(st->mode & S_ISVTX))
      return Fail(ErrorKind::kPermission,
                  fmt::format("{} is writable by other users; run chmod go-w {} first", path, path));
  }
  return Ok();
}

// mkdir -p with exactly 0755 on what we create; existing directories stay as
// they are (CheckComponents judges them, before and after).
Status MakeParents(sys::FileSystem& fs, const std::string& dir) {
  std::string path;
  for (const auto& part : Split(dir, '/')) {
    if (part.empty()) continue;
    path += "/" + part;
    auto made = fs.MakeDir(path, 0755);
    if (made) continue;
    if (made.error() != EEXIST) return IoFail(fmt::format("cannot create {}", path), made.error());
    auto st = fs.Stat(path);
    if (!st || !st->IsDir()) return Invalid(fmt::format("not a directory: {}", path));
  }
  return Ok();
}

// Writes the bundle into a fresh directory `root` (which must not exist).
Status WriteBundle(sys::FileSystem& fs, const std::string& root) {
  if (auto made = fs.MakeDir(root, 0700); !made)
    return IoFail(fmt::format("cannot create {}", root), made.error());
  std::vector<std::string> dirs = {root};
  for (const SkillFile& f : BundledSkill()) {
    std::string rel(f.path);
    std::string dir = root;
    std::vector<std::string> parts = Split(rel, '/');
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      dir += "/" + parts[i];
      auto made = fs.MakeDir(dir, 0755);
      if (made)
        dirs.push_back(dir);
      else if (made.error() != EEXIST)
        return IoFail(fmt::format("cannot create {}", dir), made.error());
    }
    std::string path = root + "/" + rel;
    if (auto w = fs.WriteNewFile(path, f.content, 0644); !w)
      return IoFail(fmt::format("cannot write {}", path), w.error());
  }
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
    if (auto synced = fs.Sync(*it); !synced)
      return IoFail(fmt::format("cannot sync {}", *it), synced.error());
  if (auto m = fs.SetMode(root, 0755); !m)
    return IoFail(fmt::format("cannot set the mode of {}", root), m.error());
  return Ok();
}

// Refuses to swap out the directory a shell (ours) is standing in.
Status CheckNotCwd(const std::string& dest) {
  char cwd[PATH_MAX];
  char real_dest[PATH_MAX];
  if (getcwd(cwd, sizeof cwd) == nullptr)
    return Fail(ErrorKind::kIo, "cannot verify the active working directory before replacement");
  if (realpath(dest.c_str(), real_dest) == nullptr) return IoFail("cannot resolve " + dest, errno);
  std::string c = std::string(cwd) + "/", d = std::string(real_dest) + "/";
  if (StartsWith(c, d))
    return Invalid(
        "refusing to replace the current working directory or one of its ancestors; run the command from "
        "outside "
        "the installed skill");
  return Ok();
}

// Moves the staged copy into place, keeping the previous copy until the new
// one is in: on failure the previous copy is put back.
Status Swap(sys::FileSystem& fs, const std::string& stage, const std::string& dest, const std::string& backup,
            bool replacing) {
  if (replacing) {
    if (auto moved = fs.Rename(dest, backup); !moved)
      return IoFail(fmt::format("cannot move the previous skill aside ({})", dest), moved.error());
  }
  auto installed = fs.Rename(stage, dest);
  if (installed) return Ok();
  int err = installed.error();
  if (!replacing) return IoFail(fmt::format("cannot install {}", dest), err);
  if (fs.Lstat(dest))
    return Fail(ErrorKind::kIo,
                fmt::format("skill replacement failed; the previous copy is retained at {}", backup));
  if (auto restored = fs.Rename(backup, dest); !restored)
    return Fail(ErrorKind::kIo,
                fmt::format("skill replacement and rollback failed ({}; {}); the previous copy may "
                            "remain at {}",
                            Errno(err), Errno(restored.error()), backup));
  return Fail(ErrorKind::kIo,
              fmt::format("cannot install {}: {}; the previous copy was restored", dest, Errno(err)));
}

}  // namespace

Result<SkillAgent> ParseSkillAgent(std::string_view name) {
  std::string n = ToLower(Trim(name));
  if (n == "codex") return SkillAgent::kCodex;
  if (n == "claude" || n == "claude-code") return SkillAgent::kClaude;
  return Invalid(fmt::format("--agent must be codex or claude, not '{}'", Printable(name)));
}

const char* SkillAgentName(SkillAgent agent) { return agent == SkillAgent::kCodex ? "codex" : "claude"; }

SkillEnv ProcessSkillEnv() {
  SkillEnv env;
  env.home = sys::HomeDir();
  if (const char* c = std::getenv("CODEX_HOME"); c != nullptr && c[0] == '/') env.codex_home = c;
  return env;
}

Result<std::string> SkillDir(SkillAgent agent, const SkillEnv& env) {
  if (!ValidDir(env.home)) return Invalid("cannot find your home directory; set HOME or pass --target DIR");
  std::string home =
      env.home.size() > 1 && env.home.back() == '/' ? env.home.substr(0, env.home.size() - 1) : env.home;
  return agent == SkillAgent::kCodex ? home + "/.agents/skills/gpubk" : home + "/.claude/skills/gpubk";
}

Result<std::string> LegacyCodexSkillDir(const SkillEnv& env) {
  if (env.codex_home && ValidDir(*env.codex_home)) return *env.codex_home + "/skills/gpubk";
  if (!ValidDir(env.home)) return Invalid("cannot find your home directory; set HOME");
  return env.home + "/.codex/skills/gpubk";
}

bool IsGpubkSkillMd(std::string_view text) {
  if (!StartsWith(text, "---\n")) return false;
  size_t end = text.find("\n---", 3);
  std::string_view front = text.substr(4, end == std::string_view::npos ? text.size() : end - 3);
  for (const auto& line : Split(front, '\n'))
    if (Trim(line) == "name: gpubk" || Trim(line) == "name: \"gpubk\"") return true;
  return false;
}

Result<std::string> InstallSkill(const InstallOptions& o) {
  const std::string& dest = o.dest;
  if (!ValidDir(dest))
    return Invalid(fmt::format("skill directory must be an absolute path: {}", Printable(dest)));
  if (sys::Basename(dest) != kSkillName)
    return Invalid(fmt::format("the skill directory must be named gpubk (its SKILL.md name): {}", dest));
  sys::FileSystem& fs = o.fs != nullptr ? *o.fs : sys::RealFileSystem();
  std::string parent = sys::Dirname(dest);
  BK_TRY(CheckComponents(fs, parent, o.anchor));

  bool replacing = false;
  auto st = fs.Lstat(dest);
  if (st) {
    if (st->IsLink()) return Invalid(fmt::format("refusing to replace a symlink: {}", dest));
    if (!o.force) return Invalid(fmt::format("skill already exists: {}; pass --force to replace it", dest));
    if (!st->IsDir() || st->uid != getuid())
      return Invalid(fmt::format("refusing to replace an unrecognized directory: {}", dest));
    auto skill_md = sys::ReadSmallFile(dest + "/SKILL.md", 1 << 20);
    if (!skill_md || !IsGpubkSkillMd(*skill_md))
      return Invalid(fmt::format("refusing to replace an unrecognized skill: {}", dest));
    BK_TRY(CheckNotCwd(dest));
    replacing = true;
  } else if (st.error() != ENOENT) {
    return IoFail(fmt::format("cannot inspect {}", dest), st.error());
  }

  BK_TRY(MakeParents(fs, parent));
  BK_TRY(CheckComponents(fs, parent, o.anchor));  // what we just walked through is still real
  std::string hex = sys::NewUuid();
  std::erase(hex, '-');
  std::string stage = sys::JoinPath(parent, fmt::format(".gpubk.{}.tmp", hex));
  std::string backup = sys::JoinPath(parent, fmt::format(".gpubk.{}.backup", hex));

  Status done = WriteBundle(fs, stage);
  if (done) done = Swap(fs, stage, dest, backup, replacing);
  if (done) {
    if (auto synced = fs.Sync(parent); !synced)
      done = IoFail(fmt::format("cannot sync {}", parent), synced.error());
  }
  (void)fs.RemoveTree(stage);  // whatever happened, no staging copy stays behind
  if (!done) return std::unexpected(done.error());
  if (replacing && !fs.RemoveTree(backup))
    return Fail(ErrorKind::kIo,
                fmt::format("skill installed but the previous copy could not be removed: {}", backup));
  return dest;
}

const char* SkillStateName(SkillState state) {
  switch (state) {
    case SkillState::kAbsent: return "absent";
    case SkillState::kCurrent: return "current";
    case SkillState::kDiffers: return "differs";
    case SkillState::kForeign: return "foreign";
    case SkillState::kSymlink: return "symlink";
  }
  return "?";
}

SkillStatus InspectSkill(const std::string& dest) {
  SkillStatus s;
  s.path = dest;
  struct stat st {};
  if (lstat(dest.c_str(), &st) != 0) return s;
  if (S_ISLNK(st.st_mode)) {
    s.state = SkillState::kSymlink;
    return s;
  }
  auto skill_md =
      S_ISDIR(st.st_mode) ? sys::ReadSmallFile(dest + "/SKILL.md", 1 << 20) : Result<std::string>();
  if (!S_ISDIR(st.st_mode) || !skill_md || !IsGpubkSkillMd(*skill_md)) {
    s.state = SkillState::kForeign;
    return s;
  }
  for (const SkillFile& f : BundledSkill()) {
    auto have = sys::ReadSmallFile(dest + "/" + std::string(f.path), 4 << 20);
    if (!have || *have != f.content) s.differing.emplace_back(f.path);
  }
  s.state = s.differing.empty() ? SkillState::kCurrent : SkillState::kDiffers;
  return s;
}

}  // namespace bk::agent
