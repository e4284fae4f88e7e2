// bk c rec, bk c N DUR, bk @NODE, bk c e|renew|d: choosing a host and
// writing to exactly one. A friendly start is resolved here, once, so every
// host is asked about the same instant; every write carries an operation ID
// so a lost reply is asked about on the same host, never booked elsewhere.

#include <fmt/format.h>

#include "base/exit_codes.h"
#include "base/strings.h"
#include "cli/args.h"
#include "cli/booking_args.h"
#include "cli/cluster_commands.h"
#include "cli/cluster_session.h"
#include "cluster/placement.h"
#include "cluster/reply_fields.h"
#include "cluster/write.h"
#include "engine/parse.h"
#include "service/booking_service.h"
#include "surface/text.h"

namespace bk::cli {
namespace {

using cluster::Intent;
using nlohmann::json;

struct ParsedBooking {
  Intent intent;
  std::optional<std::string> op_id;
  std::vector<std::string> job;
  bool json = false, compact = false;
};

// COUNT DUR [MEM] [options] [-- CMD], after an optional mode word.
Result<ParsedBooking> ParseBooking(Context& ctx, std::vector<std::string> args, const std::string& prog,
                                   bool allow_job, bool* help_done) {
  std::optional<bool> word_exclusive;
  if (!args.empty() && (args[0] == "x" || args[0] == "exclusive")) word_exclusive = true;
  if (!args.empty() && (args[0] == "s" || args[0] == "shared" || args[0] == "auto")) word_exclusive = false;
  if (word_exclusive) args.erase(args.begin());
  ParsedBooking p;
  std::vector<std::string> before = BeforeCommand(args, &p.job);
  bool has_separator = before.size() != args.size();
  BookingArgs a;
  ArgSpec spec(prog, allow_job ? "Book on the one host that offers the earliest legal slot."
                               : "Ask every host where the booking would land, best first.");
  AddBookingOptions(spec, a, true, allow_job);
  spec.Option("--mode", &a.mode, "s, shared, x or exclusive (default shared)", "MODE");
  spec.Flag("-j", &a.json, "same as --json");
  *help_done = false;
  if (auto done = ParseOrHelp(ctx, spec, before)) {
    if (!*done) return std::unexpected(done->error());
    *help_done = true;
    return p;
  }
  if (a.reason)
    return Invalid(
        "--reason (booking beyond the fair-share limits) works on one host only: run bk there, e.g. over "
        "ssh");
  if (!allow_job && has_separator)
    return Invalid("cluster recommend does not accept a job command; use 'bk c ... -- COMMAND' to book it");
  if (has_separator && p.job.empty()) return Invalid("-- must be followed by a job command");
  if (word_exclusive && a.mode) return Invalid("cluster booking mode was specified more than once");
  BK_ASSIGN_OR_RETURN(service::CreateRequest r, ToRequest(ctx, a, word_exclusive.value_or(false)));
  if (r.count < 1) return Invalid("GPU count must be at least 1");
  if (r.share_units && *r.share_units < 1) return Invalid("--share must be at least 1");
  p.intent = {.count = r.count,
              .duration_seconds = r.duration,
              .exclusive = r.mode == engine::Mode::kExclusive,
              .start = r.start,
              .gpus = r.gpus,
              .exclude = r.exclude,
              .memory_mb = r.memory_mb,
              .share = r.share_units ? std::optional<int64_t>(*r.share_units) : std::nullopt,
              .cpus = r.cpus,
              .ram_mb = r.ram_mb};
  if (a.op_id) {
    std::string id(Trim(*a.op_id));
    if (id.empty()) return Invalid("--op-id must not be empty");
    // The hosts' own rule, checked before any of them is asked.
    BK_TRY(service::ValidateOpId(id));
    p.op_id = id;
  }
  p.json = a.json || a.compact;
  p.compact = a.compact;
  return p;
}

std::vector<const cluster::Node*> Enabled(const ClusterSession& s) {
  std::vector<const cluster::Node*> out;
  for (const auto& n : s.catalog.nodes)
    if (n.enabled) out.push_back(&n);
  return out;
}

std::vector<cluster::NodeReply> Recommendations(const ClusterSession& s, const Intent& intent) {
  std::vector<std::string> args = cluster::RecommendArgs(intent);
  return cluster::FanOut(s.catalog.nodes, [&](const cluster::Node& n) { return s.remote->Call(n, args); });
}

std::string NoCandidate(const cluster::Ranking& ranking) {
  std::vector<std::string> why;
  for (const auto& c : ranking.nodes)
    why.push_back(fmt::format("{}: {}", c.reply.node.name,
                              c.reply.result ? c.rejected_reason : c.reply.result.error().message));
  return fmt::format("no cluster node can satisfy this request ({})", Join(why, "; "));
}

const json& Placement(const cluster::Candidate& c) {
  static const json kNone;
  return c.reply.result ? cluster::Field(c.reply.result->doc, "recommendation") : kNone;
}

// "created on gpu-b: 1a2b3c GPU=0,1 12-02 14:00 -> 12-02 16:00"
std::string BookedLine(const Context& ctx, const std::string& node, const json& result) {
  const json& r = cluster::Field(result, "reservation");
  std::string status = cluster::StrField(result, "status", "created");
  return fmt::format("{} on {}: {} GPU={} {} -> {}", status, node, cluster::StrField(r, "short_id", "?"),
                     JoinInts(cluster::IntsField(r, "gpus")), LocalIso(ctx, cluster::Field(r, "start_at")),
                     LocalIso(ctx, cluster::Field(r, "end_at")));
}

// The preflight of a write on one host: its context, and the capabilities
// the action needs, before anything is sent that could change its ledger.
Status Preflight(const ClusterSession& s, const cluster::Node& node, const std::string& action) {
  cluster::NodeResult ctx = s.remote->Call(node, {"agent", "context", "--compact"});
  if (!ctx)
    return Fail(ErrorKind::kUnavailable, fmt::format("cluster node {}: {}", node.name, ctx.error().message));
  if (auto missing = cluster::MissingCapabilities(ctx->doc, action); !missing.empty())
    return Fail(ErrorKind::kUnavailable, fmt::format("node {} is read-only for this cluster client; missing "
                                                     "capabilities: {}",
                                                     node.name, Join(missing, ",")));
  return Ok();
}

// An explicit --op-id may already be bound on one host: a retry goes there
// and only there. Unless every host answers, a retry is refused (fail closed).
Result<const cluster::Node*> ReplayDestination(const ClusterSession& s, const std::string& op) {
  std::vector<cluster::NodeReply> replies = cluster::FanOut(s.catalog.nodes, [&](const cluster::Node& n) {
    return s.remote->Call(n, {"agent", "operation", op, "--compact"});
  });
  // Disabled hosts count as unknown: the retry may belong to one of them.
  std::vector<std::string> found, failed;
  for (auto& r : replies) {
    if (!r.result || cluster::StrField(r.result->doc, "kind") != "operation_status") {
      failed.push_back(
          fmt::format("{}: {}", r.node.name,
                      r.result ? std::string("not an operation status") : r.result.error().message));
      continue;
    }
    if (cluster::BoolField(r.result->doc, "found", false)) found.push_back(r.node.name);
  }
  if (found.size() > 1)
    return Invalid(fmt::format("operation ID exists on multiple cluster nodes ({}); refusing to write",
                               Join(found, ",")));
  if (found.size() == 1) return s.Find(found[0]);
  if (!failed.empty())
    return Fail(
        ErrorKind::kUnavailable,
        fmt::format(
            "cannot safely route this retry because operation status is unavailable on {} node(s): {}",
            failed.size(), Join(failed, "; ")));
  return nullptr;
}

Result<int> Write(Context& ctx, const ClusterSession& s, const cluster::Node& node, const ParsedBooking& p,
                  const std::string& op, bool at_node) {
  std::vector<std::string> args = cluster::BookArgs(p.intent, op, p.job);
  auto done = cluster::IdempotentWrite(*s.remote, node, args, op, "create");
  if (!done) {
    if (done.error().uncertain)
      return Fail(
          ErrorKind::kUnavailable,
          fmt::format("cluster booking on {} is unresolved: {}; do not auto-route it again; retry the same "
                      "request on the original node with 'bk @{} ... --op-id {}'",
                      node.name, done.error().message, node.name, op));
    return Fail(ErrorKind::kConflict, fmt::format("cluster booking on {} was rejected: {}", node.name,
                                                  ctx.Local(done.error().message)));
  }
  if (p.json && at_node) {
    PrintClusterDoc(ctx, *done, p.compact);
  } else if (p.json) {
    PrintClusterDoc(ctx,
                    {{"schema_version", kClusterSchema},
                     {"kind", "cluster-booking-result"},
                     {"node", {{"name", node.name}, {"node_id", node.node_id}}},
                     {"operation_id", op},
                     {"result", *done}},
                    p.compact);
  } else {
    ctx.Print(BookedLine(ctx, node.name, *done));
    PrintRemoteWarnings(ctx, node.name, *done);
  }
  return 0;
}

// ---------------------------------------------------------------- edits

// Runs a change to NODE/ID: preflight, then the retry-safe write.
Result<int> Mutate(Context& ctx, const ClusterSession& s, const NodeRef& ref, const std::string& action,
                   std::vector<std::string> args, const std::optional<std::string>& op_id, bool json_out) {
  if (op_id) BK_TRY(service::ValidateOpId(*op_id));
  BK_TRY(Preflight(s, *ref.node, action));
  std::string op = op_id ? *op_id : cluster::NewOperationId();
  args.insert(args.end(), {"--op-id", op, "--compact"});
  auto done = cluster::IdempotentWrite(*s.remote, *ref.node, args, op, action);
  if (!done) {
    if (done.error().uncertain)
      return Fail(ErrorKind::kUnavailable,
                  fmt::format("cluster {} on {} is unresolved: {}; retry the same request with --op-id {}",
                              action, ref.node->name, done.error().message, op));
    return Fail(ErrorKind::kConflict, ctx.Local(done.error().message));
  }
  if (json_out) {
    PrintClusterDoc(ctx,
                    {{"schema_version", kClusterSchema},
                     {"kind", "cluster-mutation-result"},
                     {"node", ref.node->name},
                     {"node_id", ref.node->node_id},
                     {"operation_id", op},
                     {"result", *done}},
                    false);
    return 0;
  }
  std::string status = action == "cancel" ? "cancelled" : done->value("status", std::string("updated"));
  if (status == "exists") status = action == "cancel" ? "cancelled" : "unchanged";
  const json& r = cluster::Field(*done, "reservation");
  std::string line =
      fmt::format("{}: {}/{}", status, ref.node->name, cluster::StrField(r, "short_id", ref.id));
  if (action != "cancel" && r.is_object())
    line +=
        fmt::format(" GPU={} {} -> {}", JoinInts(cluster::IntsField(r, "gpus")),
                    LocalIso(ctx, cluster::Field(r, "start_at")), LocalIso(ctx, cluster::Field(r, "end_at")));
  ctx.Print(line);
  PrintRemoteWarnings(ctx, ref.node->name, *done);
  return 0;
}

}  // namespace

Result<int> ClusterRecommend(Context& ctx, const std::vector<std::string>& args) {
  bool help = false;
  BK_ASSIGN_OR_RETURN(ParsedBooking p, ParseBooking(ctx, args, "bk c rec", false, &help));
  if (help) return 0;
  BK_ASSIGN_OR_RETURN(auto s, OpenCluster());
  if (Enabled(*s).empty()) return Invalid("cluster has no enabled nodes; ask an administrator to enable one");
  cluster::Ranking ranking = cluster::Rank(p.intent, Recommendations(*s, p.intent), ctx.clock->Now(), false);
  bool any = ranking.selected.has_value();
  if (p.json) {
    json nodes = json::array();
    for (const auto& c : ranking.nodes) {
      json n = NodeHeader(c.reply);
      n.erase("available");
      n.erase("enabled");
      n["rejected_reason"] = c.reply.result && !c.candidate ? json(c.rejected_reason) : json();
      n["write_compatible"] = c.write_compatible();
      n["missing_capabilities"] = c.missing;
      n["recommendation"] = c.reply.result ? c.reply.result->doc : json();
      nodes.push_back(std::move(n));
    }
    json sel = any ? json(ranking.nodes[*ranking.selected].reply.node.name) : json();
    PrintClusterDoc(
        ctx,
        {{"schema_version", kClusterSchema},
         {"kind", "cluster-recommendation"},
         {"selected_node", sel},
         {"selected_write_compatible", any && ranking.nodes[*ranking.selected].write_compatible()},
         {"nodes", nodes}},
        p.compact);
    return any ? 0 : exit_code::kNoSlot;
  }
  if (!any) return Invalid(NoCandidate(ranking));
  bool writable = ranking.nodes[*ranking.selected].write_compatible();
  int width = std::max(16, surface::TerminalWidth(fileno(ctx.out), 100) - 55);
  std::vector<std::vector<std::string>> rows = {{"Node", "Choice", "Write", "GPUs", "Start", "End", "Why"}};
  for (size_t k = 0; k < ranking.nodes.size(); ++k) {
    const auto& c = ranking.nodes[k];
    if (!c.candidate) {
      bool offline = !c.reply.result;
      rows.push_back(
          {c.reply.node.name, offline ? "offline" : "rejected", "-", "-", "-", "-",
           surface::FitWords(offline ? c.reply.result.error().message : c.rejected_reason, width)});
      continue;
    }
    std::string choice = k == *ranking.selected ? (writable ? "best" : "view")
                                                : (c.write_compatible() ? "ready" : "read-only");
    const json& r = Placement(c);
    rows.push_back({c.reply.node.name, choice, c.write_compatible() ? "yes" : "no",
                    JoinInts(cluster::IntsField(r, "gpus")), LocalIso(ctx, cluster::Field(r, "start_at")),
                    LocalIso(ctx, cluster::Field(r, "end_at")),
                    c.write_compatible() ? "" : "missing " + Join(c.missing, ",")});
  }
  std::fputs(surface::AlignRows(rows, "lllllll", "").c_str(), ctx.out);
  return 0;
}

Result<int> ClusterBook(Context& ctx, const std::vector<std::string>& args) {
  bool help = false;
  BK_ASSIGN_OR_RETURN(ParsedBooking p, ParseBooking(ctx, args, "bk c", true, &help));
  if (help) return 0;
  BK_ASSIGN_OR_RETURN(auto s, OpenCluster());
  std::string op = p.op_id.value_or(cluster::NewOperationId());
  std::string action = p.job.empty() ? "book" : "book-job";
  if (p.op_id) {
    BK_ASSIGN_OR_RETURN(const cluster::Node* replay, ReplayDestination(*s, op));
    if (replay) {
      BK_TRY(Preflight(*s, *replay, action));
      return Write(ctx, *s, *replay, p, op, false);
    }
  }
  if (Enabled(*s).empty()) return Invalid("cluster has no enabled nodes; ask an administrator to enable one");
  cluster::Ranking ranking =
      cluster::Rank(p.intent, Recommendations(*s, p.intent), ctx.clock->Now(), !p.job.empty());
  if (!ranking.selected) return Fail(ErrorKind::kConflict, NoCandidate(ranking));
  const cluster::Candidate& best = ranking.nodes[*ranking.selected];
  if (!best.write_compatible()) {
    std::vector<std::string> why;
    for (const auto& c : ranking.nodes)
      if (c.candidate) why.push_back(fmt::format("{}: missing {}", c.reply.node.name, Join(c.missing, ",")));
    return Fail(
        ErrorKind::kUnavailable,
        fmt::format("no write-compatible cluster node can satisfy this request ({})", Join(why, "; ")));
  }
  // Exactly one write, to the best host; a refusal there is final.
  return Write(ctx, *s, best.reply.node, p, op, false);
}

Result<int> RunAtNode(Context& ctx, const std::string& name, const std::vector<std::string>& args) {
  if (args.empty() || !IsClusterBooking(args[0]))
    return Invalid(
        fmt::format("bk @{} currently accepts booking commands only; use bk cluster for cross-node status, "
                    "usage, edit, and cancel",
                    name));
  bool help = false;
  std::vector<std::string> rest =
      args[0] == "book" || args[0] == "b" ? std::vector<std::string>(args.begin() + 1, args.end()) : args;
  BK_ASSIGN_OR_RETURN(ParsedBooking p, ParseBooking(ctx, rest, "bk @" + name, true, &help));
  if (help) return 0;
  BK_ASSIGN_OR_RETURN(auto s, OpenCluster());
  const cluster::Node* node = s->Find(name);
  if (!node)
    return Fail(ErrorKind::kNotFound, fmt::format("no cluster node named '{}' in {}", name, s->path));
  if (!node->enabled)
    return Fail(ErrorKind::kUnavailable,
                fmt::format("cluster node '{}' is disabled by the administrator", name));
  BK_TRY(Preflight(*s, *node, p.job.empty() ? "book" : "book-job"));
  return Write(ctx, *s, *node, p, p.op_id.value_or(cluster::NewOperationId()), true);
}

Result<int> ClusterEdit(Context& ctx, const std::vector<std::string>& args) {
  EditArgs a;
  bool json_out = false;
  ArgSpec spec("bk c e", "Edit one of your bookings on the host that holds it (NODE/ID), never elsewhere.");
  AddEditOptions(spec, a);
  spec.Flag("-j,--json", &json_out, "print the gpubk.cluster.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (a.reason)
    return Invalid(
        "--reason (booking beyond the fair-share limits) works on one host only: run bk there, e.g. over "
        "ssh");
  if (!a.ref) return Invalid("which reservation? e.g. `bk c e gpu-b/1a2b3c -d 3h`");
  if (!a.any_change() && !a.queue) return Invalid("cluster edit requires at least one changed field");
  BK_ASSIGN_OR_RETURN(service::EditRequest req, ToEditRequest(ctx, a));
  BK_ASSIGN_OR_RETURN(auto s, OpenCluster());
  BK_ASSIGN_OR_RETURN(NodeRef ref, ParseNodeRef(*s, *a.ref));
  // The host gets instants and canonical values, not the words typed here.
  std::vector<std::string> remote = {"agent", "edit", ref.id};
  if (req.duration) remote.insert(remote.end(), {"--duration", engine::FormatDuration(*req.duration)});
  if (req.end) remote.insert(remote.end(), {"--end", engine::FormatIsoUtc(*req.end)});
  if (req.start) remote.insert(remote.end(), {"--start", engine::FormatIsoUtc(*req.start)});
  if (!req.gpus.empty()) remote.insert(remote.end(), {"--gpu", JoinInts(req.gpus)});
  if (!req.exclude.empty()) remote.insert(remote.end(), {"--exclude-gpu", JoinInts(req.exclude)});
  if (req.count) remote.insert(remote.end(), {"--count", std::to_string(*req.count)});
  if (req.mode) remote.insert(remote.end(), {"--mode", std::string(engine::ModeName(*req.mode))});
  if (req.update_memory)
    remote.insert(remote.end(), {"--mem", req.memory_mb ? fmt::format("{}m", *req.memory_mb) : "-"});
  if (req.share_units) remote.insert(remote.end(), {"--share", std::to_string(*req.share_units)});
  if (req.cpus) remote.insert(remote.end(), {"--cpus", std::to_string(*req.cpus)});
  if (req.ram_mb) remote.insert(remote.end(), {"--ram", fmt::format("{}m", *req.ram_mb)});
  if (req.allow_queue) remote.push_back("--queue");
  return Mutate(ctx, *s, ref, "edit", remote, req.op_id, json_out);
}

Result<int> ClusterRenew(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref_text, duration, op_id;
  bool json_out = false;
  ArgSpec spec("bk c renew", "Extend one of your bookings on its host, same GPUs.");
  spec.NeededPositional("reservation", &ref_text, "NODE/ID, e.g. gpu-b/1a2b3c");
  spec.NeededPositional("duration", &duration, "how much longer, e.g. 1h");
  spec.Option("--op-id", &op_id, "operation ID for a retry-safe renewal", "ID");
  spec.Flag("-j,--json", &json_out, "print the gpubk.cluster.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref_text || !duration)
    return Invalid("give NODE/ID and how much longer, e.g. `bk c renew gpu-b/1a2b3c 1h`");
  BK_ASSIGN_OR_RETURN(engine::Seconds extend, engine::ParseDuration(*duration));
  BK_ASSIGN_OR_RETURN(auto s, OpenCluster());
  BK_ASSIGN_OR_RETURN(NodeRef ref, ParseNodeRef(*s, *ref_text));
  return Mutate(ctx, *s, ref, "renew", {"agent", "renew", ref.id, engine::FormatDuration(extend)}, op_id,
                json_out);
}

Result<int> ClusterCancel(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref_text, op_id;
  bool json_out = false;
  ArgSpec spec("bk c d", "Cancel one of your bookings on its host.");
  spec.NeededPositional("reservation", &ref_text, "NODE/ID, e.g. gpu-b/1a2b3c");
  spec.Option("--op-id", &op_id, "operation ID: a retry returns the same cancelled reservation", "ID");
  spec.Flag("-j,--json", &json_out, "print the gpubk.cluster.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref_text) return Invalid("which reservation? e.g. `bk c d gpu-b/1a2b3c`");
  BK_ASSIGN_OR_RETURN(auto s, OpenCluster());
  BK_ASSIGN_OR_RETURN(NodeRef ref, ParseNodeRef(*s, *ref_text));
  return Mutate(ctx, *s, ref, "cancel", {"agent", "cancel", ref.id}, op_id, json_out);
}

}  // namespace bk::cli
