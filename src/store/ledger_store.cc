#include "store/ledger_store.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include "base/strings.h"
#include "store/data_file.h"
#include "store/record_tables.h"
#include "sys/fs.h"

namespace bk::store {
namespace {

constexpr const char* kReservationIndexes =
    R"sql(CREATE INDEX reservations_by_end ON reservations(status, end_at);
CREATE INDEX reservations_by_owner ON reservations(uid, start_at);
)sql";

constexpr const char* kEventIndexes = R"sql(CREATE INDEX events_by_uid ON events(uid, seq);
CREATE INDEX events_by_reservation ON events(reservation_id, seq);
)sql";

constexpr const char* kEventRules = R"sql(CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
  BEGIN SELECT RAISE(ABORT, 'the event history is append-only'); END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
  BEGIN SELECT RAISE(ABORT, 'the event history is append-only'); END;
)sql";

constexpr std::string_view kNotificationReadsTable = "notification_reads";

// Every table of the ledger, each after the ones its rows reference.
std::vector<std::string_view> LedgerTables() {
  return {"meta",
          kReservationTable.info.name,
          kOperationTable.info.name,
          kEventTable.info.name,
          kNotificationTable.info.name,
          kNotificationReadsTable,
          kJobTable.info.name,
          kAnnouncementTable.info.name};
}

// `bk reset`: every row goes, the schema stays. The history's append-only
// rules are lifted only inside the reset's own transaction. Rows go before
// the rows they reference (jobs before their reservations).
std::string ResetSql() {
  std::string sql = "DROP TRIGGER events_append_only_update;\nDROP TRIGGER events_append_only_delete;\n";
  const auto tables = LedgerTables();
  for (auto table = tables.rbegin(); table != tables.rend(); ++table)
    sql += fmt::format("DELETE FROM {};\n", *table);
  return sql + kEventRules;
}

// Copies every row of `table` from the attached ledger "restored", column by
// name, so a column's place in either file does not matter.
Result<std::string> CopySql(Db& db, std::string_view table) {
  BK_ASSIGN_OR_RETURN(Stmt st, db.Prepare(fmt::format("PRAGMA main.table_info({})", table)));
  std::string columns;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    columns += (columns.empty() ? "" : ", ") + st.Text(1);
  }
  return fmt::format("INSERT INTO main.{0} ({1}) SELECT {1} FROM restored.{0};\n", table, columns);
}

// Version 1: reservations, operation IDs, the append-only history, notifications.
std::string SchemaV1() {
  return std::string(kMetaTableSql) + CreateTableSql(kReservationTable) + kReservationIndexes +
         CreateTableSql(kOperationTable) + CreateTableSql(kEventTable) + kEventIndexes + kEventRules +
         CreateTableSql(kNotificationTable) +
         "CREATE INDEX notifications_by_uid ON notifications(uid, created_at);\n";
}

// Version 2: the job bound to a reservation by `bk N DUR -- CMD`. No argv, cwd
// or environment here: those stay in the owner's private spec. IF NOT EXISTS
// keeps a re-run of this step harmless (it runs in one transaction anyway).
constexpr const char* kJobIndexes = R"sql(CREATE INDEX IF NOT EXISTS jobs_by_owner ON jobs(uid, status);
-- Covers "my active reservations" (bk l, list numbers, counts) without table lookups.
CREATE INDEX IF NOT EXISTS reservations_by_owner_active ON reservations(uid, status, start_at, end_at);
)sql";

std::string SchemaV2() { return CreateTableSql(kJobTable, "CREATE TABLE IF NOT EXISTS") + kJobIndexes; }

// Version 3: which notifications their recipient has read (`bk n`). A row per
// read notification rather than a per-user high-water mark: notifications
// carry second timestamps, so one written in the second of a read would
// otherwise count as read unseen. IF NOT EXISTS as in version 2.
constexpr const char* kNotificationReadsSql = R"sql(CREATE TABLE IF NOT EXISTS notification_reads (
  uid INTEGER NOT NULL,
  notification_id TEXT NOT NULL,
  read_at INTEGER NOT NULL,
  PRIMARY KEY (uid, notification_id)
) WITHOUT ROWID;
)sql";

