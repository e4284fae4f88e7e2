// bk history, bk lg, bk n: the audit trail and notifications.

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/notices.h"
#include "cli/output.h"
#include "engine/parse.h"
#include "surface/documents.h"
#include "surface/text.h"

namespace bk::cli {
namespace {

// "exclusive GPU=3 <range> share=- mem=auto" from an edit's before/after state.
std::string StateText(const std::string& text, const engine::Zone& zone) {
  try {
    auto j = nlohmann::json::parse(text);
    engine::FixedZone utc(0);
    auto start = engine::ParseIsoTime(j.value("start_at", ""), utc);
    auto end = engine::ParseIsoTime(j.value("end_at", ""), utc);
    std::string gpus;
    for (const auto& g : j["gpus"]) gpus += (gpus.empty() ? "" : ",") + std::to_string(g.get<int>());
    std::string share = j["share_units"].is_null() ? "-" : std::to_string(j["share_units"].get<int>());
    std::string mem = j["expected_memory_mb"].is_null()
                          ? "auto"
                          : engine::FormatSizeMb(j["expected_memory_mb"].get<int64_t>());
    return fmt::format("{} GPU={} {} share={} mem={}", j.value("mode", "?"), gpus,
                       start && end ? surface::RangeText(*start, *end, zone) : "invalid-range", share, mem);
  } catch (const nlohmann::json::exception&) {
    return "legacy edit (details unavailable)";
  }
}

}  // namespace

Result<int> RunHistory(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref;
  JsonOutput out;
  ArgSpec spec("bk history", "Lifecycle of one of your reservations: creation, edits, cancellation.");
  spec.NeededPositional("reservation", &ref, "list number, short ID or full ID (any status)");
  out.AddTo(spec, "print the gpubk.reservation-history.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref) return Invalid("which reservation? e.g. `bk history 3dee5b08`");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::HistoryView v, ledger->History(*ref));
  if (out.wanted()) {
    ctx.PrintDoc(CallerDoc(*ledger, v));
    return 0;
  }
  engine::Seconds now = ledger->Now();
  const auto& r = v.reservation;
  const engine::Zone& z = *ctx.zone;
  ctx.Print(fmt::format("Reservation {} status={} owner={}", r.ShortId(), engine::StatusName(r.StatusAt(now)),
                        r.username));
  ctx.Print(fmt::format("Current: mode={} GPU={} {}", engine::ModeName(r.mode), JoinInts(r.gpus),
                        surface::RangeText(r.start, r.end, z)));
  std::vector<const store::Event*> edits;
  for (const auto& e : v.events)
    if (e.action == "edit" || e.action == "renew" || e.action == "release") edits.push_back(&e);
  if (edits.empty())
    ctx.Print("Edits: none");
  else
    ctx.Print(fmt::format("Edits: {}", edits.size()));
  for (size_t i = 0; i < edits.size(); ++i)
    ctx.Print(fmt::format("{:>4} {} {} {} -> {}", i + 1, engine::FormatLocal(edits[i]->ts, z),
                          edits[i]->action, StateText(edits[i]->before, z), StateText(edits[i]->after, z)));
  if (r.cancellation)
    ctx.Print(fmt::format("Cancellation: {} by {} reason={}",
                          engine::kCancelKindNames.Name(r.cancellation->kind), r.cancellation->actor_username,
                          Printable(r.cancellation->reason)));
  for (const auto& n : v.notifications) ctx.Print("Notification: " + Printable(n.message));
  return 0;
}

Result<int> RunLog(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> limit;
  JsonOutput out;
  ArgSpec spec("bk log", "Your recent operations, oldest first.");
  spec.Option("--limit", &limit, "how many recent events (1-1000, default 100)", "N");
  out.AddTo(spec, "print the gpubk.audit.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(int n, LimitOption(limit, 100));
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(auto events, ledger->Log(n));
  if (out.wanted()) {
    ctx.PrintDoc(surface::LogDoc(events, ledger->actor().uid, n));
    return 0;
  }
  if (events.empty()) ctx.Print("No operations yet.");
  for (const auto& e : events) {
    if (e.reservation_id.empty()) {  // about the server, not one booking: a policy change
      ctx.Print(fmt::format("{} {} {} by {}: {}", engine::FormatLocal(e.ts, *ctx.zone), e.action, e.result,
                            e.actor_username, ctx.Local(e.message)));
      continue;
    }
    std::string share = e.share_units ? std::to_string(*e.share_units) : "-";
    // A transfer's line says between whom, and why.
    std::string what = e.action == "admin-transfer" ? " " + Printable(e.message) : "";
    ctx.Print(fmt::format("{} {} {} {} mode={} share={} gpu={} {}{}", engine::FormatLocal(e.ts, *ctx.zone),
                          e.action, e.result, e.reservation_id.substr(0, 8), e.mode, share,
                          e.gpus.empty() ? "-" : JoinInts(e.gpus),
                          surface::RangeText(e.start, e.end, *ctx.zone), what));
  }
  return 0;
}

// Plain `bk n` shows what is unread and marks it read; with nothing unread,
// or with --all, the newest of every notification, read or not (the
// original's listing). The JSON document is the original's listing and marks
// nothing: scripts read it, people read the table.
namespace {

// One line of `bk n`: a notice about one of your bookings, or an announcement.
struct NoticeRow {
  engine::Seconds when = 0;
  std::string ref, level, message;
  std::string notification_id;  // "" for an announcement
};

}  // namespace

Result<int> RunNotifications(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> limit;
  bool all = false;
  JsonOutput out;
  ArgSpec spec("bk notifications",
               "Notices about your reservations (administrator cancellations, reclaims): the unread ones, "
               "which are then marked read; and the administrators' active announcements.");
  spec.Option("--limit", &limit, "how many, newest first (1-1000, default 20)", "N");
  spec.Flag("--all", &all, "the archive: read ones too");
  out.AddTo(spec, "print the gpubk.notifications.v1 document (every notification; marks nothing)");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(int n, LimitOption(limit, 20));
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  // The active announcements are items too, shown while active and never marked read.
  BK_ASSIGN_OR_RETURN(auto announcements, ledger->Announcements({}));
  if (out.wanted()) {
    BK_ASSIGN_OR_RETURN(auto items, ledger->Notifications(n));
    ctx.PrintDoc(surface::NotificationsDoc(items, announcements, n));
    return 0;
  }
  BK_ASSIGN_OR_RETURN(service::UnreadNotifications unread, ledger->UnreadNotifications(n));
  std::vector<store::Notification> items = unread.newest;
  if (all || items.empty()) {
    BK_ASSIGN_OR_RETURN(items, ledger->Notifications(n));
  }
  if (items.empty() && announcements.empty()) {
    ctx.Print("No notifications.");
    return 0;
  }
  if (unread.count == 0 && !all && !items.empty())
    ctx.Print("No unread notifications; the newest read ones:");
  // Newest first, notices and announcements together (an announcement dated by its start).
  std::vector<NoticeRow> rows;
  for (const auto& it : items)
    rows.push_back({it.created_at, it.reservation_id.substr(0, 8), "action", it.message, it.id});
  for (const auto& a : announcements)
    rows.push_back({a.starts_at, a.id.substr(0, 8), std::string(store::kAnnouncementLevelNames.Name(a.level)),
                    OneLine(a.message), ""});
  std::stable_sort(rows.begin(), rows.end(),
                   [](const NoticeRow& a, const NoticeRow& b) { return a.when > b.when; });
  if (rows.size() > static_cast<size_t>(n)) rows.resize(n);
  ctx.Print(fmt::format("{:<23} {:<8} {:<9} {}", "When", "Ref", "Level", "Event"));
  // The message wraps under its column, as the original's does.
  const int width = std::max(20, surface::TerminalWidth(fileno(ctx.out), 80) - 43);
  for (const auto& row : rows) {
    std::vector<std::string> lines = surface::WrapWords(Printable(ctx.Local(row.message)), width);
    ctx.Print(fmt::format("{:<23} {:<8} {:<9} {}", engine::FormatLocal(row.when, *ctx.zone), row.ref,
                          row.level, lines[0]));
    for (size_t i = 1; i < lines.size(); ++i) ctx.Print(std::string(43, ' ') + lines[i]);
  }
  std::vector<std::string> shown;
  for (const auto& it : unread.newest) shown.push_back(it.id);
  // Only what the table showed: unread ones past --limit stay unread.
  std::erase_if(shown, [&](const std::string& id) {
    return std::none_of(rows.begin(), rows.end(),
                        [&](const NoticeRow& row) { return row.notification_id == id; });
  });
  if (!shown.empty()) {
    BK_TRY(ledger->MarkNotificationsRead(shown));
  }
  if (unread.count > static_cast<int64_t>(shown.size()))
    ctx.Print(fmt::format("{} more unread; `bk n` again shows them",
                          unread.count - static_cast<int64_t>(shown.size())));
  return 0;
}

}  // namespace bk::cli
