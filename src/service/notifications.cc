// BookingService's read marks on notifications: what the recipient has not
// yet seen with `bk n`, which every summary counts in one line, and the mark
// `bk n` sets once it has shown them. The notifications themselves are
// written by the cancellations that cause them (admin cancel, reclaim).

#include <fmt/format.h>

#include "service/impl.h"

namespace bk::service {

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