// Version 4: administrators' announcements. IF NOT EXISTS as in version 2.
std::string SchemaV4() { return CreateTableSql(kAnnouncementTable, "CREATE TABLE IF NOT EXISTS"); }

// The statements every caller shares, built once from the tables.
const std::string& SelectReservations() {  // without FROM: queries may name an index
  static const std::string sql = "SELECT " + ColumnList(kReservationTable);
  return sql;
}
const std::string& SelectEvents() {
  static const std::string sql = SelectSql(kEventTable);
  return sql;
}
// A notification's condition: its recipient has not read it.
constexpr const char* kUnread =
    "NOT EXISTS (SELECT 1 FROM notification_reads r WHERE r.uid = notifications.uid AND "
    "r.notification_id = notifications.id)";
const std::string& SelectNotifications() {
  static const std::string sql = SelectSql(kNotificationTable);
  return sql;
}

// A commit that failed while its pages were going to disk may have reached
// it all the same: SQLite recovers a complete WAL commit on the next open.
// Saying "retry" alone would make a retry without an operation ID book twice.
Error MayHaveBeenRecorded(Error e) {
  if (e.kind == ErrorKind::kIo)
    e.message +=
        "; it may have been recorded all the same, so look before repeating it (a retry "
        "with the same --op-id is always safe)";
  return e;
}

}  // namespace

WriteTxn::~WriteTxn() {
  if (store_) store_->RollbackWrite(nested_);
}

Status WriteTxn::Commit() {
  LedgerStore* s = store_;
  store_ = nullptr;
  return s->CommitWrite(nested_);
}

void LedgerStore::RollbackWrite(bool nested) {
  changed_.clear();
  if (!nested) {
    (void)db_->Exec("ROLLBACK");
    return;
  }
  // Only this write goes; the group's earlier writes stay.
  if (!GroupLost()) (void)db_->Exec("ROLLBACK TO write; RELEASE write");
}

Status LedgerStore::CommitWrite(bool nested) {
  Status st = nested && GroupLost() ? Status(std::unexpected(GroupLostError()))
                                    : db_->Exec(nested ? "RELEASE write" : "COMMIT");
  if (!st) {
    RollbackWrite(nested);
    return std::unexpected(nested ? st.error() : MayHaveBeenRecorded(st.error()));
  }
  ++commits_;
  std::vector<engine::Reservation> changed;
  changed.swap(changed_);
  if (on_commit_) on_commit_(changed);  // every commit: read caches compare generations
  return Ok();
}

bool LedgerStore::GroupLost() const { return in_group_ && sqlite3_get_autocommit(db_->raw()) != 0; }

Error LedgerStore::GroupLostError() const {
  return Error{ErrorKind::kIo,
               fmt::format("I/O error on {}: a failed write rolled back the open transaction; check the "
                           "disk and retry",
                           path_)};
}

Status LedgerStore::BeginGroup() {
  if (in_group_) return Ok();
  BK_TRY(db_->Exec("BEGIN IMMEDIATE"));
  in_group_ = true;
  return Ok();
}

Status LedgerStore::CommitGroup() {
  if (!in_group_) return Ok();
  const bool lost = GroupLost();
  Status st = lost ? Status(std::unexpected(GroupLostError())) : db_->Exec("COMMIT");
  in_group_ = false;
  if (st) return Ok();
  (void)db_->Exec("ROLLBACK");  // fails harmlessly when SQLite has rolled back already
  if (on_group_rollback_) on_group_rollback_();
  return std::unexpected(lost ? st.error() : MayHaveBeenRecorded(st.error()));
}

