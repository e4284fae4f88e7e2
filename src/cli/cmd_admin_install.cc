// bk admin install: the system deployment. /etc/gpubk/config.json (root's),
// the ledger in /var/lib/gpubk and the socket in /run/gpubk (the service
// account's), one systemd unit, optionally the login hook, and a manifest of
// what was there before. Every input is checked and the plan printed before
// anything changes; a re-run reconciles and never rewrites policy or data.

#include <fcntl.h>
#include <fmt/format.h>
#include <grp.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "admin/manifest.h"
#include "admin/unit.h"
#include "base/strings.h"
#include "cli/admin_system.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/server_dir.h"
#include "gpu/open_source.h"
#include "sys/fs.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

using admin::Layout;
using nlohmann::json;

struct InstallOptions {
  SpecOptions spec;
  std::optional<std::string> service_user, from_server, root;
  bool dry_run = false, json_out = false, yes = false, login_hook = false, no_start = false;
};

// The service account: --service-user, else the installed configuration's
// owner, else the one who ran sudo (SUDO_UID and SUDO_USER must agree).
Result<ServiceAccount> ChooseAccount(const InstallOptions& o, const std::optional<json>& installed) {
  if (o.service_user) return FindServiceAccount(*o.service_user);
  if (installed) return FindServiceAccount(std::to_string((*installed)["owner_uid"].get<uint32_t>()));
  const char* uid = std::getenv("SUDO_UID");
  const char* user = std::getenv("SUDO_USER");
  if (!uid || !user)
    return Invalid(
        "name the account the daemon runs as with --service-user USER (or run bk admin install "
        "through sudo from that account)");
  BK_ASSIGN_OR_RETURN(ServiceAccount a, FindServiceAccount(user));
  if (std::to_string(a.uid) != uid)
    return Invalid(
        fmt::format("SUDO_USER {} and SUDO_UID {} name different accounts; name the service account "
                    "with --service-user",
                    user, uid));
  return a;
}

// The explicit options that an installed configuration contradicts.
std::vector<std::string> Contradictions(const InstallOptions& o, const config::ServerSpec& s, const json& doc,
                                        const ServiceAccount& svc) {
  std::vector<std::string> diffs;
  auto differs = [&](bool given, const char* flag, const char* key, const json& want) {
    json have = doc.contains(key) ? doc[key] : json();
    if (given && have != want)
      diffs.push_back(fmt::format("{} {} differs from its {} {}", flag, want.dump(), key, have.dump()));
  };
  differs(o.spec.gpus.has_value(), "--gpu-count", "gpu_count", s.gpu_count);
  differs(o.spec.cpus.has_value(), "--cpus", "host_cpus", s.host_cpus ? json(*s.host_cpus) : json());
  differs(o.spec.ram.has_value(), "--ram", "host_ram_mb", s.host_ram_mb ? json(*s.host_ram_mb) : json());
  differs(o.spec.access.has_value() || o.spec.group.has_value(), "--access", "access", s.access);
  differs(o.spec.group.has_value(), "--group", "group", s.group);
  differs(o.service_user.has_value(), "--service-user", "owner_uid", svc.uid);
  return diffs;
}

// A rootless server's config adopted as the system's: its policy keys kept,
// its paths and owner replaced. Refused while its daemon runs.
Result<json> AdoptedConfig(const std::string& path, const ServiceAccount& svc, std::string& data_from) {
  BK_ASSIGN_OR_RETURN(config::Config c, config::LoadServer(path, config::ProcessEnv(), false));
  BK_ASSIGN_OR_RETURN(std::optional<json> doc, ReadInstalledConfig(path));
  std::string lock = sys::JoinPath(sys::Dirname(c.socket_path), "serve.lock");
  if (int fd = open(lock.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW); fd >= 0) {
    bool running = flock(fd, LOCK_SH | LOCK_NB) != 0;
    close(fd);
    if (running)
      return Invalid(
          fmt::format("the server of {} is running; stop its `bk server serve`, then install again", path));
  }
  data_from = c.data_dir;
  json& d = *doc;
  d["directory"] = Layout::kEtcDir;
  d["owner_uid"] = svc.uid;
  d["owner"] = svc.name;
  d["socket"] = Layout::kSocket;
  d["data_dir"] = Layout::kDataDir;
  return d;
}

