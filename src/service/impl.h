#pragma once
// Internals shared by the service's source files; not part of its interface.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/calendar.h"
#include "engine/live_calendar.h"
#include "service/advice.h"
#include "service/booking_service.h"

namespace bk::service {

// {"end_at":..,"expected_memory_mb":..,"gpus":[..],"mode":..,"share_units":..,"start_at":..,"cpus":..,"ram_mb":..}
std::string StateJson(const engine::Reservation& r);

enum class RefScope {
  kOwnActive,  // edit, renew, cancel: the caller's active reservations (administrators: anyone's)
  kOwnAny,     // history: any status
};

// What one cancellation writes: who, why, and how the history and the owner hear of it.
struct CancelStep {
  Actor actor;
  engine::Reservation cur;
  engine::CancelKind kind = engine::CancelKind::kOwner;
  std::string reason;        // stored with the cancellation
  std::string op_id;         // the operation's ID
  std::string signature;     // the operation's signature ("" when it cannot be replayed)
  std::string action;        // the operation's action: cancel, reclaim
  std::string event_action;  // the audit event's: cancel, admin-cancel, reclaim
  std::string event_message;
  // The owner's notification; none when type is empty.
  std::string notification_type;
  std::string notification_message;
};

struct BookingService::Impl {
  explicit Impl(Deps d) : deps(d) {}

  Deps deps;
  std::unique_ptr<store::LedgerStore> store;
  std::optional<gpu::Snapshot> snapshot;
  std::chrono::steady_clock::time_point snapshot_at;

  // The configuration as started, or as an administrator changed its policy since.
  const config::Config& config() const { return config_override ? *config_override : *deps.config; }
  const engine::Policy& policy() const { return config().policy; }
  std::optional<config::Config> config_override;
  // In a group not yet durable: the override to return to if it is rolled back.
  std::optional<std::optional<config::Config>> override_undo;
  engine::Seconds Now() const { return deps.clock->Now(); }

  // The ledger for reading: a missing file reads as empty and is not created.
  store::OpenOptions StoreOptions(bool create) const;
  Result<store::LedgerStore*> Reader();
  // Like Reader, but a long-running reader (the worker) started before the
  // ledger file existed switches from the empty in-memory view to the file.
  Result<store::LedgerStore*> FreshReader();
  // The ledger for writing: created on first use (during a trial, the scratch one).
  Result<store::LedgerStore*> Writer();

  // Runs one write, `op`, so that a write that fails or changes nothing never
  // creates the ledger. While the ledger file does not exist yet, `op` is
  // first tried on an empty scratch ledger in memory: what fails or commits
  // nothing there returns as it is, and only a write that commits there runs
  // again on the real file, created for it. A ledger file, once created, is
  // never removed: another process may already have committed to it, and
  // deleting it would lose that booking. The daemon opens (and if need be
  // creates) its ledger at start, so for it the trial never runs.
  template <class F>
  auto Write(F&& op) -> decltype(op()) {
    if ((store && !store->in_memory()) || LedgerExists()) return op();
    store::OpenOptions o{.path = deps.config->ledger_path, .scratch = true};
    auto scratch = store::LedgerStore::Open(o);
    if (!scratch) return std::unexpected(scratch.error());
    store = std::move(*scratch);
    Watch(*store);
    trial = true;
    auto tried = op();
    trial = false;
    bool committed = store && store->commits() > 0;
    store.reset();
    if (!tried || !committed) return tried;
    return op();
  }
  bool trial = false;
  bool LedgerExists() const;

  // Retention, inside the caller's write transaction: removes long-finished
  // reservations (at most once a day) and records each in the history.
  ::bk::Status Prune(store::LedgerStore& s, engine::Seconds now);
  // One telemetry sample per service call; a failed one (driver, simulation
  // file) carries its reason in `error` and admission goes on by slots alone.
  gpu::Snapshot Telemetry();
  // Placement advice from this call's telemetry sample.
  Advice LiveAdvice();
  // The ledger for a read-only search, refused when its policy is not this one.
  Result<store::LedgerStore*> CheckedReader();