Result<std::unique_ptr<LedgerStore>> LedgerStore::Open(const OpenOptions& o) {
  if (o.scratch || (!sys::Exists(o.path) && !o.create)) {
    BK_ASSIGN_OR_RETURN(auto db, Db::Open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
    std::unique_ptr<LedgerStore> store(new LedgerStore(std::move(db), o.path, true));
    BK_TRY(store->Migrate());
    return store;
  }
  // Look before touching: a file that is not ours is refused unchanged, so
  // the journal mode is switched only after OpenDataFile's schema check.
  BK_ASSIGN_OR_RETURN(DataFile f,
                      OpenDataFile(o.path, o.create, o.owner, {o.busy_timeout_ms, o.on_lock_wait},
                                   "a GPUBK ledger", o.vfs, o.fs != nullptr ? *o.fs : sys::RealFileSystem()));
  std::unique_ptr<LedgerStore> store(new LedgerStore(std::move(f.db), o.path, false));
  if (o.exclusive) BK_TRY(store->db_->Exec("PRAGMA locking_mode=EXCLUSIVE"));
  BK_TRY(UseWal(*store->db_, o.busy_timeout_ms));
  BK_TRY(store->db_->Exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON"));
  BK_TRY(store->Migrate());
  return store;
}

Status LedgerStore::Migrate() {
  BK_ASSIGN_OR_RETURN(int64_t version, UserVersion(*db_));
  if (version == kSchemaVersion) return Ok();
  if (version > kSchemaVersion)
    return Fail(
        ErrorKind::kCorrupt,
        fmt::format("ledger {} has schema version {}, newer than this bk understands ({}); upgrade bk", path_,
                    version, kSchemaVersion));
  BK_TRY(db_->Exec("BEGIN IMMEDIATE"));
  // Re-check under the write lock: another process may have migrated meanwhile.
  auto again = UserVersion(*db_);
  if (again && *again == kSchemaVersion) return db_->Exec("COMMIT");
  if (!again) {
    (void)db_->Exec("ROLLBACK");
    return std::unexpected(again.error());
  }
  // Forward migrations, one step per version, all in this transaction.
  if (*again < 1) {
    if (auto s = db_->Exec(SchemaV1()); !s) {
      (void)db_->Exec("ROLLBACK");
      return s;
    }
  }
  if (*again < 2) {
    if (auto s = db_->Exec(SchemaV2()); !s) {
      (void)db_->Exec("ROLLBACK");
      return s;
    }
  }
  if (*again < 3) {
    if (auto s = db_->Exec(kNotificationReadsSql); !s) {
      (void)db_->Exec("ROLLBACK");
      return s;
    }
  }
  if (*again < 4) {
    if (auto s = db_->Exec(SchemaV4()); !s) {
      (void)db_->Exec("ROLLBACK");
      return s;
    }
  }
  if (auto s = db_->Exec(fmt::format("PRAGMA user_version={}", kSchemaVersion)); !s) {
    (void)db_->Exec("ROLLBACK");
    return s;
  }
  return db_->Exec("COMMIT");
}

Result<WriteTxn> LedgerStore::BeginWrite() {
  if (!in_group_) {
    BK_TRY(db_->Exec("BEGIN IMMEDIATE"));
    return WriteTxn(this, false);
  }
  // Outside a transaction a savepoint would begin (and its release commit)
  // one of its own, durable apart from the group: refused instead.
  if (GroupLost()) return std::unexpected(GroupLostError());
  BK_TRY(db_->Exec("SAVEPOINT write"));
  return WriteTxn(this, true);
}

Result<LedgerStore::Cleared> LedgerStore::Reset() { return ReplaceWith("", {}); }

Result<LedgerStore::Cleared> LedgerStore::ReplaceWith(const std::string& source,
                                                      const std::function<Status()>& while_locked) {
  if (!source.empty()) {
    BK_ASSIGN_OR_RETURN(Stmt attach, db_->Prepare("ATTACH DATABASE ? AS restored"));
    attach.Bind(1, source);
    BK_TRY(attach.Run());
  }
  auto replaced = [&]() -> Result<Cleared> {
    BK_ASSIGN_OR_RETURN(WriteTxn txn, BeginWrite());
    if (while_locked) BK_TRY(while_locked());
    Cleared cleared;
    BK_ASSIGN_OR_RETURN(cleared.reservations, CountReservations());
    {
      BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT count(*) FROM events"));
      BK_ASSIGN_OR_RETURN(bool row, st.Step());
      cleared.events = row ? st.Int(0) : 0;
    }
    std::string sql = ResetSql();
    if (!source.empty())
      for (std::string_view table : LedgerTables()) {
        BK_ASSIGN_OR_RETURN(std::string copy, CopySql(*db_, table));
        sql += copy;
      }
    BK_TRY(db_->Exec(sql));
    BK_TRY(txn.Commit());
    return cleared;
  }();
  if (!source.empty()) (void)db_->Exec("DETACH DATABASE restored");
  return replaced;
}

Result<std::optional<std::string>> LedgerStore::BoundPolicy() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached("SELECT value FROM meta WHERE key='policy'"));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<std::string>();
  return std::optional(st.Text(0));
}

