#include "store/usage_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "store/data_file.h"
#include "sys/fs.h"

namespace bk::store {
namespace {

constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE devices(
  ts_ms INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  state TEXT NOT NULL,
  source TEXT NOT NULL,
  utilization_percent INTEGER,
  memory_used_mb INTEGER,
  memory_total_mb INTEGER,
  process_count INTEGER NOT NULL,
  PRIMARY KEY (ts_ms, gpu)
) STRICT, WITHOUT ROWID;
CREATE TABLE rollups(
  resolution INTEGER NOT NULL,
  window_start INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  status TEXT NOT NULL,
  username TEXT NOT NULL,
  samples INTEGER NOT NULL,
  active_samples INTEGER NOT NULL,
  observed_ms INTEGER NOT NULL,
  active_ms INTEGER NOT NULL,
  inferred_ms INTEGER NOT NULL,
  process_sum INTEGER NOT NULL,
  process_max INTEGER NOT NULL,
  sm_sum INTEGER NOT NULL,
  sm_count INTEGER NOT NULL,
  sm_max INTEGER NOT NULL,
  memory_sum_mb INTEGER NOT NULL,
  memory_max_mb INTEGER NOT NULL,
  util_sum INTEGER NOT NULL,
  util_count INTEGER NOT NULL,
  util_max INTEGER NOT NULL,
  PRIMARY KEY (resolution, window_start, gpu, uid, status)
) STRICT, WITHOUT ROWID;
CREATE TABLE events(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  ts_ms INTEGER NOT NULL,
  kind TEXT NOT NULL,
  gpu INTEGER,
  pid INTEGER,
  uid INTEGER,
  username TEXT NOT NULL,
  identity_source TEXT NOT NULL,
  status TEXT NOT NULL,
  reservation_id TEXT NOT NULL,
  message TEXT NOT NULL
) STRICT;
CREATE INDEX events_by_time ON events(ts_ms);
CREATE TABLE processes(
  gpu INTEGER NOT NULL,
  pid INTEGER NOT NULL,
  token TEXT NOT NULL,
  uid INTEGER,
  username TEXT NOT NULL,
  identity_source TEXT NOT NULL,
  status TEXT NOT NULL,
  reservation_id TEXT NOT NULL,
  first_seen_ms INTEGER NOT NULL,
  PRIMARY KEY (gpu, pid, token)
) STRICT;
CREATE TABLE evidence(
  reservation_id TEXT PRIMARY KEY,
  since_ms INTEGER,
  last_ms INTEGER,
  used_ms INTEGER
) STRICT;
CREATE TABLE gpus(
  gpu INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL,
  name TEXT NOT NULL,
  memory_total_mb INTEGER,
  seen_ms INTEGER NOT NULL
) STRICT;
CREATE TABLE heartbeat(
  id INTEGER PRIMARY KEY CHECK (id = 1),
  monitor_id TEXT NOT NULL,
  pid INTEGER NOT NULL,
  uid INTEGER NOT NULL,
  status TEXT NOT NULL,
  interval_ms INTEGER NOT NULL,
  started_ms INTEGER NOT NULL,
  sampled_ms INTEGER NOT NULL,
  written_ms INTEGER NOT NULL,
  stopped_ms INTEGER,
  samples INTEGER NOT NULL,
  detail TEXT NOT NULL,
  sample_state TEXT NOT NULL
) STRICT;
INSERT INTO meta(key, value) VALUES('format', 'gpubk.usage.sqlite');
)sql";

// Slots of the prepared-statement cache.
enum Slot {
  kInsertDevice,
  kUpsertRollup,
  kInsertEvent,
  kPutHeartbeat,
  kPutProcess,
  kDeleteProcess,
  kPutEvidence,
  kDeleteEvidence,
  kSumRange,
  kPutGpu,
  kSlotCount
};

constexpr const char* kRollupColumns =
    "resolution, window_start, gpu, uid, status, username, samples, active_samples, observed_ms, active_ms, "
    "inferred_ms, process_sum, process_max, sm_sum, sm_count, sm_max, memory_sum_mb, memory_max_mb, "
    "util_sum, "
    "util_count, util_max";

RollupRow ReadRollup(const Stmt& s) {
  RollupRow r;
  r.resolution = s.Int(0);
  r.window_start = s.Int(1);
  r.gpu = static_cast<int>(s.Int(2));
  r.uid = static_cast<uint32_t>(s.Int(3));
  r.status = s.Text(4);
  r.username = s.Text(5);
  r.samples = s.Int(6);
  r.active_samples = s.Int(7);
  r.observed_ms = s.Int(8);
  r.active_ms = s.Int(9);
  r.inferred_ms = s.Int(10);
  r.process_sum = s.Int(11);
  r.process_max = s.Int(12);
  r.sm_sum = s.Int(13);
  r.sm_count = s.Int(14);
  r.sm_max = s.Int(15);
  r.memory_sum_mb = s.Int(16);
  r.memory_max_mb = s.Int(17);
  r.util_sum = s.Int(18);
  r.util_count = s.Int(19);
  r.util_max = s.Int(20);
  return r;
}

constexpr const char* kEventColumns =
    "seq, ts_ms, kind, gpu, pid, uid, username, identity_source, status, reservation_id, message";

UsageEvent ReadEvent(const Stmt& s) {
  UsageEvent e;
  e.seq = s.Int(0);
  e.ts_ms = s.Int(1);
  e.kind = s.Text(2);
  if (!s.IsNull(3)) e.gpu = static_cast<int>(s.Int(3));
  e.pid = s.OptInt(4);
  if (!s.IsNull(5)) e.uid = static_cast<uint32_t>(s.Int(5));
  e.username = s.Text(6);
  e.identity_source = s.Text(7);
  e.status = s.Text(8);
  e.reservation_id = s.Text(9);
  e.message = s.Text(10);
  return e;
}

std::optional<int64_t> OptUid(const std::optional<uint32_t>& u) {
  return u ? std::optional<int64_t>(*u) : std::nullopt;
}

int64_t FloorTo(int64_t t, int64_t step) {
  int64_t q = t / step;
  if (t % step != 0 && t < 0) --q;
  return q * step;
}

// Runs a statement to completion and resets it, so a cached statement never
// keeps a read snapshot open between samples.
Status RunReset(Stmt& st) {
  auto r = st.Run();
  st.Reset();
  return r;
}

}  // namespace

