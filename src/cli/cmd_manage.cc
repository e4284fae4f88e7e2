// bk l, bk d, bk e, bk renew: the caller's own reservations.

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/booking_args.h"
#include "cli/context.h"
#include "cli/notices.h"
#include "cli/output.h"
#include "engine/parse.h"
#include "surface/documents.h"
#include "surface/text.h"
#include "worker/cleanup.h"

namespace bk::cli {
namespace {

std::string Clip(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 1) + "+";
}

}  // namespace

// Long on purpose: the options of `bk l`, then one read and one rendering per
// output form.
Result<int> RunList(Context& ctx, const std::vector<std::string>& args) {
  JsonOutput out;
  bool history = false, all = false, no_limit = false;
  std::optional<std::string> limit;
  ArgSpec spec("bk list", "List your active reservations (or your whole history).");
  out.AddTo(spec, "print the bk.agent.v1 reservations document");
  spec.Flag("--history,--all", &history, "every status, newest first");
  spec.Option("-n,--limit", &limit, "show at most N (1-1000)", "N");
  spec.Flag("--no-limit", &no_limit, "show everything");
  spec.Excludes("-n,--limit", "--no-limit");
  (void)all;
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  service::ListQuery q;
  q.history = history;
  if (limit) {
    BK_ASSIGN_OR_RETURN(q.limit, LimitOption(limit, 0));
  } else if (!no_limit && !out.wanted()) {
    q.limit = 20;
  }
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::ListResult r, ledger->List(q));
  const engine::Policy& p = ledger->policy();
  engine::Seconds now = ledger->Now();
  if (out.wanted()) {
    ctx.PrintDoc(WithUnreadCount(ctx, CallerDoc(*ledger, r)));
    return 0;
  }
  if (r.reservations.empty()) {
    ctx.Print(history ? "No reservation history." : "No active reservations.");
    PrintUnreadNotice(ctx);
    return 0;
  }
  // Numbers are the positions in the own-active list that `bk e`/`bk d` accept.
  service::ListQuery active_q;
  BK_ASSIGN_OR_RETURN(service::ListResult active, history ? ledger->List(active_q) : r);
  bool wide = surface::TerminalWidth(1, 120) >= 140;
  size_t dur_w = 3;
  for (const auto& x : r.reservations) dur_w = std::max(dur_w, surface::ListDuration(x.end - x.start).size());
  dur_w = std::min<size_t>(dur_w, 20);
  ctx.Print(history ? "YOUR RESERVATION HISTORY" : "YOUR RESERVATIONS");
  if (wide)
    ctx.Print(fmt::format("  {:>1} {:<8} {:<9} {:<10} {:>5} {:>12} {:>4} {:>8} {:<17} {:<17} {}", "#", "ID",
                          "Mode", "GPU", "Slots", "VRAM/GPU", "CPUs", "RAM", "Start", "End", "Dur"));
  else
    ctx.Print(fmt::format("  {:>1} {:<8} {:<9} {:<10} {:>5} {:<11} {:<11} {}", "#", "ID", "Mode", "GPU",
                          "Slots", "Start", "End", "Dur"));
  for (const auto& x : r.reservations) {
    std::string num = "-";
    for (size_t i = 0; i < active.reservations.size(); ++i)
      if (active.reservations[i].id == x.id) num = std::to_string(i + 1);
    std::string gpus = Clip(JoinInts(x.gpus), 10);
    std::string dur = surface::ListDuration(x.end - x.start);
    if (wide) {
      std::string vram = x.mode == engine::Mode::kExclusive ? "all"
                         : x.memory_mb                      ? engine::FormatSizeMb(*x.memory_mb)
                                                            : "auto";
      ctx.Print(fmt::format(
          "{:>3} {:<8} {:<9} {:<10} {:>5} {:>12} {:>4} {:>8} {:<17} {:<17} {:>{}}", num, x.ShortId(),
          engine::ModeName(x.mode), gpus, surface::SlotsText(x, p), vram,
          x.cpus ? std::to_string(x.cpus) : "-", x.ram_mb ? engine::FormatSizeMb(x.ram_mb) : "-",
          engine::FormatLocalShort(x.start, *ctx.zone) + " " +
              engine::FormatLocal(x.start, *ctx.zone).substr(17),
          engine::FormatLocalShort(x.end, *ctx.zone) + " " + engine::FormatLocal(x.end, *ctx.zone).substr(17),
          dur, dur_w));
    } else {
      surface::ShortRange range = surface::ShortRangeText(x.start, x.end, *ctx.zone);
      ctx.Print(fmt::format("{:>3} {:<8} {:<9} {:<10} {:>5} {:<11} {:<11} {:>{}}", num, x.ShortId(),
                            engine::ModeName(x.mode), gpus, surface::SlotsText(x, p), range.start, range.end,
                            dur, dur_w));
    }
    if (history) {
      std::string line =
          fmt::format("    status={} edits={}", engine::StatusName(x.StatusAt(now)), x.edit_count);
      if (x.cancellation) line += " reason=" + Printable(x.cancellation->reason);
      ctx.Print(line);
    }
  }
  if (r.truncated)
    ctx.Print(fmt::format("showing {} of {}; use `bk l --no-limit` or `bk l -n N`", r.reservations.size(),
                          r.total));
  PrintUnreadNotice(ctx);
  return 0;
}

