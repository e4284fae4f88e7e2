// bk admin notice publish|list|edit|archive: an administrator's announcements
// to every user of the deployment, through the ledger (the daemon's, when a
// server is configured), so nothing needs restarting.

#include <fmt/format.h>

#include <algorithm>

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

using engine::Seconds;
using store::Announcement;

constexpr const char* kNoticeUsage =
    "usage: bk admin notice publish MESSAGE [--level info|warning|critical] [--starts TIME]\n"
    "                                [--expires DURATION | --until TIME] [--yes] [--json]\n"
    "       bk admin notice list [--json]\n"
    "       bk admin notice edit ID [--message TEXT] [--level L] [--starts TIME]\n"
    "                                [--expires DURATION | --until TIME] [--json]\n"
    "       bk admin notice archive ID [--json]   (also rm, remove)\n";

// How many `list` shows as text (--json has every one).
constexpr size_t kListRows = 50;

// The options publish and edit share, as typed.
struct WindowArgs {
  std::optional<std::string> level, starts, expires, until;
  JsonOutput out;

  void AddTo(ArgSpec& spec) {
    spec.Option("--level", &level, "info, warning or critical (publish: warning)", "LEVEL");
    spec.Option("--starts", &starts, "when it starts showing: now, +30m, 20:00, \"tomorrow 09:00\", ISO 8601",
                "TIME");
    spec.Option("--expires", &expires, "how long it shows, from its start (1m to 365d; publish: 24h)", "DUR");
    spec.Option("--until", &until, "or when it stops showing (same forms as --starts)", "TIME");
    spec.Excludes("--expires", "--until");
    out.AddTo(spec, "print the gpubk.admin.v1 announcement document");
  }
};

// The times of `w` as the service takes them: instants in this user's zone.
struct Window {
  std::optional<Seconds> starts_at, expires_at, lifetime;
};

Result<Window> ParseWindow(const Context& ctx, const WindowArgs& w, Seconds now) {
  Window out;
  if (w.starts) {
    BK_ASSIGN_OR_RETURN(out.starts_at, engine::ParseViewTime(*w.starts, now, *ctx.zone));
  }
  if (w.until) {
    BK_ASSIGN_OR_RETURN(out.expires_at, engine::ParseViewTime(*w.until, now, *ctx.zone));
  }
  if (w.expires) {
    auto d = engine::ParseDuration(*w.expires);
    if (!d) return Invalid("--expires " + d.error().message);
    out.lifetime = *d;
  }
  return out;
}

// "a1b2c3d4 level=warning expires=2026-11-30 18:52 +0000"
std::string Summary(const Context& ctx, const Announcement& a) {
  return fmt::format("{} level={} expires={}", a.id.substr(0, 8),
                     store::kAnnouncementLevelNames.Name(a.level),
                     engine::FormatLocal(a.expires_at, *ctx.zone));
}

void PrintOutcome(Context& ctx, const JsonOutput& out, const service::AnnouncementOutcome& o,
                  std::string_view status, const std::string& line) {
  if (out.wanted())
    ctx.Print(out.compact ? surface::AnnouncementDoc(o.announcement, status)
                          : surface::Dump(surface::AnnouncementDoc(o.announcement, status),
                                          surface::JsonStyle::kPretty));
  else
    ctx.Print(line);
}

Result<int> Publish(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> message;
  WindowArgs w;
  bool yes = false;
  ArgSpec spec("bk admin notice publish", "Publish an announcement every user sees while it is active.");
  spec.NeededPositional("message", &message, "the text, in quotes (1-1024 characters)");
  w.AddTo(spec);
  spec.Flag("--yes", &yes, "publish without asking");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!message) return Invalid("what should it say? e.g. `bk admin notice publish \"GPU 1 down at 18:00\"`");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  const Seconds now = ledger->Now();
  BK_ASSIGN_OR_RETURN(Window t, ParseWindow(ctx, w, now));
  service::PublishRequest req{.message = *message,
                              .level = w.level.value_or("warning"),
                              .starts_at = t.starts_at,
                              .expires_at = t.expires_at,
                              .lifetime = t.lifetime};
  // The question names the expiry the service will compute the same way.
  Seconds starts = t.starts_at.value_or(now);
  Seconds until = t.expires_at.value_or(std::max(starts, now) + t.lifetime.value_or(engine::kDay));
  BK_TRY(Confirm(
      ctx, yes,
      fmt::format("Publish {} announcement until {}?", req.level, engine::FormatLocal(until, *ctx.zone))));
  BK_ASSIGN_OR_RETURN(service::AnnouncementOutcome o, ledger->Publish(req));
  PrintOutcome(ctx, w.out, o, "published", "published: " + Summary(ctx, o.announcement));
  return 0;
}