UsageStore::UsageStore(std::unique_ptr<Db> db, std::string path)
    : db_(std::move(db)), path_(std::move(path)) {
  cache_.resize(kSlotCount);
}

UsageStore::~UsageStore() {
  if (in_txn_) (void)db_->Exec("ROLLBACK");
  cache_.clear();  // finalise statements before the connection closes
}

Result<std::unique_ptr<UsageStore>> UsageStore::Open(const UsageOpenOptions& o) {
  if (!sys::Exists(o.path) && !o.create)
    return Fail(ErrorKind::kNotFound,
                fmt::format("no usage history yet ({} does not exist); the monitor writes it "
                            "(`bk m`, or `bk server serve` on a shared server)",
                            o.path));
  // Readers open read-write too: a WAL reader may need to create the -shm
  // file; it never writes a row (every write path is the monitor's).
  BK_ASSIGN_OR_RETURN(
      DataFile f, OpenDataFile(o.path, o.create, o.owner, o.busy_timeout_ms, "GPUBK usage history", o.vfs));
  if (f.version == 0 && !o.create)
    return Fail(ErrorKind::kNotFound, fmt::format("no usage history yet in {}", o.path));
  if (f.version > kSchemaVersion)
    return Fail(ErrorKind::kCorrupt, fmt::format("usage history {} has schema version {}, newer than this bk "
                                                 "understands ({}); upgrade bk",
                                                 o.path, f.version, kSchemaVersion));
  std::unique_ptr<UsageStore> store(new UsageStore(std::move(f.db), o.path));
  if (!o.create) return store;
  BK_TRY(UseWal(*store->db_, o.busy_timeout_ms));
  // NORMAL, not the ledger's FULL: in WAL mode a power cut can lose the last
  // few samples but never corrupts the file, and a sample every 2 s must not
  // cost an fsync each.
  BK_TRY(store->db_->Exec("PRAGMA synchronous=NORMAL"));
  BK_TRY(store->Migrate());
  return store;
}

