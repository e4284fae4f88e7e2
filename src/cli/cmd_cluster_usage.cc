// bk c u: GPU usage across hosts, one line per person. Each host answers
// from its own usage history (`bk usage --json`); times typed here are
// resolved here, so every host reports the same interval.

#include <fmt/format.h>

#include "base/exit_codes.h"
#include "base/strings.h"
#include "cli/args.h"
#include "cli/cluster_commands.h"
#include "cli/cluster_session.h"
#include "cluster/usage.h"
#include "engine/parse.h"
#include "surface/text.h"

namespace bk::cli {
namespace {

using nlohmann::json;

std::string Hours(const json& seconds) {
  int64_t s = seconds.is_number() ? static_cast<int64_t>(seconds.get<double>()) : 0;
  int64_t m = s / 60;
  return m >= 60 ? fmt::format("{}h{:02}m", m / 60, m % 60) : fmt::format("{}m", m);
}

}  // namespace

Result<int> ClusterUsage(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> since, from, until, limit;
  bool all = false, json_out = false, compact = false;
  ArgSpec spec("bk c u",
               "GPU usage across hosts: yours (the default) or everyone's (--all), summed per person "
               "where the catalog maps one person's accounts.");
  spec.Option("-s,--since", &since, "how far back, e.g. 2h, 7d, 30d (default 24h)", "DUR");
  spec.Option("-f,--from", &from, "start time instead of --since", "TIME");
  spec.Option("-u,--until", &until, "end time (default now)", "TIME");
  spec.Flag("--all", &all, "every user");
  spec.Option("-n,--limit", &limit, "at most N users per host (1-200000, default 1000)", "N");
  spec.Flag("-j,--json", &json_out, "print the gpubk.cluster.v1 document");
  spec.Flag("-c,--compact", &compact, "JSON on one line (implies --json)");
  spec.Excludes("--since", "--from");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(int64_t n, WholeNumberOption(limit, 1, 200000, 1000, "--limit must be 1-200000"));
  engine::Seconds now = ctx.clock->Now();
  engine::Seconds to = now + 1, span = 24 * 3600;
  if (until) {
    BK_ASSIGN_OR_RETURN(to, engine::ParseViewTime(*until, now, *ctx.zone));
  }
  if (since) {
    BK_ASSIGN_OR_RETURN(span, engine::ParseDuration(Trim(*since)));
  }
  engine::Seconds start = to - span;
  if (from) {
    BK_ASSIGN_OR_RETURN(start, engine::ParseViewTime(*from, now, *ctx.zone));
  }
  if (start >= to) return Invalid("the usage interval is empty; --from/--since must be before --until");
  BK_ASSIGN_OR_RETURN(auto s, OpenCluster());
  std::vector<std::string> remote = {
      "usage",   all ? "users" : "me",     "--from",  engine::FormatIsoUtc(start),
      "--until", engine::FormatIsoUtc(to), "--limit", std::to_string(n)};
  if (all) remote.push_back("--all");
  remote.insert(remote.end(), {"--json", "--compact"});
  std::vector<cluster::NodeReply> replies = cluster::FanOut(
      s->catalog.nodes, [&](const cluster::Node& node) { return s->remote->Call(node, remote); });
  json principals = cluster::AggregateUsage(s->catalog, replies);
  bool any = false;
  json nodes = json::array();
  for (const auto& r : replies) {
    any = any || r.result.has_value();
    json h = NodeHeader(r);
    h["usage"] = r.result ? r.result->doc : json();
    nodes.push_back(std::move(h));
  }
  int code = any ? 0 : exit_code::kNoSlot;
  if (json_out || compact) {
    PrintClusterDoc(
        ctx,
        {{"schema_version", kClusterSchema},
         {"kind", "cluster-usage"},
         {"range", {{"start_at", engine::FormatIsoUtc(start)}, {"end_at", engine::FormatIsoUtc(to)}}},
         {"principals", principals},
         {"nodes", nodes}},
        compact);
    return code;
  }
  ctx.Print(fmt::format("Cluster usage | {} -> {}", engine::FormatLocalShort(start, *ctx.zone),
                        engine::FormatLocalShort(to, *ctx.zone)));
  std::vector<std::vector<std::string>> rows = {{"Principal", "Nodes", "Active", "Reserved", "Idle"}};
  for (const auto& p : principals)
    rows.push_back({cluster::Sanitize(p["id"].get<std::string>(), 40),
                    Join(p["nodes"].get<std::vector<std::string>>(), ","), Hours(p["active_gpu_seconds"]),
                    Hours(p["reserved_gpu_seconds"]), Hours(p["idle_reserved_gpu_seconds"])});
  if (principals.empty())
    ctx.Print("No recorded usage in this interval.");
  else
    std::fputs(surface::AlignRows(rows, "llrrr", "").c_str(), ctx.out);
  for (const auto& r : replies)
    if (!r.result) ctx.Warn(fmt::format("{}: {}", r.node.name, r.result.error().message));
  return code;
}

}  // namespace bk::cli
