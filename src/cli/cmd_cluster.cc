// bk c|cluster: several GPU hosts, each with its own daemon, ledger and
// authority, compared over OpenSSH and booked one at a time. This file holds
// the dispatch and the read-only views: status, check and probe. Writes are
// in cmd_cluster_write.cc, usage in cmd_cluster_usage.cc.

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <set>

#include "base/exit_codes.h"
#include "base/strings.h"
#include "cli/args.h"
#include "cli/cluster_commands.h"
#include "cli/cluster_session.h"
#include "cluster/catalog_file.h"
#include "cluster/placement.h"
#include "cluster/reply_fields.h"
#include "engine/parse.h"
#include "surface/text.h"

namespace bk::cli {
namespace {

using nlohmann::json;

constexpr const char* kClusterHelp = R"(usage: bk c [COMMAND] ...   (bk cluster)
Book across several GPU hosts. Each host keeps its own daemon and ledger;
bk asks them all over SSH and books on exactly one.

  bk c                      every host's GPUs and bookings (also: st, l)
  bk c check [--jobs]       reachability, identity, version, capabilities, clocks
  bk c rec N DUR [opts]     where N GPUs for DUR would land, best host first
  bk c N DUR [opts] [-- CMD]  book on the best host (also: bk c x N DUR)
  bk @NODE N DUR [opts]     book on that host only
  bk c e NODE/ID [opts]     edit a booking on its host (-d, --start, -t, -g, --count, ...)
  bk c renew NODE/ID DUR    extend a booking on its host
  bk c d NODE/ID            cancel a booking on its host
  bk c u [-s 24h] [--all]   usage across hosts, one line per person
  bk c probe NAME HOST      check a new host and print its reviewed add command

Options of rec and book: --mode s|x, --start ISO or -t/--at TIME (resolved
here, once), -g/--gpu LIST or -e/--exclude-gpu LIST, -m/--mem SIZE,
-s/--share N, --op-id ID (a retry never books twice), --json, --compact.
The catalog: /etc/gpubk/cluster.json or BK_CLUSTER_CONFIG (see bk admin cluster).)";

using cluster::Field;
using cluster::StrField;

// How far the host's clock is behind this one's; nothing when it gave no time.
std::optional<int64_t> ClockSkew(const json& d, engine::Seconds now) {
  auto t = cluster::InstantField(d, "generated_at");
  if (!t) return std::nullopt;
  return now - *t;
}

std::string Version(const json& d) { return StrField(Field(d, "software"), "version", "-"); }

int64_t GpuCount(const json& d) {
  const json& n = Field(Field(d, "policy"), "gpu_count");
  return n.is_number_integer() ? n.get<int64_t>() : 0;
}

// The caller's identity as the host saw it: (uid, username); uid -1 if odd.
std::pair<int64_t, std::string> Actor(const json& d) {
  const json& uid = Field(Field(d, "actor"), "uid");
  return {uid.is_number_integer() ? uid.get<int64_t>() : -1, StrField(Field(d, "actor"), "username")};
}

const json& Reservations(const json& d) {
  static const json kNone = json::array();
  const json& r = Field(d, "reservations");
  return r.is_array() ? r : kNone;
}

// The write capabilities a host lacks for every one of `actions`, each once.
std::vector<std::string> Missing(const json& d, std::initializer_list<const char*> actions) {
  std::vector<std::string> missing;
  for (const char* action : actions)
    for (const auto& c : cluster::MissingCapabilities(d, action))
      if (std::find(missing.begin(), missing.end(), c) == missing.end()) missing.push_back(c);
  return missing;
}

// Why a host cannot take cluster bookings, in the order check reports them
// (probe lists them all): capabilities, clock, caller, GPUs.
std::vector<std::string> Problems(const json& d, const std::vector<std::string>& missing,
                                  engine::Seconds now) {
  std::vector<std::string> out;
  if (!missing.empty()) out.push_back("missing capabilities: " + Join(missing, ","));
  std::optional<int64_t> skew = ClockSkew(d, now);
  if (!skew) out.push_back("clock unavailable");
  if (skew && std::llabs(*skew) > cluster::kMaxClockSkewSeconds)
    out.push_back(fmt::format("clock skew is {}s (at most {}s)", *skew, cluster::kMaxClockSkewSeconds));
  if (Actor(d).first < 0) out.push_back("the host did not report the caller's UID");
  if (GpuCount(d) < 1) out.push_back("node advertises no schedulable GPUs");
  return out;
}

// ------------------------------------------------------------------ status

// The hosts' own context documents, with the principal of the caller and of
// each reservation added where the catalog maps them.
json ContextDocument(const ClusterSession& s, std::vector<cluster::NodeReply>& replies) {
  json nodes = json::array();
  for (auto& r : replies) {
    json n = NodeHeader(r);
    json context;
    if (r.result) {
      context = r.result->doc;
      auto [uid, name] = Actor(context);
      if (std::string p = s.Principal(r.node.node_id, uid); !p.empty()) context["actor"]["principal"] = p;
      if (context.contains("reservations") && context["reservations"].is_array())
        for (auto& x : context["reservations"])
          if (x.is_object() && x.contains("uid") && x["uid"].is_number_integer())
            if (std::string p = s.Principal(r.node.node_id, x["uid"].get<int64_t>()); !p.empty())
              x["principal"] = p;
    }
    n["context"] = context;
    nodes.push_back(std::move(n));
  }
  return {{"schema_version", kClusterSchema}, {"kind", "cluster-context"}, {"nodes", nodes}};
}

bool AnyAnswered(const std::vector<cluster::NodeReply>& replies) {
  for (const auto& r : replies)
    if (r.result) return true;
  return false;
}

Result<int> Status(Context& ctx, const std::vector<std::string>& args) {
  bool json_out = false, compact = false;
  ArgSpec spec("bk c status", "Every host's GPUs and bookings, one table.");
  spec.Flag("-j,--json", &json_out, "print the gpubk.cluster.v1 document");
  spec.Flag("-c,--compact", &compact, "JSON on one line (implies --json)");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(auto s, OpenCluster());
  std::vector<cluster::NodeReply> replies = s->Contexts();
  json doc = ContextDocument(*s, replies);
  int code = AnyAnswered(replies) ? 0 : exit_code::kNoSlot;
  if (json_out || compact) {
    PrintClusterDoc(ctx, doc, compact);
    return code;
  }
  engine::Seconds now = ctx.clock->Now();
  // An unreachable host's error fills the rest of the line, whatever the terminal.
  int width = std::max(24, surface::TerminalWidth(fileno(ctx.out), 100) - 44);
  ctx.Print(fmt::format("GPUBK cluster | {} node(s)", replies.size()));
  std::vector<std::vector<std::string>> rows = {
      {"Node", "Version", "State", "GPUs", "Busy", "Mine", "Actor"}};
  struct Row {
    std::string node;
    json r;
  };
  std::vector<Row> all;
  for (const auto& r : replies) {
    if (!r.result) {
      bool disabled = r.result.error().cls == cluster::FailClass::kDisabled;
      rows.push_back({r.node.name, "-", disabled ? "disabled" : "unreachable", "-", "-", "-",
                      disabled ? "maintenance" : surface::FitWords(r.result.error().message, width)});
      continue;
    }
    const json& d = r.result->doc;
    std::optional<int64_t> skew = ClockSkew(d, now);
    auto [uid, name] = Actor(d);
    std::string principal = s->Principal(r.node.node_id, uid);
    std::set<int> busy;
    int mine = 0;
    for (const auto& x : Reservations(d)) {
      if (!x.is_object()) continue;
      if (cluster::BoolField(x, "mine", false)) ++mine;
      // Busy: held right now by the host's own clock (a booking later today is not).
      auto from = cluster::InstantField(x, "start_at"), to = cluster::InstantField(x, "end_at");
      bool now_held = skew && from && to && *from <= now - *skew && now - *skew < *to;
      if (now_held && StrField(x, "status") == "active")
        for (int g : cluster::IntsField(x, "gpus")) busy.insert(g);
      all.push_back({r.node.name, x});
    }
    rows.push_back({r.node.name, Version(d),
                    !skew || std::llabs(*skew) > cluster::kMaxClockSkewSeconds ? "clock-skew" : "ready",
                    std::to_string(GpuCount(d)), std::to_string(busy.size()), std::to_string(mine),
                    (principal.empty() ? name : principal) + ":" + std::to_string(uid)});
  }
  std::fputs(surface::AlignRows(rows, "lllrrrl", "").c_str(), ctx.out);
  if (all.empty()) {
    ctx.Print("No reservations on any host.");
    return code;
  }
  std::stable_sort(all.begin(), all.end(), [](const Row& a, const Row& b) {
    return cluster::StrField(a.r, "start_at") < cluster::StrField(b.r, "start_at");
  });
  ctx.Print("");
  ctx.Print("Reservations");
  std::vector<std::vector<std::string>> res = {
      {"ID", "Own", "Identity", "Mode", "VRAM", "GPU", "Start", "End"}};
  for (const auto& row : all) {
    const json& x = row.r;
    std::string identity = StrField(x, "principal", StrField(x, "username", "?"));
    const json& mem = Field(x, "expected_memory_mb_per_gpu");
    std::string vram = mem.is_number_integer() ? engine::FormatSizeMb(mem.get<int64_t>()) : "auto";
    std::vector<int> gpus = cluster::IntsField(x, "gpus");
    res.push_back({row.node + "/" + cluster::StrField(x, "short_id", "?"),
                   cluster::BoolField(x, "mine", false) ? "*" : "-", cluster::Sanitize(identity, 32),
                   cluster::StrField(x, "mode") == "exclusive" ? "excl" : "share", vram, JoinInts(gpus),
                   LocalIso(ctx, cluster::Field(x, "start_at")), LocalIso(ctx, cluster::Field(x, "end_at"))});
  }
  std::fputs(surface::AlignRows(res, "llllllll", "").c_str(), ctx.out);
  return code;
}

// ------------------------------------------------------------------ check

Result<int> Check(Context& ctx, const std::vector<std::string>& args) {
  bool json_out = false, compact = false, jobs = false;
  ArgSpec spec("bk c check",
               "Whether each host can take cluster bookings: reachable, the catalog's identity, "
               "a version with the write capabilities, a clock within 30 s.");
  spec.Flag("--jobs", &jobs, "also require a running scheduled-command worker (bk c ... -- CMD)");
  spec.Flag("-j,--json", &json_out, "print the gpubk.cluster.v1 document");
  spec.Flag("-c,--compact", &compact, "JSON on one line (implies --json)");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(auto s, OpenCluster());
  std::vector<cluster::NodeReply> replies = s->Contexts();
  engine::Seconds now = ctx.clock->Now();
  json nodes = json::array();
  int enabled = 0, disabled = 0, failed = 0, warnings = 0;
  std::set<std::string> principals;
  int unmapped = 0;
  std::vector<std::string> lines;
  for (const auto& r : replies) {
    json n = {{"name", r.node.name},       {"node_id", r.node.node_id},
              {"enabled", r.node.enabled}, {"status", "ready"},
              {"version", json()},         {"actor", json()},
              {"principal", json()},       {"clock_skew_seconds", json()},
              {"worker", json()},          {"missing_capabilities", json::array()},
              {"warnings", json::array()}, {"error", json()}};
    if (!r.node.enabled) {
      ++disabled;
      n["status"] = "disabled";
      lines.push_back(fmt::format("skip {}: disabled by the administrator", r.node.name));
      nodes.push_back(n);
      continue;
    }
    ++enabled;
    std::string error;
    std::vector<std::string> warn;
    if (!r.result) {
      error = r.result.error().message;
    } else {
      const json& d = r.result->doc;
      n["version"] = Version(d);
      auto [uid, name] = Actor(d);
      n["actor"] = {{"uid", uid >= 0 ? json(uid) : json()}, {"username", name}};
      std::string p = s->Principal(r.node.node_id, uid);
      if (!p.empty()) {
        n["principal"] = p;
        principals.insert(p);
      } else {
        ++unmapped;
      }
      if (auto skew = ClockSkew(d, now)) n["clock_skew_seconds"] = *skew;
      if (Field(d, "worker").is_object())
        n["worker"] = {{"state", Field(d["worker"], "state")}, {"running", Field(d["worker"], "running")}};
      std::vector<std::string> missing =
          jobs ? Missing(d, {"book", "edit", "cancel", "book-job"}) : Missing(d, {"book", "edit", "cancel"});
      n["missing_capabilities"] = missing;
      bool worker_running = cluster::BoolField(Field(d, "worker"), "running", false);
      if (auto problems = Problems(d, missing, now); !problems.empty())
        error = problems.front();
      else if (jobs && !worker_running)
        error = fmt::format(
            "scheduled-command worker is not running (state={}); on that node run 'bk service install "
            "worker' "
            "then 'systemctl --user enable --now bk-worker.service'",
            StrField(Field(d, "worker"), "state", "unknown"));
    }
    n["warnings"] = warn;
    if (!error.empty()) {
      ++failed;
      n["status"] = "failed";
      n["error"] = error;
      lines.push_back(fmt::format("fail {}: {}", r.node.name, error));
    } else {
      lines.push_back(fmt::format("pass {}: v{} as {}:{} clock {}s GPUs={}", r.node.name,
                                  n["version"].get<std::string>(), n["actor"]["username"].get<std::string>(),
                                  n["actor"]["uid"].dump(), n["clock_skew_seconds"].dump(),
                                  GpuCount(r.result->doc)));
    }
    nodes.push_back(n);
  }
  if (principals.size() > 1 || (!principals.empty() && unmapped > 0)) {
    ++warnings;
    lines.push_back(principals.size() > 1
                        ? "warn: this SSH identity maps to different principals on different hosts"
                        : "warn: this SSH identity is mapped to a principal on some hosts only");
  }
  bool ready = enabled > 0 && failed == 0;
  json doc = {{"schema_version", kClusterSchema},
              {"kind", "cluster-check"},
              {"ready", ready},
              {"summary",
               {{"configured", replies.size()},
                {"enabled", enabled},
                {"disabled", disabled},
                {"failed", failed},
                {"warnings", warnings}}},
              {"nodes", nodes}};
  if (json_out || compact) {
    PrintClusterDoc(ctx, doc, compact);
  } else {
    ctx.Print(fmt::format("Cluster check: {} | {} enabled, {} disabled, {} warning(s){}",
                          ready ? "ready" : "not ready", enabled, disabled, warnings,
                          jobs ? " | scheduled commands required" : ""));
    for (const auto& l : lines) ctx.Print(l);
  }
  return ready ? 0 : exit_code::kNoSlot;
}

// ------------------------------------------------------------------ probe

Result<int> Probe(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> name, target, executable, timeout;
  bool json_out = false;
  ArgSpec spec("bk c probe",
               "Connect to a new GPU host before it is in the catalog: check its identity, "
               "version and capabilities, and print the reviewed `bk admin cluster add` command.");
  spec.NeededPositional("name", &name, "its name in the cluster, e.g. gpu-b");
  spec.NeededPositional("target", &target, "the SSH host or ssh_config alias");
  spec.Option("--executable", &executable, "bk on that host (default /usr/local/bin/bk)", "PATH");
  spec.Option("--timeout", &timeout, "seconds to wait, 1-300 (default 8)", "S");
  spec.Flag("-j,--json", &json_out, "print the document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!name || !target)
    return Invalid("give the host's name and SSH target, e.g. `bk c probe gpu-b gpu-b.lab`");
  cluster::Node node{.name = *name,
                     .node_id = std::string(20, '0'),
                     .transport = cluster::Transport::kSsh,
                     .target = *target};
  if (executable) node.executable = *executable;
  if (timeout) {
    char* end = nullptr;
    node.timeout_seconds = std::strtod(timeout->c_str(), &end);
    if (timeout->empty() || *end != '\0' || !std::isfinite(node.timeout_seconds))
      return Invalid(fmt::format("--timeout must be a number of seconds, not {}", *timeout));
  }
  BK_TRY(cluster::Check(cluster::Catalog{.nodes = {node}}));
  BK_ASSIGN_OR_RETURN(std::string path, cluster::CatalogPath(std::nullopt));
  if (path == cluster::kSystemCatalog && target->find('@') != std::string::npos)
    return Invalid(
        fmt::format("the system catalog names bare hosts, not {}: users connect as themselves; try "
                    "`bk c probe {} {}`",
                    *target, *name, target->substr(target->find('@') + 1)));
  cluster::ProcessRunner runner;
  cluster::Remote remote(runner, {.control_dir = "auto"});
  cluster::NodeResult r = remote.Call(node, {"agent", "context", "--compact"}, std::nullopt);
  if (!r) return Fail(ErrorKind::kUnavailable, "cluster node probe failed: " + r.error().message);
  const json& d = r->doc;
  if (cluster::StrField(d, "kind") != "context")
    return Fail(ErrorKind::kUnavailable,
                "cluster node probe failed: the host did not answer with its context");
  std::string id = d["node"]["id"].get<std::string>();
  engine::Seconds now = ctx.clock->Now();
  std::vector<std::string> issues = Problems(d, Missing(d, {"book"}), now), warnings;
  std::optional<int64_t> skew = ClockSkew(d, now);
  auto [uid, user] = Actor(d);
  json add_argv;
  if (issues.empty()) {
    if (target->find('@') != std::string::npos) {
      warnings.push_back(
          "a user@host target belongs in a private catalog only; the system catalog names bare hosts");
    } else {
      std::vector<std::string> argv = {"sudo", "bk", "admin", "cluster", "add", *name, *target, id};
      if (executable) argv.insert(argv.end(), {"--executable", *executable});
      if (timeout) argv.insert(argv.end(), {"--timeout", *timeout});
      argv.push_back("--yes");
      add_argv = argv;
    }
  }
  bool ready = issues.empty();
  if (json_out) {
    json doc = {{"schema_version", kClusterSchema},
                {"kind", "cluster-node-probe"},
                {"ready", ready},
                {"name", *name},
                {"target", *target},
                {"node", d["node"]},
                {"version", Version(d)},
                {"actor", {{"uid", uid >= 0 ? json(uid) : json()}, {"username", user}}},
                {"clock_skew_seconds", skew ? json(*skew) : json()},
                {"gpu_count", GpuCount(d)},
                {"issues", issues},
                {"warnings", warnings},
                {"add_argv", add_argv}};
    PrintClusterDoc(ctx, doc, false);
    return ready ? 0 : exit_code::kNoSlot;
  }
  ctx.Print(fmt::format("Cluster node probe: {} | {} id={} v{} GPUs={}", ready ? "ready" : "not ready", *name,
                        id, Version(d), GpuCount(d)));
  ctx.Print(fmt::format("  endpoint={} actor={}:{} clock={}", *target, user, uid,
                        skew ? fmt::format("{}s", *skew) : "unknown"));
  for (const auto& i : issues) ctx.Print("fail: " + i);
  for (const auto& w : warnings) ctx.Print("warn: " + w);
  if (add_argv.is_array()) {
    std::string line;
    for (const auto& w : add_argv) {
      std::string word = w.get<std::string>();
      bool plain = std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) ||
               std::string_view("-_./:@=,").find(c) != std::string_view::npos;
      });
      line += (line.empty() ? "" : " ") + (plain ? word : ShellQuote(word));
    }
    ctx.Print("Reviewed add command:");
    ctx.Print("  " + line);
    ctx.Print("Then verify this SSH identity with: bk c check");
  }
  return ready ? 0 : exit_code::kNoSlot;
}