// Copies a rootless server's data directory into the (new, empty) system
// one, every file given to the service account.
Status CopyData(const std::string& from, const std::string& to, const ServiceAccount& svc) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(from, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    bool dir = it->is_directory(ec);
    std::string target = to + "/" + fs::relative(it->path(), from, ec).string();
    if (dir)
      fs::create_directory(target, ec);
    else if (it->is_regular_file(ec))
      fs::copy_file(it->path(), target, fs::copy_options::none, ec);
    else
      continue;  // sockets and the like belong to a running daemon
    if (!ec &&
        (lchown(target.c_str(), svc.uid, svc.gid) != 0 || chmod(target.c_str(), dir ? 0700 : 0600) != 0))
      ec = std::error_code(errno, std::generic_category());
    if (ec) return Fail(ErrorKind::kIo, fmt::format("cannot copy {} into {}: {}", from, to, ec.message()));
  }
  if (ec) return Fail(ErrorKind::kIo, fmt::format("cannot copy {} into {}: {}", from, to, ec.message()));
  return Ok();
}

// Everything the deployment needs, in creation order (the manifest comes after).
std::vector<admin::Want> Wants(const Layout& L, const std::string& config_text, const ServiceAccount& svc,
                               std::optional<gid_t> access_gid, admin::Want unit, bool hook) {
  using admin::Kind;
  std::vector<admin::Want> w = {
      {.path = L.On(Layout::kEtcDir), .what = "configuration directory", .kind = Kind::kDir, .mode = 0755},
      {.path = L.On(Layout::kConfig),
       .what = "configuration",
       .kind = Kind::kConfig,
       .mode = 0644,
       .content = config_text},
      // As `bk server init` makes its data/ and run/: only the daemon reads the
      // ledger; clients traverse to the socket.
      {.path = L.On(Layout::kDataDir),
       .what = "data directory",
       .kind = Kind::kDir,
       .mode = 0700,
       .uid = svc.uid,
       .gid = svc.gid},
      {.path = L.On(Layout::kRunDir),
       .what = "socket directory",
       .kind = Kind::kDir,
       .mode = static_cast<mode_t>(access_gid ? 0710 : 0711),
       .uid = svc.uid,
       .gid = access_gid.value_or(svc.gid)},
      std::move(unit)};
  if (hook)
    w.push_back({.path = L.On(Layout::kHook),
                 .what = "login hook",
                 .kind = Kind::kManaged,
                 .mode = 0644,
                 .content = admin::RenderLoginHook(SelfPath()),
                 .marker = admin::kHookMarker});
  return w;
}

// The manifest's own step: the first install's records and one for each new path.
Result<admin::Step> ManifestStep(const Layout& L, const std::vector<admin::Step>& steps) {
  std::string path = L.On(Layout::kManifest);
  admin::Manifest old;
  if (sys::Exists(path)) {
    BK_ASSIGN_OR_RETURN(std::string text, sys::ReadSmallFile(path, 16 << 20));
    BK_ASSIGN_OR_RETURN(old, admin::ParseManifest(text, path));
  }
  admin::Manifest m = admin::Merge(old, steps);
  admin::Want self{.path = path, .what = "install manifest", .kind = admin::Kind::kRecord, .mode = 0600};
  m = admin::Merge(m, {admin::Step{self, admin::Action::kCreate, {}}});
  self.content = admin::RenderManifest(m);
  BK_ASSIGN_OR_RETURN(std::vector<admin::Step> planned, admin::PlanSteps(sys::RealFileSystem(), {self}));
  return planned.back();
}

// The group of a group-access config (none with world access), which the
// service account must be in: it owns the socket directory.
Result<std::optional<gid_t>> AccessGroup(const json& doc, const ServiceAccount& svc,
                                         const std::string& path) {
  if (doc.value("access", "world") != "group") return std::optional<gid_t>();
  std::string name = doc.value("group", "");
  gid_t gid = 0;
  if (doc.contains("gid") && doc["gid"].is_number_unsigned())
    gid = doc["gid"].get<gid_t>();
  else if (struct group* g = getgrnam(name.c_str()))
    gid = g->gr_gid;
  else
    return Invalid(fmt::format("{}: no such group {}", path, name));
  if (!InGroup(svc, gid))
    return Invalid(fmt::format(
        "the service account {} is not in group {}; add it (usermod -aG {} {}) or choose another group",
        svc.name, name, name, svc.name));
  return std::optional<gid_t>(gid);
}

