// bk server init | connect | disconnect | status | serve: a shared server run
// by one ordinary account, no sudo anywhere.

#include <fmt/format.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/server_dir.h"
#include "engine/parse.h"
#include "server/daemon.h"
#include "server/unix_socket.h"
#include "store/ledger_store.h"
#include "surface/icalendar.h"
#include "sys/fs.h"
#include "sys/trust.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

using nlohmann::json;

bool OnNetworkFs(const std::string& path) {
  struct statfs fs {};
  if (statfs(path.c_str(), &fs) != 0) return false;
  return fs.f_type == 0x6969 /* NFS */ || fs.f_type == 0x65735546 /* FUSE */ ||
         fs.f_type == 0xFF534D42 /* CIFS */;
}

// Long on purpose: `bk server init` checks every input before it creates the
// first directory, then creates in one order; split, the order would hide.
Result<int> Init(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> dir, slot, shared;
  SpecOptions opt;
  ArgSpec spec("bk server init",
               "Create a shared GPUBK server owned by you: a directory with its config, ledger and "
               "socket. No sudo needed.");
  spec.Option("--directory", &dir, "absolute path of a new or empty directory", "DIR");
  spec.Option("--gpu-count", &opt.gpus, "number of GPUs (default: detected)", "N");
  spec.Option("--cpus", &opt.cpus, "host CPU budget shared by all bookings (off when omitted)", "N");
  spec.Option("--ram", &opt.ram, "host RAM budget, e.g. 256g (off when omitted)", "SIZE");
  spec.Option("--access", &opt.access, "world (every local user) or group", "MODE");
  spec.Option("--group", &opt.group, "the group allowed in with --access group", "NAME");
  spec.Option("--slot-minutes", &slot, "booking slot, a divisor of 60 (default 5)", "M");
  spec.Option("--max-shared", &shared, "shared slots per GPU (default 2)", "N");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!dir)
    return Invalid("give the server directory: bk server init --directory /absolute/path/gpubk-server");
  std::string d = *dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  if (d.empty() || d[0] != '/')
    return Invalid(fmt::format("--directory must be an absolute path, not {}", *dir));
  // Refused before anything is created: `serve` could never bind it.
  BK_TRY(server::CheckSocketPath(config::ServerSocketPath(d)));
  uid_t me = sys::CurrentUid();
  config::ServerSpec s;
  s.directory = d;
  s.owner_uid = me;
  s.owner = sys::UserName(me);
  // The default is what this host's configuration counted (gpu::DetectGpuCount
  // when nothing sets gpu_count): the simulation file's GPUs, or NVIDIA's.
  BK_TRY(ApplyPolicyOptions(opt, ctx.config.policy.gpu_count, s));
  BK_ASSIGN_OR_RETURN(int64_t sm, PositiveInt(slot, "--slot-minutes", 1, 60, 5));
  if (60 % sm != 0)
    return Invalid("--slot-minutes must divide one hour: 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60");
  s.slot_minutes = static_cast<int>(sm);
  BK_ASSIGN_OR_RETURN(int64_t ms, PositiveInt(shared, "--max-shared", 1, 10000, 2));
  s.max_shared = static_cast<int>(ms);
  BK_TRY(ApplyAccessOptions(opt, s));
  // Only root may give files to a group it is not in; say so before creating anything.
  if (s.gid && me != 0 && getegid() != *s.gid) {
    std::vector<gid_t> mine(getgroups(0, nullptr));
    int n = getgroups(static_cast<int>(mine.size()), mine.data());
    if (n < 0 || std::find(mine.begin(), mine.begin() + n, *s.gid) == mine.begin() + n)
      return Invalid(
          fmt::format("you are not in group {}; join it (an administrator runs `usermod -aG {} {}`), log "
                      "in again, and retry",
                      s.group, s.group, s.owner));
  }
  // The directory: new, or existing and empty; real; ours; parents safe.
  BK_TRY(sys::CheckTrustedAncestors(d, me));
  sys::FileSystem& fs = sys::RealFileSystem();
  BK_TRY(CheckServerDirectory(fs, d, me));
  std::string cfg_path = d + "/config.json";
  store::OpenOptions o{d + "/data/ledger.db", true, me, 10000, false};
  BK_TRY(CreateServerDirectory(fs, s, [&]() -> Status {
    BK_TRY(store::LedgerStore::Open(o));
    return Ok();
  }));
  ctx.Print(fmt::format("initialized: {} (owner {}, {} GPUs, access {}{}{})", d, s.owner, s.gpu_count,
                        s.access, s.host_cpus ? fmt::format(", {} CPUs", *s.host_cpus) : "",
                        s.host_ram_mb ? ", RAM " + engine::FormatSizeMb(*s.host_ram_mb) : ""));
  if (OnNetworkFs(d))
    ctx.Warn(fmt::format(
        "{} is on a network or FUSE file system; the daemon holds the ledger alone, which works, but "
        "a local disk is faster and safer",
        d));
  ctx.Print("next:");
  ctx.Print(fmt::format("  bk server connect {}", cfg_path));
  ctx.Print(fmt::format("  bk server serve --config {}    # keep it running, e.g. in tmux", cfg_path));
  return 0;
}

