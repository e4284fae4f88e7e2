#include "store/ledger_store.h"

#include <fmt/format.h>
#include <unistd.h>

#include "base/strings.h"
#include "store/data_file.h"
#include "sys/fs.h"

namespace bk::store {
namespace {

constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE reservations(
  id TEXT PRIMARY KEY,
  uid INTEGER NOT NULL,
  username TEXT NOT NULL,
  mode TEXT NOT NULL CHECK (mode IN ('shared', 'exclusive')),
  gpus TEXT NOT NULL,
  share_units INTEGER,
  memory_mb INTEGER,
  cpus INTEGER NOT NULL DEFAULT 0,
  ram_mb INTEGER NOT NULL DEFAULT 0,
  start_at INTEGER NOT NULL,
  end_at INTEGER NOT NULL CHECK (end_at > start_at),
  status TEXT NOT NULL CHECK (status IN ('active', 'cancelled', 'expired')),
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  op_id TEXT NOT NULL,
  op_signature TEXT NOT NULL DEFAULT '',
  edit_count INTEGER NOT NULL DEFAULT 0,
  cancel_at INTEGER,
  cancel_kind TEXT,
  cancel_reason TEXT,
  cancel_actor_uid INTEGER,
  cancel_actor_username TEXT,
  cancel_op_id TEXT
) STRICT;
CREATE INDEX reservations_by_end ON reservations(status, end_at);
CREATE INDEX reservations_by_owner ON reservations(uid, start_at);
CREATE TABLE operations(
  uid INTEGER NOT NULL,
  op_id TEXT NOT NULL,
  action TEXT NOT NULL,
  reservation_id TEXT NOT NULL,
  signature TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (uid, op_id)
) STRICT;
CREATE TABLE events(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  transaction_id TEXT NOT NULL,
  ts INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  username TEXT NOT NULL,
  actor_uid INTEGER NOT NULL,
  actor_username TEXT NOT NULL,
  action TEXT NOT NULL,
  reservation_id TEXT NOT NULL,
  op_id TEXT NOT NULL,
  gpus TEXT NOT NULL,
  mode TEXT NOT NULL,
  share_units INTEGER,
  start_at INTEGER NOT NULL,
  end_at INTEGER NOT NULL,
  result TEXT NOT NULL,
  message TEXT NOT NULL,
  before TEXT,
  after TEXT,
  signature TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX events_by_uid ON events(uid, seq);
CREATE INDEX events_by_reservation ON events(reservation_id, seq);
CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
  BEGIN SELECT RAISE(ABORT, 'the event history is append-only'); END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
  BEGIN SELECT RAISE(ABORT, 'the event history is append-only'); END;
CREATE TABLE notifications(
  id TEXT PRIMARY KEY,
  uid INTEGER NOT NULL,
  reservation_id TEXT NOT NULL,
  type TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  actor_uid INTEGER NOT NULL,
  actor_username TEXT NOT NULL,
  reason TEXT NOT NULL,
  message TEXT NOT NULL
) STRICT;
CREATE INDEX notifications_by_uid ON notifications(uid, created_at);
)sql";

// Version 2: the job bound to a reservation by `bk N DUR -- CMD`. No argv, cwd
// or environment here: those stay in the owner's private spec. IF NOT EXISTS
// keeps a re-run of this step harmless (it runs in one transaction anyway).
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE IF NOT EXISTS jobs(
  reservation_id TEXT PRIMARY KEY REFERENCES reservations(id),
  uid INTEGER NOT NULL,
  spec_id TEXT NOT NULL,
  digest TEXT NOT NULL,
  summary TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'claimed', 'running', 'succeeded', 'failed', 'cancelled',
                                         'missed', 'timed-out', 'interrupted', 'uncertain')),
  submitted_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  claimed_at INTEGER,
  started_at INTEGER,
  finished_at INTEGER,
  waiting_since INTEGER,
  cancel_requested_at INTEGER,
  recovered_at INTEGER,
  exit_code INTEGER,
  runner_pid INTEGER,
  runner_host TEXT NOT NULL DEFAULT '',
  worker_id TEXT NOT NULL DEFAULT '',
  claim_token TEXT NOT NULL DEFAULT '',
  message TEXT NOT NULL DEFAULT '',
  launch_guard_state TEXT NOT NULL DEFAULT '',
  launch_guard_key TEXT NOT NULL DEFAULT '',
  recovery_state TEXT NOT NULL DEFAULT '',
  recovery_worker_id TEXT NOT NULL DEFAULT '',
  log_warning TEXT NOT NULL DEFAULT '',
  log_rotated INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS jobs_by_owner ON jobs(uid, status);
-- Covers "my active reservations" (bk l, list numbers, counts) without table lookups.
CREATE INDEX IF NOT EXISTS reservations_by_owner_active ON reservations(uid, status, start_at, end_at);
)sql";