struct Plan {
  ServiceAccount svc;
  std::string access;
  std::vector<admin::Step> steps;
  std::string data_from;  // --from-server: the data directory copied in
};

// Every check, then the steps; nothing on disk changes here.
Result<Plan> MakePlan(const InstallOptions& o, const Layout& L) {
  Plan p;
  BK_ASSIGN_OR_RETURN(std::optional<json> installed, ReadInstalledConfig(L.On(Layout::kConfig)));
  BK_ASSIGN_OR_RETURN(p.svc, ChooseAccount(o, installed));
  config::ServerSpec s{.directory = Layout::kEtcDir, .owner_uid = p.svc.uid, .owner = p.svc.name};
  s.socket = Layout::kSocket;
  s.data_dir = Layout::kDataDir;
  const char* sim = std::getenv("BK_GPU_SIM_FILE");
  BK_TRY(ApplyPolicyOptions(o.spec, gpu::DetectGpuCount(sim ? sim : ""), s));
  BK_TRY(ApplyAccessOptions(o.spec, s));
  json doc;
  if (installed) {
    if (o.from_server)
      return Invalid(
          fmt::format("{} is already installed; --from-server adopts a server only into a new install "
                      "(bk admin uninstall first)",
                      L.On(Layout::kConfig)));
    if (auto diffs = Contradictions(o, s, *installed, p.svc); !diffs.empty())
      return Invalid(
          fmt::format("{} is kept as it is: {}; change policy with `bk admin policy` (a re-run needs none "
                      "of these options)",
                      L.On(Layout::kConfig), Join(diffs, ", ")));
    doc = *installed;
    // Placed by hand, it may name a server directory elsewhere, which the unit's sandbox would not let the
    // daemon write.
    if (doc.value("socket", "") != Layout::kSocket || doc.value("data_dir", "") != Layout::kDataDir)
      return Invalid(
          fmt::format("{} serves the ledger in {} through {}; a system install keeps them in {} and {}: "
                      "move the config away and adopt that server with --from-server",
                      L.On(Layout::kConfig), doc.value("data_dir", "?"), doc.value("socket", "?"),
                      Layout::kDataDir, Layout::kSocket));
  } else if (o.from_server) {
    BK_ASSIGN_OR_RETURN(doc, AdoptedConfig(*o.from_server, p.svc, p.data_from));
  } else {
    doc = json::parse(config::RenderServerConfig(s));
  }
  p.access = doc.value("access", "world");
  BK_ASSIGN_OR_RETURN(std::optional<gid_t> gid, AccessGroup(doc, p.svc, L.On(Layout::kConfig)));
  BK_ASSIGN_OR_RETURN(admin::Want unit, UnitWant(L, doc));
  bool hook = o.login_hook || sys::Exists(L.On(Layout::kHook));
  std::string text = installed ? "" : doc.dump(2) + "\n";
  BK_ASSIGN_OR_RETURN(p.steps,
                      admin::PlanSteps(sys::RealFileSystem(), Wants(L, text, p.svc, gid, unit, hook)));
  if (!p.data_from.empty()) {
    auto names = sys::RealFileSystem().ReadDir(L.On(Layout::kDataDir));
    if (names && !names->empty())
      return Invalid(
          fmt::format("{} already holds data; --from-server never writes over a ledger: move it away "
                      "first",
                      L.On(Layout::kDataDir)));
  }
  BK_ASSIGN_OR_RETURN(admin::Step manifest, ManifestStep(L, p.steps));
  p.steps.push_back(std::move(manifest));
  return p;
}

bool Changes(const std::vector<admin::Step>& steps) {
  return std::any_of(steps.begin(), steps.end(),
                     [](const admin::Step& s) { return s.action != admin::Action::kUnchanged; });
}

