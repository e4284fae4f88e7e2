// Fair-share limits in the service: what each scope a request counts in
// holds, read in the write's own transaction, so that two requests can never
// both pass a limit that only one of them fits (the engine decides, the
// ledger's write lock orders them).

#include <fmt/format.h>

#include <map>
#include <vector>

#include "base/strings.h"
#include "service/impl.h"
#include "sys/users.h"

namespace bk::service {

using engine::Seconds;

bool BookingService::Impl::InGroup(uint32_t uid, const std::string& group) const {
  return deps.in_group ? deps.in_group(uid, group) : sys::InGroup(static_cast<uid_t>(uid), group);
}

Result<std::optional<engine::LimitRule>> BookingService::Impl::LimitsOf(store::LedgerStore& s,
                                                                        const Actor& actor, Seconds now,
                                                                        const std::string& except) {
  const engine::Policy& p = policy();
  const engine::FairShare& fs = p.fair_share;
  if (!fs.Any()) return std::nullopt;
  std::vector<engine::LimitScope> scopes;
  engine::LimitScope own = engine::LimitScope::ForUser(fs, actor.username);
  if (own.limits.Any()) scopes.push_back(std::move(own));
  for (const auto& [group, limits] : fs.groups)
    if (limits.Any() && InGroup(actor.uid, group)) scopes.push_back(engine::LimitScope::ForGroup(fs, group));
  if (scopes.empty()) return std::nullopt;

  // A rolling window reaches at most 7 days before the earliest start a
  // request can take (the current slot), so older bookings never count.
  // Each owner's bookings are read through the owners' index: the caller's,
  // and for a group only its members', never the whole ledger.
  const Seconds since = p.grid().Floor(now) - 7 * engine::kDay;
  std::vector<uint32_t> owners{actor.uid};
  const bool groups = scopes.size() > 1 || !scopes.front().group.empty();
  if (groups) {
    BK_ASSIGN_OR_RETURN(std::vector<uint32_t> all, s.Owners(since));
    for (uint32_t uid : all)
      if (uid != actor.uid) owners.push_back(uid);
  }
  for (uint32_t uid : owners) {
    std::vector<engine::LimitScope*> counted;
    for (engine::LimitScope& scope : scopes)
      if (uid == actor.uid || (!scope.group.empty() && InGroup(uid, scope.group))) counted.push_back(&scope);
    if (counted.empty()) continue;
    store::ReservationQuery q;
    q.uid = uid;
    q.include_cancelled = true;
    q.overlap_start = since;
    BK_ASSIGN_OR_RETURN(std::vector<engine::Reservation> held, s.Reservations(q));
    for (const engine::Reservation& r : held) {
      if (r.id == except) continue;
      if (std::optional<engine::Holding> h = engine::HoldingOf(r, p.slot))
        for (engine::LimitScope* scope : counted) scope->held.push_back(*h);
    }
  }
  return engine::LimitRule(std::move(scopes), now, p.slot);
}

Result<FairShareReport> BookingService::FairShareUse(const Actor& actor) {
  const engine::Policy& p = impl_->policy();
  const engine::FairShare& fs = p.fair_share;
  FairShareReport out;
  out.configured = fs.Any();
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->CheckedReader());
  const Seconds now = impl_->Now();
  out.now = now;
  const bool everyone = actor.admin || impl_->config().usage_visibility == "lab";
  store::ReservationQuery q;
  q.include_cancelled = true;
  q.overlap_start = now - 7 * engine::kDay;
  if (!everyone && fs.groups.empty()) q.uid = actor.uid;
  BK_ASSIGN_OR_RETURN(std::vector<engine::Reservation> all, s->Reservations(q));

  struct Owner {
    std::string name;
    std::vector<engine::Holding> held;
  };
  std::map<uint32_t, Owner> owners;
  owners[actor.uid].name = actor.username;
  for (const engine::Reservation& r : all) {
    Owner& o = owners[r.uid];
    if (o.name.empty()) o.name = r.username;
    if (auto h = engine::HoldingOf(r, p.slot)) o.held.push_back(*h);
  }
  std::map<std::string, FairShareRow> users;
  for (const auto& [uid, o] : owners) {
    if (!everyone && uid != actor.uid) continue;
    users[o.name] = {o.name, false, fs.ForUser(o.name), engine::UseOf(o.held, now)};
  }
  for (auto& [name, row] : users) out.rows.push_back(std::move(row));
  for (const auto& [group, limits] : fs.groups) {
    if (!limits.Any() || (!everyone && !impl_->InGroup(actor.uid, group))) continue;
    std::vector<engine::Holding> held;
    for (const auto& [uid, o] : owners)
      if (impl_->InGroup(uid, group)) held.insert(held.end(), o.held.begin(), o.held.end());
    out.rows.push_back({group, true, limits, engine::UseOf(held, now)});
  }
  return out;
}

Result<std::optional<std::string>> LimitOverride(const Actor& actor,
                                                 const std::optional<std::string>& reason) {
  if (!reason) return std::nullopt;
  if (!actor.admin)
    return Fail(ErrorKind::kPermission,
                "only administrators may book beyond the fair-share limits (--reason); drop --reason");
  BK_ASSIGN_OR_RETURN(std::string checked, CheckedReason(*reason));
  return checked;
}

std::string WithOverride(const std::string& message, const std::optional<std::string>& reason) {
  return reason ? fmt::format("{} (beyond fair-share limits: {})", message, *reason) : message;
}

}  // namespace bk::service