Result<int> History(Context& ctx, const std::vector<std::string>& args) {
  ArgSpec spec("bk c history", "Archived usage across hosts.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  return Fail(ErrorKind::kUnavailable,
              "the cluster history archive is not in this version; `bk c u --since 30d` sums each host's own "
              "usage history");
}

bool StartsBooking(const std::string& w) {
  return (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0]))) || w == "book" || w == "b" ||
         w == "auto" || w == "s" || w == "shared" || w == "x" || w == "exclusive";
}

}  // namespace

bool IsClusterBooking(const std::string& first_arg) { return StartsBooking(first_arg); }

Result<int> RunCluster(Context& ctx, const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help" || args[0] == "help")) {
    ctx.Print(kClusterHelp);
    return 0;
  }
  std::string w = args.empty() ? "status" : args[0];
  std::vector<std::string> rest(args.empty() ? args.begin() : args.begin() + 1, args.end());
  // `bk c rec help` is `bk c rec --help`.
  if (!rest.empty() && rest[0] == "help") rest[0] = "--help";
  if (w.starts_with("-")) {
    w = "status";
    rest = args;
  }
  if (w == "status" || w == "st" || w == "list" || w == "ls" || w == "l" || w == "context" || w == "ctx")
    return Status(ctx, rest);
  if (w == "check" || w == "health" || w == "doctor") return Check(ctx, rest);
  if (w == "probe" || w == "p") return Probe(ctx, rest);
  if (w == "recommend" || w == "rec") return ClusterRecommend(ctx, rest);
  if (StartsBooking(w)) return ClusterBook(ctx, w == "book" || w == "b" ? rest : args);
  if (w == "edit" || w == "e") return ClusterEdit(ctx, rest);
  if (w == "renew") return ClusterRenew(ctx, rest);
  if (w == "cancel" || w == "del" || w == "d") return ClusterCancel(ctx, rest);
  if (w == "usage" || w == "u") return ClusterUsage(ctx, rest);
  if (w == "history" || w == "hist") return History(ctx, rest);
  if (w == "tui" || w == "t")
    return Fail(
        ErrorKind::kUnavailable,
        "a cluster view in the terminal UI is not in this version; `bk c` shows every host, and `bk t` "
        "on a host shows its calendar");
  return Invalid(fmt::format("unknown cluster command: {}; see `bk c --help`", w));
}

}  // namespace bk::cli
