#pragma once
// The ledger in SQLite: WAL, synchronous=FULL, every
// read-modify-write inside BEGIN IMMEDIATE, schema versions in user_version,
// an append-only event history, operation IDs, the policy bound at first write.

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "engine/live_calendar.h"
#include "engine/reservation.h"
#include "store/records.h"
#include "store/sqlite.h"
#include "sys/file_system.h"

namespace bk::store {

struct OpenOptions {
  std::string path;     // .../ledger.db
  bool create = false;  // create the directory and file when missing
  uid_t owner = 0;      // files and directory must belong to this UID
  int busy_timeout_ms = 10000;
  bool exclusive = false;  // locking_mode=EXCLUSIVE (the daemon)
  bool scratch = false;    // an empty in-memory ledger, whatever is on disk (a trial write)
  // The SQLite VFS for the file; empty is the default. Tests name one that
  // injects I/O faults (store/fault_vfs.h).
  std::string vfs;
  sys::FileSystem* fs = nullptr;  // where the directory is created; the real file system when null
  // Told who holds the write lock when a write has waited half a second.
  std::function<void(const std::string& holder)> on_lock_wait;
};

struct ReservationQuery {
  std::optional<uint32_t> uid;  // owner filter
  bool active_only = false;     // status active and end > now
  bool include_cancelled = true;
  std::optional<engine::Seconds> now;            // for active_only / overlap
  std::optional<engine::Seconds> overlap_start;  // end > overlap_start
  std::optional<engine::Seconds> overlap_end;    // start < overlap_end
  std::optional<engine::Seconds> ended_by;       // end <= ended_by
  bool newest_first = false;                     // order by start descending (history)
  std::optional<int> limit;
};

class LedgerStore;

// A write transaction (BEGIN IMMEDIATE); rolls back unless committed. Inside
// an open group it is a savepoint of the group's transaction instead: its
// commit makes it visible to the next write, the group's commit makes it
// durable, and dropping it undoes it alone.
class WriteTxn {
 public:
  WriteTxn(LedgerStore* store, bool nested) : store_(store), nested_(nested) {}
  WriteTxn(WriteTxn&& o) noexcept : store_(o.store_), nested_(o.nested_) { o.store_ = nullptr; }
  ~WriteTxn();
  Status Commit();

 private:
  LedgerStore* store_;
  bool nested_;
};

class LedgerStore {
 public:
  // A missing ledger opened without `create` reads as empty and writes nothing
  // to disk (an in-memory database with the schema).
  static Result<std::unique_ptr<LedgerStore>> Open(const OpenOptions& options);
  static constexpr int kSchemaVersion = 4;  // 2: jobs, 3: notification read marks, 4: announcements

  Result<WriteTxn> BeginWrite();
  bool in_memory() const { return in_memory_; }
  // Write transactions committed through this object (a group's each count).
  uint64_t commits() const { return commits_; }
  // SQLite's data_version of this connection: it moves whenever another
  // connection committed to the file since the last time it was read (this
  // connection's own commits are in commits()). Cheap: no table is read.
  Result<int64_t> DataVersion();

  // Group commit (the daemon): the writes between BeginGroup and CommitGroup
  // share one transaction and so one fsync. Each write's OnCommit listener
  // runs at its own commit, so later writes see it, but nothing is durable
  // until CommitGroup returns Ok. When that commit fails every write of the
  // group is rolled back and the OnGroupRollback listener runs. Beginning a
  // group while one is open changes nothing.
  Status BeginGroup();
  Status CommitGroup();
  bool in_group() const { return in_group_; }
  const std::string& path() const { return path_; }

  // Policy bound at first write (canonical JSON), if any.
  Result<std::optional<std::string>> BoundPolicy();
  Status BindPolicy(const std::string& policy_json);

  // What active reservations ending after `now` occupy, with their IDs and
  // owners (the daemon's calendar), or only the footprints.
  Result<std::vector<engine::LiveCalendar::Entry>> ActiveEntries(engine::Seconds now);
  Result<std::vector<engine::Footprint>> ActiveFootprints(engine::Seconds now,
                                                          const std::string& except_id = "");
  Result<std::vector<engine::Reservation>> Reservations(const ReservationQuery& q);
  // How many rows Reservations(q) would return without its limit.
  Result<int64_t> CountReservations(const ReservationQuery& q);
  // The UIDs that own a reservation, in any status, ending after `end_after`,
  // ascending: whose bookings a group's limits may have to count.
  Result<std::vector<uint32_t>> Owners(engine::Seconds end_after);
  Result<std::optional<engine::Reservation>> Get(const std::string& id);
  // IDs starting with `prefix` (at most `limit`).
  Result<std::vector<engine::Reservation>> ByPrefix(const std::string& prefix, std::optional<uint32_t> uid,
                                                    int limit);
  Status Insert(const engine::Reservation& r);
  Status Update(const engine::Reservation& r);
  Result<int64_t> CountReservations();

  Result<std::optional<Operation>> FindOperation(uint32_t uid, const std::string& op_id);
  Status InsertOperation(const Operation& op);

