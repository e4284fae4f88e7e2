// bk admin maintain: a maintenance window in one step, asked for at a
// terminal or given as options: a blackout of the window (all GPUs or some)
// and an announcement of it, shown from now until the window ends.

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/policy_edit.h"
#include "engine/parse.h"
#include "surface/text.h"

namespace bk::cli {
namespace {

// One question with its default; the default on an empty answer or at the
// end of input.
std::string Ask(const Context& ctx, const std::string& question, const std::string& def) {
  std::fputs(fmt::format("{} [{}]: ", question, def).c_str(), ctx.out);
  std::fflush(ctx.out);
  std::string line;
  if (!std::getline(std::cin, line) || Trim(line).empty()) return def;
  return std::string(Trim(line));
}

struct Plan {
  std::string reason = "Server maintenance";
  std::string start;  // as typed; empty: the next slot
  std::string duration = "2h";
  std::string gpus = "all";
  std::string level = "warning";  // or "none": no announcement
  bool blackout = true;
};

}  // namespace

// Long on purpose: the questions, then the two changes in their order.
Result<int> RunAdminMaintain(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> reason, start, duration, gpus, level, cancel_reason;
  bool no_blackout = false, no_announce = false, cancel = false, dry_run = false, yes = false;
  ArgSpec spec(
      "bk admin maintain",
      "Plan a maintenance window: a blackout (no bookings on its GPUs while it lasts) and an "
      "announcement of it, shown from now until it ends. Asks at a terminal; options answer instead.");
  spec.Option("--reason", &reason, "what is done (default: Server maintenance)", "TEXT");
  spec.Option("--start", &start, "when it starts (default: the next slot)", "TIME");
  spec.Option("--duration", &duration, "how long (default 2h)", "DUR");
  spec.Option("--gpus", &gpus, "the GPUs closed (default all)", "LIST");
  spec.Option("--level", &level, "the announcement's level: info, warning (default) or critical", "LEVEL");
  spec.Flag("--no-blackout", &no_blackout, "announce only; bookings stay possible");
  spec.Flag("--no-announce", &no_announce, "block only; publish nothing");
  spec.Flag("--cancel-overlapping", &cancel, "cancel the bookings the window overlaps");
  spec.Option("--cancel-reason", &cancel_reason, "what their owners are told (default: the reason)", "TEXT");
  spec.Flag("--dry-run", &dry_run, "show the plan and what it overlaps; change nothing");
  spec.Flag("--yes", &yes, "apply without asking");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (no_blackout && no_announce) return Invalid("--no-blackout with --no-announce leaves nothing to do");
  engine::Seconds now = ctx.clock->Now();
  const engine::SlotGrid grid = ctx.config.policy.grid();
  Plan plan;
  const std::string next_slot = engine::FormatIsoUtc(grid.Floor(now) + ctx.config.policy.slot);
  const std::string next_slot_shown = surface::LocalTimes(next_slot, *ctx.zone);
  plan.reason = reason.value_or(plan.reason);
  plan.start = start.value_or(plan.start);
  plan.duration = duration.value_or(plan.duration);
  plan.gpus = gpus.value_or(plan.gpus);
  plan.level = no_announce ? "none" : level.value_or(plan.level);
  plan.blackout = !no_blackout;
  const bool asked = !yes && !dry_run && isatty(STDIN_FILENO);
  if (asked && !reason && !start && !duration) {
    plan.reason = Ask(ctx, "Reason", plan.reason);
    plan.start = Ask(ctx, "Starts", plan.start.empty() ? next_slot_shown : plan.start);
    if (plan.start == next_slot_shown) plan.start.clear();  // the default, shown in local time
    plan.duration = Ask(ctx, "Duration", plan.duration);
    if (!no_blackout) plan.gpus = Ask(ctx, "GPUs (all or a list such as 2,3)", plan.gpus);
    if (!no_announce) plan.level = Ask(ctx, "Announcement level (info/warning/critical/none)", plan.level);
  }
  if (plan.level != "none" && plan.level != "info" && plan.level != "warning" && plan.level != "critical")
    return Invalid(fmt::format("--level must be info, warning or critical, not {}", plan.level));
  // Who may not change the blackouts hears so before any plan is shown.
  if (auto editable = EditableServerConfig(ctx); !editable && !no_blackout)
    return std::unexpected(editable.error());
  // Checked as `bk admin blackout add` checks a window, announced or not.
  BK_ASSIGN_OR_RETURN(engine::Blackout b, NewBlackout(ctx, plan.start.empty() ? next_slot : plan.start,
                                                      plan.duration, plan.reason, plan.gpus));
  const engine::Seconds from = b.start, length = b.end - b.start;
  const std::string window = surface::RangeText(from, from + length, *ctx.zone);
  const std::string where = plan.gpus == "all" ? "all GPUs" : "GPU " + plan.gpus;
  ctx.Print(fmt::format("Maintenance: {} on {}: {}", window, where, plan.reason));
  ctx.Print(plan.blackout ? "  blackout: bookings on those GPUs are refused during the window"
                          : "  blackout: none (bookings stay possible)");
  ctx.Print(plan.level == "none"
                ? "  announcement: none"
                : fmt::format("  announcement: {}, shown from now until the window ends", plan.level));
  if (plan.blackout) {
    PolicyEdit opts;
    opts.dry_run = dry_run;
    opts.cancel_conflicting = cancel;
    if (cancel) opts.reason = cancel_reason.value_or(plan.reason);
    BK_TRY(Confirm(ctx, !asked, "Apply this maintenance plan?"));
    opts.yes = yes || asked;  // neither: ApplyPolicyEdit asks for --yes
    std::vector<engine::Blackout> windows = ctx.config.policy.blackouts;
    windows.push_back(b);
    BK_ASSIGN_OR_RETURN(PolicyEdit edit, BlackoutChange(ctx, windows, b.reason, opts));
    BK_ASSIGN_OR_RETURN(int rc, ApplyPolicyEdit(ctx, edit));
    if (rc != 0) return rc;
  }
  if (plan.level == "none" || dry_run) return 0;
  if (!yes && !asked) return Invalid("pass --yes to publish the announcement without a question");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  service::PublishRequest publish;
  publish.message = fmt::format("Maintenance {}{}: {}", window,
                                plan.gpus == "all" ? "" : " on GPU " + plan.gpus, plan.reason);
  publish.level = plan.level;
  publish.expires_at = from + length;
  BK_ASSIGN_OR_RETURN(service::AnnouncementOutcome published, ledger->Publish(publish));
  ctx.Print(fmt::format("published: {} level={} until {}", published.announcement.id.substr(0, 8), plan.level,
                        surface::LocalTimes(engine::FormatIsoUtc(from + length), *ctx.zone)));
  ctx.Print("maintenance plan is active; `bk admin blackout list` and `bk admin notice list` show it");
  return 0;
}

}  // namespace bk::cli