  // The calendar placement reads at `now`, without the reservation `except`
  // (an edit's or a renewal's own). The daemon, which alone writes its
  // ledger, answers from its live calendar, which each commit updates for
  // the reservations it touched; a command in private mode reads the
  // ledger's active footprints, since other processes write it too. In the
  // daemon the calendar reads the live one in place: use it before the
  // write commits.
  Result<engine::Calendar> PlacementCalendar(store::LedgerStore& s, engine::Seconds now,
                                             const std::string& except = "");
  void Watch(store::LedgerStore& s);
  std::optional<engine::LiveCalendar> live;
  uint64_t generation = 0;
  uint64_t stores = 0;  // ledger connections Watch was given so far
  // What ChangeCounter saw of a private ledger at its last call, and how
  // often that differed from the call before.
  struct LedgerMark {
    uint64_t store = 0;  // which connection (the count of stores when it opened)
    uint64_t commits = 0;
    uint64_t generation = 0;
    int64_t data_version = 0;
    bool operator==(const LedgerMark&) const = default;
  };
  LedgerMark seen;
  uint64_t changes = 0;
  // The daemon's live calendar, loaded at first use, without what ended by `now`.
  Result<engine::LiveCalendar*> Live(store::LedgerStore& s, engine::Seconds now);
  // The reservations not cancelled that overlap [from, to), in (start, end,
  // ID) order; `running_only`: only active ones that have not ended by `now`.
  // The daemon takes those that run on from its live calendar and reads
  // only the ended ones from the ledger, so a window near now costs what it
  // holds, not every booking still to come.
  Result<std::vector<engine::Reservation>> Overlapping(store::LedgerStore& s, engine::Seconds from,
                                                       engine::Seconds to, engine::Seconds now,
                                                       bool running_only);
  // How many active reservations `uid` holds (from memory in the daemon).
  Result<int64_t> CountActive(store::LedgerStore& s, uint32_t uid, engine::Seconds now);

  // The fair-share limits `actor` books under at `now` (service/fair_share.cc):
  // their own and those of each of their groups that has limits, each with
  // what it holds, read inside the caller's transaction, without the
  // reservation `except` (an edit's or a renewal's own). nullopt when no
  // limit applies to them.
  Result<std::optional<engine::LimitRule>> LimitsOf(store::LedgerStore& s, const Actor& actor,
                                                    engine::Seconds now, const std::string& except = "");
  bool InGroup(uint32_t uid, const std::string& group) const;

  // Replaces the live ledger's content with the closed ledger `source`'s
  // (empty: nothing) after `keep` copied it aside (service/restore.cc); what
  // was derived from the old content is dropped.
  Result<store::LedgerStore::Cleared> Swap(store::LedgerStore& live, const std::string& source,
                                           const std::function<::bk::Status(store::LedgerStore&)>& keep);

  // Binds the policy on the first write; refuses a ledger bound to another one.
  ::bk::Status CheckPolicy(store::LedgerStore& s, bool bind);
  bool policy_matched = false;  // the daemon's ledger was read bound to this policy
  Result<engine::Reservation> Resolve(store::LedgerStore& s, const Actor& actor, const std::string& ref,
                                      RefScope scope, engine::Seconds now);
  // Writes a changed reservation with its operation ID and its audit event
  // (the state before and after, as `state` writes it), inside the caller's
  // transaction.
  ::bk::Status RecordChange(store::LedgerStore& s, const Actor& actor, const std::string& action,
                            const engine::Reservation& cur, const engine::Reservation& next,
                            const std::optional<std::string>& op_id, const std::string& signature,
                            const std::string& message, engine::Seconds now,
                            std::string (*state)(const engine::Reservation&) = StateJson);

  // The reservation an operation ID already wrote, when the caller's `op_id`
  // was used before: nullopt for a new operation. The same ID used for
  // another action, or whose signature (a function of the reservation the
  // operation wrote) differs, is refused; so is one whose reservation the
  // retention has since removed, since the operation did happen.
  Result<std::optional<engine::Reservation>> PriorOperation(
      store::LedgerStore& s, const Actor& actor, const std::optional<std::string>& op_id,
      std::string_view action, const std::function<std::string(const std::string&)>& signature);