Status UsageStore::Migrate() {
  BK_TRY(db_->Exec("BEGIN IMMEDIATE"));
  auto fail = [&](Status s) {
    (void)db_->Exec("ROLLBACK");
    return s;
  };
  auto version = [&]() -> Result<int64_t> {
    BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("PRAGMA user_version"));
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    return row ? st.Int(0) : 0;
  }();
  if (!version) return fail(std::unexpected(version.error()));
  if (*version == kSchemaVersion) return db_->Exec("COMMIT");
  if (auto s = db_->Exec(kSchemaV1); !s) return fail(s);
  if (auto s = db_->Exec(fmt::format("PRAGMA user_version={}", kSchemaVersion)); !s) return fail(s);
  return db_->Exec("COMMIT");
}

Result<Stmt*> UsageStore::Cached(int slot, const char* sql) {
  if (!cache_[slot]) {
    BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(sql));
    cache_[slot] = std::make_unique<Stmt>(std::move(st));
  }
  cache_[slot]->Reset();
  return cache_[slot].get();
}

Status UsageStore::Begin() {
  BK_TRY(db_->Exec("BEGIN IMMEDIATE"));
  in_txn_ = true;
  return Ok();
}

Status UsageStore::Commit() {
  in_txn_ = false;
  if (auto s = db_->Exec("COMMIT"); !s) {
    (void)db_->Exec("ROLLBACK");
    return s;
  }
  return Ok();
}

void UsageStore::Rollback() {
  if (in_txn_) (void)db_->Exec("ROLLBACK");
  in_txn_ = false;
}

Status UsageStore::AddDevices(std::span<const DeviceRow> rows) {
  for (const DeviceRow& d : rows) {
    BK_ASSIGN_OR_RETURN(Stmt * st,
                        Cached(kInsertDevice,
                               "INSERT OR REPLACE INTO devices(ts_ms, gpu, state, source, "
                               "utilization_percent, memory_used_mb, memory_total_mb, process_count) "
                               "VALUES(?,?,?,?,?,?,?,?)"));
    st->Bind(1, d.ts_ms).Bind(2, int64_t{d.gpu}).Bind(3, d.state).Bind(4, d.source);
    st->Bind(5, d.utilization_percent).Bind(6, d.memory_used_mb).Bind(7, d.memory_total_mb);
    st->Bind(8, d.process_count);
    BK_TRY(RunReset(*st));
  }
  return Ok();
}

Status UsageStore::UpsertRollup(const RollupRow& r, int64_t resolution, int64_t window_start) {
  BK_ASSIGN_OR_RETURN(
      Stmt * st,
      Cached(
          kUpsertRollup,
          "INSERT INTO rollups(resolution, window_start, gpu, uid, status, username, samples, "
          "active_samples, "
          "observed_ms, active_ms, inferred_ms, process_sum, process_max, sm_sum, sm_count, sm_max, "
          "memory_sum_mb, memory_max_mb, util_sum, util_count, util_max) "
          "VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21) "
          "ON CONFLICT(resolution, window_start, gpu, uid, status) DO UPDATE SET "
          "username=excluded.username, samples=samples+excluded.samples, "
          "active_samples=active_samples+excluded.active_samples, "
          "observed_ms=observed_ms+excluded.observed_ms, "
          "active_ms=active_ms+excluded.active_ms, inferred_ms=inferred_ms+excluded.inferred_ms, "
          "process_sum=process_sum+excluded.process_sum, process_max=max(process_max, excluded.process_max), "
          "sm_sum=sm_sum+excluded.sm_sum, sm_count=sm_count+excluded.sm_count, "
          "sm_max=max(sm_max, excluded.sm_max), memory_sum_mb=memory_sum_mb+excluded.memory_sum_mb, "
          "memory_max_mb=max(memory_max_mb, excluded.memory_max_mb), util_sum=util_sum+excluded.util_sum, "
          "util_count=util_count+excluded.util_count, util_max=max(util_max, excluded.util_max)"));
  st->Bind(1, resolution).Bind(2, window_start).Bind(3, int64_t{r.gpu}).Bind(4, int64_t{r.uid});
  st->Bind(5, r.status).Bind(6, r.username).Bind(7, r.samples).Bind(8, r.active_samples);
  st->Bind(9, r.observed_ms).Bind(10, r.active_ms).Bind(11, r.inferred_ms).Bind(12, r.process_sum);
  st->Bind(13, r.process_max).Bind(14, r.sm_sum).Bind(15, r.sm_count).Bind(16, r.sm_max);
  st->Bind(17, r.memory_sum_mb).Bind(18, r.memory_max_mb).Bind(19, r.util_sum).Bind(20, r.util_count);
  st->Bind(21, r.util_max);
  return RunReset(*st);
}