Result<int> Connect(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> path;
  ArgSpec spec("bk server connect",
               "Use the shared server described by CONFIG from now on (remembered for you).");
  spec.Positional("config", &path, "the server's config.json");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!path)
    return Invalid("give the server's config.json, e.g. bk server connect /srv/gpubk-server/config.json");
  if ((*path)[0] != '/') return Invalid(fmt::format("{} must be an absolute path", *path));
  BK_ASSIGN_OR_RETURN(config::Config c, config::LoadServer(*path, config::ProcessEnv(), true));
  auto ledger = client::OpenRemote(c, *ctx.clock);
  std::string conn = config::ConnectionFile(config::ProcessEnv());
  BK_TRY(sys::EnsurePrivateDir(sys::Dirname(conn), 0700, sys::CurrentUid()));
  BK_TRY(sys::WriteFileAtomic(conn, json{{"config", *path}}.dump(2) + "\n", 0600));
  ctx.Print(fmt::format("connected: {} (owner {}, socket {})", *path, c.owner, c.socket_path));
  if (!ledger)
    ctx.Warn(ledger.error().message);
  else
    ctx.Print(fmt::format("server: reachable as {}", (*ledger)->actor().username));
  return 0;
}

Result<int> Disconnect(Context& ctx, const std::vector<std::string>& args) {
  ArgSpec spec("bk server disconnect", "Forget the connected server; bk uses your private ledger again.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  std::string conn = config::ConnectionFile(config::ProcessEnv());
  if (!sys::Exists(conn)) {
    ctx.Print("not connected to a server; nothing to do");
    return 0;
  }
  if (unlink(conn.c_str()) != 0) return Fail(ErrorKind::kIo, fmt::format("cannot remove {}", conn));
  ctx.Print("disconnected; bk uses your private ledger again");
  return 0;
}

Result<int> StatusCmd(Context& ctx, const std::vector<std::string>& args) {
  bool json_out = false;
  ArgSpec spec("bk server status", "Which deployment applies, and whether its daemon answers.");
  spec.Flag("--json", &json_out, "print a gpubk.server-status.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  // A configuration that cannot be loaded is the answer, not a private ledger.
  if (ctx.config_error) return std::unexpected(*ctx.config_error);
  const config::Config& c = ctx.config;
  json doc = {{"schema_version", "gpubk.server-status.v1"},
              {"kind", "server-status"},
              {"deployment", config::DeploymentName(c.deployment)},
              {"why", c.why}};
  if (c.deployment == config::Deployment::kPrivate) {
    doc["ledger"] = c.ledger_path;
    doc["reachable"] = true;
  } else {
    doc["config"] = c.server_config;
    doc["socket"] = c.socket_path;
    doc["owner"] = c.owner;
    doc["owner_uid"] = c.owner_uid;
    auto ledger = ctx.Ledger();
    doc["reachable"] = ledger.has_value();
    if (ledger) {
      doc["actor"] = {{"uid", (*ledger)->actor().uid},
                      {"username", (*ledger)->actor().username},
                      {"admin", (*ledger)->actor().admin}};
    } else {
      doc["error"] = ledger.error().message;
    }
  }
  if (json_out) {
    ctx.Print(doc.dump());
  } else {
    ctx.Print(fmt::format("deployment: {} ({})", doc["deployment"].get<std::string>(), c.why));
    if (c.deployment == config::Deployment::kPrivate) {
      ctx.Print("ledger: " + c.ledger_path);
    } else {
      ctx.Print(fmt::format("config: {}\nsocket: {}\nowner: {} (UID {})", c.server_config, c.socket_path,
                            c.owner, c.owner_uid));
      ctx.Print(doc["reachable"].get<bool>()
                    ? fmt::format("daemon: reachable; you are {}{}",
                                  doc["actor"]["username"].get<std::string>(),
                                  doc["actor"]["admin"].get<bool>() ? " (administrator)" : "")
                    : "daemon: not reachable; " + doc["error"].get<std::string>());
    }
  }
  return doc["reachable"].get<bool>() ? 0 : 2;
}

Result<int> ServeCmd(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> path;
  ArgSpec spec("bk server serve",
               "Run the server's daemon in the foreground (keep it in tmux, or under systemd). "
               "Stops cleanly on Ctrl-C or SIGTERM.");
  spec.Option("--config", &path, "the server's config.json", "CONFIG");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!path) return Invalid("give the server's config: bk server serve --config /path/to/config.json");
  server::ServeOptions o;
  o.config_path = *path;
  o.calendar = [](std::vector<engine::Reservation> reservations, const std::string& who,
                  const std::string& host, engine::Seconds since) {
    return surface::BookingsCalendar(std::move(reservations), who, host, since).text;
  };
  return server::Serve(o);
}

}  // namespace

Result<int> RunServer(Context& ctx, const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    ctx.Print(
        "usage: bk server init|connect|disconnect|status|serve ...\n\n"
        "  bk server init --directory DIR [--gpu-count N] [--cpus N] [--ram SIZE] [--access world|group "
        "--group NAME]\n"
        "                 [--slot-minutes M] [--max-shared N]\n"
        "  bk server connect DIR/config.json\n"
        "  bk server serve --config DIR/config.json\n"
        "  bk server status [--json]\n"
        "  bk server disconnect");
    return args.empty() ? 2 : 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "init") return Init(ctx, rest);
  if (args[0] == "connect") return Connect(ctx, rest);
  if (args[0] == "disconnect") return Disconnect(ctx, rest);
  if (args[0] == "status") return StatusCmd(ctx, rest);
  if (args[0] == "serve") return ServeCmd(ctx, rest);
  return Invalid(
      fmt::format("unknown server command {}; use init, connect, disconnect, status or serve", args[0]));
}

}  // namespace bk::cli