constexpr const char* kJobColumns =
    "reservation_id, uid, spec_id, digest, summary, status, submitted_at, updated_at, claimed_at, "
    "started_at, "
    "finished_at, waiting_since, cancel_requested_at, recovered_at, exit_code, runner_pid, runner_host, "
    "worker_id, "
    "claim_token, message, launch_guard_state, launch_guard_key, recovery_state, recovery_worker_id, "
    "log_warning, "
    "log_rotated";

JobRecord ReadJob(const Stmt& s) {
  JobRecord j;
  j.reservation_id = s.Text(0);
  j.uid = static_cast<uint32_t>(s.Int(1));
  j.spec_id = s.Text(2);
  j.digest = s.Text(3);
  j.summary = s.Text(4);
  j.status = s.Text(5);
  j.submitted_at = s.Int(6);
  j.updated_at = s.Int(7);
  j.claimed_at = s.OptInt(8);
  j.started_at = s.OptInt(9);
  j.finished_at = s.OptInt(10);
  j.waiting_since = s.OptInt(11);
  j.cancel_requested_at = s.OptInt(12);
  j.recovered_at = s.OptInt(13);
  j.exit_code = s.OptInt(14);
  j.runner_pid = s.OptInt(15);
  j.runner_host = s.Text(16);
  j.worker_id = s.Text(17);
  j.claim_token = s.Text(18);
  j.message = s.Text(19);
  j.launch_guard_state = s.Text(20);
  j.launch_guard_key = s.Text(21);
  j.recovery_state = s.Text(22);
  j.recovery_worker_id = s.Text(23);
  j.log_warning = s.Text(24);
  j.log_rotated = s.Int(25) != 0;
  return j;
}

void BindJob(Stmt& st, const JobRecord& j) {
  st.Bind(1, j.reservation_id)
      .Bind(2, int64_t{j.uid})
      .Bind(3, j.spec_id)
      .Bind(4, j.digest)
      .Bind(5, j.summary);
  st.Bind(6, j.status)
      .Bind(7, j.submitted_at)
      .Bind(8, j.updated_at)
      .Bind(9, j.claimed_at)
      .Bind(10, j.started_at);
  st.Bind(11, j.finished_at)
      .Bind(12, j.waiting_since)
      .Bind(13, j.cancel_requested_at)
      .Bind(14, j.recovered_at);
  st.Bind(15, j.exit_code).Bind(16, j.runner_pid).Bind(17, j.runner_host).Bind(18, j.worker_id);
  st.Bind(19, j.claim_token).Bind(20, j.message).Bind(21, j.launch_guard_state).Bind(22, j.launch_guard_key);
  st.Bind(23, j.recovery_state).Bind(24, j.recovery_worker_id).Bind(25, j.log_warning);
  st.Bind(26, int64_t{j.log_rotated ? 1 : 0});
}

constexpr const char* kReservationColumns =
    "id, uid, username, mode, gpus, share_units, memory_mb, cpus, ram_mb, start_at, end_at, status, "
    "created_at, "
    "updated_at, op_id, op_signature, edit_count, cancel_at, cancel_kind, cancel_reason, cancel_actor_uid, "
    "cancel_actor_username, cancel_op_id";

