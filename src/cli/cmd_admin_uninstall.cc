// bk admin uninstall: puts back what the install manifest says was there
// before the first `bk admin install`. The ledger stays unless --purge-data;
// accounts are never touched.

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "admin/manifest.h"
#include "cli/admin_system.h"
#include "cli/args.h"
#include "cli/context.h"
#include "sys/fs.h"

namespace bk::cli {
namespace {

using admin::Layout;
using admin::Undo;

const char* UndoName(Undo u) {
  switch (u) {
    case Undo::kRemove: return "remove";
    case Undo::kRestore: return "restore";
    case Undo::kKeep: return "keep";
    case Undo::kKeepData: return "keep";
    case Undo::kKeepAbove: return "keep";
  }
  return "keep";
}

std::string Why(Undo u) {
  if (u == Undo::kKeep) return ": there before the install";
  if (u == Undo::kKeepData) return ": the ledger; --purge-data removes it";
  if (u == Undo::kKeepAbove) return ": holds the data kept";
  if (u == Undo::kRestore) return ": its text before the install";
  return "";
}

// One entry undone; "" or why it was left.
std::string UndoEntry(const admin::ManifestEntry& e, Undo u, const Layout& L) {
  if (u == Undo::kRestore) {
    auto st = sys::WriteFileAtomic(e.path, *e.previous, 0644);
    return st ? "" : st.error().message;
  }
  if (u != Undo::kRemove) return "";
  // The daemon's files live in these two; the other directories hold only what the install made.
  if (e.path == L.On(Layout::kRunDir) || e.path == L.On(Layout::kDataDir)) {
    auto removed = sys::RealFileSystem().RemoveTree(e.path);
    return removed ? "" : std::strerror(removed.error());
  }
  if ((e.dir ? rmdir(e.path.c_str()) : unlink(e.path.c_str())) == 0 || errno == ENOENT) return "";
  return std::strerror(errno);
}

}  // namespace

Result<int> RunAdminUninstall(Context& ctx, const std::vector<std::string>& args) {
  bool purge = false, dry_run = false, yes = false;
  std::optional<std::string> root;
  ArgSpec spec("bk admin uninstall",
               "Remove the system install: stop gpubk.service and put back what was there before `bk admin "
               "install` (its manifest says what). The ledger stays unless --purge-data; accounts stay.");
  spec.Flag("--purge-data", &purge, "also remove the data directory the install created (the ledger)");
  spec.Flag("--dry-run", &dry_run, "print what would be done and stop");
  spec.Flag("--yes", &yes, "do not ask for confirmation");
  spec.Option("--root", &root, "the staging root given to bk admin install --root", "DIR");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_TRY(NeedRoot("bk admin uninstall", dry_run));
  BK_ASSIGN_OR_RETURN(Layout L, ChooseLayout(root));
  std::string path = L.On(Layout::kManifest);
  if (!sys::Exists(path))
    return Invalid(
        fmt::format("no system install to remove: {} does not exist (bk admin install writes it)", path));
  BK_ASSIGN_OR_RETURN(std::string text, sys::ReadSmallFile(path, 16 << 20));
  BK_ASSIGN_OR_RETURN(admin::Manifest m, admin::ParseManifest(text, path));
  std::vector<Undo> how = admin::UndoAll(m, L.On(Layout::kDataDir), purge);
  std::vector<std::pair<const admin::ManifestEntry*, Undo>> undo;  // the last made first
  for (size_t i = m.entries.size(); i-- > 0;) undo.emplace_back(&m.entries[i], how[i]);
  if (!dry_run) BK_TRY(CanConfirm(yes, "bk admin uninstall"));
  ctx.Print("GPUBK system uninstall:");
  for (const auto& [e, u] : undo)
    ctx.Print(fmt::format("  {:<9} {} ({}{})", UndoName(u), e->path, e->what, Why(u)));
  if (dry_run) return 0;
  if (!Confirmed(ctx, yes, "Uninstall", "yes")) {
    ctx.Print("uninstall cancelled");
    return 1;
  }
  std::string systemctl = root ? "" : Systemctl();
  if (!systemctl.empty() && RunSystemctl(systemctl, {"disable", "--now", Layout::kUnitName}) != 0)
    ctx.Warn("systemctl disable --now gpubk.service failed; the unit file is removed anyway");
  std::vector<std::string> left;
  for (const auto& [e, u] : undo)
    if (std::string why = UndoEntry(*e, u, L); !why.empty())
      left.push_back(fmt::format("{}: {}", e->path, why));
  if (!systemctl.empty()) RunSystemctl(systemctl, {"daemon-reload"});
  for (const auto& l : left) ctx.Warn("left " + l);
  ctx.Print(left.empty() ? "uninstalled" : "uninstalled, except what is listed above");
  return left.empty() ? 0 : 1;
}

}  // namespace bk::cli