Result<int> Install(Context& ctx, const InstallOptions& o) {
  BK_TRY(NeedRoot("bk admin install", o.dry_run));
  BK_ASSIGN_OR_RETURN(Layout L, ChooseLayout(o.root));
  BK_ASSIGN_OR_RETURN(Plan p, MakePlan(o, L));
  bool changed = Changes(p.steps);
  std::vector<std::string> lines = {fmt::format(
      "GPUBK system install: service account {} (UID {}), access {}", p.svc.name, p.svc.uid, p.access)};
  for (auto& l : admin::PlanLines(p.steps)) lines.push_back(std::move(l));
  if (!o.dry_run && changed) {
    if (o.json_out && !o.yes) return Invalid("bk admin install --json needs --yes (or --dry-run)");
    BK_TRY(CanConfirm(o.yes, "bk admin install"));
    if (!o.json_out)
      for (const auto& l : lines) ctx.Print(l);
    if (!Confirmed(ctx, o.yes, "Install", "yes")) {
      ctx.Print("install cancelled");
      return 1;
    }
    BK_TRY(admin::Apply(p.steps));
    if (!p.data_from.empty()) BK_TRY(CopyData(p.data_from, L.On(Layout::kDataDir), p.svc));
  } else if (!o.json_out) {
    for (const auto& l : lines) ctx.Print(l);
  }
  bool unit_updated = std::any_of(p.steps.begin(), p.steps.end(), [&](const admin::Step& s) {
    return s.want.path == L.On(Layout::kUnit) && s.action == admin::Action::kUpdate;
  });
  std::string service =
      o.dry_run ? "dry run: nothing changed" : StartUnit(o.root, o.no_start, changed, unit_updated);
  if (o.json_out) {
    ctx.Print(json{
        {"schema_version", "gpubk.admin-install.v1"},
        {"kind", "admin-install"},
        {"dry_run", o.dry_run},
        {"root", L.root},
        {"service_user", p.svc.name},
        {"access", p.access},
        {"changed", changed},
        {"steps", json::parse(admin::PlanJson(p.steps))},
        {"service",
         service}}.dump());
    return 0;
  }
  if (!o.dry_run) ctx.Print(changed ? "installed" : "nothing to change: the system install is complete");
  ctx.Print(service);
  return 0;
}

}  // namespace

Result<int> RunAdminInstall(Context& ctx, const std::vector<std::string>& args) {
  InstallOptions o;
  ArgSpec spec(
      "bk admin install",
      "Install GPUBK for the whole host: /etc/gpubk/config.json, the ledger in /var/lib/gpubk and the "
      "socket in /run/gpubk owned by a service account, and the gpubk.service systemd unit. Prints the "
      "plan first; a re-run changes only what is missing and never rewrites policy or data.");
  spec.Flag("--dry-run", &o.dry_run, "print the plan and stop");
  spec.Flag("--json", &o.json_out, "print one gpubk.admin-install.v1 document (with --yes or --dry-run)");
  spec.Flag("--yes", &o.yes, "do not ask for confirmation");
  spec.Option("--gpu-count", &o.spec.gpus, "number of GPUs (default: detected)", "N");
  spec.Option("--cpus", &o.spec.cpus, "host CPU budget shared by all bookings (off when omitted)", "N");
  spec.Option("--ram", &o.spec.ram, "host RAM budget, e.g. 256g (off when omitted)", "SIZE");
  spec.Option("--access", &o.spec.access, "world (every local user) or group", "MODE");
  spec.Option("--group", &o.spec.group, "the group allowed in with --access group", "NAME");
  spec.Option("--service-user", &o.service_user, "the account the daemon runs as (default: who ran sudo)",
              "USER");
  spec.Flag("--login-hook", &o.login_hook, "also install /etc/profile.d/gpubk.sh (bk login at each login)");
  spec.Flag("--no-start", &o.no_start, "do not start the unit");
  spec.Option("--from-server", &o.from_server, "adopt a `bk server init` server: its policy and its ledger",
              "CONFIG");
  spec.Option("--root", &o.root, "stage everything under DIR (packaging); starts nothing", "DIR");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  ctx.json = ctx.json || o.json_out;
  return Install(ctx, o);
}

}  // namespace bk::cli