std::vector<int> ParseGpus(const std::string& text) {
  std::vector<int> out;
  int v = 0;
  bool any = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      any = true;
    } else if (c == ',') {
      if (any) out.push_back(v);
      v = 0;
      any = false;
    }
  }
  if (any) out.push_back(v);
  return out;
}

engine::Reservation ReadReservation(const Stmt& s) {
  engine::Reservation r;
  r.id = s.Text(0);
  r.uid = static_cast<uint32_t>(s.Int(1));
  r.username = s.Text(2);
  r.mode = s.Text(3) == "exclusive" ? engine::Mode::kExclusive : engine::Mode::kShared;
  r.gpus = ParseGpus(s.Text(4));
  r.share_units = static_cast<int>(s.OptInt(5).value_or(1));
  r.memory_mb = s.OptInt(6);
  r.cpus = s.Int(7);
  r.ram_mb = s.Int(8);
  r.start = s.Int(9);
  r.end = s.Int(10);
  r.status = engine::ParseStatus(s.Text(11)).value_or(engine::Status::kActive);
  r.created_at = s.Int(12);
  r.updated_at = s.Int(13);
  r.op_id = s.Text(14);
  r.op_signature = s.Text(15);
  r.edit_count = static_cast<int>(s.Int(16));
  if (!s.IsNull(17)) {
    r.cancellation = engine::Cancellation{
        s.Int(17), s.Text(18), s.Text(19), static_cast<uint32_t>(s.Int(20)), s.Text(21), s.Text(22)};
  }
  return r;
}

void BindReservation(Stmt& st, const engine::Reservation& r) {
  st.Bind(1, r.id).Bind(2, int64_t{r.uid}).Bind(3, r.username).Bind(4, engine::ModeName(r.mode));
  st.Bind(5, JoinInts(r.gpus));
  if (r.mode == engine::Mode::kShared)
    st.Bind(6, int64_t{r.share_units});
  else
    st.BindNull(6);
  st.Bind(7, r.memory_mb).Bind(8, r.cpus).Bind(9, r.ram_mb).Bind(10, r.start).Bind(11, r.end);
  st.Bind(12, engine::StatusName(r.status)).Bind(13, r.created_at).Bind(14, r.updated_at);
  st.Bind(15, r.op_id).Bind(16, r.op_signature).Bind(17, int64_t{r.edit_count});
  if (r.cancellation) {
    const auto& c = *r.cancellation;
    st.Bind(18, c.at).Bind(19, c.kind).Bind(20, c.reason).Bind(21, int64_t{c.actor_uid});
    st.Bind(22, c.actor_username).Bind(23, c.op_id);
  } else {
    for (int i = 18; i <= 23; ++i) st.BindNull(i);
  }
}

Event ReadEvent(const Stmt& s) {
  Event e;
  e.seq = s.Int(0);
  e.event_id = s.Text(1);
  e.transaction_id = s.Text(2);
  e.ts = s.Int(3);
  e.uid = static_cast<uint32_t>(s.Int(4));
  e.username = s.Text(5);
  e.actor_uid = static_cast<uint32_t>(s.Int(6));
  e.actor_username = s.Text(7);
  e.action = s.Text(8);
  e.reservation_id = s.Text(9);
  e.op_id = s.Text(10);
  e.gpus = ParseGpus(s.Text(11));
  e.mode = s.Text(12);
  e.share_units = s.OptInt(13);
  e.start = s.Int(14);
  e.end = s.Int(15);
  e.result = s.Text(16);
  e.message = s.Text(17);
  e.before = s.Text(18);
  e.after = s.Text(19);
  e.signature = s.Text(20);
  return e;
}

constexpr const char* kEventColumns =
    "seq, event_id, transaction_id, ts, uid, username, actor_uid, actor_username, action, reservation_id, "
    "op_id, "
    "gpus, mode, share_units, start_at, end_at, result, message, before, after, signature";

Notification ReadNotification(const Stmt& s) {
  return Notification{s.Text(0), static_cast<uint32_t>(s.Int(1)), s.Text(2), s.Text(3),
                      s.Int(4),  static_cast<uint32_t>(s.Int(5)), s.Text(6), s.Text(7),
                      s.Text(8)};
}
constexpr const char* kNotificationColumns =
    "id, uid, reservation_id, type, created_at, actor_uid, actor_username, reason, message";