Status LedgerStore::BindPolicy(const std::string& policy_json) {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached("INSERT OR REPLACE INTO meta(key, value) VALUES('policy', ?)"));
  st.Bind(1, policy_json);
  return st.Run();
}

Result<std::vector<engine::LiveCalendar::Entry>> LedgerStore::ActiveEntries(engine::Seconds now) {
  BK_ASSIGN_OR_RETURN(
      Stmt st,
      db_->Cached("SELECT mode, gpus, share_units, memory_mb, cpus, ram_mb, start_at, end_at, id, uid "
                  "FROM reservations WHERE status='active' AND end_at > ?"));
  st.Bind(1, now);
  std::vector<engine::LiveCalendar::Entry> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    engine::LiveCalendar::Entry e;
    engine::Footprint& f = e.footprint;
    f.mode = st.Text(0) == "exclusive" ? engine::Mode::kExclusive : engine::Mode::kShared;
    f.gpus = ParseGpus(st.Text(1));
    f.share_units = static_cast<int>(st.OptInt(2).value_or(1));
    f.memory_mb = st.OptInt(3);
    f.cpus = st.Int(4);
    f.ram_mb = st.Int(5);
    f.start = st.Int(6);
    f.end = st.Int(7);
    e.id = st.Text(8);
    e.owner = static_cast<uint32_t>(st.Int(9));
    out.push_back(std::move(e));
  }
  return out;
}

Result<std::vector<engine::Footprint>> LedgerStore::ActiveFootprints(engine::Seconds now,
                                                                     const std::string& except_id) {
  BK_ASSIGN_OR_RETURN(auto entries, ActiveEntries(now));
  std::vector<engine::Footprint> out;
  out.reserve(entries.size());
  for (auto& e : entries)
    if (except_id.empty() || e.id != except_id) out.push_back(std::move(e.footprint));
  return out;
}

namespace {

// Without statistics SQLite prefers the (status, end_at) index, which reads
// every active reservation; a caller's own rows are better found by owner.
std::string From(const ReservationQuery& q) {
  return q.uid ? " FROM reservations INDEXED BY reservations_by_owner_active" : " FROM reservations";
}

std::string Where(const ReservationQuery& q) {
  std::string sql = " WHERE 1=1";
  if (q.uid) sql += " AND uid = ?";
  if (q.active_only) sql += " AND status = 'active' AND end_at > ?";
  // Not cancelled, spelled as the statuses that remain: the (status, end_at)
  // index then serves a window, where `!=` would read every row.
  if (!q.include_cancelled) sql += " AND status IN ('active', 'expired')";
  if (q.overlap_start) sql += " AND end_at > ?";
  if (q.overlap_end) sql += " AND start_at < ?";
  if (q.ended_by) sql += " AND end_at <= ?";
  return sql;
}

int BindWhere(Stmt& st, const ReservationQuery& q) {
  int i = 1;
  if (q.uid) st.Bind(i++, int64_t{*q.uid});
  if (q.active_only) st.Bind(i++, q.now.value_or(0));
  if (q.overlap_start) st.Bind(i++, *q.overlap_start);
  if (q.overlap_end) st.Bind(i++, *q.overlap_end);
  if (q.ended_by) st.Bind(i++, *q.ended_by);
  return i;
}

}  // namespace

