// BookingService::Release: once the command a booking was made for has
// exited, its owner gives back what is left, in one ledger transaction. A
// started booking keeps the slot it is in (its GPUs may still be winding
// down) and ends at the next slot boundary, as the shortest edit of a started
// booking would (its "release" event lists with the edits); one that has not
// started is cancelled whole, through the same cancellation as `bk cancel`
// and the monitor's reclaim.

#include <fmt/format.h>

#include "engine/parse.h"
#include "service/impl.h"
#include "sys/random.h"

namespace bk::service {

using engine::Reservation;
using engine::Seconds;

Result<ReleaseOutcome> BookingService::Release(const Actor& actor, const ReleaseRequest& request) {
  return impl_->Write([&] { return ReleaseImpl(actor, request); });
}

Result<ReleaseOutcome> BookingService::ReleaseImpl(const Actor& actor, const ReleaseRequest& request) {
  if (request.reservation_id.empty()) return Invalid("release needs a reservation ID");
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, false));
  BK_ASSIGN_OR_RETURN(auto found, s->Get(request.reservation_id));
  if (!found)
    return Fail(ErrorKind::kNotFound, fmt::format("reservation not found: {}", request.reservation_id));
  const Reservation& cur = *found;
  if (cur.uid != actor.uid)
    return Fail(ErrorKind::kPermission,
                fmt::format("reservation {} belongs to {}; only its owner can release it", cur.ShortId(),
                            cur.username));
  ReleaseOutcome out{.reservation = cur, .from = cur.end};
  // Already over (ended, cancelled, released before): nothing is left.
  if (!cur.ActiveAt(now)) return out;
  if (!cur.Started(now)) {
    CancelStep step{.actor = actor, .cur = cur};
    step.kind = engine::CancelKind::kReleased;
    step.reason = "its command exited before the booking started";
    step.op_id = sys::NewUuid();
    // The history shows it as the cancellation it is, with kind "released".
    step.action = "release";
    step.event_action = "cancel";
    step.event_message = step.reason;
    BK_TRY(impl_->CancelReservation(*s, step, out.reservation, now));
    BK_TRY(txn.Commit());
    out.from = cur.start;
    out.given_back = cur.end - cur.start;
    return out;
  }
  Seconds boundary = impl_->policy().grid().Floor(now) + impl_->policy().slot;
  if (cur.end <= boundary) return out;  // never past its end
  Reservation& next = out.reservation;
  next.end = boundary;
  next.updated_at = now;
  std::string message = fmt::format("released from {}: its command exited", engine::FormatIsoUtc(boundary));
  BK_TRY(impl_->RecordChange(*s, actor, "release", cur, next, std::nullopt, "", message, now));
  BK_TRY(txn.Commit());
  out.from = boundary;
  out.given_back = cur.end - boundary;
  return out;
}

}  // namespace bk::service