// Reads every row of a statement with `read`.
template <class F>
auto Collect(Stmt& st, F read) -> Result<std::vector<decltype(read(st))>> {
  std::vector<decltype(read(st))> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(read(st));
  }
  return out;
}

}  // namespace

WriteTxn::~WriteTxn() {
  if (store_) {
    (void)store_->db_->Exec("ROLLBACK");
    store_->changed_.clear();
  }
}

Status WriteTxn::Commit() {
  LedgerStore* s = store_;
  store_ = nullptr;
  if (auto st = s->db_->Exec("COMMIT"); !st) {
    (void)s->db_->Exec("ROLLBACK");
    s->changed_.clear();
    // A commit that failed while its pages were going to disk may have
    // reached it all the same: SQLite recovers a complete WAL commit on the
    // next open. Saying "retry" alone would make a retry without an
    // operation ID book twice.
    Error e = st.error();
    if (e.kind == ErrorKind::kIo)
      e.message +=
          "; it may have been recorded all the same, so look before repeating it (a retry "
          "with the same --op-id is always safe)";
    return std::unexpected(e);
  }
  ++s->commits_;
  std::vector<std::string> changed;
  changed.swap(s->changed_);
  if (s->on_commit_) s->on_commit_(changed);  // every commit: read caches compare generations
  return Ok();
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
                      OpenDataFile(o.path, o.create, o.owner, o.busy_timeout_ms, "a GPUBK ledger", o.vfs));
  std::unique_ptr<LedgerStore> store(new LedgerStore(std::move(f.db), o.path, false));
  if (o.exclusive) BK_TRY(store->db_->Exec("PRAGMA locking_mode=EXCLUSIVE"));
  BK_TRY(UseWal(*store->db_, o.busy_timeout_ms));
  BK_TRY(store->db_->Exec("PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON"));
  BK_TRY(store->Migrate());
  return store;
}

// A statement finalised before returning: one left open would pin a read
// snapshot and make BEGIN IMMEDIATE fail at once instead of waiting.
Result<int64_t> LedgerStore::UserVersion() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("PRAGMA user_version"));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

Status LedgerStore::Migrate() {
  BK_ASSIGN_OR_RETURN(int64_t version, UserVersion());
  if (version == kSchemaVersion) return Ok();
  if (version > kSchemaVersion)
    return Fail(
        ErrorKind::kCorrupt,
        fmt::format("ledger {} has schema version {}, newer than this bk understands ({}); upgrade bk", path_,
                    version, kSchemaVersion));
  BK_TRY(db_->Exec("BEGIN IMMEDIATE"));
  // Re-check under the write lock: another process may have migrated meanwhile.
  auto again = UserVersion();
  if (again && *again == kSchemaVersion) return db_->Exec("COMMIT");
  if (!again) {
    (void)db_->Exec("ROLLBACK");
    return std::unexpected(again.error());
  }
  // Forward migrations, one step per version, all in this transaction.
  if (*again < 1) {
    if (auto s = db_->Exec(kSchemaV1); !s) {
      (void)db_->Exec("ROLLBACK");
      return s;
    }
  }
  if (*again < 2) {
    if (auto s = db_->Exec(kSchemaV2); !s) {
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
  BK_TRY(db_->Exec("BEGIN IMMEDIATE"));
  return WriteTxn(this);
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

Result<std::vector<engine::Footprint>> LedgerStore::ActiveFootprints(engine::Seconds now,
                                                                     const std::string& except_id) {
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Cached("SELECT mode, gpus, share_units, memory_mb, cpus, ram_mb, start_at, end_at, id "
                           "FROM reservations WHERE status='active' AND end_at > ?"));
  st.Bind(1, now);
  std::vector<engine::Footprint> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (!except_id.empty() && st.Text(8) == except_id) continue;
    engine::Footprint f;
    f.mode = st.Text(0) == "exclusive" ? engine::Mode::kExclusive : engine::Mode::kShared;
    f.gpus = ParseGpus(st.Text(1));
    f.share_units = static_cast<int>(st.OptInt(2).value_or(1));
    f.memory_mb = st.OptInt(3);
    f.cpus = st.Int(4);
    f.ram_mb = st.Int(5);
    f.start = st.Int(6);
    f.end = st.Int(7);
    out.push_back(std::move(f));
  }
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
  if (!q.include_cancelled) sql += " AND status != 'cancelled'";
  if (q.overlap_start) sql += " AND end_at > ?";
  if (q.overlap_end) sql += " AND start_at < ?";
  return sql;
}

int BindWhere(Stmt& st, const ReservationQuery& q) {
  int i = 1;
  if (q.uid) st.Bind(i++, int64_t{*q.uid});
  if (q.active_only) st.Bind(i++, q.now.value_or(0));
  if (q.overlap_start) st.Bind(i++, *q.overlap_start);
  if (q.overlap_end) st.Bind(i++, *q.overlap_end);
  return i;
}

}  // namespace