Status UsageStore::AddRollups(std::span<const RollupRow> rows) {
  for (const RollupRow& r : rows) {
    BK_TRY(UpsertRollup(r, r.resolution, r.window_start));
    if (r.resolution < 3600) BK_TRY(UpsertRollup(r, 3600, FloorTo(r.window_start, 3600)));
  }
  return Ok();
}

Status UsageStore::AddEvents(std::span<const UsageEvent> events) {
  for (const UsageEvent& e : events) {
    BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kInsertEvent,
                                          "INSERT INTO events(ts_ms, kind, gpu, pid, uid, username, "
                                          "identity_source, status, reservation_id, message) "
                                          "VALUES(?,?,?,?,?,?,?,?,?,?)"));
    st->Bind(1, e.ts_ms).Bind(2, e.kind);
    st->Bind(3, e.gpu ? std::optional<int64_t>(*e.gpu) : std::nullopt).Bind(4, e.pid).Bind(5, OptUid(e.uid));
    st->Bind(6, e.username).Bind(7, e.identity_source).Bind(8, e.status).Bind(9, e.reservation_id);
    st->Bind(10, e.message);
    BK_TRY(RunReset(*st));
  }
  return Ok();
}

Status UsageStore::PutHeartbeat(const HeartbeatRow& h) {
  BK_ASSIGN_OR_RETURN(Stmt * st,
                      Cached(kPutHeartbeat,
                             "INSERT OR REPLACE INTO heartbeat(id, monitor_id, pid, uid, status, "
                             "interval_ms, started_ms, sampled_ms, written_ms, stopped_ms, samples, "
                             "detail, sample_state) VALUES(1,?,?,?,?,?,?,?,?,?,?,?,?)"));
  st->Bind(1, h.monitor_id).Bind(2, h.pid).Bind(3, int64_t{h.uid}).Bind(4, h.status).Bind(5, h.interval_ms);
  st->Bind(6, h.started_ms).Bind(7, h.sampled_ms).Bind(8, h.written_ms).Bind(9, h.stopped_ms);
  st->Bind(10, h.samples).Bind(11, h.detail).Bind(12, h.sample_state);
  return RunReset(*st);
}

Status UsageStore::PutProcess(const TrackedProcess& p) {
  BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kPutProcess,
                                        "INSERT OR REPLACE INTO processes(gpu, pid, token, uid, username, "
                                        "identity_source, status, reservation_id, first_seen_ms) "
                                        "VALUES(?,?,?,?,?,?,?,?,?)"));
  st->Bind(1, int64_t{p.gpu}).Bind(2, p.pid).Bind(3, p.token).Bind(4, OptUid(p.uid)).Bind(5, p.username);
  st->Bind(6, p.identity_source).Bind(7, p.status).Bind(8, p.reservation_id).Bind(9, p.first_seen_ms);
  return RunReset(*st);
}

