#pragma once
// BookingService: the only place a request is validated, placed and committed.
// The CLI runs it in process (private mode); the daemon runs the same code for
// every client of a shared server.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "config/config.h"
#include "gpu/source.h"
#include "service/import.h"
#include "service/types.h"
#include "store/ledger_store.h"
#include "sys/clock.h"

namespace bk::service {

// The warning a booking carries when it starts now on a GPU someone else is
// using; `selected_busy` names the GPUs and processes.
inline constexpr std::string_view kSelectedBusyWarning =
    "selected GPU is currently busy; live task end time is unknown";

class BookingService {
 public:
  struct Deps {
    const config::Config* config = nullptr;
    const sys::Clock* clock = nullptr;
    gpu::GpuSource* gpus = nullptr;
    uid_t data_owner = 0;          // who owns the ledger files
    bool exclusive_store = false;  // the daemon holds the ledger alone
    int snapshot_ttl_ms = 0;       // 0: one sample per service object (a CLI run); >0: refresh when older
    std::string store_vfs;         // the ledger's SQLite VFS; empty is the default (tests inject faults)
    // Told who holds the ledger's write lock once a write has waited half a
    // second (a person at a terminal); unset in the daemon, which owns it.
    std::function<void(const std::string& holder)> on_lock_wait;
    // Whether a UID is in a Unix group, for group_limits; unset: the group
    // database (sys::InGroup). Tests name their own members.
    std::function<bool(uint32_t uid, const std::string& group)> in_group;
  };
  explicit BookingService(Deps deps);
  ~BookingService();

  // Writes.
  Result<BookingOutcome> Create(const Actor& actor, const CreateRequest& request);
  Result<BookingOutcome> Edit(const Actor& actor, const EditRequest& request);
  Result<BookingOutcome> Renew(const Actor& actor, const RenewRequest& request);
  Result<CancelOutcome> Cancel(const Actor& actor, const CancelRequest& request);
  // The monitor gives back a no-show booking (service/reclaim.cc): cancelled
  // with kind "reclaimed" and `reason`, a "reclaim" event and a
  // "reservation-reclaimed" notification for the owner. The actor is the
  // ledger's owner (the monitor's account). Refused unless the booking is
  // active and has started.
  Result<CancelOutcome> Reclaim(const std::string& reservation_id, const std::string& reason);
  // The owner gives back what is left of a booking once its command has
  // exited (service/release.cc): a started one ends at the next slot
  // boundary (an edit recorded as "release"), one that has not started is
  // cancelled whole with kind "released". Asking again, or for a booking that
  // has ended, gives back nothing and writes nothing.
  Result<ReleaseOutcome> Release(const Actor& actor, const ReleaseRequest& request);

  // An administrator gives an active booking to another existing account
  // (service/transfer.cc): same GPUs and times, an "admin-transfer" event
  // with the owner before and after, and a notification to both owners. A
  // booking bound to a command stays with the account that runs it.
  Result<TransferOutcome> Transfer(const Actor& actor, const TransferRequest& request);

  // Reads (never create anything on disk).
  Result<Recommendation> Recommend(const Actor& actor, const CreateRequest& request);
  Result<SlotsResult> Slots(const Actor& actor, const CreateRequest& request, engine::Seconds from,
                            int limit);
  Result<ListResult> List(const Actor& actor, const ListQuery& query);
  Result<HistoryView> History(const Actor& actor, const std::string& ref);
  Result<std::vector<store::Event>> Log(const Actor& actor, int limit);
  Result<std::vector<store::Notification>> Notifications(const Actor& actor, int limit);
  Result<UnreadNotifications> Unread(const Actor& actor, int limit);
  Result<OperationView> Operation(const Actor& actor, const std::string& op_id);
  // Live GPU state with the reservations overlapping [from, to) and the
  // first `mine_limit` of the caller's active ones (all when absent).
  Result<StatusView> Status(const Actor& actor, engine::Seconds from, engine::Seconds to,
                            std::optional<int> mine_limit);
  Result<PolicyStatus> CheckPolicy();
  // Each scope's use of the fair-share limits (service/fair_share.cc).
  Result<FairShareReport> FairShareUse(const Actor& actor);
  // Everyone's active reservations that cover the instant `at` (the
  // monitor's attribution asks each sample; from memory in the daemon).
  Result<std::vector<engine::Reservation>> Running(engine::Seconds at);
  // [start, end) of every active exclusive reservation, from the calendar
  // (cheap: the monitor asks after every write).
  Result<std::vector<engine::Interval>> ExclusiveWindows();

  // Jobs bound to bookings (`bk N DUR -- CMD`), always the caller's own.
  Result<std::vector<JobView>> Jobs(const Actor& actor, const JobsQuery& query);
  // `bk n` read these: marks those of `ids` that are the caller's own and
  // unread. Returns how many it marked; when none is unread it writes nothing.
  Result<int64_t> MarkNotificationsRead(const Actor& actor, const std::vector<std::string>& ids);
  // A worker's compare-and-swap change; only the booking's owner may make it.
  Result<JobPatchResult> UpdateJob(const Actor& actor, const JobPatch& patch);
  // `bk jr`: a failed, interrupted or uncertain job becomes pending again.
  Result<JobView> RetryJob(const Actor& actor, const JobRetryRequest& request);

