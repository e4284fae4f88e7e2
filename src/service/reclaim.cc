// BookingService::Reclaim: the monitor's no-show cancellation. The decision is
// the monitor's (monitor/reclaim.h); this only commits it, in one ledger
// transaction, re-checking under the write lock that the booking is still
// active and started, since the owner may have cancelled or edited it since.
// It cancels as `bk cancel` does (CancelReservation): a job bound to the
// booking is settled or asked to stop, too.

#include <fmt/format.h>

#include "base/strings.h"
#include "service/impl.h"
#include "sys/random.h"
#include "sys/users.h"

namespace bk::service {

Result<CancelOutcome> BookingService::Reclaim(const std::string& reservation_id, const std::string& reason) {
  return impl_->Write([&] { return ReclaimImpl(reservation_id, reason); });
}

Result<CancelOutcome> BookingService::ReclaimImpl(const std::string& reservation_id,
                                                  const std::string& raw_reason) {
  std::string reason(Trim(raw_reason));
  if (reservation_id.empty()) return Invalid("reclaim needs a reservation ID");
  if (reason.empty() || reason.size() > 512) return Invalid("a reclaim reason must be 1-512 characters");
  for (unsigned char c : reason)
    if (c < 0x20) return Invalid("a reclaim reason must not contain control characters");

  Actor actor;
  actor.uid = impl_->deps.data_owner;
  actor.username = sys::UserName(actor.uid);
  actor.admin = true;

  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  engine::Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, false));
  BK_ASSIGN_OR_RETURN(auto found, s->Get(reservation_id));
  if (!found) return Fail(ErrorKind::kNotFound, fmt::format("reservation not found: {}", reservation_id));
  const engine::Reservation& cur = *found;
  if (!cur.ActiveAt(now))
    return Fail(ErrorKind::kConflict,
                fmt::format("reservation {} is {}; only an active booking can be reclaimed", cur.ShortId(),
                            engine::StatusName(cur.StatusAt(now))));
  if (!cur.Started(now))
    return Fail(ErrorKind::kConflict,
                fmt::format("reservation {} has not started; it cannot be a no-show yet", cur.ShortId()));

  CancelStep step{.actor = actor, .cur = cur};
  step.kind = engine::CancelKind::kReclaimed;
  step.reason = reason;
  step.op_id = sys::NewUuid();
  step.action = step.event_action = "reclaim";
  step.event_message = reason;
  step.notification_type = "reservation-reclaimed";
  step.notification_message = fmt::format("Reservation {} on GPU {} was reclaimed by the monitor: {}",
                                          cur.ShortId(), JoinInts(cur.gpus), reason);
  engine::Reservation next;
  BK_TRY(impl_->CancelReservation(*s, step, next, now));
  BK_TRY(txn.Commit());
  return CancelOutcome{next, false};
}

}  // namespace bk::service