Result<std::vector<engine::Reservation>> LedgerStore::Reservations(const ReservationQuery& q) {
  std::string sql = SelectReservations() + From(q) + Where(q);
  sql += q.newest_first ? " ORDER BY start_at DESC, id DESC" : " ORDER BY start_at, end_at, id";
  if (q.limit) sql += " LIMIT ?";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(sql));
  int i = BindWhere(st, q);
  if (q.limit) st.Bind(i, int64_t{*q.limit});
  return ReadRows(st, kReservationTable);
}

Result<int64_t> LedgerStore::CountReservations(const ReservationQuery& q) {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached("SELECT count(*)" + From(q) + Where(q)));
  BindWhere(st, q);
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

Result<std::vector<uint32_t>> LedgerStore::Owners(engine::Seconds end_after) {
  BK_ASSIGN_OR_RETURN(Stmt st,
                      db_->Cached("SELECT DISTINCT uid FROM reservations WHERE end_at > ? ORDER BY uid"));
  st.Bind(1, int64_t{end_after});
  std::vector<uint32_t> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(static_cast<uint32_t>(st.Int(0)));
  }
  return out;
}

Result<std::optional<engine::Reservation>> LedgerStore::Get(const std::string& id) {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(SelectReservations() + " FROM reservations WHERE id = ?"));
  st.Bind(1, id);
  return ReadFirstRow(st, kReservationTable);
}

Result<std::vector<engine::Reservation>> LedgerStore::ByPrefix(const std::string& prefix,
                                                               std::optional<uint32_t> uid, int limit) {
  // Range scan on the primary key instead of LIKE, which would treat % and _ specially.
  std::string upper = prefix;
  upper.push_back('\x7f');
  std::string sql = fmt::format("{} FROM reservations WHERE id >= ? AND id < ?{} ORDER BY id LIMIT ?",
                                SelectReservations(), uid ? " AND uid = ?" : "");
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(sql));
  st.Bind(1, prefix);
  st.Bind(2, upper);
  int i = 3;
  if (uid) st.Bind(i++, int64_t{*uid});
  st.Bind(i, int64_t{limit});
  return ReadRows(st, kReservationTable);
}

Status LedgerStore::Insert(const engine::Reservation& r) {
  changed_.push_back(r);
  static const std::string sql = InsertSql(kReservationTable);
  return WriteRow(*db_, sql, kReservationTable, r);
}

Status LedgerStore::Update(const engine::Reservation& r) {
  changed_.push_back(r);
  static const std::string sql = UpdateSql(kReservationTable);
  BK_TRY(WriteRow(*db_, sql, kReservationTable, r));
  if (db_->Changes() != 1) return Fail(ErrorKind::kNotFound, "reservation not found: " + r.id);
  return Ok();
}

Result<int64_t> LedgerStore::CountReservations() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached("SELECT count(*) FROM reservations"));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

Result<std::optional<Operation>> LedgerStore::FindOperation(uint32_t uid, const std::string& op_id) {
  static const std::string sql = SelectSql(kOperationTable) + " WHERE uid = ? AND op_id = ?";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(sql));
  st.Bind(1, int64_t{uid}).Bind(2, op_id);
  return ReadFirstRow(st, kOperationTable);
}

Status LedgerStore::InsertOperation(const Operation& op) {
  static const std::string sql = InsertSql(kOperationTable);
  return WriteRow(*db_, sql, kOperationTable, op);
}

Status LedgerStore::AppendEvent(const Event& e) {
  static const std::string sql = InsertSql(kEventTable);
  return WriteRow(*db_, sql, kEventTable, e);
}

Result<std::vector<Event>> LedgerStore::EventsForUid(uint32_t uid, int limit, bool admin_actions) {
  const char* which =
      admin_actions ? " WHERE uid = ?1 OR actor_uid = ?1 OR action LIKE 'admin-%'" : " WHERE uid = ?1";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached("SELECT * FROM (" + SelectEvents() + which +
                                           " ORDER BY seq DESC LIMIT ?2) ORDER BY seq"));
  st.Bind(1, int64_t{uid}).Bind(2, int64_t{limit});
  return ReadRows(st, kEventTable);
}

Result<std::vector<Event>> LedgerStore::EventsForReservation(const std::string& id) {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(SelectEvents() + " WHERE reservation_id = ? ORDER BY seq"));
  st.Bind(1, id);
  return ReadRows(st, kEventTable);
}