Result<std::vector<engine::Reservation>> LedgerStore::Reservations(const ReservationQuery& q) {
  std::string sql = fmt::format("SELECT {}{}{}", kReservationColumns, From(q), Where(q));
  sql += q.newest_first ? " ORDER BY start_at DESC, id DESC" : " ORDER BY start_at, end_at, id";
  if (q.limit) sql += " LIMIT ?";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(sql));
  int i = BindWhere(st, q);
  if (q.limit) st.Bind(i, int64_t{*q.limit});
  return Collect(st, ReadReservation);
}

Result<int64_t> LedgerStore::CountReservations(const ReservationQuery& q) {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached("SELECT count(*)" + From(q) + Where(q)));
  BindWhere(st, q);
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

Result<std::optional<engine::Reservation>> LedgerStore::Get(const std::string& id) {
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Cached(fmt::format("SELECT {} FROM reservations WHERE id = ?", kReservationColumns)));
  st.Bind(1, id);
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<engine::Reservation>();
  return std::optional(ReadReservation(st));
}

Result<std::vector<engine::Reservation>> LedgerStore::ByPrefix(const std::string& prefix,
                                                               std::optional<uint32_t> uid, int limit) {
  // Range scan on the primary key instead of LIKE, which would treat % and _ specially.
  std::string upper = prefix;
  upper.push_back('\x7f');
  std::string sql = fmt::format("SELECT {} FROM reservations WHERE id >= ? AND id < ?{} ORDER BY id LIMIT ?",
                                kReservationColumns, uid ? " AND uid = ?" : "");
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached(sql));
  st.Bind(1, prefix);
  st.Bind(2, upper);
  int i = 3;
  if (uid) st.Bind(i++, int64_t{*uid});
  st.Bind(i, int64_t{limit});
  return Collect(st, ReadReservation);
}

Status LedgerStore::Insert(const engine::Reservation& r) {
  changed_.push_back(r.id);
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Cached(fmt::format(
                   "INSERT INTO reservations({}) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   kReservationColumns)));
  BindReservation(st, r);
  return st.Run();
}

Status LedgerStore::Update(const engine::Reservation& r) {
  changed_.push_back(r.id);
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Cached("UPDATE reservations SET id=?1, uid=?2, username=?3, mode=?4, gpus=?5, "
                           "share_units=?6, memory_mb=?7, cpus=?8, ram_mb=?9, start_at=?10, end_at=?11, "
                           "status=?12, created_at=?13, updated_at=?14, op_id=?15, op_signature=?16, "
                           "edit_count=?17, cancel_at=?18, cancel_kind=?19, cancel_reason=?20, "
                           "cancel_actor_uid=?21, cancel_actor_username=?22, cancel_op_id=?23 WHERE id=?1"));
  BindReservation(st, r);
  BK_TRY(st.Run());
  if (db_->Changes() != 1) return Fail(ErrorKind::kNotFound, "reservation not found: " + r.id);
  return Ok();
}

Result<int64_t> LedgerStore::CountReservations() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Cached("SELECT count(*) FROM reservations"));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