Result<int> Edit(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref, message;
  WindowArgs w;
  ArgSpec spec("bk admin notice edit", "Change an announcement that is not archived.");
  spec.NeededPositional("id", &ref, "its ID or a unique prefix (`bk admin notice list`)");
  spec.Option("--message", &message, "the new text", "TEXT");
  w.AddTo(spec);
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref) return Invalid("which announcement? give its ID (`bk admin notice list` shows them)");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(Window t, ParseWindow(ctx, w, ledger->Now()));
  service::AnnouncementEdit req{.ref = *ref,
                                .message = message,
                                .level = w.level,
                                .starts_at = t.starts_at,
                                .expires_at = t.expires_at,
                                .lifetime = t.lifetime};
  BK_ASSIGN_OR_RETURN(service::AnnouncementOutcome o, ledger->EditAnnouncement(req));
  PrintOutcome(ctx, w.out, o, "updated", "updated: " + Summary(ctx, o.announcement));
  return 0;
}

Result<int> Archive(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref;
  JsonOutput out;
  ArgSpec spec("bk admin notice archive",
               "Stop showing an announcement; the ledger keeps it, with who and when.");
  spec.NeededPositional("id", &ref, "its ID or a unique prefix (`bk admin notice list`)");
  out.AddTo(spec, "print the gpubk.admin.v1 announcement document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref) return Invalid("which announcement? give its ID (`bk admin notice list` shows them)");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::AnnouncementOutcome o, ledger->ArchiveAnnouncement(*ref));
  const std::string id = o.announcement.id.substr(0, 8);
  PrintOutcome(ctx, out, o, o.changed ? "archived" : "unchanged",
               o.changed ? fmt::format("archived: {} (history retained)", id)
                         : fmt::format("archived: {} (already archived)", id));
  return 0;
}

std::string_view State(const Announcement& a, Seconds now) {
  if (a.archived_at) return "archived";
  if (now < a.starts_at) return "scheduled";
  return now < a.expires_at ? "active" : "expired";
}

Result<int> List(Context& ctx, const std::vector<std::string>& args) {
  JsonOutput out;
  ArgSpec spec(
      "bk admin notice list",
      "Every announcement, newest first: active, scheduled, expired and archived (others see only the "
      "active ones).");
  out.AddTo(spec, "print every announcement as a gpubk.admin.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(std::vector<Announcement> list, ledger->Announcements({.all = true}));
  if (out.wanted()) {
    std::string doc = surface::AnnouncementsDoc(list);
    ctx.Print(out.compact ? doc : surface::Dump(doc, surface::JsonStyle::kPretty));
    return 0;
  }
  if (list.empty()) {
    ctx.Print("No administrator announcements.");
    return 0;
  }
  const Seconds now = ledger->Now();
  constexpr const char* kRow = "{:<8}  {:<8}  {:<9}  {:<22}  {}";
  ctx.Print(fmt::format(kRow, "ID", "Level", "State", "Expires", "Message"));
  for (size_t i = 0; i < list.size() && i < kListRows; ++i) {
    const Announcement& a = list[i];
    ctx.Print(fmt::format(kRow, a.id.substr(0, 8), store::kAnnouncementLevelNames.Name(a.level),
                          State(a, now), engine::FormatLocal(a.expires_at, *ctx.zone), OneLine(a.message)));
  }
  if (list.size() > kListRows)
    ctx.Print(fmt::format("+{} older; `bk admin notice list --json` has them all", list.size() - kListRows));
  return 0;
}

}  // namespace

Result<int> RunAdminNotice(Context& ctx, const std::vector<std::string>& args) {
  if (args.empty())
    return Invalid("which notice command? publish, list, edit or archive (`bk admin notice -h`)");
  if (args[0] == "-h" || args[0] == "--help") {
    ctx.Print(std::string(kNoticeUsage) +
              "\nAnnouncements every user sees in `bk`, `bk st`, `bk n`, `bk login` and agents' context.");
    return 0;
  }
  std::vector<std::string> tail(args.begin() + 1, args.end());
  const std::string& verb = args[0];
  if (verb == "publish") return Publish(ctx, tail);
  if (verb == "list" || verb == "ls") return List(ctx, tail);
  if (verb == "edit") return Edit(ctx, tail);
  if (verb == "archive" || verb == "rm" || verb == "remove") return Archive(ctx, tail);
  return Invalid(
      fmt::format("unknown notice command {}; use publish, list, edit or archive", Printable(verb)));
}

}  // namespace bk::cli