Status LedgerStore::InsertNotification(const Notification& n) {
  static const std::string sql = InsertSql(kNotificationTable);
  return WriteRow(*db_, sql, kNotificationTable, n);
}

Result<std::vector<Notification>> LedgerStore::NotificationsForUid(uint32_t uid, int limit) {
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Cached(SelectNotifications() + " WHERE uid = ? ORDER BY created_at DESC, id LIMIT ?"));
  st.Bind(1, int64_t{uid}).Bind(2, int64_t{limit});
  return ReadRows(st, kNotificationTable);
}

Result<std::vector<Notification>> LedgerStore::UnreadNotificationsForUid(uint32_t uid, int limit) {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(SelectNotifications() + " WHERE uid = ? AND " + kUnread +
                                           " ORDER BY created_at DESC, id LIMIT ?"));
  st.Bind(1, int64_t{uid}).Bind(2, int64_t{limit});
  return ReadRows(st, kNotificationTable);
}

Result<int64_t> LedgerStore::CountUnreadNotifications(uint32_t uid) {
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Cached(std::string("SELECT count(*) FROM notifications WHERE uid = ? AND ") + kUnread));
  st.Bind(1, int64_t{uid});
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

Result<int64_t> LedgerStore::MarkNotificationsRead(uint32_t uid, const std::vector<std::string>& ids,
                                                   engine::Seconds now) {
  // Only the recipient's own unread notifications: IDs of someone else's, or
  // of none, change nothing.
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(std::string("INSERT INTO notification_reads(uid, notification_id, "
                                                       "read_at) SELECT uid, id, ? FROM notifications "
                                                       "WHERE id = ? AND uid = ? AND ") +
                                           kUnread));
  int64_t marked = 0;
  for (const auto& id : ids) {
    st.Reset();
    st.Bind(1, now).Bind(2, id).Bind(3, int64_t{uid});
    BK_TRY(st.Run());
    marked += sqlite3_changes(db_->raw());
  }
  return marked;
}

Result<std::vector<Notification>> LedgerStore::NotificationsForReservation(const std::string& id) {
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Cached(SelectNotifications() + " WHERE reservation_id = ? ORDER BY created_at, id"));
  st.Bind(1, id);
  return ReadRows(st, kNotificationTable);
}

Status LedgerStore::InsertAnnouncement(const Announcement& a) {
  static const std::string sql = InsertSql(kAnnouncementTable);
  return WriteRow(*db_, sql, kAnnouncementTable, a);
}

Status LedgerStore::UpdateAnnouncement(const Announcement& a) {
  static const std::string sql = UpdateSql(kAnnouncementTable);
  BK_TRY(WriteRow(*db_, sql, kAnnouncementTable, a));
  if (db_->Changes() != 1) return Fail(ErrorKind::kNotFound, "announcement not found: " + a.id);
  return Ok();
}

Result<std::vector<Announcement>> LedgerStore::Announcements() {
  static const std::string sql = SelectSql(kAnnouncementTable) + " ORDER BY created_at, id";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(sql));
  return ReadRows(st, kAnnouncementTable);
}

Result<std::vector<Announcement>> LedgerStore::ActiveAnnouncements(engine::Seconds now) {
  static const std::string sql = SelectSql(kAnnouncementTable) +
                                 " WHERE archived_at IS NULL AND starts_at <= ?1 AND expires_at > ?1"
                                 " ORDER BY created_at, id";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(sql));
  st.Bind(1, now);
  return ReadRows(st, kAnnouncementTable);
}

Status LedgerStore::InsertJob(const JobRecord& job) {
  static const std::string sql = InsertSql(kJobTable);
  return WriteRow(*db_, sql, kJobTable, job);
}

Status LedgerStore::UpdateJob(const JobRecord& job) {
  static const std::string sql = UpdateSql(kJobTable);
  BK_TRY(WriteRow(*db_, sql, kJobTable, job));
  if (db_->Changes() != 1) return Fail(ErrorKind::kNotFound, "job not found: " + job.reservation_id);
  return Ok();
}

