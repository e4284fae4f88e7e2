// An administrator changes a running server's policy: the daemon checks the
// bookings it holds against the new policy, then binds the ledger to it and
// records the change in one transaction, and from then on admits by it.

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "base/strings.h"
#include "config/config.h"
#include "engine/policy_conflicts.h"
#include "service/impl.h"
#include "sys/random.h"

namespace bk::service {
namespace {

constexpr std::string_view kPolicyNeedsAdmin = "only an administrator can change the server's policy";

using engine::Reservation;
using engine::Seconds;

std::string ChangesJson(const std::vector<config::KeyChange>& changes, bool after) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& c : changes) j[c.key] = nlohmann::json::parse(after ? c.after : c.before, nullptr, false);
  return j.dump();
}

Status CheckReason(const PolicyReloadRequest& r) {
  if (!r.force && !r.cancel_conflicting) return Ok();
  std::string reason(Trim(r.reason.value_or("")));
  if (reason.empty() || reason.size() > 512)
    return Invalid("--reason TEXT (1-512 characters) must say why: the owners of the bookings are told");
  for (unsigned char c : reason)
    if (c < 0x20) return Invalid("--reason must not contain control characters");
  return Ok();
}

}  // namespace

Result<PolicyChange> BookingService::ChangePolicy(const Actor& actor, const PolicyReloadRequest& request) {
  // Refused before the file is read: a caller who may not change it learns nothing of it.
  if (!actor.admin) return Fail(ErrorKind::kPermission, std::string(kPolicyNeedsAdmin));
  BK_ASSIGN_OR_RETURN(config::PolicyProposal proposal,
                      config::ProposePolicy(impl_->config(), request.config_text, request.expect_sha256,
                                            config::ProcessEnv()));
  return ChangePolicy(actor, request, proposal);
}

Result<PolicyChange> BookingService::ChangePolicy(const Actor& actor, const PolicyReloadRequest& request,
                                                  const config::PolicyProposal& proposal) {
  return impl_->Write([&] { return ChangePolicyImpl(actor, request, proposal); });
}

// Long on purpose: the check, the refusal and the one transaction that
// applies are one sequence; split, the order they depend on would hide.
Result<PolicyChange> BookingService::ChangePolicyImpl(const Actor& actor, const PolicyReloadRequest& request,
                                                      const config::PolicyProposal& proposal) {
  if (!actor.admin) return Fail(ErrorKind::kPermission, std::string(kPolicyNeedsAdmin));
  if (request.force && request.cancel_conflicting)
    return Invalid("give --force or --cancel-overlapping, not both");
  BK_TRY(CheckReason(request));
  PolicyChange out;
  out.changes = proposal.changes;
  out.restart = proposal.restart;
  const engine::Policy running = impl_->policy();
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, false));
  if (out.changes.empty()) {
    out.status = "unchanged";
    return out;
  }
  BK_ASSIGN_OR_RETURN(std::vector<Reservation> active,
                      impl_->Overlapping(*s, now, now + 3650 * engine::kDay, now, true));
  for (auto& c : engine::NewConflicts(running, proposal.config.policy, active, now))
    out.conflicts.push_back({active[c.index], std::move(c.why)});
  if (request.config_text) {
    out.status = "checked";
    return out;
  }
  if (!out.conflicts.empty() && !request.force && !request.cancel_conflicting) {
    out.status = "refused";
    return out;
  }
  const std::string reason(Trim(request.reason.value_or("")));
  std::vector<std::string> keys;
  for (const auto& c : out.changes) keys.push_back(c.key);
  store::Event e = ServerEvent(
      "policy-change", actor,
      fmt::format("policy changed: {}{}", Join(keys, ", "), reason.empty() ? "" : "; " + reason), now);
  e.before = ChangesJson(out.changes, false);
  e.after = ChangesJson(out.changes, true);
  BK_TRY(s->AppendEvent(e));
  BK_TRY(s->BindPolicy(config::BoundPolicyJson(proposal.config.policy)));
  std::set<std::string> told;
  for (const auto& c : out.conflicts) {
    const Reservation& r = c.reservation;
    if (request.cancel_conflicting) {
      if (r.status != engine::Status::kActive || told.contains(r.id)) continue;
      CancelStep step{.actor = actor, .cur = r};
      step.kind = engine::CancelKind::kAdministrator;
      step.reason = reason;
      step.op_id = sys::NewUuid();
      step.action = "cancel";
      step.event_action = "admin-cancel";
      step.event_message = reason;
      step.notification_type = "reservation-admin-cancelled";
      step.notification_message = fmt::format("Reservation {} was cancelled by administrator {}: {} ({})",
                                              r.ShortId(), actor.username, reason, c.why);
      Reservation next;
      BK_TRY(impl_->CancelReservation(*s, step, next, now));
      ++out.cancelled;
    } else {
      store::Notification n;
      n.id = sys::NewUuid();
      n.uid = r.uid;
      n.reservation_id = r.id;
      n.type = "reservation-policy-conflict";
      n.created_at = now;
      n.actor_uid = actor.uid;
      n.actor_username = actor.username;
      n.reason = reason;
      n.message = fmt::format("Reservation {} stays booked, but the new policy would not admit it ({}): {}",
                              r.ShortId(), c.why, reason);
      BK_TRY(s->InsertNotification(n));
      ++out.notified;
    }
    told.insert(r.id);
  }
  BK_TRY(txn.Commit());
  // From here on every call admits by the new policy; a group commit that
  // fails later takes the change back with the ledger's (see Watch).
  if (s->in_group() && !impl_->override_undo) impl_->override_undo = impl_->config_override;
  impl_->config_override = proposal.config;
  impl_->live.reset();
  impl_->policy_matched = false;
  ++impl_->generation;
  out.status = "applied";
  return out;
}

}  // namespace bk::service