Status UsageStore::DeleteProcess(int gpu, int64_t pid, const std::string& token) {
  BK_ASSIGN_OR_RETURN(Stmt * st,
                      Cached(kDeleteProcess, "DELETE FROM processes WHERE gpu=? AND pid=? AND token=?"));
  st->Bind(1, int64_t{gpu}).Bind(2, pid).Bind(3, token);
  return RunReset(*st);
}

Status UsageStore::PutEvidence(const EvidenceRow& e) {
  BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kPutEvidence,
                                        "INSERT OR REPLACE INTO evidence(reservation_id, since_ms, last_ms, "
                                        "used_ms) VALUES(?,?,?,?)"));
  st->Bind(1, e.reservation_id).Bind(2, e.since_ms).Bind(3, e.last_ms).Bind(4, e.used_ms);
  return RunReset(*st);
}

Status UsageStore::DeleteEvidence(const std::string& reservation_id) {
  BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kDeleteEvidence, "DELETE FROM evidence WHERE reservation_id=?"));
  st->Bind(1, reservation_id);
  return RunReset(*st);
}

Status UsageStore::PutGpu(const GpuIdentity& g) {
  BK_ASSIGN_OR_RETURN(Stmt * st,
                      Cached(kPutGpu,
                             "INSERT OR REPLACE INTO gpus(gpu, uuid, name, memory_total_mb, seen_ms) "
                             "VALUES(?,?,?,?,?)"));
  st->Bind(1, int64_t{g.gpu}).Bind(2, g.uuid).Bind(3, g.name).Bind(4, g.memory_total_mb).Bind(5, g.seen_ms);
  return RunReset(*st);
}

Result<std::vector<GpuIdentity>> UsageStore::Gpus() {
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("SELECT gpu, uuid, name, memory_total_mb, seen_ms FROM gpus ORDER BY gpu"));
  std::vector<GpuIdentity> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back({static_cast<int>(st.Int(0)), st.Text(1), st.Text(2), st.OptInt(3), st.Int(4)});
  }
  return out;
}

Status UsageStore::Prune(int64_t now_ms, const UsageRetention& r) {
  constexpr int64_t kDayMs = 86400LL * 1000;
  auto run = [&](const char* sql, int64_t bound) -> Status {
    BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(sql));
    st.Bind(1, bound);
    return st.Run();
  };
  if (r.device_days > 0) BK_TRY(run("DELETE FROM devices WHERE ts_ms < ?", now_ms - r.device_days * kDayMs));
  if (r.event_days > 0) BK_TRY(run("DELETE FROM events WHERE ts_ms < ?", now_ms - r.event_days * kDayMs));
  const int64_t now_s = now_ms / 1000;
  if (r.minute_days > 0)
    BK_TRY(
        run("DELETE FROM rollups WHERE resolution = 60 AND window_start < ?", now_s - r.minute_days * 86400));
  if (r.hour_days > 0)
    BK_TRY(
        run("DELETE FROM rollups WHERE resolution = 3600 AND window_start < ?", now_s - r.hour_days * 86400));
  return Ok();
}

Result<std::optional<HeartbeatRow>> UsageStore::Heartbeat() {
  BK_ASSIGN_OR_RETURN(
      Stmt st, db_->Prepare("SELECT monitor_id, pid, uid, status, interval_ms, started_ms, sampled_ms, "
                            "written_ms, stopped_ms, samples, detail, sample_state FROM heartbeat "
                            "WHERE id = 1"));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<HeartbeatRow>();
  HeartbeatRow h;
  h.monitor_id = st.Text(0);
  h.pid = st.Int(1);
  h.uid = static_cast<uint32_t>(st.Int(2));
  h.status = st.Text(3);
  h.interval_ms = st.Int(4);
  h.started_ms = st.Int(5);
  h.sampled_ms = st.Int(6);
  h.written_ms = st.Int(7);
  h.stopped_ms = st.OptInt(8);
  h.samples = st.Int(9);
  h.detail = st.Text(10);
  h.sample_state = st.Text(11);
  return std::optional(h);
}

