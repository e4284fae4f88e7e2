// bk u limits: each user's (and limited group's) use of the fair-share limits.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli/context.h"
#include "cli/usage_limits.h"
#include "engine/parse.h"
#include "rpc/codec.h"
#include "surface/documents.h"

namespace bk::cli {
namespace {

using nlohmann::json;

// "2/4", or "2/-" without a limit.
std::string OfLimit(const std::string& used, const std::optional<int64_t>& limit, int64_t unit = 1) {
  return fmt::format("{}/{}", used, limit ? std::to_string(*limit / unit) : "-");
}

std::string Hours(double h) { return fmt::format("{:.1f}", h); }

}  // namespace

Result<int> ShowLimits(Context& ctx, bool as_json, bool compact) {
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::FairShareReport r, ledger->FairShareUse());
  if (as_json) {
    // The protocol's encoding of the report, with the time for people.
    json doc = rpc::Encode(r);
    doc["schema_version"] = "gpubk.limits.v1";
    doc["now"] = engine::FormatIsoUtc(r.now);
    std::string text = doc.dump();
    if (compact)
      ctx.PrintDoc(text);
    else
      ctx.Print(surface::Dump(text, surface::JsonStyle::kPretty));
    return 0;
  }
  if (!r.configured) {
    ctx.Print("No fair-share limits are set here: everyone may book what the calendar allows.");
    if (ctx.config.deployment == config::Deployment::kPrivate)
      ctx.Print("Set them in this ledger's config.json, e.g. {\"user_max_gpus\": 2} (`bk config --keys`).");
    else
      ctx.Print("An administrator sets them with `bk admin policy --user-max-gpus N` (see the admin guide).");
    return 0;
  }
  ctx.Print(fmt::format("Fair-share limits at {} (used/limit; -: none)",
                        engine::FormatLocalShort(r.now, *ctx.zone)));
  ctx.Print(fmt::format("{:<14}{:<8}{:<12}{:<12}{:<8}{:<8}{}", "WHO", "GPUS", "24H GPU-H", "7D GPU-H",
                        "QUEUED", "LONGEST", "HORIZON"));
  for (const auto& row : r.rows) {
    const engine::Limits& l = row.limits;
    const engine::LimitUse& u = row.use;
    std::string who = row.group ? "group " + row.name : row.name;
    if (who.size() > 13) who = who.substr(0, 12) + "~";
    ctx.Print(fmt::format(
        "{:<14}{:<8}{:<12}{:<12}{:<8}{:<8}{}", who, OfLimit(std::to_string(u.gpus_now), l.max_gpus),
        OfLimit(Hours(u.gpu_hours_24h), l.max_gpu_hours_24h),
        OfLimit(Hours(u.gpu_hours_7d), l.max_gpu_hours_7d), OfLimit(std::to_string(u.queued), l.max_queued),
        l.max_duration ? engine::FormatDuration(*l.max_duration) : "-",
        l.max_horizon ? fmt::format("{}d", *l.max_horizon / engine::kDay) : "-"));
  }
  ctx.Print("GPU-hours: held in the last 24 hours and 7 days. A booking must keep");
  ctx.Print("every window it touches within the limit. Groups count their members");
  ctx.Print("together.");
  return 0;
}

}  // namespace bk::cli