Result<std::optional<JobRecord>> LedgerStore::GetJob(const std::string& reservation_id) {
  static const std::string sql = SelectSql(kJobTable) + " WHERE reservation_id = ?";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(sql));
  st.Bind(1, reservation_id);
  return ReadFirstRow(st, kJobTable);
}

Result<std::vector<JobRecord>> LedgerStore::JobsForUid(uint32_t uid, bool open_only) {
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Cached(fmt::format(
                   "SELECT {} FROM jobs j JOIN reservations r ON r.id = j.reservation_id "
                   "WHERE j.uid = ?{} ORDER BY r.start_at, r.id",
                   ColumnList(kJobTable, "j."),
                   open_only ? " AND j.status IN ('pending', 'claimed', 'running', 'uncertain')" : "")));
  st.Bind(1, int64_t{uid});
  return ReadRows(st, kJobTable);
}

Result<std::vector<engine::Reservation>> LedgerStore::PruneIfDue(engine::Seconds now,
                                                                 engine::Seconds cutoff) {
  {
    BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached("SELECT value FROM meta WHERE key='last_prune'"));
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (row) {
      auto last = ParseUint(st.Text(0));
      if (last && now - *last < engine::kDay) return std::vector<engine::Reservation>();
    }
  }
  const std::string cond = fmt::format(
      "(status = 'cancelled' AND updated_at <= {0}) OR (status != 'cancelled' AND end_at <= {0})", cutoff);
  std::vector<engine::Reservation> removed;
  {
    BK_ASSIGN_OR_RETURN(
        Stmt st, db_->Prepare(SelectReservations() + " FROM reservations WHERE " + cond + " ORDER BY id"));
    BK_ASSIGN_OR_RETURN(removed, ReadRows(st, kReservationTable));
  }
  // Jobs reference their reservation, so they go first.
  BK_TRY(db_->Exec(
      fmt::format("DELETE FROM jobs WHERE reservation_id IN (SELECT id FROM reservations WHERE {})", cond)));
  BK_TRY(db_->Exec("DELETE FROM reservations WHERE " + cond));
  BK_ASSIGN_OR_RETURN(Stmt st,
                      db_->Cached("INSERT OR REPLACE INTO meta(key, value) VALUES('last_prune', ?)"));
  st.Bind(1, std::to_string(now));
  BK_TRY(st.Run());
  changed_.insert(changed_.end(), removed.begin(), removed.end());
  return removed;
}

Status LedgerStore::BackupTo(const std::string& path, uid_t owner) {
  if (path.empty() || path[0] != '/') return Invalid(fmt::format("backup path {} must be absolute", path));
  if (sys::Exists(path))
    return Invalid(fmt::format("{} already exists; choose a new file for the backup", path));
  BK_TRY(sys::CheckPrivateDir(sys::Dirname(path), owner));
  BK_TRY(sys::CreateDataFile(path, 0600, owner));
  auto dest = Db::Open(path, SQLITE_OPEN_READWRITE);
  if (!dest) {
    unlink(path.c_str());
    return std::unexpected(dest.error());
  }
  sqlite3_backup* b = sqlite3_backup_init((*dest)->raw(), "main", db_->raw(), "main");
  if (!b) {
    Error e = SqliteError((*dest)->raw(), sqlite3_errcode((*dest)->raw()), path);
    unlink(path.c_str());
    return std::unexpected(e);
  }
  int rc = sqlite3_backup_step(b, -1);  // all pages in one step: a consistent snapshot
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    Error e = SqliteError((*dest)->raw(), rc, path);
    dest->reset();
    unlink(path.c_str());
    return std::unexpected(e);
  }
  return Ok();
}

Result<int64_t> LedgerStore::DataVersion() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached("PRAGMA data_version"));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Fail(ErrorKind::kInternal, "PRAGMA data_version returned no row");
  return st.Int(0);
}

Result<std::string> LedgerStore::IntegrityCheck() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("PRAGMA integrity_check"));
  std::string out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (!out.empty()) out += "; ";
    out += st.Text(0);
  }
  return out;
}

}  // namespace bk::store