  // Cancels `cur` inside the caller's transaction: the reservation with its
  // cancellation, the operation, the bound job (a pending one is settled, a
  // running one asked to stop), the audit event and, for a cancel by someone
  // else than the owner, the owner's notification.
  ::bk::Status CancelReservation(store::LedgerStore& s, const CancelStep& step, engine::Reservation& next,
                                 engine::Seconds now);
};

// An audit event about the server rather than one booking (a policy change,
// an announcement): `actor` is its subject too; fresh event and transaction IDs.
store::Event ServerEvent(const std::string& action, const Actor& actor, const std::string& message,
                         engine::Seconds now);
// An audit event of `action` on `r` by `actor` at `now`, with a fresh event ID.
store::Event MakeEvent(const std::string& action, const engine::Reservation& r, const Actor& actor,
                       const std::string& op_id, const std::string& message, engine::Seconds now);
// Binds `policy` to a ledger that has none (when `bind`); refuses a ledger
// bound to another one. True when the ledger was already bound to `policy`.
Result<bool> CheckBoundPolicy(store::LedgerStore& s, const engine::Policy& policy, bool bind);

// `verify` of the ledger `s` into `r` (its path stays the caller's): SQLite's
// integrity check and the calendar's invariants under `policy` at `now`.
Status CheckLedger(store::LedgerStore& s, const engine::Policy& policy, engine::Seconds now, VerifyReport& r);
// An administrator's --reason, trimmed: 1-512 printable characters.
Result<std::string> CheckedReason(const std::string& reason);
// The reason an administrator gives to book beyond the fair-share limits,
// checked; nullopt when none was given. Anyone else giving one is refused.
Result<std::optional<std::string>> LimitOverride(const Actor& actor,
                                                 const std::optional<std::string>& reason);
// The audit message of a write made beyond the limits by `reason`.
std::string WithOverride(const std::string& message, const std::optional<std::string>& reason);
// The answer to a write replayed by its operation ID, from the ledger alone.
BookingOutcome Replay(const engine::Reservation& r);
// The refusal of an operation ID reused for another write.
std::string DifferentWrite(const std::string& op_id);

// Validation shared by create, recommend and slots. Fills defaults (share
// units, host budget declarations) into `request`.
Status ValidateCreate(const engine::Policy& policy, CreateRequest& request,
                      std::vector<std::string>* warnings);
// The enabled GPUs not in `exclude`.
std::vector<int> Eligible(const engine::Policy& policy, const std::vector<int>& exclude);
// A request for more VRAM per GPU than `count` of the candidate GPUs can ever
// hold (shared: their VRAM less the reserve; exclusive: all of it) is refused
// at once, naming the limit, instead of searched for and reported as a full
// calendar. GPUs of unknown size pass: the calendar decides.
Status CheckVramCanFit(const engine::Policy& policy, const Advice& advice, const CreateRequest& request);
engine::PlacementRequest ToPlacement(const CreateRequest& request, engine::Seconds start, bool allow_queue,
                                     const engine::StartRule* rule = nullptr);
// The rule of `limits`, or nullptr without one.
inline const engine::StartRule* RuleOf(const std::optional<engine::LimitRule>& limits) {
  return limits ? &*limits : nullptr;
}

// Jobs (jobs.cc). Checks a binding's shape: UUID spec, hex digest, printable summary.
Status ValidateJobBinding(const JobBinding& b);
// A pending job for a new reservation.
store::JobRecord NewJob(const engine::Reservation& r, const JobBinding& b, engine::Seconds now);
// A cancelled reservation's job: a pending one is settled as cancelled, a
// claimed or running one gets cancel_requested_at for its worker to act on.
Status CancelJob(store::LedgerStore& s, const engine::Reservation& r, engine::Seconds now);

}  // namespace bk::service
