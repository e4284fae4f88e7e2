// bk u / bk usage: what the monitor recorded in usage.db (docs/monitor.md).
// Read-only: a missing usage.db reads as empty history and is not created.

#include <fmt/format.h>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/usage_limits.h"
#include "engine/parse.h"
#include "monitor/usage_view.h"
#include "surface/documents.h"
#include "sys/local_zone.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

Result<uint32_t> ParseUser(const std::string& raw) {
  std::string text(Trim(raw));
  if (text == "me") return sys::CurrentUid();
  if (auto uid = sys::UidForName(text)) return *uid;
  return Invalid(fmt::format("--user {}: no such user; give a name, a UID or me", Printable(text)));
}

// A usage document (indented unless `compact`) or its text form.
int Emit(Context& ctx, const std::string& doc, bool json, bool compact) {
  if (json && compact)
    ctx.PrintDoc(doc);
  else if (json)
    ctx.Print(surface::Dump(doc, surface::JsonStyle::kPretty));
  else
    std::fputs(ctx.Local(doc).c_str(), ctx.out);  // rendered in UTC, by the daemon on a server
  return 0;
}

}  // namespace

monitor::UsageQuery CollectorQuery(int64_t now, uint32_t uid) {
  monitor::UsageQuery q;
  q.kind = monitor::UsageKind::kMe;
  q.to = now + 1;
  q.from = q.to - 60;
  q.uid = uid;
  q.limit = 1;
  return q;
}

Result<std::string> UsageDocument(Context& ctx, const monitor::UsageQuery& q, bool text) {
  // Everyone goes through the ledger: in private mode the file itself, on a
  // server the daemon's usage.query, which also knows what the file cannot
  // say (a monitor that samples but cannot record). A server's owner falls
  // back to reading usage.db directly, so the history is there even while
  // the daemon is stopped.
  const config::Config& c = ctx.config;
  auto ledger = ctx.Ledger();
  if (ledger) return (*ledger)->Usage(q, text);
  if (c.deployment != config::Deployment::kPrivate && sys::CurrentUid() == c.owner_uid) {
    static const sys::LocalZone zone;
    return monitor::ReadUsage(c, c.owner_uid, q, text, ctx.clock->NowMs(), zone);
  }
  return std::unexpected(ledger.error());
}

// Long on purpose: the options of `bk u`, checked together (ranges, views,
// who may ask about whom), then one query.
Result<int> RunUsage(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> what, since, from, until, user, gpu, limit, resolution;
  bool json = false, compact = false, all = false, no_chart = false;
  ArgSpec spec("bk usage",
               "GPU usage history recorded by the monitor: your summary (me, the default), every "
               "user's (users), process and reclaim events (events) or per-minute records (samples); "
               "what usage.db holds and costs (storage), what this build offers (capabilities) and the "
               "fair-share limits with each user's use of them (limits).");
  spec.Positional("view", &what, "me | users | events | samples | storage | capabilities | limits");
  spec.Option("-s,--since", &since, "how far back, e.g. 2h, 7d, 30d (default 24h)", "DUR");
  spec.Option("-f,--from", &from, "start time instead of --since", "TIME");
  spec.Option("-u,--until", &until, "end time (default now)", "TIME");
  spec.Option("--user", &user, "only this user (name, UID or me)", "USER");
  spec.Flag("--all", &all, "every user (the default for users, events and samples)");
  spec.Option("-g,--gpu", &gpu, "only this GPU (events, samples)", "N");
  spec.Option("-n,--limit", &limit, "at most N rows (1-200000, default 1000)", "N");
  spec.Option("-r,--resolution", &resolution, "samples: auto, 1m (default), 5m, 10m, 1h or 1d", "RES");
  spec.Flag("-j,--json", &json, "print the gpubk.usage.v1 document (indented)");
  spec.Flag("-c,--compact", &compact, "with --json: the document on one line");
  spec.Flag("--no-chart", &no_chart, "me: leave out the ACTIVITY TREND (last 7 days and 4 weeks)");
  spec.Excludes("--since", "--from");
  spec.Excludes("--user", "--all");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;

  monitor::UsageQuery q;
  std::string view = what ? std::string(Trim(*what)) : "me";
  if (view == "storage" || view == "capabilities" || view == "limits") {
    // They describe the store and the build, not an interval or someone's use.
    if (since || from || until || user || all || gpu || limit || resolution)
      return Invalid(fmt::format("`bk u {}` takes only --json and --compact", view));
    if (view == "limits") return ShowLimits(ctx, json || compact, compact);
    if (view == "capabilities")
      return Emit(
          ctx, json ? monitor::UsageCapabilitiesJson(ctx.clock->NowMs()) : monitor::UsageCapabilitiesText(),
          json, compact);
  }
  if (view == "me")
    q.kind = monitor::UsageKind::kMe;
  else if (view == "users")
    q.kind = monitor::UsageKind::kUsers;
  else if (view == "events")
    q.kind = monitor::UsageKind::kEvents;
  else if (view == "samples")
    q.kind = monitor::UsageKind::kSamples;
  else if (view == "storage")
    q.kind = monitor::UsageKind::kStorage;
  else
    return Invalid(
        fmt::format("unknown usage view {}; use me, users, events, samples, storage, capabilities or limits",
                    Printable(view)));
  q.chart = q.kind == monitor::UsageKind::kMe && !json && !no_chart;
  if (q.kind == monitor::UsageKind::kMe && (all || user))
    return Invalid("`bk u me` shows your own usage; use `bk u users --user NAME` for someone else");

  const int64_t now = ctx.clock->Now();
  q.to = now + 1;  // the current second's samples belong to the range
  if (until) {
    BK_ASSIGN_OR_RETURN(q.to, engine::ParseViewTime(*until, now, *ctx.zone));
  }
  int64_t span = int64_t{24} * 3600;
  if (since) {
    BK_ASSIGN_OR_RETURN(span, engine::ParseDuration(Trim(*since)));
  }
  q.from = q.to - span;
  if (from) {
    BK_ASSIGN_OR_RETURN(q.from, engine::ParseViewTime(*from, now, *ctx.zone));
  }
  if (q.from >= q.to) return Invalid("the usage interval is empty; --from/--since must be before --until");
  if (q.kind == monitor::UsageKind::kMe) q.uid = sys::CurrentUid();
  if (user) {
    BK_ASSIGN_OR_RETURN(q.uid, ParseUser(*user));
  }
  if (gpu) {
    int last = ctx.config.policy.gpu_count - 1;
    BK_ASSIGN_OR_RETURN(
        q.gpu,
        WholeNumberOption(gpu, 0, last, 0, fmt::format("--gpu must be a GPU index from 0 to {}", last)));
  }
  if (limit) {
    BK_ASSIGN_OR_RETURN(
        q.limit, WholeNumberOption(limit, 1, 200000, 0, "--limit must be a whole number from 1 to 200000"));
  }
  if (resolution) {
    auto r = monitor::ParseResolution(*resolution, q.to - q.from);
    if (!r) return Invalid("--" + r.error().message);
    q.resolution = *r;
  }

  BK_ASSIGN_OR_RETURN(std::string doc, UsageDocument(ctx, q, !json));
  return Emit(ctx, doc, json, compact);
}

}  // namespace bk::cli
