#include "agent/skill_install.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "agent/skill_bundle.h"
#include "base/strings.h"
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

// Test builds can make one step of the staged copy fail, to prove rollback.
bool Injected(std::string_view step) {
#ifdef BK_TEST_HOOKS
  const char* v = std::getenv("BK_TEST_SKILL_FAIL");
  return v != nullptr && step == v;
#else
  (void)step;
  return false;
#endif
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
Status CheckComponents(const std::string& dir, const std::string& anchor) {
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
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) {
      if (errno == ENOENT) return Ok();
      return IoFail(fmt::format("cannot inspect {}", path), errno);
    }
    if (S_ISLNK(st.st_mode)) return Invalid(fmt::format("refusing to install through a symlink: {}", path));
    if (!S_ISDIR(st.st_mode)) return Invalid(fmt::format("not a directory: {}", path));
    if (st.st_uid != me && st.st_uid != 0)
      return Fail(ErrorKind::kPermission,
                  fmt::format("{} belongs to another user (uid {})", path, st.st_uid));
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
      return Fail(ErrorKind::kPermission,
                  fmt::format("{} is writable by other users; run chmod go-w {} first", path, path));
  }
  return Ok();
}

// mkdir -p with exactly 0755 on what we create; existing directories stay as
// they are (CheckComponents judges them, before and after).
Status MakeParents(const std::string& dir) {
  std::string path;
  for (const auto& part : Split(dir, '/')) {
    if (part.empty()) continue;
    path += "/" + part;
    if (mkdir(path.c_str(), 0755) == 0) {
      if (chmod(path.c_str(), 0755) != 0)
        return IoFail(fmt::format("cannot set the mode of {}", path), errno);
      continue;
    }
    if (errno != EEXIST) return IoFail(fmt::format("cannot create {}", path), errno);
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return Invalid(fmt::format("not a directory: {}", path));
  }
  return Ok();
}

Status FsyncPath(const std::string& path, int flags) {
  int fd = open(path.c_str(), flags | O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return IoFail(fmt::format("cannot open {}", path), errno);
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  if (rc != 0) return IoFail(fmt::format("cannot sync {}", path), err);
  return Ok();
}

Status WriteNewFile(const std::string& path, std::string_view content) {
  if (Injected("write")) return Fail(ErrorKind::kIo, fmt::format("cannot write {}: injected failure", path));
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return IoFail(fmt::format("cannot create {}", path), errno);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      close(fd);
      return IoFail(fmt::format("cannot write {}", path), err);
    }
    done += static_cast<size_t>(n);
  }
  // The umask must not decide the mode of an installed file.
  if (fchmod(fd, 0644) != 0 || fsync(fd) != 0) {
    int err = errno;
    close(fd);
    return IoFail(fmt::format("cannot finish {}", path), err);
  }
  if (close(fd) != 0) return IoFail(fmt::format("cannot close {}", path), errno);
  return Ok();
}

// Writes the bundle into a fresh directory `root` (which must not exist).
Status WriteBundle(const std::string& root) {
  if (mkdir(root.c_str(), 0700) != 0) return IoFail(fmt::format("cannot create {}", root), errno);
  std::vector<std::string> dirs = {root};
  for (const SkillFile& f : BundledSkill()) {
    std::string rel(f.path);
    std::string dir = root;
    std::vector<std::string> parts = Split(rel, '/');
    for (size_t i = 0; i + 1 < parts.size(); ++i) {
      dir += "/" + parts[i];
      if (mkdir(dir.c_str(), 0755) == 0) {
        if (chmod(dir.c_str(), 0755) != 0)
          return IoFail(fmt::format("cannot set the mode of {}", dir), errno);
        dirs.push_back(dir);
      } else if (errno != EEXIST) {
        return IoFail(fmt::format("cannot create {}", dir), errno);
      }
    }
    BK_TRY(WriteNewFile(root + "/" + rel, f.content));
  }
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) BK_TRY(FsyncPath(*it, O_DIRECTORY));
  if (chmod(root.c_str(), 0755) != 0) return IoFail(fmt::format("cannot set the mode of {}", root), errno);
  return Ok();
}

