// The two paths every write shares: an operation ID seen before (replayed,
// refused, or reported forgotten) and a cancellation with its side effects.
// Cancel and the monitor's reclaim both go through CancelReservation, so a
// reclaimed booking's job is settled exactly as a cancelled one's.

#include <fmt/format.h>

#include "engine/parse.h"
#include "service/impl.h"
#include "sys/random.h"

namespace bk::service {

using engine::Reservation;

std::string DifferentWrite(const std::string& op_id) {
  return fmt::format("operation ID {} was already used for a different write; choose a new --op-id", op_id);
}

BookingOutcome Replay(const Reservation& r) {
  BookingOutcome out;
  out.status = "exists";
  out.reservation = r;
  out.replayed = true;
  out.allocator_source = "idempotent-replay";
  out.message = "operation already applied";
  // The GPUs the first answer selected, as a script reads them; a replay is
  // answered from the ledger alone, so their live state is not sampled again.
  for (int g : r.gpus) {
    GpuView v;
    v.gpu = g;
    v.live_reason = "not sampled again for a replay";
    out.selected.push_back(v);
  }
  return out;
}

namespace {

// A retry whose reservation the retention has since removed: the operation
// happened, so it is refused rather than performed a second time.
std::unexpected<Error> Forgotten(const store::Operation& op) {
  return Fail(
      ErrorKind::kConflict,
      fmt::format("operation ID {} already did its {} of reservation {} on {}; that reservation has "
                  "since been removed by the ledger's retention, so nothing was done again; choose a "
                  "new --op-id",
                  op.op_id, op.action, op.reservation_id.substr(0, 8), engine::FormatIsoUtc(op.created_at)));
}

}  // namespace

Result<std::optional<Reservation>> BookingService::Impl::PriorOperation(
    store::LedgerStore& s, const Actor& actor, const std::optional<std::string>& op_id,
    std::string_view action, const std::function<std::string(const std::string&)>& signature) {
  if (!op_id) return std::nullopt;
  BK_ASSIGN_OR_RETURN(auto op, s.FindOperation(actor.uid, *op_id));
  if (!op) return std::nullopt;
  if (op->action != action || op->signature != signature(op->reservation_id))
    return Invalid(DifferentWrite(*op_id));
  BK_ASSIGN_OR_RETURN(auto r, s.Get(op->reservation_id));
  if (!r) return Forgotten(*op);
  return r;
}

::bk::Status BookingService::Impl::CancelReservation(store::LedgerStore& s, const CancelStep& step,
                                                     Reservation& next, engine::Seconds now) {
  const Reservation& cur = step.cur;
  next = cur;
  next.status = engine::Status::kCancelled;
  next.updated_at = now;
  next.cancellation =
      engine::Cancellation{now, step.kind, step.reason, step.actor.uid, step.actor.username, step.op_id};
  BK_TRY(s.Update(next));
  BK_TRY(s.InsertOperation({step.actor.uid, step.op_id, step.action, cur.id, step.signature, now}));
  BK_TRY(CancelJob(s, next, now));
  store::Event e = MakeEvent(step.event_action, next, step.actor, step.op_id, step.event_message, now);
  e.transaction_id = sys::NewUuid();
  e.before = StateJson(cur);
  e.signature = step.signature;
  BK_TRY(s.AppendEvent(e));
  if (step.notification_type.empty()) return Ok();
  store::Notification n;
  n.id = sys::NewUuid();
  n.uid = cur.uid;
  n.reservation_id = cur.id;
  n.type = step.notification_type;
  n.created_at = now;
  n.actor_uid = step.actor.uid;
  n.actor_username = step.actor.username;
  n.reason = step.reason;
  n.message = step.notification_message;
  return s.InsertNotification(n);
}

}  // namespace bk::service