Result<int> RunCancel(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref, op_id, reason;
  JsonOutput out;
  ArgSpec spec("bk del", "Cancel one of your reservations (running ones too).");
  spec.Positional("reservation", &ref, "list number from `bk l`, short ID or full ID");
  spec.Option("--op-id", &op_id, "operation ID: retrying the same ID is safe", "ID");
  spec.Option("--reason", &reason, "why (required to cancel another user's reservation as administrator)",
              "TEXT");
  out.AddTo(spec, "print the cancellation_result document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref) return Invalid("which reservation? give its number or ID, e.g. `bk d 1` (`bk l` lists them)");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  service::CancelRequest req{*ref, op_id ? std::optional(std::string(Trim(*op_id))) : std::nullopt, reason};
  BK_ASSIGN_OR_RETURN(service::CancelOutcome o, ledger->Cancel(req));
  for (const auto& w :
       worker::SweepSpecsAfterCancel(*ledger, ctx.config, config::ProcessEnv(), o.reservation))
    ctx.Warn(w);
  if (out.wanted()) {
    ctx.PrintDoc(CallerDoc(*ledger, o));
    return 0;
  }
  if (o.reservation.uid != ledger->actor().uid)
    ctx.Print(fmt::format("cancelled: {} owner={} reason={}", o.reservation.ShortId(), o.reservation.username,
                          o.reservation.cancellation ? o.reservation.cancellation->reason : ""));
  else
    ctx.Print(fmt::format("cancelled: {}", o.reservation.ShortId()));
  return 0;
}

Result<int> RunEdit(Context& ctx, const std::vector<std::string>& args) {
  EditArgs e;
  JsonOutput out;
  bool dry_run = false;
  ArgSpec spec("bk edit", "Change one of your reservations. A running one may only change its end.");
  AddEditOptions(spec, e);
  spec.Flag("--dry-run", &dry_run, "say what the edit would do (or why it is refused); change nothing");
  out.AddTo(spec, "print the booking_result document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!e.ref) return Invalid("which reservation? give its number or ID, e.g. `bk e 1 --duration 2h`");
  BK_ASSIGN_OR_RETURN(service::EditRequest req, ToEditRequest(ctx, e));
  req.dry_run = dry_run;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::BookingOutcome o, ledger->Edit(req));
  if (out.wanted()) {
    ctx.PrintDoc(CallerDoc(*ledger, o));
    return 0;
  }
  std::string status = o.status;
  if (o.dry_run && !o.replayed) status = o.status == "queued" ? "would queue" : "would update";
  ctx.Print(BookingLine(status, o.reservation, ledger->policy(), *ctx.zone));
  if (o.replayed) ctx.Print("note: committed operation replayed; nothing was changed again");
  return 0;
}

Result<int> RunRenew(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref, duration, op_id, reason;
  JsonOutput out;
  bool dry_run = false;
  ArgSpec spec("bk renew", "Extend a reservation's end by DURATION on the same GPUs, with the same checks.");
  spec.NeededPositional("reservation", &ref, "list number from `bk l`, short ID or full ID");
  spec.NeededPositional("duration", &duration, "how much longer, e.g. 30m or 1h");
  spec.Option("--op-id", &op_id, "operation ID for a retry-safe renewal", "ID");
  spec.Flag("--dry-run", &dry_run, "say what the renewal would do (or why it is refused); change nothing");
  spec.Option("--reason", &reason,
              "administrators: go beyond the fair-share limits, for this reason (kept in the audit log)",
              "TEXT");
  out.AddTo(spec, "print the booking_result document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref || !duration) return Invalid("give a reservation and how much longer, e.g. `bk renew 1 30m`");
  BK_ASSIGN_OR_RETURN(service::RenewRequest req, ToRenewRequest(*ref, *duration, op_id));
  req.dry_run = dry_run;
  req.override_reason = reason;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::BookingOutcome o, ledger->Renew(req));
  if (out.wanted()) {
    ctx.PrintDoc(CallerDoc(*ledger, o));
    return 0;
  }
  std::string status = o.replayed ? "exists" : o.dry_run ? "would renew" : "renewed";
  ctx.Print(BookingLine(status, o.reservation, ledger->policy(), *ctx.zone));
  return 0;
}

}  // namespace bk::cli
