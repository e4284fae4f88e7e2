// bk login install|uninstall: one marked block in the user's shell rc file
// that runs `bk login --hook` in interactive shells. Only the block's lines
// change; the file is rewritten atomically with its mode kept. An rc file
// that is a symbolic link (a dotfile manager's) is followed: the block goes
// into the target, and the user is told which file that was.

#include <fmt/format.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>

#include "cli/args.h"
#include "cli/context.h"
#include "config/config.h"
#include "shell/rc_block.h"
#include "sys/fs.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

constexpr size_t kMaxRcBytes = 1 << 20;

struct RcFile {
  std::string path;    // as named
  std::string target;  // the file written: `path`, or where its link leads
  bool exists = false;
  mode_t mode = 0644;  // a new rc file's, as shells' skeleton files have
  std::string text;
};

Result<RcFile> ReadRc(const std::string& path) {
  RcFile f{.path = path, .target = path};
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return f;
    return Invalid(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode)) {
    char resolved[PATH_MAX];
    if (!::realpath(path.c_str(), resolved))
      return Invalid(
          fmt::format("{} is a link to nothing readable ({}); fix or remove it", path, std::strerror(errno)));
    f.target = resolved;
    if (::lstat(f.target.c_str(), &st) != 0)
      return Invalid(fmt::format("cannot read {}: {}", f.target, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return Invalid(fmt::format("{} is not a regular file", f.target));
  if (st.st_uid != sys::CurrentUid())
    return Invalid(
        fmt::format("{} belongs to UID {}, not to you; bk changes only your own files", f.target, st.st_uid));
  f.exists = true;
  f.mode = st.st_mode & 07777;
  BK_ASSIGN_OR_RETURN(f.text, sys::ReadSmallFile(f.target, kMaxRcBytes));
  return f;
}

// "~/.bashrc" for a file in the home directory: what the user recognises.
std::string Shown(const std::string& path) {
  std::string home = sys::HomeDir();
  return !home.empty() && path.starts_with(home + "/") ? "~" + path.substr(home.size()) : path;
}

}  // namespace

Result<int> RunLoginRc(Context& ctx, const std::vector<std::string>& args, bool install) {
  std::optional<std::string> rc;
  ArgSpec spec(install ? "bk login install" : "bk login uninstall",
               install
                   ? "Show `bk login` whenever an interactive shell starts: adds one marked block to your "
                     "shell's rc file (once; again replaces it)."
                   : "Remove the block `bk login install` added to your shell's rc file.");
  spec.Option("--rc", &rc, "the rc file (default: ~/.zshrc when $SHELL is zsh, else ~/.bashrc)", "FILE");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!rc && sys::HomeDir().empty())
    return Invalid("no home directory to find your rc file in; give --rc FILE");
  std::string path =
      rc ? *rc : shell::DefaultRcFile(config::ProcessEnv()("SHELL").value_or(""), sys::HomeDir());
  BK_ASSIGN_OR_RETURN(RcFile f, ReadRc(path));
  std::string text =
      install ? shell::WithRcBlock(f.text, shell::RcBlock(SelfPath())) : shell::WithoutRcBlock(f.text);
  if (text == f.text) {
    ctx.Print(install ? fmt::format("already installed in {}", Shown(f.target))
                      : fmt::format("not installed in {}; nothing to remove", Shown(f.target)));
    return 0;
  }
  BK_TRY(sys::WriteFileAtomic(f.target, text, f.mode));
  if (f.target != f.path)
    ctx.Print(fmt::format("note: {} is a link; changed its target {}", Shown(f.path), f.target));
  if (!install) {
    ctx.Print(fmt::format("removed the bk login block from {}", Shown(f.target)));
  } else if (shell::HasRcBlock(f.text)) {
    ctx.Print(fmt::format("updated the bk login block in {} (this bk: {})", Shown(f.target), SelfPath()));
  } else {
    ctx.Print(fmt::format(
        "installed in {}: new interactive shells show `bk login`; `bk login uninstall` removes it",
        Shown(f.target)));
  }
  return 0;
}

}  // namespace bk::cli
