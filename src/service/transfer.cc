// An administrator gives a booking to another local account: the booking
// keeps its GPUs and times, so the calendar does not change, only who holds
// it. No per-owner quota exists for the new owner's limits to be checked
// against: what admits a booking is the calendar alone.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "engine/parse.h"
#include "service/fingerprint.h"
#include "service/impl.h"
#include "sys/random.h"
#include "sys/users.h"

namespace bk::service {
namespace {

using engine::Reservation;

// The schedulable state with its owner: the owner is what a transfer changes.
std::string OwnedStateJson(const Reservation& r) {
  nlohmann::json j = nlohmann::json::parse(StateJson(r));
  j["uid"] = r.uid;
  j["username"] = r.username;
  return j.dump();
}

store::Notification TransferNotice(const Reservation& r, uint32_t to, const Actor& actor,
                                   const std::string& reason, std::string message, engine::Seconds now) {
  store::Notification n;
  n.id = sys::NewUuid();
  n.uid = to;
  n.reservation_id = r.id;
  n.type = "reservation-transferred";
  n.created_at = now;
  n.actor_uid = actor.uid;
  n.actor_username = actor.username;
  n.reason = reason;
  n.message = std::move(message);
  return n;
}

// The account a booking goes to: it must exist here (a booking is used by
// logging in as its owner).
Result<std::pair<uint32_t, std::string>> Recipient(const std::string& name) {
  std::string who(Trim(name));
  auto uid = who.empty() ? std::nullopt : sys::UidForName(who);
  if (!uid || !sys::LookupAccount(*uid).found)
    return Invalid(fmt::format("no local account named {}; give an existing user's login name",
                               who.empty() ? "\"\"" : who));
  return std::pair{static_cast<uint32_t>(*uid), sys::UserName(*uid)};
}

}  // namespace

Result<TransferOutcome> BookingService::Transfer(const Actor& actor, const TransferRequest& request) {
  return impl_->Write([&] { return TransferImpl(actor, request); });
}

Result<TransferOutcome> BookingService::TransferImpl(const Actor& actor, const TransferRequest& request) {
  if (!actor.admin)
    return Fail(ErrorKind::kPermission,
                "only an administrator (root, the server owner or admin_group) can "
                "transfer a reservation");
  BK_ASSIGN_OR_RETURN(std::string reason, CheckedReason(request.reason));
  BK_ASSIGN_OR_RETURN(auto to, Recipient(request.to));
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  engine::Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, false));
  BK_ASSIGN_OR_RETURN(Reservation cur, impl_->Resolve(*s, actor, request.ref, RefScope::kOwnActive, now));
  if (cur.uid == to.first)
    return Invalid(fmt::format("reservation {} already belongs to {}", cur.ShortId(), to.second));
  BK_ASSIGN_OR_RETURN(auto job, s->GetJob(cur.id));
  // The worker that launches a bound command runs as its owner and reads the
  // command from the owner's private files: such a booking cannot change hands.
  if (job)
    return Invalid(
        fmt::format("reservation {} was booked for a command of {} (job {}); it stays with that "
                    "account: cancel it instead (bk admin cancel)",
                    cur.ShortId(), cur.username, store::kJobStatusNames.Name(job->status)));
  Reservation next = cur;
  next.uid = to.first;
  next.username = to.second;
  next.updated_at = now;
  std::string message = fmt::format("from {} to {}: {}", cur.username, next.username, reason);
  BK_TRY(impl_->RecordChange(*s, actor, "admin-transfer", cur, next, std::nullopt,
                             TransferSignature(cur.id, next.uid), message, now, OwnedStateJson));
  BK_TRY(s->InsertNotification(
      TransferNotice(cur, cur.uid, actor, reason,
                     fmt::format("Reservation {} was transferred to {} by administrator {}: {}",
                                 cur.ShortId(), next.username, actor.username, reason),
                     now)));
  BK_TRY(s->InsertNotification(TransferNotice(
      cur, next.uid, actor, reason,
      fmt::format("Reservation {} (GPU {}, {} to {}) was transferred to you from {} by administrator {}: {}",
                  cur.ShortId(), JoinInts(cur.gpus), engine::FormatIsoUtc(cur.start),
                  engine::FormatIsoUtc(cur.end), cur.username, actor.username, reason),
      now)));
  BK_TRY(txn.Commit());
  return TransferOutcome{next, cur.uid, cur.username};
}

}  // namespace bk::service
