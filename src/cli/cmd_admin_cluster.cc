// bk admin cluster status|init|add|rm|enable|disable: the catalog of GPU
// hosts (gpubk.cluster.v1) that `bk c` and `bk @NODE` book on. Root-owned at
// /etc/gpubk/cluster.json; BK_CLUSTER_CONFIG or --cluster-file names another
// (a test's, a user's own). Every change is shown, confirmed and written
// atomically (mode 0644); bad input changes nothing.

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "cli/args.h"
#include "cli/context.h"
#include "cluster/catalog.h"
#include "cluster/catalog_file.h"
#include "sys/fs.h"
#include "sys/node.h"

namespace bk::cli {
namespace {

using cluster::Catalog;
using cluster::Node;
using cluster::Transport;

using cluster::CatalogPath;
using cluster::kSystemCatalog;
constexpr auto Load = cluster::LoadCatalog;

std::string NodeLine(const Node& n) {
  return fmt::format("  {} {} {} {} priority={} timeout={}s endpoint={} executable={}", n.name, n.node_id,
                     n.transport == Transport::kLocal ? "local" : "ssh", n.enabled ? "enabled" : "disabled",
                     n.priority, n.timeout_seconds, n.transport == Transport::kLocal ? "this host" : n.target,
                     n.executable);
}

void PrintCatalog(const Context& ctx, const std::string& path, const Catalog& c) {
  ctx.Print("Cluster catalog: " + path);
  for (const Node& n : c.nodes) ctx.Print(NodeLine(n));
  for (const auto& p : c.principals) {
    std::string members;
    for (const auto& m : p.members) members += fmt::format(" {}:{}", m.node_id, m.uid);
    ctx.Print(fmt::format("  principal {}:{}", p.id, members));
  }
  if (c.history_root) ctx.Print("  history root: " + *c.history_root);
}

// Shows the catalog a change makes, asks, and writes it in place of the old.
Result<int> Save(Context& ctx, const std::string& path, const Catalog& c, bool yes, const std::string& done) {
  BK_TRY(cluster::Check(c));
  if (path == kSystemCatalog && geteuid() != 0)
    return Fail(ErrorKind::kPermission, "the cluster catalog in /etc/gpubk is root's: run it with sudo");
  PrintCatalog(ctx, path, c);
  BK_TRY(Confirm(ctx, yes, "Write this cluster catalog?"));
  if (path == kSystemCatalog && mkdir("/etc/gpubk", 0755) != 0 && errno != EEXIST)
    return Fail(ErrorKind::kIo, fmt::format("cannot create /etc/gpubk: {}", std::strerror(errno)));
  BK_TRY(sys::WriteFileAtomic(path, cluster::Render(c), 0644));
  ctx.Print(done);
  return 0;
}

Result<Catalog> Existing(const std::string& path) {
  BK_ASSIGN_OR_RETURN(auto c, Load(path));
  if (!c)
    return Fail(
        ErrorKind::kNotFound,
        fmt::format("no cluster catalog at {}; start one with `sudo bk admin cluster init NAME --yes` on a "
                    "GPU host, or `bk admin cluster add NAME HOST NODE_ID`",
                    path));
  return std::move(*c);
}

Node* Named(Catalog& c, const std::string& name) {
  for (Node& n : c.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

template <typename T>
Result<T> Number(const std::string& option, const std::string& text) {
  T value{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    return Invalid(fmt::format("{} must be a number, not {}", option, text));
  return value;
}

struct Common {
  std::optional<std::string> file;
  bool yes = false;
  void AddTo(ArgSpec& spec) {
    spec.Option("--cluster-file", &file,
                "the catalog to change (default BK_CLUSTER_CONFIG or " + std::string(kSystemCatalog) + ")",
                "PATH");
    spec.Flag("--yes", &yes, "write without asking");
  }
};

Result<int> Status(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> file;
  bool json = false;
  ArgSpec spec("bk admin cluster status",
               "The cluster catalog, checked: every GPU host and how it is reached.");
  spec.Option("--cluster-file", &file, "the catalog to read", "PATH");
  spec.Flag("--json", &json, "print the catalog document itself");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(std::string path, CatalogPath(file));
  BK_ASSIGN_OR_RETURN(Catalog c, Existing(path));
  if (json)
    std::fputs(cluster::Render(c).c_str(), ctx.out);
  else
    PrintCatalog(ctx, path, c);
  return 0;
}

Result<int> Init(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> name;
  Common common;
  ArgSpec spec("bk admin cluster init", "Start the catalog with this host as its local node.");
  spec.NeededPositional("name", &name, "this host's name in the cluster, e.g. gpu-a");
  common.AddTo(spec);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(std::string path, CatalogPath(common.file));
  BK_ASSIGN_OR_RETURN(auto existing, Load(path));
  if (existing) return Invalid(fmt::format("{} already exists; `bk admin cluster status` shows it", path));
  Catalog c;
  c.nodes.push_back({.name = *name, .node_id = sys::LocalNode().id, .transport = Transport::kLocal});
  return Save(ctx, path, c, common.yes, fmt::format("written: {} (this host is {})", path, *name));
}

Result<int> Add(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> name, target, node_id, priority, timeout, executable;
  Common common;
  ArgSpec spec("bk admin cluster add", "Add a GPU host reached over SSH (bk c probe prints its node ID).");
  spec.NeededPositional("name", &name, "its name in the cluster, e.g. gpu-b");
  spec.NeededPositional("target", &target, "the SSH host (or ssh_config alias)");
  spec.NeededPositional("node_id", &node_id, "its 20-hex stable node ID");
  spec.Option("--priority", &priority, "0 (first) to 1000000 (last) among equal offers", "N");
  spec.Option("--timeout", &timeout, "seconds to wait for it, 1-300 (default 8)", "S");
  spec.Option("--executable", &executable, "bk on that host (default /usr/local/bin/bk)", "PATH");
  common.AddTo(spec);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(std::string path, CatalogPath(common.file));
  BK_ASSIGN_OR_RETURN(auto existing, Load(path));
  Catalog c = existing ? *existing : Catalog{};
  if (Named(c, *name)) return Invalid(fmt::format("{} is already in the catalog; remove it first", *name));
  Node n{.name = *name, .node_id = *node_id, .transport = Transport::kSsh, .target = *target};
  if (priority) {
    BK_ASSIGN_OR_RETURN(n.priority, Number<int64_t>("--priority", *priority));
  }
  if (timeout) {
    BK_ASSIGN_OR_RETURN(n.timeout_seconds, Number<double>("--timeout", *timeout));
  }
  if (executable) n.executable = *executable;
  c.nodes.push_back(std::move(n));
  return Save(ctx, path, c, common.yes, fmt::format("added: {}", *name));
}

// What a change to one named host does to the catalog: the message to print
// once it is written, or nothing when the catalog stays as it was.
using HostChange = std::function<Result<std::optional<std::string>>(Catalog&, Node&)>;

// `bk admin cluster WORD NAME`: the host's catalog read, `change` applied,
// the result shown, confirmed and written.
Result<int> ChangeHost(Context& ctx, const std::vector<std::string>& args, const std::string& prog,
                       const std::string& help, const HostChange& change) {
  std::optional<std::string> name;
  Common common;
  ArgSpec spec(prog, help);
  spec.NeededPositional("name", &name, "the host's name in the cluster");
  common.AddTo(spec);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(std::string path, CatalogPath(common.file));
  BK_ASSIGN_OR_RETURN(Catalog c, Existing(path));
  Node* n = Named(c, *name);
  if (!n) return Fail(ErrorKind::kNotFound, fmt::format("no host named {} in {}", *name, path));
  BK_ASSIGN_OR_RETURN(std::optional<std::string> done, change(c, *n));
  if (!done) return 0;
  return Save(ctx, path, c, common.yes, *done);
}

Result<int> Remove(Context& ctx, const std::vector<std::string>& args) {
  return ChangeHost(
      ctx, args, "bk admin cluster rm", "Remove a host from the catalog (its bookings stay on it).",
      [](Catalog& c, Node& n) -> Result<std::optional<std::string>> {
        if (c.nodes.size() == 1)
          return Invalid(fmt::format(
              "{} is the catalog's last host; `bk admin cluster delete` removes the catalog", n.name));
        std::string name = n.name, id = n.node_id;
        std::erase_if(c.nodes, [&](const Node& x) { return x.name == name; });
        for (auto& p : c.principals) std::erase_if(p.members, [&](const auto& m) { return m.node_id == id; });
        std::erase_if(c.principals, [](const auto& p) { return p.members.empty(); });
        return "removed: " + name;
      });
}

Result<int> Toggle(Context& ctx, const std::vector<std::string>& args, bool enable) {
  std::string word = enable ? "enabled" : "disabled";
  return ChangeHost(
      ctx, args, enable ? "bk admin cluster enable" : "bk admin cluster disable",
      enable ? "Offer a host's GPUs again." : "Stop offering a host's GPUs (its bookings stay).",
      [&](Catalog&, Node& n) -> Result<std::optional<std::string>> {
        if (n.enabled == enable) {
          ctx.Print(fmt::format("unchanged: {} is already {}", n.name, word));
          return std::nullopt;
        }
        n.enabled = enable;
        return word + ": " + n.name;
      });
}

Result<int> Set(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> name, target, executable, priority, timeout;
  Common common;
  ArgSpec spec("bk admin cluster set",
               "Change how a host is reached or preferred; its node ID never changes.");
  spec.NeededPositional("name", &name, "the host's name in the cluster");
  spec.Option("--target", &target, "the SSH host or ssh_config alias", "HOST");
  spec.Option("--executable", &executable, "bk on that host", "PATH");
  spec.Option("--priority", &priority, "0 (first) to 1000000 (last) among equal offers", "N");
  spec.Option("--timeout", &timeout, "seconds to wait for it, 1-300", "S");
  common.AddTo(spec);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!target && !executable && !priority && !timeout)
    return Invalid("give at least one of --target, --executable, --priority or --timeout");
  BK_ASSIGN_OR_RETURN(std::string path, CatalogPath(common.file));
  BK_ASSIGN_OR_RETURN(Catalog c, Existing(path));
  Node* n = name ? Named(c, *name) : nullptr;
  if (!n) return Fail(ErrorKind::kNotFound, fmt::format("no host named {} in {}", name.value_or(""), path));
  if (target && n->transport == Transport::kLocal)
    return Invalid(fmt::format("{} is this host (local): it has no SSH target", n->name));
  Node before = *n;
  if (target) n->target = *target;
  if (executable) n->executable = *executable;
  if (priority) {
    BK_ASSIGN_OR_RETURN(n->priority, Number<int64_t>("--priority", *priority));
  }
  if (timeout) {
    BK_ASSIGN_OR_RETURN(n->timeout_seconds, Number<double>("--timeout", *timeout));
  }
  if (*n == before) {
    ctx.Print("unchanged: " + n->name);
    return 0;
  }
  return Save(ctx, path, c, common.yes, "updated: " + n->name);
}

// bk admin cluster map PRINCIPAL NODE UID / unmap NODE UID: one person's
// accounts on several hosts, summed together by `bk c u` (reports only).
Result<int> Map(Context& ctx, const std::vector<std::string>& args, bool map) {
  std::optional<std::string> principal, name, uid_text;
  Common common;
  ArgSpec spec(map ? "bk admin cluster map" : "bk admin cluster unmap",
               map ? "Count a host's UID as one person's (reports only; it grants nothing)."
                   : "Stop counting a host's UID as a person's.");
  if (map) spec.NeededPositional("principal", &principal, "the person's ID, e.g. alice");
  spec.NeededPositional("node", &name, "the host's name in the cluster");
  spec.NeededPositional("uid", &uid_text, "the account's UID on that host");
  common.AddTo(spec);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if ((map && !principal) || !name || !uid_text)
    return Invalid(map ? "give a principal, a host and a UID, e.g. `bk admin cluster map alice gpu-b 2042`"
                       : "give a host and a UID, e.g. `bk admin cluster unmap gpu-b 2042`");
  BK_ASSIGN_OR_RETURN(int64_t uid, Number<int64_t>("UID", *uid_text));
  BK_ASSIGN_OR_RETURN(std::string path, CatalogPath(common.file));
  BK_ASSIGN_OR_RETURN(Catalog c, Existing(path));
  Node* n = Named(c, *name);
  if (!n) return Fail(ErrorKind::kNotFound, fmt::format("no host named {} in {}", *name, path));
  cluster::Member m{n->node_id, uid};
  cluster::Principal* holder = nullptr;
  for (auto& p : c.principals)
    if (std::find(p.members.begin(), p.members.end(), m) != p.members.end()) holder = &p;
  if (!map) {
    if (!holder) return Fail(ErrorKind::kNotFound, fmt::format("UID {} on {} is not mapped", uid, *name));
    std::erase(holder->members, m);
    std::erase_if(c.principals, [](const auto& p) { return p.members.empty(); });
    return Save(ctx, path, c, common.yes, fmt::format("unmapped: {} UID {}", *name, uid));
  }
  if (holder && holder->id == *principal) {
    ctx.Print(fmt::format("unchanged: {} UID {} is already {}", *name, uid, *principal));
    return 0;
  }
  if (holder)
    return Invalid(fmt::format("UID {} on {} is already {}; unmap it first", uid, *name, holder->id));
  auto it = std::find_if(c.principals.begin(), c.principals.end(),
                         [&](const auto& p) { return p.id == *principal; });
  if (it == c.principals.end()) {
    c.principals.push_back({*principal, {m}});
  } else {
    it->members.push_back(m);
  }
  return Save(ctx, path, c, common.yes, fmt::format("mapped: {} UID {} is {}", *name, uid, *principal));
}

// bk admin cluster delete: the catalog goes; every host and its bookings stay.
Result<int> Delete(Context& ctx, const std::vector<std::string>& args) {
  Common common;
  ArgSpec spec("bk admin cluster delete",
               "Remove the catalog: cluster booking stops; hosts and bookings stay.");
  common.AddTo(spec);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(std::string path, CatalogPath(common.file));
  BK_ASSIGN_OR_RETURN(Catalog c, Existing(path));
  if (path == kSystemCatalog && geteuid() != 0)
    return Fail(ErrorKind::kPermission, "the cluster catalog in /etc/gpubk is root's: run it with sudo");
  PrintCatalog(ctx, path, c);
  BK_TRY(Confirm(ctx, common.yes, "Delete this cluster catalog?"));
  // What was shown is what goes: a catalog changed meanwhile is kept.
  BK_ASSIGN_OR_RETURN(Catalog now, Existing(path));
  if (now != c)
    return Fail(ErrorKind::kConflict, fmt::format("{} changed since it was shown; run it again", path));
  if (unlink(path.c_str()) != 0)
    return Fail(ErrorKind::kIo, fmt::format("cannot remove {}: {}", path, std::strerror(errno)));
  ctx.Print("deleted: " + path);
  ctx.Print("GPU hosts, reservations, usage history, and SSH configuration were unchanged.");
  return 0;
}

}  // namespace

Result<int> RunAdminCluster(Context& ctx, const std::vector<std::string>& args) {
  static constexpr const char* kUsage =
      "usage: bk admin cluster status|init|add|set|rm|enable|disable|map|unmap|delete ...\n"
      "The catalog of GPU hosts that `bk c` and `bk @NODE` book on; `bk c probe NAME HOST` checks a new one.";
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    if (args.empty())
      return UsageError(
          "give a subcommand: status, init, add, set, rm, enable, disable, map, unmap or delete");
    ctx.Print(kUsage);
    return 0;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  const std::string& w = args[0];
  if (w == "status" || w == "list" || w == "ls") return Status(ctx, rest);
  if (w == "init") return Init(ctx, rest);
  if (w == "add") return Add(ctx, rest);
  if (w == "rm" || w == "remove") return Remove(ctx, rest);
  if (w == "enable" || w == "disable") return Toggle(ctx, rest, w == "enable");
  if (w == "set" || w == "update") return Set(ctx, rest);
  if (w == "map" || w == "unmap") return Map(ctx, rest, w == "map");
  if (w == "delete" || w == "destroy") return Delete(ctx, rest);
  return Invalid(fmt::format(
      "unknown cluster command {}; use status, init, add, set, rm, enable, disable, map, unmap or delete",
      w));
}

}  // namespace bk::cli