Result<std::optional<Operation>> LedgerStore::FindOperation(uint32_t uid, const std::string& op_id) {
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Cached("SELECT uid, op_id, action, reservation_id, signature, created_at FROM operations "
                           "WHERE uid = ? AND op_id = ?"));
  st.Bind(1, int64_t{uid}).Bind(2, op_id);
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<Operation>();
  return std::optional(
      Operation{static_cast<uint32_t>(st.Int(0)), st.Text(1), st.Text(2), st.Text(3), st.Text(4), st.Int(5)});
}

Status LedgerStore::InsertOperation(const Operation& op) {
  BK_ASSIGN_OR_RETURN(
      Stmt st,
      db_->Cached("INSERT INTO operations(uid, op_id, action, reservation_id, signature, created_at) "
                  "VALUES(?,?,?,?,?,?)"));
  st.Bind(1, int64_t{op.uid}).Bind(2, op.op_id).Bind(3, op.action).Bind(4, op.reservation_id);
  st.Bind(5, op.signature).Bind(6, op.created_at);
  return st.Run();
}

Status LedgerStore::AppendEvent(const Event& e) {
  BK_ASSIGN_OR_RETURN(
      Stmt st,
      db_->Cached("INSERT INTO events(event_id, transaction_id, ts, uid, username, actor_uid, "
                  "actor_username, action, reservation_id, op_id, gpus, mode, share_units, start_at, "
                  "end_at, result, message, before, after, signature) "
                  "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  st.Bind(1, e.event_id).Bind(2, e.transaction_id).Bind(3, e.ts).Bind(4, int64_t{e.uid}).Bind(5, e.username);
  st.Bind(6, int64_t{e.actor_uid}).Bind(7, e.actor_username).Bind(8, e.action).Bind(9, e.reservation_id);
  st.Bind(10, e.op_id).Bind(11, JoinInts(e.gpus)).Bind(12, e.mode).Bind(13, e.share_units).Bind(14, e.start);
  st.Bind(15, e.end).Bind(16, e.result).Bind(17, e.message);
  if (e.before.empty())
    st.BindNull(18);
  else
    st.Bind(18, e.before);
  if (e.after.empty())
    st.BindNull(19);
  else
    st.Bind(19, e.after);
  st.Bind(20, e.signature);
  return st.Run();
}

Result<std::vector<Event>> LedgerStore::EventsForUid(uint32_t uid, int limit) {
  BK_ASSIGN_OR_RETURN(
      Stmt st,
      db_->Cached(fmt::format("SELECT * FROM (SELECT {} FROM events WHERE uid = ? ORDER BY seq DESC LIMIT ?) "
                              "ORDER BY seq",
                              kEventColumns)));
  st.Bind(1, int64_t{uid}).Bind(2, int64_t{limit});
  return Collect(st, ReadEvent);
}

Result<std::vector<Event>> LedgerStore::EventsForReservation(const std::string& id) {
  BK_ASSIGN_OR_RETURN(
      Stmt st,
      db_->Cached(fmt::format("SELECT {} FROM events WHERE reservation_id = ? ORDER BY seq", kEventColumns)));
  st.Bind(1, id);
  return Collect(st, ReadEvent);
}

Status LedgerStore::InsertNotification(const Notification& n) {
  BK_ASSIGN_OR_RETURN(Stmt st,
                      db_->Cached(fmt::format("INSERT INTO notifications({}) VALUES(?,?,?,?,?,?,?,?,?)",
                                              kNotificationColumns)));
  st.Bind(1, n.id).Bind(2, int64_t{n.uid}).Bind(3, n.reservation_id).Bind(4, n.type).Bind(5, n.created_at);
  st.Bind(6, int64_t{n.actor_uid}).Bind(7, n.actor_username).Bind(8, n.reason).Bind(9, n.message);
  return st.Run();
}

Result<std::vector<Notification>> LedgerStore::NotificationsForUid(uint32_t uid, int limit) {
  BK_ASSIGN_OR_RETURN(Stmt st,
                      db_->Cached(fmt::format(
                          "SELECT {} FROM notifications WHERE uid = ? ORDER BY created_at DESC, id LIMIT ?",
                          kNotificationColumns)));
  st.Bind(1, int64_t{uid}).Bind(2, int64_t{limit});
  return Collect(st, ReadNotification);
}

Result<std::vector<Notification>> LedgerStore::NotificationsForReservation(const std::string& id) {
  BK_ASSIGN_OR_RETURN(
      Stmt st,
      db_->Cached(fmt::format("SELECT {} FROM notifications WHERE reservation_id = ? ORDER BY created_at, id",
                              kNotificationColumns)));
  st.Bind(1, id);
  return Collect(st, ReadNotification);
}

Status LedgerStore::InsertJob(const JobRecord& job) {
  BK_ASSIGN_OR_RETURN(
      Stmt st,
      db_->Cached(fmt::format(
          "INSERT INTO jobs({}) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", kJobColumns)));
  BindJob(st, job);
  return st.Run();
}

Status LedgerStore::UpdateJob(const JobRecord& job) {
  BK_ASSIGN_OR_RETURN(
      Stmt st,
      db_->Cached("UPDATE jobs SET reservation_id=?1, uid=?2, spec_id=?3, digest=?4, summary=?5, "
                  "status=?6, submitted_at=?7, updated_at=?8, claimed_at=?9, started_at=?10, "
                  "finished_at=?11, waiting_since=?12, cancel_requested_at=?13, recovered_at=?14, "
                  "exit_code=?15, runner_pid=?16, runner_host=?17, worker_id=?18, claim_token=?19, "
                  "message=?20, launch_guard_state=?21, launch_guard_key=?22, recovery_state=?23, "
                  "recovery_worker_id=?24, log_warning=?25, log_rotated=?26 WHERE reservation_id=?1"));
  BindJob(st, job);
  BK_TRY(st.Run());
  if (db_->Changes() != 1) return Fail(ErrorKind::kNotFound, "job not found: " + job.reservation_id);
  return Ok();
}

Result<std::optional<JobRecord>> LedgerStore::GetJob(const std::string& reservation_id) {
  BK_ASSIGN_OR_RETURN(Stmt st,
                      db_->Cached(fmt::format("SELECT {} FROM jobs WHERE reservation_id = ?", kJobColumns)));
  st.Bind(1, reservation_id);
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<JobRecord>();
  return std::optional(ReadJob(st));
}

Result<std::vector<JobRecord>> LedgerStore::JobsForUid(uint32_t uid, bool open_only) {
  std::string cols;
  for (const auto& c : Split(kJobColumns, ',')) cols += (cols.empty() ? "j." : ", j.") + std::string(Trim(c));
  BK_ASSIGN_OR_RETURN(
      Stmt st,
      db_->Cached(fmt::format(
          "SELECT {} FROM jobs j JOIN reservations r ON r.id = j.reservation_id "
          "WHERE j.uid = ?{} ORDER BY r.start_at, r.id",
          cols, open_only ? " AND j.status IN ('pending', 'claimed', 'running', 'uncertain')" : "")));
  st.Bind(1, int64_t{uid});
  return Collect(st, ReadJob);
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
    BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(fmt::format("SELECT {} FROM reservations WHERE {} ORDER BY id",
                                                          kReservationColumns, cond)));
    BK_ASSIGN_OR_RETURN(removed, Collect(st, ReadReservation));
  }
  // Jobs reference their reservation, so they go first.
  BK_TRY(db_->Exec(
      fmt::format("DELETE FROM jobs WHERE reservation_id IN (SELECT id FROM reservations WHERE {})", cond)));
  BK_TRY(db_->Exec("DELETE FROM reservations WHERE " + cond));
  BK_ASSIGN_OR_RETURN(Stmt st,
                      db_->Cached("INSERT OR REPLACE INTO meta(key, value) VALUES('last_prune', ?)"));
  st.Bind(1, std::to_string(now));
  BK_TRY(st.Run());
  for (const auto& r : removed) changed_.push_back(r.id);
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
