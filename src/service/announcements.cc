// BookingService's announcements: an administrator's message to every user,
// shown while it is active. Each change is one transaction with its audit
// event; nothing is ever deleted (archiving sets who and when).

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "engine/parse.h"
#include "service/impl.h"
#include "sys/random.h"

namespace bk::service {
namespace {

using engine::Seconds;
using store::Announcement;
using store::AnnouncementLevel;

constexpr Seconds kMinLifetime = 60;
constexpr Seconds kMaxLifetime = 365 * engine::kDay;
constexpr Seconds kDefaultLifetime = engine::kDay;
constexpr size_t kMaxMessageChars = 1024;

Status Administrator(const Actor& actor, std::string_view what) {
  if (actor.admin) return Ok();
  return Fail(ErrorKind::kPermission,
              fmt::format("only an administrator (root or the server's owner) can {} announcements", what));
}

// Trimmed, 1-1024 characters (UTF-8 code points), no control characters but
// tab and newline: it is printed on every user's terminal.
Result<std::string> CheckMessage(std::string_view text) {
  std::string message(Trim(text));
  if (message.empty()) return Invalid("the announcement message is empty; give the text to show, in quotes");
  size_t chars = std::count_if(message.begin(), message.end(),
                               [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
  if (chars > kMaxMessageChars)
    return Invalid(
        fmt::format("the announcement message has {} characters; at most {} fit", chars, kMaxMessageChars));
  for (unsigned char c : message)
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
      return Invalid(
          "the announcement message must not contain control characters (tab and newline are fine)");
  return message;
}

Result<AnnouncementLevel> CheckLevel(std::string_view text) {
  auto level = store::kAnnouncementLevelNames.Parse(ToLower(Trim(text)));
  if (!level)
    return Invalid(fmt::format("--level must be info, warning or critical, not {}", Printable(text)));
  return *level;
}

// The window [starts, expires): 1 minute to 365 days long, and not over yet.
Status CheckWindow(Seconds starts, Seconds expires, Seconds now) {
  if (expires - starts < kMinLifetime || expires - starts > kMaxLifetime)
    return Invalid(fmt::format("an announcement lasts from 1 minute to 365 days; this one would last {}",
                               expires > starts ? engine::FormatDuration(expires - starts) : "nothing"));
  if (expires <= now) return Invalid("that announcement would already have expired; give a later --until");
  return Ok();
}

// The expiry a request asks for: its own, or a lifetime counted from the
// start (from now once started), or `otherwise`.
Seconds Expiry(std::optional<Seconds> expires_at, std::optional<Seconds> lifetime, Seconds starts,
               Seconds now, Seconds otherwise) {
  if (expires_at) return *expires_at;
  if (lifetime) return std::max(starts, now) + *lifetime;
  return otherwise;
}

Status OneExpiry(const std::optional<Seconds>& expires_at, const std::optional<Seconds>& lifetime) {
  if (expires_at && lifetime) return Invalid("give --expires DURATION or --until TIME, not both");
  if (lifetime && *lifetime <= 0) return Invalid("--expires must be a positive duration such as 24h");
  return Ok();
}

// What the audit history keeps of an announcement before and after a change.
std::string AnnouncementState(const Announcement& a) {
  nlohmann::json j = {{"level", store::kAnnouncementLevelNames.Name(a.level)},
                      {"message", a.message},
                      {"starts_at", a.starts_at},
                      {"expires_at", a.expires_at},
                      {"archived_at", a.archived_at ? nlohmann::json(*a.archived_at) : nlohmann::json()}};
  return j.dump();
}

store::Event AnnouncementEvent(const std::string& action, const Actor& actor, const Announcement& a,
                               Seconds now) {
  store::Event e = ServerEvent(action, actor, a.id, now);
  e.op_id = sys::NewUuid();
  e.start = a.starts_at;
  e.end = a.expires_at;
  e.after = AnnouncementState(a);
  return e;
}

// The announcement whose ID is `ref` or starts with it.
Result<Announcement> Find(store::LedgerStore& s, std::string_view ref) {
  std::string prefix(Trim(ref));
  if (prefix.empty()) return Invalid("which announcement? give its ID (`bk admin notice list` shows them)");
  BK_ASSIGN_OR_RETURN(std::vector<Announcement> all, s.Announcements());
  std::vector<Announcement> found;
  for (auto& a : all)
    if (a.id.starts_with(prefix)) found.push_back(std::move(a));
  if (found.empty())
    return Fail(
        ErrorKind::kNotFound,
        fmt::format("announcement not found: {}; `bk admin notice list` shows them", Printable(prefix)));
  if (found.size() > 1)
    return Invalid(
        fmt::format("announcement ID prefix {} is ambiguous; give more characters", Printable(prefix)));
  return found.front();
}

// Critical first, then warning, then info; oldest first within a level.
void MostUrgentFirst(std::vector<Announcement>& list) {
  std::stable_sort(list.begin(), list.end(),
                   [](const Announcement& a, const Announcement& b) { return a.level > b.level; });
}

}  // namespace

Result<AnnouncementOutcome> BookingService::Publish(const Actor& actor, const PublishRequest& request) {
  BK_TRY(Administrator(actor, "publish"));
  BK_ASSIGN_OR_RETURN(std::string message, CheckMessage(request.message));
  BK_ASSIGN_OR_RETURN(AnnouncementLevel level, CheckLevel(request.level));
  BK_TRY(OneExpiry(request.expires_at, request.lifetime));
  const Seconds now = impl_->Now();
  const Seconds starts = request.starts_at.value_or(now);
  const Seconds expires =
      Expiry(request.expires_at, request.lifetime, starts, now, starts + kDefaultLifetime);
  BK_TRY(CheckWindow(starts, expires, now));
  return impl_->Write([&]() -> Result<AnnouncementOutcome> {
    BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
    BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
    Announcement a{.id = sys::NewUuid(),
                   .level = level,
                   .message = message,
                   .created_at = now,
                   .starts_at = starts,
                   .expires_at = expires,
                   .actor_uid = actor.uid,
                   .actor_username = actor.username};
    BK_TRY(s->InsertAnnouncement(a));
    BK_TRY(s->AppendEvent(AnnouncementEvent("announcement-publish", actor, a, now)));
    BK_TRY(txn.Commit());
    return AnnouncementOutcome{a};
  });
}

Result<AnnouncementOutcome> BookingService::EditAnnouncement(const Actor& actor,
                                                             const AnnouncementEdit& request) {
  BK_TRY(Administrator(actor, "edit"));
  if (!request.message && !request.level && !request.starts_at && !request.expires_at && !request.lifetime)
    return Invalid("nothing to change; give --message, --level, --starts, --expires or --until");
  std::optional<std::string> message;
  if (request.message) {
    BK_ASSIGN_OR_RETURN(message, CheckMessage(*request.message));
  }
  std::optional<AnnouncementLevel> level;
  if (request.level) {
    BK_ASSIGN_OR_RETURN(level, CheckLevel(*request.level));
  }
  BK_TRY(OneExpiry(request.expires_at, request.lifetime));
  return impl_->Write([&]() -> Result<AnnouncementOutcome> {
    BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
    BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
    BK_ASSIGN_OR_RETURN(Announcement cur, Find(*s, request.ref));
    if (cur.archived_at)
      return Invalid(fmt::format("announcement {} is archived and stays as it was; publish a new one",
                                 cur.id.substr(0, 8)));
    const Seconds now = impl_->Now();
    Announcement next = cur;
    next.message = message.value_or(cur.message);
    next.level = level.value_or(cur.level);
    next.starts_at = request.starts_at.value_or(cur.starts_at);
    next.expires_at = Expiry(request.expires_at, request.lifetime, next.starts_at, now, cur.expires_at);
    next.updated_at = now;
    BK_TRY(CheckWindow(next.starts_at, next.expires_at, now));
    BK_TRY(s->UpdateAnnouncement(next));
    store::Event e = AnnouncementEvent("announcement-edit", actor, next, now);
    e.before = AnnouncementState(cur);
    BK_TRY(s->AppendEvent(e));
    BK_TRY(txn.Commit());
    return AnnouncementOutcome{next};
  });
}

Result<AnnouncementOutcome> BookingService::ArchiveAnnouncement(const Actor& actor, const std::string& ref) {
  BK_TRY(Administrator(actor, "archive"));
  // Looked up first without the write lock: archiving again writes nothing.
  {
    BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
    BK_ASSIGN_OR_RETURN(Announcement cur, Find(*s, ref));
    if (cur.archived_at) return AnnouncementOutcome{cur, false};
  }
  return impl_->Write([&]() -> Result<AnnouncementOutcome> {
    BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
    BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
    BK_ASSIGN_OR_RETURN(Announcement cur, Find(*s, ref));
    if (cur.archived_at) return AnnouncementOutcome{cur, false};
    const Seconds now = impl_->Now();
    Announcement next = cur;
    next.archived_at = now;
    next.archived_by_uid = actor.uid;
    next.archived_by_username = actor.username;
    BK_TRY(s->UpdateAnnouncement(next));
    store::Event e = AnnouncementEvent("announcement-archive", actor, next, now);
    e.before = AnnouncementState(cur);
    BK_TRY(s->AppendEvent(e));
    BK_TRY(txn.Commit());
    return AnnouncementOutcome{next};
  });
}

Result<std::vector<Announcement>> BookingService::Announcements(const Actor& actor,
                                                                const AnnouncementsQuery& query) {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  if (query.all && actor.admin) {
    BK_ASSIGN_OR_RETURN(std::vector<Announcement> all, s->Announcements());
    std::reverse(all.begin(), all.end());
    return all;
  }
  BK_ASSIGN_OR_RETURN(std::vector<Announcement> active, s->ActiveAnnouncements(impl_->Now()));
  MostUrgentFirst(active);
  return active;
}

}  // namespace bk::service