Result<std::vector<TrackedProcess>> UsageStore::Processes() {
  BK_ASSIGN_OR_RETURN(Stmt st,
                      db_->Prepare("SELECT gpu, pid, token, uid, username, identity_source, status, "
                                   "reservation_id, first_seen_ms FROM processes ORDER BY gpu, pid, token"));
  std::vector<TrackedProcess> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    TrackedProcess p;
    p.gpu = static_cast<int>(st.Int(0));
    p.pid = st.Int(1);
    p.token = st.Text(2);
    if (!st.IsNull(3)) p.uid = static_cast<uint32_t>(st.Int(3));
    p.username = st.Text(4);
    p.identity_source = st.Text(5);
    p.status = st.Text(6);
    p.reservation_id = st.Text(7);
    p.first_seen_ms = st.Int(8);
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<EvidenceRow>> UsageStore::Evidence() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT reservation_id, since_ms, last_ms, used_ms FROM evidence "
                                            "ORDER BY reservation_id"));
  std::vector<EvidenceRow> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(EvidenceRow{st.Text(0), st.OptInt(1), st.OptInt(2), st.OptInt(3)});
  }
  return out;
}

Result<std::vector<RollupRow>> UsageStore::Rollups(const RollupQuery& q) {
  std::string sql =
      fmt::format("SELECT {} FROM rollups WHERE resolution = ? AND window_start >= ? AND window_start < ?",
                  kRollupColumns);
  if (q.uid) sql += " AND uid = ?";
  if (q.gpu) sql += " AND gpu = ?";
  sql += " ORDER BY window_start, gpu, uid, status LIMIT ?";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(sql));
  st.Bind(1, q.resolution).Bind(2, q.from).Bind(3, q.to);
  int i = 4;
  if (q.uid) st.Bind(i++, int64_t{*q.uid});
  if (q.gpu) st.Bind(i++, int64_t{*q.gpu});
  st.Bind(i, int64_t{q.limit});
  std::vector<RollupRow> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(ReadRollup(st));
  }
  return out;
}

// Sums one tier over [from, to) per (uid, status, gpu): few rows however long
// the range, so the per-user summary is computed by SQLite's aggregate loop.
Status UsageStore::SumRange(int64_t resolution, int64_t from, int64_t to, std::optional<uint32_t> uid,
                            std::vector<RollupRow>& out) {
  if (from >= to) return Ok();
  BK_ASSIGN_OR_RETURN(
      Stmt * st,
      Cached(kSumRange,
             "SELECT uid, status, gpu, max(username), sum(samples), sum(active_samples), sum(observed_ms), "
             "sum(active_ms), sum(inferred_ms), sum(sm_sum), sum(sm_count), max(sm_max), max(memory_max_mb) "
             "FROM rollups WHERE resolution = ?1 AND window_start >= ?2 AND window_start < ?3 "
             "AND (?4 IS NULL OR uid = ?4) GROUP BY uid, status, gpu"));
  st->Bind(1, resolution).Bind(2, from).Bind(3, to).Bind(4, OptUid(uid));
  while (true) {
    auto row = st->Step();
    if (!row) {
      st->Reset();
      return std::unexpected(row.error());
    }
    if (!*row) break;
    RollupRow r;
    r.uid = static_cast<uint32_t>(st->Int(0));
    r.status = st->Text(1);
    r.gpu = static_cast<int>(st->Int(2));
    r.username = st->Text(3);
    r.samples = st->Int(4);
    r.active_samples = st->Int(5);
    r.observed_ms = st->Int(6);
    r.active_ms = st->Int(7);
    r.inferred_ms = st->Int(8);
    r.sm_sum = st->Int(9);
    r.sm_count = st->Int(10);
    r.sm_max = st->Int(11);
    r.memory_max_mb = st->Int(12);
    out.push_back(std::move(r));
  }
  st->Reset();
  return Ok();
}

