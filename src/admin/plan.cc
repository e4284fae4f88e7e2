#include "admin/plan.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

#include "sys/fs.h"
#include "sys/users.h"

namespace bk::admin {
namespace {

constexpr size_t kMaxManagedBytes = 1 << 20;

std::string GroupName(gid_t gid) {
  struct group g {};
  struct group* res = nullptr;
  char buf[16384];
  if (getgrgid_r(gid, &g, buf, sizeof(buf), &res) == 0 && res) return res->gr_name;
  return std::to_string(gid);
}

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// The action for a directory that exists.
Result<Action> ExistingDir(const Want& w, const sys::FileInfo& st) {
  if (st.IsLink())
    return Invalid(fmt::format("{} is a symbolic link; remove it, then install again", w.path));
  if (!st.IsDir()) return Invalid(fmt::format("{} exists and is not a directory", w.path));
  if (st.uid != w.uid)
    return Invalid(fmt::format(
        "{} ({}) belongs to {}, not {}; an install never takes over another account's directory: give it "
        "to {} (chown -R) or choose that account with --service-user",
        w.path, w.what, sys::UserName(st.uid), sys::UserName(w.uid), sys::UserName(w.uid)));
  return (st.mode & 07777) == w.mode ? Action::kUnchanged : Action::kAdopt;
}

// The action for a file that exists, and its text when it will be replaced.
Result<Action> ExistingFile(sys::FileSystem& fs, const Want& w, const sys::FileInfo& st,
                            std::optional<std::string>& previous) {
  if (!S_ISREG(st.mode) || st.nlink != 1)
    return Invalid(
        fmt::format("{} is not a plain file (a symlink, a hard link or something else); remove it, "
                    "then install again",
                    w.path));
  bool same_owner = st.uid == w.uid && (st.mode & 07777) == w.mode;
  if (w.kind == Kind::kConfig) return same_owner ? Action::kUnchanged : Action::kAdopt;
  BK_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(w.path, kMaxManagedBytes));
  if (w.kind == Kind::kManaged && FirstLine(text) != w.marker)
    return Invalid(
        fmt::format("{} exists and was not written by bk; move it away, then install again", w.path));
  if (text == w.content) return same_owner ? Action::kUnchanged : Action::kAdopt;
  previous = std::move(text);
  return Action::kUpdate;
}

Status Created(const std::string& path, int err, const char* what) {
  return Fail(ErrorKind::kIo, fmt::format("cannot {} {}: {}", what, path, std::strerror(err)));
}

// One step on disk; `made` says whether it created the path.
Status Do(const Step& s, bool& made) {
  const Want& w = s.want;
  made = false;
  if (s.action == Action::kUnchanged) return Ok();
  if (s.action == Action::kCreate && (w.kind == Kind::kParent || w.kind == Kind::kDir)) {
    if (mkdir(w.path.c_str(), w.mode) != 0) return Created(w.path, errno, "create");
    made = true;
  } else if (s.action == Action::kCreate || s.action == Action::kUpdate) {
    BK_TRY(sys::WriteFileAtomic(w.path, w.content, w.mode));
    made = s.action == Action::kCreate;
  }
  if (lchown(w.path.c_str(), w.uid, w.gid) != 0) return Created(w.path, errno, "give away");
  if (chmod(w.path.c_str(), w.mode) != 0) return Created(w.path, errno, "chmod");
  return Ok();
}

}  // namespace

const char* ActionName(Action a) {
  switch (a) {
    case Action::kCreate: return "create";
    case Action::kUnchanged: return "unchanged";
    case Action::kAdopt: return "adopt";
    case Action::kUpdate: return "update";
  }
  return "create";
}

Result<std::vector<Step>> PlanSteps(sys::FileSystem& fs, const std::vector<Want>& wants) {
  std::vector<Step> steps;
  std::set<std::string> planned;
  for (const Want& w : wants) {
    // Missing ancestors first, outermost first.
    std::vector<std::string> missing;
    for (std::string dir = sys::Dirname(w.path); dir != "/" && !planned.contains(dir) && !fs.Lstat(dir);
         dir = sys::Dirname(dir))
      missing.push_back(dir);
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      steps.push_back({Want{.path = *it, .what = "directory", .kind = Kind::kParent}, Action::kCreate, {}});
      planned.insert(*it);
    }
    Step s{w, Action::kCreate, {}};
    if (auto st = fs.Lstat(w.path); st) {
      if (w.kind == Kind::kDir || w.kind == Kind::kParent) {
        BK_ASSIGN_OR_RETURN(s.action, ExistingDir(w, *st));
      } else {
        BK_ASSIGN_OR_RETURN(s.action, ExistingFile(fs, w, *st, s.previous));
      }
    } else if (st.error() != ENOENT) {
      return Fail(ErrorKind::kIo, fmt::format("cannot inspect {}: {}", w.path, std::strerror(st.error())));
    }
    planned.insert(w.path);
    steps.push_back(std::move(s));
  }
  return steps;
}

Status Apply(const std::vector<Step>& steps) {
  std::vector<const Step*> done;  // created or updated, for the undo
  for (const Step& s : steps) {
    bool made = false;
    Status st = Do(s, made);
    if (made || (st && s.action == Action::kUpdate)) done.push_back(&s);
    if (st) continue;
    for (auto it = done.rbegin(); it != done.rend(); ++it) {
      const Step& d = **it;
      if (d.action == Action::kUpdate && d.previous)
        (void)sys::WriteFileAtomic(d.want.path, *d.previous, d.want.mode);
      else if (d.want.kind == Kind::kParent || d.want.kind == Kind::kDir)
        (void)rmdir(d.want.path.c_str());
      else
        (void)unlink(d.want.path.c_str());
    }
    return st;
  }
  return Ok();
}

std::vector<std::string> PlanLines(const std::vector<Step>& steps) {
  std::vector<std::string> lines;
  for (const Step& s : steps) {
    const Want& w = s.want;
    bool dir = w.kind == Kind::kParent || w.kind == Kind::kDir;
    lines.push_back(fmt::format("  {:<9} {} ({}: {} {:04o} {}:{})", ActionName(s.action), w.path, w.what,
                                dir ? "dir" : "file", w.mode, sys::UserName(w.uid), GroupName(w.gid)));
  }
  return lines;
}

std::string PlanJson(const std::vector<Step>& steps) {
  nlohmann::json out = nlohmann::json::array();
  for (const Step& s : steps) {
    const Want& w = s.want;
    out.push_back({{"path", w.path},
                   {"what", w.what},
                   {"type", w.kind == Kind::kParent || w.kind == Kind::kDir ? "directory" : "file"},
                   {"action", ActionName(s.action)},
                   {"mode", fmt::format("{:04o}", w.mode)},
                   {"owner", sys::UserName(w.uid)},
                   {"group", GroupName(w.gid)}});
  }
  return out.dump();
}

}  // namespace bk::admin