  Status AppendEvent(const Event& e);
  // Newest `limit` events of an owner, returned oldest first; with
  // `admin_actions`, every administrator's action ("admin-..." events) and
  // whatever `uid` did to others' bookings too (an administrator's audit).
  Result<std::vector<Event>> EventsForUid(uint32_t uid, int limit, bool admin_actions = false);
  Result<std::vector<Event>> EventsForReservation(const std::string& id);

  Status InsertNotification(const Notification& n);
  Result<std::vector<Notification>> NotificationsForUid(uint32_t uid, int limit);
  Result<std::vector<Notification>> NotificationsForReservation(const std::string& id);
  // Read marks (schema v3): what the recipient has not yet read with `bk n`,
  // newest first, and how many there are.
  Result<std::vector<Notification>> UnreadNotificationsForUid(uint32_t uid, int limit);
  Result<int64_t> CountUnreadNotifications(uint32_t uid);
  // Marks those of `ids` that are `uid`'s own and unread as read at `now`;
  // returns how many it marked.
  Result<int64_t> MarkNotificationsRead(uint32_t uid, const std::vector<std::string>& ids,
                                        engine::Seconds now);

  // Announcements (schema v4), archived ones included, oldest first.
  Status InsertAnnouncement(const Announcement& a);
  Status UpdateAnnouncement(const Announcement& a);
  Result<std::vector<Announcement>> Announcements();
  // Those shown at `now` (Announcement::ActiveAt), oldest first.
  Result<std::vector<Announcement>> ActiveAnnouncements(engine::Seconds now);

  // Jobs (schema v2): at most one per reservation.
  Status InsertJob(const JobRecord& job);
  Status UpdateJob(const JobRecord& job);
  Result<std::optional<JobRecord>> GetJob(const std::string& reservation_id);
  // Jobs of an owner, in (reservation start, id) order; `open_only` keeps the
  // ones a worker may still act on (pending, claimed, running, uncertain).
  Result<std::vector<JobRecord>> JobsForUid(uint32_t uid, bool open_only = false);

  // Called after each committed write transaction with the reservations it
  // inserted, updated or pruned, as written, in order (the daemon's live
  // calendar takes them without reading them back).
  using CommitListener = std::function<void(const std::vector<engine::Reservation>&)>;
  void OnCommit(CommitListener listener) { on_commit_ = std::move(listener); }
  // Called when a group's commit failed and its writes, which OnCommit had
  // reported, are gone: what was derived from them must be dropped.
  void OnGroupRollback(std::function<void()> listener) { on_group_rollback_ = std::move(listener); }

  // Retention: removes reservations that ended (or were cancelled) at or
  // before `cutoff`, with their jobs. Operation IDs stay forever (a retry
  // with an old ID must never book again) and so does the event history.
  // Runs at most once a day (meta key last_prune). Returns what it removed,
  // for the caller to record in the history.
  Result<std::vector<engine::Reservation>> PruneIfDue(engine::Seconds now, engine::Seconds cutoff);

  // `bk reset`: removes every reservation, job, operation ID, history event,
  // notification, announcement and the bound policy in one transaction (the next write binds
  // the policy again). The file, its mode and its schema stay, so open
  // handles stay valid. Returns what was there.
  struct Cleared {
    int64_t reservations = 0;
    int64_t events = 0;
  };
  Result<Cleared> Reset();
  // Replaces everything the ledger holds with what the closed ledger file
  // `source` holds (an empty path: nothing), in one write transaction, so a
  // reader sees the old ledger or the new one, never a mix. `source` must be
  // at this schema version (opening it with Open migrates it). `while_locked`,
  // when set, runs once this connection holds the write lock and before
  // anything changes (it keeps the old ledger aside); when it fails, nothing
  // changes. Returns what was there. Not inside an open group.
  Result<Cleared> ReplaceWith(const std::string& source, const std::function<Status()>& while_locked);

  // A consistent copy of the live ledger into the new file `path` (SQLite's
  // online backup API; the file is created 0600 and must not exist).
  Status BackupTo(const std::string& path, uid_t owner);

  // PRAGMA integrity_check; "ok" when healthy.
  Result<std::string> IntegrityCheck();
  Db& db() { return *db_; }

 private:
  friend class WriteTxn;
  LedgerStore(std::unique_ptr<Db> db, std::string path, bool in_memory)
      : db_(std::move(db)), path_(std::move(path)), in_memory_(in_memory) {}
  Status Migrate();
  void RollbackWrite(bool nested);
  Status CommitWrite(bool nested);
  // Whether the open group's transaction is gone: SQLite rolls a whole
  // transaction back after some I/O errors, savepoints and all.
  bool GroupLost() const;
  Error GroupLostError() const;

  std::unique_ptr<Db> db_;
  std::string path_;
  bool in_memory_;
  uint64_t commits_ = 0;
  std::vector<engine::Reservation> changed_;
  CommitListener on_commit_;
  bool in_group_ = false;
  std::function<void()> on_group_rollback_;
};

}  // namespace bk::store
