// bk login: what to know on logging in, read from the ledger alone (no GPU is
// probed): your bookings running now and starting soon, unread notices about
// them, and critical announcements. `--hook` is the form the login shell runs:
// silent when there is nothing to say, or when the ledger cannot be read.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

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

using engine::Reservation;
using engine::Seconds;

// At most this many notices and critical announcements are shown.
constexpr int kShown = 3;
constexpr int kWidth = 80;
constexpr int kMaxLines = 5;

Result<surface::LoginNotice> Read(client::Ledger& ledger, Seconds within) {
  surface::LoginNotice n{.now = ledger.Now(), .within = within};
  BK_ASSIGN_OR_RETURN(service::ListResult mine, ledger.List({}));
  for (const Reservation& r : mine.reservations) {
    if (r.start <= n.now && n.now < r.end) n.active.push_back(r);
    if (r.start > n.now && r.start < n.now + within) n.upcoming.push_back(r);
  }
  BK_ASSIGN_OR_RETURN(service::UnreadNotifications unread, ledger.UnreadNotifications(kShown));
  n.notifications = unread.newest;
  n.unread = unread.count;
  BK_ASSIGN_OR_RETURN(std::vector<store::Announcement> active, ledger.Announcements({}));
  for (const auto& a : active)
    if (a.level == store::AnnouncementLevel::kCritical && std::ssize(n.announcements) < kShown)
      n.announcements.push_back(a);
  return n;
}

// 20:50 today, else 11-30 20:50.
std::string When(Seconds t, Seconds now, const engine::Zone& zone) {
  bool today =
      engine::FormatLocalShort(t, zone).substr(0, 5) == engine::FormatLocalShort(now, zone).substr(0, 5);
  return today ? engine::FormatLocalClock(t, zone) : engine::FormatLocalShort(t, zone);
}

std::string Plural(size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// "  KIND text", wrapped at 80 columns under its text.
void Line(std::string& out, const std::string& text) {
  for (const auto& line : surface::WrapWords(text, kWidth - 2)) out += "  " + line + "\n";
}

// A login shows at most kMaxLines: past them, one line says where the rest is.
std::string Capped(const std::string& text) {
  std::vector<std::string> lines = Split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (std::ssize(lines) <= kMaxLines) return text;
  lines.resize(kMaxLines - 1);
  lines.push_back("  ... and more: `bk n` lists every notice, `bk l` your bookings");
  return Join(lines, "\n") + "\n";
}

std::string Text(const surface::LoginNotice& n, const engine::Zone& zone) {
  const int64_t unread = n.unread;
  std::vector<std::string> head;
  if (!n.active.empty()) head.push_back(fmt::format("{} active", n.active.size()));
  if (!n.upcoming.empty()) head.push_back(fmt::format("{} upcoming", n.upcoming.size()));
  if (unread > 0) head.push_back(Plural(unread, "notice"));
  if (!n.announcements.empty()) head.push_back(Plural(n.announcements.size(), "critical announcement"));
  if (head.empty()) return "";
  std::string out = "GPUBK: " + Join(head, ", ") + "\n";
  if (!n.active.empty()) {
    const Reservation& r = n.active.front();
    std::string more = n.active.size() > 1 ? fmt::format("  (+{} more active)", n.active.size() - 1) : "";
    Line(out, fmt::format("NOW  {}  GPU {}  until {}  ({} left){}", r.ShortId(), JoinInts(r.gpus),
                          When(r.end, n.now, zone), engine::FormatDuration(r.end - n.now), more));
  }
  if (!n.upcoming.empty()) {
    const Reservation& r = n.upcoming.front();
    std::string more =
        n.upcoming.size() > 1 ? fmt::format("  (+{} more upcoming)", n.upcoming.size() - 1) : "";
    Line(out, fmt::format("NEXT {}  GPU {}  at {}  (in {}){}", r.ShortId(), JoinInts(r.gpus),
                          When(r.start, n.now, zone), engine::FormatDuration(r.start - n.now), more));
  }
  for (const auto& x : n.notifications) Line(out, "NOTICE " + OneLine(surface::LocalTimes(x.message, zone)));
  if (unread > std::ssize(n.notifications))
    Line(out, fmt::format("NOTICE +{} more; `bk n` shows them", unread - std::ssize(n.notifications)));
  for (const auto& a : n.announcements)
    Line(out, fmt::format("CRITICAL {} (until {})", OneLine(a.message), When(a.expires_at, n.now, zone)));
  return Capped(out);
}

Result<int> ShowLogin(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> within_text;
  bool hook = false;
  JsonOutput out;
  ArgSpec spec(
      "bk login",
      "What to know on logging in: your bookings now and soon, unread notices, critical announcements. "
      "Reads the ledger only.");
  spec.Option("--within", &within_text, "how far ahead upcoming bookings count (default 1d)", "DUR");
  spec.Flag("--hook", &hook, "print nothing when there is nothing to say (the login shell's form)");
  out.AddTo(spec, "print the gpubk.login-notice.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  Seconds within = engine::kDay;
  if (within_text) {
    auto d = engine::ParseDuration(*within_text);
    if (!d) return Invalid("--within " + d.error().message);
    within = *d;
  }
  // A private ledger never written holds nothing to say: no reason to open
  // SQLite in every new shell of someone who has not booked yet.
  if (hook && ctx.config.deployment == config::Deployment::kPrivate &&
      access(ctx.config.ledger_path.c_str(), F_OK) != 0 && errno == ENOENT)
    return 0;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(surface::LoginNotice n, Read(*ledger, within));
  if (out.wanted()) {
    std::string doc = surface::LoginDoc(n);
    ctx.Print(out.compact ? doc : surface::Dump(doc, surface::JsonStyle::kPretty));
    return 0;
  }
  std::string text = Text(n, *ctx.zone);
  if (text.empty() && !hook)
    text =
        fmt::format("No active or upcoming reservations in the next {}.\n", engine::FormatDuration(within));
  std::fputs(text.c_str(), ctx.out);
  return 0;
}

}  // namespace

namespace {
bool HookForm(const std::vector<std::string>& args) {
  return std::find(args.begin(), args.end(), std::string("--hook")) != args.end();
}
}  // namespace

bool IsLoginHook(const std::vector<std::string>& args) {
  return !args.empty() && (args[0] == "login" || args[0] == "notice") &&
         HookForm({args.begin() + 1, args.end()});
}

Result<int> RunLogin(Context& ctx, const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "install" || args[0] == "uninstall"))
    return RunLoginRc(ctx, {args.begin() + 1, args.end()}, args[0] == "install");
  Result<int> rc = ShowLogin(ctx, args);
  // The login shell's form is silent on any error, a bad option too: a login
  // must never be held up or cluttered by bk.
  if (!rc && HookForm(args)) return 0;
  return rc;
}

}  // namespace bk::cli