Result<std::vector<UserUsage>> UsageStore::Users(int64_t from, int64_t to, std::optional<uint32_t> uid) {
  std::vector<RollupRow> parts;
  const int64_t h0 = FloorTo(from + 3599, 3600);  // first whole hour
  const int64_t h1 = FloorTo(to, 3600);           // end of the last whole hour
  if (h0 < h1) {
    BK_TRY(SumRange(60, from, h0, uid, parts));
    BK_TRY(SumRange(3600, h0, h1, uid, parts));
    BK_TRY(SumRange(60, h1, to, uid, parts));
  } else {
    BK_TRY(SumRange(60, from, to, uid, parts));
  }
  std::map<uint32_t, UserUsage> users;
  std::map<uint32_t, std::set<int>> gpus;
  std::map<uint32_t, std::pair<int64_t, int64_t>> sm;  // sum, count
  for (const RollupRow& r : parts) {
    UserUsage& u = users[r.uid];
    u.uid = r.uid;
    if (!r.username.empty()) u.username = r.username;
    u.sampled_ms += r.observed_ms;
    u.active_ms += r.active_ms;
    u.inferred_ms += r.inferred_ms;
    if (r.status == "ok") {
      u.reserved_ms += r.observed_ms;
      u.idle_reserved_ms += r.observed_ms - r.active_ms;
    } else {
      u.unbooked_ms += r.active_ms;
    }
    u.max_sm_percent = std::max(u.max_sm_percent, r.sm_max);
    u.max_memory_mb = std::max(u.max_memory_mb, r.memory_max_mb);
    sm[r.uid].first += r.sm_sum;
    sm[r.uid].second += r.sm_count;
    gpus[r.uid].insert(r.gpu);
  }
  std::vector<UserUsage> out;
  for (auto& [id, u] : users) {
    auto [sum, count] = sm[id];
    if (count > 0) u.avg_sm_percent = static_cast<double>(sum) / static_cast<double>(count);
    u.gpus.assign(gpus[id].begin(), gpus[id].end());
    out.push_back(std::move(u));
  }
  return out;
}

Result<std::vector<UsageEvent>> UsageStore::Events(const EventQuery& q) {
  std::string sql =
      fmt::format("SELECT * FROM (SELECT {} FROM events WHERE ts_ms >= ? AND ts_ms < ?", kEventColumns);
  if (q.uid) sql += " AND uid = ?";
  if (q.gpu) sql += " AND gpu = ?";
  sql += " ORDER BY seq DESC LIMIT ?) ORDER BY seq";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(sql));
  st.Bind(1, q.from_ms).Bind(2, q.to_ms);
  int i = 3;
  if (q.uid) st.Bind(i++, int64_t{*q.uid});
  if (q.gpu) st.Bind(i++, int64_t{*q.gpu});
  st.Bind(i, int64_t{q.limit});
  std::vector<UsageEvent> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(ReadEvent(st));
  }
  return out;
}

Result<std::vector<DeviceRow>> UsageStore::Devices(int64_t from_ms, int64_t to_ms, int limit) {
  BK_ASSIGN_OR_RETURN(Stmt st,
                      db_->Prepare("SELECT * FROM (SELECT ts_ms, gpu, state, source, utilization_percent, "
                                   "memory_used_mb, memory_total_mb, process_count FROM devices "
                                   "WHERE ts_ms >= ? AND ts_ms < ? ORDER BY ts_ms DESC, gpu DESC LIMIT ?) "
                                   "ORDER BY ts_ms, gpu"));
  st.Bind(1, from_ms).Bind(2, to_ms).Bind(3, int64_t{limit});
  std::vector<DeviceRow> out;
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    DeviceRow d;
    d.ts_ms = st.Int(0);
    d.gpu = static_cast<int>(st.Int(1));
    d.state = st.Text(2);
    d.source = st.Text(3);
    d.utilization_percent = st.OptInt(4);
    d.memory_used_mb = st.OptInt(5);
    d.memory_total_mb = st.OptInt(6);
    d.process_count = st.Int(7);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace bk::store
