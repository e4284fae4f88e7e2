// bk admin services install|status|uninstall: the systemd unit of a system
// install alone (the configuration, data and manifest stay as they are).

#include <fmt/format.h>
#include <unistd.h>

#include "admin/unit.h"
#include "base/strings.h"
#include "cli/admin_system.h"
#include "cli/args.h"
#include "cli/context.h"
#include "sys/fs.h"

namespace bk::cli {
namespace {

using admin::Layout;

struct ServiceOptions {
  std::optional<std::string> root;
  bool yes = false, dry_run = false, no_start = false;
};

// The unit this install's configuration calls for.
Result<admin::Want> WantedUnit(const Layout& L) {
  BK_ASSIGN_OR_RETURN(std::optional<nlohmann::json> doc, ReadInstalledConfig(L.On(Layout::kConfig)));
  if (!doc)
    return Invalid(fmt::format("no system install: {} does not exist; run sudo bk admin install first",
                               L.On(Layout::kConfig)));
  return UnitWant(L, *doc);
}

Result<int> Install(Context& ctx, const ServiceOptions& o, const Layout& L) {
  BK_ASSIGN_OR_RETURN(admin::Want unit, WantedUnit(L));
  BK_ASSIGN_OR_RETURN(std::vector<admin::Step> steps, admin::PlanSteps(sys::RealFileSystem(), {unit}));
  bool changed = steps.back().action != admin::Action::kUnchanged;
  if (changed && !o.dry_run) BK_TRY(CanConfirm(o.yes, "bk admin services install"));
  for (const auto& l : admin::PlanLines(steps)) ctx.Print(l);
  if (o.dry_run) return 0;
  if (changed) {
    if (!Confirmed(ctx, o.yes, "Install the unit", "yes")) {
      ctx.Print("cancelled");
      return 1;
    }
    BK_TRY(admin::Apply(steps));
  }
  ctx.Print(StartUnit(o.root, o.no_start, changed, steps.back().action == admin::Action::kUpdate));
  return 0;
}

Result<int> Status(Context& ctx, const ServiceOptions& o, const Layout& L) {
  BK_ASSIGN_OR_RETURN(admin::Want unit, WantedUnit(L));
  std::string state = "missing";
  if (sys::Exists(unit.path)) {
    auto text = sys::ReadSmallFile(unit.path, 1 << 20);
    state = !text                                              ? "unreadable"
            : text->substr(0, text->find('\n')) != unit.marker ? "not written by bk"
            : *text == unit.content                            ? "current"
                                    : "outdated (bk admin services install rewrites it)";
  }
  ctx.Print(fmt::format("unit: {} ({})", unit.path, state));
  std::string systemctl = o.root ? "" : Systemctl();
  if (systemctl.empty()) {
    ctx.Print("systemd: not running here; the daemon is whatever runs `bk server serve`");
  } else {
    std::fputs("active: ", ctx.out);
    std::fflush(ctx.out);
    RunSystemctl(systemctl, {"is-active", Layout::kUnitName});
  }
  return state == "current" ? 0 : 1;
}

Result<int> Uninstall(Context& ctx, const ServiceOptions& o, const Layout& L) {
  std::string path = L.On(Layout::kUnit);
  if (!sys::Exists(path)) {
    ctx.Print(fmt::format("{} is not installed; nothing to do", path));
    return 0;
  }
  BK_ASSIGN_OR_RETURN(std::string text, sys::ReadSmallFile(path, 1 << 20));
  if (text.substr(0, text.find('\n')) != admin::kUnitMarker)
    return Invalid(fmt::format("{} was not written by bk; remove it yourself", path));
  if (!o.dry_run) BK_TRY(CanConfirm(o.yes, "bk admin services uninstall"));
  ctx.Print(fmt::format("  remove    {} (systemd unit)", path));
  if (o.dry_run) return 0;
  if (!Confirmed(ctx, o.yes, "Remove the unit", "yes")) {
    ctx.Print("cancelled");
    return 1;
  }
  std::string systemctl = o.root ? "" : Systemctl();
  if (!systemctl.empty()) RunSystemctl(systemctl, {"disable", "--now", Layout::kUnitName});
  if (unlink(path.c_str()) != 0) return Fail(ErrorKind::kIo, fmt::format("cannot remove {}", path));
  if (!systemctl.empty()) RunSystemctl(systemctl, {"daemon-reload"});
  ctx.Print("removed; the configuration and the ledger stay (bk admin uninstall removes the rest)");
  return 0;
}

}  // namespace

Result<int> RunAdminServices(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> action;
  ServiceOptions o;
  ArgSpec spec(
      "bk admin services",
      "The systemd unit of the system install, gpubk.service: install (and start), status, uninstall. "
      "One unit: `bk server serve` runs the broker and the GPU monitor in one process.");
  spec.Positional("action", &action, "install | status | uninstall");
  spec.Flag("--yes", &o.yes, "do not ask for confirmation");
  spec.Flag("--dry-run", &o.dry_run, "print what would change and stop");
  spec.Flag("--no-start", &o.no_start, "install: do not start the unit");
  spec.Option("--root", &o.root, "the staging root given to bk admin install --root", "DIR");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!action) return Invalid("usage: bk admin services install|status|uninstall");
  BK_ASSIGN_OR_RETURN(Layout L, ChooseLayout(o.root));
  if (*action == "status") return Status(ctx, o, L);
  if (*action != "install" && *action != "uninstall")
    return Invalid(fmt::format("unknown services action {}; use install, status or uninstall", *action));
  BK_TRY(NeedRoot(*action == "install" ? "bk admin services install" : "bk admin services uninstall",
                  o.dry_run));
  return *action == "install" ? Install(ctx, o, L) : Uninstall(ctx, o, L);
}

}  // namespace bk::cli
