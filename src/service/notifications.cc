// BookingService's read marks on notifications: what the recipient has not
// yet seen with `bk n`, which every summary counts in one line, and the mark
// `bk n` sets once it has shown them. The notifications themselves are
// written by the cancellations that cause them (admin cancel, reclaim).

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "service/impl.h"

namespace bk::service {

std::string UnreadNoticeLine(const UnreadNotifications& u) {
  if (u.count <= 0) return "";
  std::string what;
  if (!u.newest.empty()) {
    const store::Notification& n = u.newest.front();
    std::string verb = n.type == "reservation-admin-cancelled" ? "admin cancelled"
                       : n.type.starts_with("reservation-")    ? n.type.substr(12)
                                                               : n.type;
    std::replace(verb.begin(), verb.end(), '-', ' ');
    // A reclaim's reason is a paragraph; the line stays one line.
    std::string reason = Printable(n.reason);
    if (reason.size() > 60) reason = reason.substr(0, 57) + "...";
    what = fmt::format(" ({} {}{})", Printable(verb), n.reservation_id.substr(0, 8),
                       reason.empty() ? "" : ": " + reason);
  }
  return fmt::format("notice: {} unread{}; read {} with `bk n`", u.count, what, u.count == 1 ? "it" : "them");
}

Result<UnreadNotifications> BookingService::Unread(const Actor& actor, int limit) {
  if (limit < 1 || limit > 1000) return Invalid("--limit must be between 1 and 1000");
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  UnreadNotifications u;
  BK_ASSIGN_OR_RETURN(u.count, s->CountUnreadNotifications(actor.uid));
  if (u.count > 0) {
    BK_ASSIGN_OR_RETURN(u.newest, s->UnreadNotificationsForUid(actor.uid, limit));
  }
  return u;
}

Result<int64_t> BookingService::MarkNotificationsRead(const Actor& actor,
                                                      const std::vector<std::string>& ids) {
  if (ids.size() > 1000) return Invalid("at most 1000 notifications may be marked read at once");
  // Looked at first without the write lock: reading `bk n` again, or an empty
  // list, must not write (nor create) the ledger.
  {
    BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
    BK_ASSIGN_OR_RETURN(int64_t unread, s->CountUnreadNotifications(actor.uid));
    if (ids.empty() || unread == 0) return int64_t{0};
  }
  return impl_->Write([&]() -> Result<int64_t> {
    BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
    BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
    BK_ASSIGN_OR_RETURN(int64_t marked, s->MarkNotificationsRead(actor.uid, ids, impl_->Now()));
    BK_TRY(txn.Commit());
    return marked;
  });
}

}  // namespace bk::service