  // Administrators: the policy in `proposal` replaces the running one for
  // every later call, the ledger is bound to it and the change is audited
  // (before and after), in one transaction. Bookings it would not have
  // admitted, that the running policy did, refuse it unless `request` forces
  // it (their owners are notified) or cancels them. A proposal only checked
  // (`request.config_text`) changes nothing.
  Result<PolicyChange> ChangePolicy(const Actor& actor, const PolicyReloadRequest& request,
                                    const config::PolicyProposal& proposal);
  // The same with the proposal read from the server's config file (or
  // `request.config_text` in its place), as `bk admin policy` and SIGHUP ask.
  Result<PolicyChange> ChangePolicy(const Actor& actor, const PolicyReloadRequest& request);

  // Announcements (service/announcements.cc). Writes are for
  // administrators, each audited with the record before and after; the list
  // is for anyone, and shows others only the active ones, most urgent first
  // (critical, warning, info, then oldest first).
  Result<AnnouncementOutcome> Publish(const Actor& actor, const PublishRequest& request);
  Result<AnnouncementOutcome> EditAnnouncement(const Actor& actor, const AnnouncementEdit& request);
  // Archived once; archiving again changes nothing and writes nothing.
  Result<AnnouncementOutcome> ArchiveAnnouncement(const Actor& actor, const std::string& ref);
  Result<std::vector<store::Announcement>> Announcements(const Actor& actor, const AnnouncementsQuery& query);

  // Administrators: check a ledger (the live one when `path` is empty) and
  // copy the live one consistently to a new file.
  Result<VerifyReport> Verify(const Actor& actor, const std::string& path);
  Result<std::string> Backup(const Actor& actor, const std::string& path);

  // Administrators (service/restore.cc). Restore puts the backup open as
  // `backup` (named `name` in messages) in place of the ledger's content once
  // it verifies (integrity, invariants, this deployment's policy); the
  // ledger as it was is kept beside it (ledger.db.replaced-<UTC stamp>).
  // Clear empties the ledger once a verified backup of it is in
  // `backup_path` (empty: ledger.db.backup-<UTC stamp>). Both change the
  // ledger in one transaction; `kept` says where the old content is.
  Result<LedgerSwap> Restore(const Actor& actor, int backup, const std::string& name);
  Result<LedgerSwap> Clear(const Actor& actor, const std::string& backup_path);

  // Loads a ledger.json of the Python original into an empty ledger.
  Result<ImportSummary> ImportUpstream(const Actor& actor, const std::string& json_text,
                                       const ImportProgressFn& progress = {});

  // The daemon's import runs in three steps, so that its event loop keeps
  // answering: PrepareImport checks the caller and the live ledger (empty,
  // same policy) and says what to import with and where to stage it; a
  // worker thread writes the staging ledger (ImportInto), sharing nothing
  // mutable with this service; AdoptImport, back on the service's thread,
  // swaps the closed staging file in while the live ledger is still empty.
  struct StagedImport {
    ImportSpec spec;
    store::OpenOptions staging;
  };
  Result<StagedImport> PrepareImport(const Actor& actor);
  // Renames `staging` over the live ledger, which is reopened either way.
  // Refused, with the live ledger untouched, once it holds anything.
  ::bk::Status AdoptImport(const std::string& staging);

  // Opens (creating if needed) the ledger now rather than at the first call.
  ::bk::Status Open();

  // Group commit, for the daemon that holds the ledger alone: the writes
  // between BeginBatch and CommitBatch share one transaction and one fsync.
  // Each is seen by the next at once, but is durable only once CommitBatch
  // returns Ok, so its caller must not be answered before; a failed
  // CommitBatch loses them all (in memory too: state is read again from disk).
  ::bk::Status BeginBatch();
  ::bk::Status CommitBatch();

  engine::Seconds Now() const;
  // Changes whenever a write commits: caches of read results compare it.
  uint64_t Generation() const;
  // A number that has moved whenever a write was committed to the ledger
  // since the last call, by this process or any other (a client polls it
  // and reads again only once it moved). The daemon writes its ledger
  // alone, so there it is Generation(), read from memory; a private ledger,
  // which other processes write too, is asked SQLite's data_version. It may
  // also move when nothing was written (the ledger was opened again).
  Result<uint64_t> ChangeCounter();
  const engine::Policy& policy() const;
  // Where live GPU state comes from, for `bk config` (may load the driver).
  std::string TelemetrySource();

 private:
  Result<BookingOutcome> CreateImpl(const Actor& actor, const CreateRequest& request);
  Result<BookingOutcome> EditImpl(const Actor& actor, const EditRequest& request);
  Result<BookingOutcome> RenewImpl(const Actor& actor, const RenewRequest& request);
  Result<CancelOutcome> CancelImpl(const Actor& actor, const CancelRequest& request);
  Result<CancelOutcome> ReclaimImpl(const std::string& reservation_id, const std::string& reason);
  Result<ReleaseOutcome> ReleaseImpl(const Actor& actor, const ReleaseRequest& request);
  Result<TransferOutcome> TransferImpl(const Actor& actor, const TransferRequest& request);
  Result<JobPatchResult> UpdateJobImpl(const Actor& actor, const JobPatch& patch);
  Result<PolicyChange> ChangePolicyImpl(const Actor& actor, const PolicyReloadRequest& request,
                                        const config::PolicyProposal& proposal);
  Result<JobView> RetryJobImpl(const Actor& actor, const JobRetryRequest& request);
  Result<ImportSummary> ImportUpstreamImpl(const Actor& actor, const std::string& json_text,
                                           const ImportProgressFn& progress);
  ImportSpec ImportSpecFor(const Actor& actor, ImportProgressFn progress) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Op-id syntax: 1-128 of [A-Za-z0-9._:-].
Status ValidateOpId(const std::string& op_id);

}  // namespace bk::service