int RemoveEntry(const char* path, const struct stat*, int type, struct FTW*) {
  return (type == FTW_DP ? rmdir(path) : unlink(path)) == 0 ? 0 : -1;
}

// rm -r that never follows a symlink (FTW_PHYS) and tolerates absence.
Status RemoveTree(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return errno == ENOENT ? Ok() : IoFail("cannot inspect " + path, errno);
  if (!S_ISDIR(st.st_mode)) return unlink(path.c_str()) == 0 ? Ok() : IoFail("cannot remove " + path, errno);
  if (nftw(path.c_str(), RemoveEntry, 16, FTW_DEPTH | FTW_PHYS) != 0)
    return IoFail("cannot remove " + path, errno);
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

bool Exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

// Moves the staged copy into place, keeping the previous copy until the new
// one is in: on failure the previous copy is put back.
Status Swap(const std::string& stage, const std::string& dest, const std::string& backup, bool replacing) {
  if (replacing) {
    if (Injected("backup") || rename(dest.c_str(), backup.c_str()) != 0) {
      int err = Injected("backup") ? EIO : errno;
      return IoFail(fmt::format("cannot move the previous skill aside ({})", dest), err);
    }
  }
  if (Injected("rename") || rename(stage.c_str(), dest.c_str()) != 0) {
    int err = Injected("rename") ? EIO : errno;
    if (!replacing) return IoFail(fmt::format("cannot install {}", dest), err);
    if (Exists(dest))
      return Fail(ErrorKind::kIo,
                  fmt::format("skill replacement failed; the previous copy is retained at {}", backup));
    if (Injected("rollback") || rename(backup.c_str(), dest.c_str()) != 0) {
      int rerr = Injected("rollback") ? EIO : errno;
      return Fail(ErrorKind::kIo,
                  fmt::format("skill replacement and rollback failed ({}; {}); the previous copy may "
                              "remain at {}",
                              Errno(err), Errno(rerr), backup));
    }
    return Fail(ErrorKind::kIo,
                fmt::format("cannot install {}: {}; the previous copy was restored", dest, Errno(err)));
  }
  return Ok();
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
  std::string parent = sys::Dirname(dest);
  BK_TRY(CheckComponents(parent, o.anchor));

  bool replacing = false;
  struct stat st {};
  if (lstat(dest.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) return Invalid(fmt::format("refusing to replace a symlink: {}", dest));
    if (!o.force) return Invalid(fmt::format("skill already exists: {}; pass --force to replace it", dest));
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid())
      return Invalid(fmt::format("refusing to replace an unrecognized directory: {}", dest));
    auto skill_md = sys::ReadSmallFile(dest + "/SKILL.md", 1 << 20);
    if (!skill_md || !IsGpubkSkillMd(*skill_md))
      return Invalid(fmt::format("refusing to replace an unrecognized skill: {}", dest));
    BK_TRY(CheckNotCwd(dest));
    replacing = true;
  } else if (errno != ENOENT) {
    return IoFail(fmt::format("cannot inspect {}", dest), errno);
  }

  BK_TRY(MakeParents(parent));
  BK_TRY(CheckComponents(parent, o.anchor));  // what we just walked through is still real
  std::string hex = sys::NewUuid();
  std::erase(hex, '-');
  std::string stage = sys::JoinPath(parent, fmt::format(".gpubk.{}.tmp", hex));
  std::string backup = sys::JoinPath(parent, fmt::format(".gpubk.{}.backup", hex));

  Status done = WriteBundle(stage);
  if (done) done = Swap(stage, dest, backup, replacing);
  if (done) done = FsyncPath(parent, O_DIRECTORY);
  (void)RemoveTree(stage);  // whatever happened, no staging copy stays behind
  if (!done) return std::unexpected(done.error());
  if (replacing && !RemoveTree(backup))
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
