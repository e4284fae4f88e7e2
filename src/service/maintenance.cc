// Administrators' checks of the ledger: verify and online backup.

#include <fmt/format.h>

#include "engine/invariants.h"
#include "service/impl.h"
#include "sys/fs.h"

namespace bk::service {

Result<VerifyReport> BookingService::Verify(const Actor& actor, const std::string& path) {
  if (!actor.admin)
    return Fail(ErrorKind::kPermission, "only the ledger owner or root can verify the ledger");
  std::unique_ptr<store::LedgerStore> other;
  store::LedgerStore* s = nullptr;
  VerifyReport r;
  if (path.empty()) {
    BK_ASSIGN_OR_RETURN(s, impl_->Reader());
    r.path = impl_->deps.config->ledger_path;
  } else {
    // A backup: opened without creating anything; it must be a GPUBK ledger.
    store::OpenOptions o{path, false, impl_->deps.data_owner, 1000, false};
    if (!sys::Exists(path)) return Fail(ErrorKind::kNotFound, fmt::format("{} does not exist", path));
    BK_ASSIGN_OR_RETURN(other, store::LedgerStore::Open(o));
    s = other.get();
    r.path = path;
  }
  BK_TRY(CheckLedger(*s, impl_->policy(), impl_->Now(), r));
  return r;
}

::bk::Status CheckLedger(store::LedgerStore& s, const engine::Policy& policy, engine::Seconds now,
                         VerifyReport& r) {
  BK_ASSIGN_OR_RETURN(r.integrity, s.IntegrityCheck());
  BK_ASSIGN_OR_RETURN(r.reservations, s.CountReservations({}));
  BK_ASSIGN_OR_RETURN(auto fps, s.ActiveFootprints(now));
  r.active = static_cast<int64_t>(fps.size());
  r.violations = engine::CheckInvariants(policy, fps);
  return Ok();
}

Result<std::string> BookingService::Backup(const Actor& actor, const std::string& path) {
  if (!actor.admin)
    return Fail(ErrorKind::kPermission, "only the ledger owner or root can back up the ledger");
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  if (s->in_memory()) return Fail(ErrorKind::kNotFound, "there is no ledger yet: nothing to back up");
  BK_TRY(s->BackupTo(path, impl_->deps.data_owner));
  return path;
}

}  // namespace bk::service
