#include "store/usage_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "store/data_file.h"
#include "store/table.h"
#include "sys/fs.h"

namespace bk::store {
namespace {

// The tables of usage.db, one line per field in column order (table.h).

// The heartbeat table's key: it holds one row, what the monitor last did.
struct OnlyRow {
  static void Bind(Stmt& st, int i, const HeartbeatRow&) { st.Bind(i, int64_t{1}); }
  static void Read(const Stmt&, int, HeartbeatRow&) {}
};

// clang-format off
constexpr auto kDeviceTable = [] {
  using D = DeviceRow;
  return MakeTable(TableInfo{"devices", "ts_ms, gpu", "STRICT, WITHOUT ROWID"},
                   Field<&D::ts_ms>{"ts_ms", "INTEGER NOT NULL"},
                   Field<&D::gpu>{"gpu", "INTEGER NOT NULL"},
                   Field<&D::state>{"state", "TEXT NOT NULL"},
                   Field<&D::source>{"source", "TEXT NOT NULL"},
                   Field<&D::utilization_percent>{"utilization_percent", "INTEGER"},
                   Field<&D::memory_used_mb>{"memory_used_mb", "INTEGER"},
                   Field<&D::memory_total_mb>{"memory_total_mb", "INTEGER"},
                   Field<&D::process_count>{"process_count", "INTEGER NOT NULL"});
}();
// clang-format on

// A flush adds into the row of its window (Merge), so partial windows merge.
// clang-format off
constexpr auto kRollupTable = [] {
  using R = RollupRow;
  constexpr auto kSum = Merge::kSum, kMax = Merge::kMax;
  constexpr std::string_view kInt = "INTEGER NOT NULL";
  return MakeTable(
      TableInfo{"rollups", "resolution, window_start, gpu, uid, status", "STRICT, WITHOUT ROWID"},
      Field<&R::resolution>{"resolution", kInt},
      Field<&R::window_start>{"window_start", kInt},
      Field<&R::gpu>{"gpu", kInt},
      Field<&R::uid>{"uid", kInt},
      Field<&R::status>{"status", "TEXT NOT NULL"},
      Field<&R::username>{"username", "TEXT NOT NULL"},
      Field<&R::samples>{"samples", kInt, {}, kSum},
      Field<&R::active_samples>{"active_samples", kInt, {}, kSum},
      Field<&R::observed_ms>{"observed_ms", kInt, {}, kSum},
      Field<&R::active_ms>{"active_ms", kInt, {}, kSum},
      Field<&R::inferred_ms>{"inferred_ms", kInt, {}, kSum},
      Field<&R::process_sum>{"process_sum", kInt, {}, kSum},
      Field<&R::process_max>{"process_max", kInt, {}, kMax},
      Field<&R::sm_sum>{"sm_sum", kInt, {}, kSum},
      Field<&R::sm_count>{"sm_count", kInt, {}, kSum},
      Field<&R::sm_max>{"sm_max", kInt, {}, kMax},
      Field<&R::memory_sum_mb>{"memory_sum_mb", kInt, {}, kSum},
      Field<&R::memory_max_mb>{"memory_max_mb", kInt, {}, kMax},
      Field<&R::util_sum>{"util_sum", kInt, {}, kSum},
      Field<&R::util_count>{"util_count", kInt, {}, kSum},
      Field<&R::util_max>{"util_max", kInt, {}, kMax});
}();
// clang-format on

// clang-format off
constexpr auto kUsageEventTable = [] {
  using E = UsageEvent;
  return MakeTable(TableInfo{"events"},
                   Field<&E::seq>{"seq", "INTEGER PRIMARY KEY AUTOINCREMENT"},
                   Field<&E::ts_ms>{"ts_ms", "INTEGER NOT NULL"},
                   Field<&E::kind>{"kind", "TEXT NOT NULL"},
                   Field<&E::gpu>{"gpu", "INTEGER"},
                   Field<&E::pid>{"pid", "INTEGER"},
                   Field<&E::uid>{"uid", "INTEGER"},
                   Field<&E::username>{"username", "TEXT NOT NULL"},
                   Field<&E::identity_source>{"identity_source", "TEXT NOT NULL"},
                   Field<&E::status>{"status", "TEXT NOT NULL"},
                   Field<&E::reservation_id>{"reservation_id", "TEXT NOT NULL"},
                   Field<&E::message>{"message", "TEXT NOT NULL"});
}();
// clang-format on

// clang-format off
constexpr auto kProcessTable = [] {
  using P = TrackedProcess;
  return MakeTable(TableInfo{"processes", "gpu, pid, token"},
                   Field<&P::gpu>{"gpu", "INTEGER NOT NULL"},
                   Field<&P::pid>{"pid", "INTEGER NOT NULL"},
                   Field<&P::token>{"token", "TEXT NOT NULL"},
                   Field<&P::uid>{"uid", "INTEGER"},
                   Field<&P::username>{"username", "TEXT NOT NULL"},
                   Field<&P::identity_source>{"identity_source", "TEXT NOT NULL"},
                   Field<&P::status>{"status", "TEXT NOT NULL"},
                   Field<&P::reservation_id>{"reservation_id", "TEXT NOT NULL"},
                   Field<&P::first_seen_ms>{"first_seen_ms", "INTEGER NOT NULL"});
}();
// clang-format on

// clang-format off
constexpr auto kEvidenceTable = [] {
  using E = EvidenceRow;
  return MakeTable(TableInfo{"evidence"},
                   Field<&E::reservation_id>{"reservation_id", "TEXT PRIMARY KEY"},
                   Field<&E::since_ms>{"since_ms", "INTEGER"},
                   Field<&E::last_ms>{"last_ms", "INTEGER"},
                   Field<&E::used_ms>{"used_ms", "INTEGER"});
}();
// clang-format on

// clang-format off
constexpr auto kGpuTable = [] {
  using G = GpuIdentity;
  return MakeTable(TableInfo{"gpus"},
                   Field<&G::gpu>{"gpu", "INTEGER PRIMARY KEY"},
                   Field<&G::uuid>{"uuid", "TEXT NOT NULL"},
                   Field<&G::name>{"name", "TEXT NOT NULL"},
                   Field<&G::memory_total_mb>{"memory_total_mb", "INTEGER"},
                   Field<&G::seen_ms>{"seen_ms", "INTEGER NOT NULL"});
}();
// clang-format on

// clang-format off
constexpr auto kHeartbeatTable = [] {
  using H = HeartbeatRow;
  return MakeTable(TableInfo{"heartbeat"},
                   Column<H, OnlyRow>{"id", "INTEGER PRIMARY KEY CHECK (id = 1)"},
                   Field<&H::monitor_id>{"monitor_id", "TEXT NOT NULL"},
                   Field<&H::pid>{"pid", "INTEGER NOT NULL"},
                   Field<&H::uid>{"uid", "INTEGER NOT NULL"},
                   Field<&H::status>{"status", "TEXT NOT NULL"},
                   Field<&H::interval_ms>{"interval_ms", "INTEGER NOT NULL"},
                   Field<&H::started_ms>{"started_ms", "INTEGER NOT NULL"},
                   Field<&H::sampled_ms>{"sampled_ms", "INTEGER NOT NULL"},
                   Field<&H::written_ms>{"written_ms", "INTEGER NOT NULL"},
                   Field<&H::stopped_ms>{"stopped_ms", "INTEGER"},
                   Field<&H::samples>{"samples", "INTEGER NOT NULL"},
                   Field<&H::detail>{"detail", "TEXT NOT NULL"},
                   Field<&H::sample_state>{"sample_state", "TEXT NOT NULL"});
}();
// clang-format on

std::string SchemaV1() {
  return std::string(kMetaTableSql) + CreateTableSql(kDeviceTable) + CreateTableSql(kRollupTable) +
         CreateTableSql(kUsageEventTable) + "CREATE INDEX events_by_time ON events(ts_ms);\n" +
         CreateTableSql(kProcessTable) + CreateTableSql(kEvidenceTable) + CreateTableSql(kGpuTable) +
         CreateTableSql(kHeartbeatTable) +
         "INSERT INTO meta(key, value) VALUES('format', 'gpubk.usage.sqlite');\n";
}

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

// One integer a query answers (a count, a PRAGMA); NULL for an empty MIN/MAX.
Result<std::optional<int64_t>> QueryInt(Db& db, const std::string& sql) {
  BK_ASSIGN_OR_RETURN(Stmt st, db.Prepare(sql));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::optional<int64_t>();
  return st.OptInt(0);
}

// A kind of history: its rows and the times of its oldest and newest record
// (`time` is an expression in epoch seconds over `table` WHERE `where`).
Result<UsageSpan> ReadSpan(Db& db, std::string name, std::string_view table, std::string_view time,
                           std::string_view where) {
  const std::string tail = fmt::format(" FROM {} WHERE {}", table, where);
  BK_ASSIGN_OR_RETURN(Stmt st, db.Prepare(fmt::format("SELECT count(*), min({0}), max({0})", time) + tail));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  UsageSpan span{std::move(name)};
  if (row) {
    span.rows = st.Int(0);
    span.oldest = st.OptInt(1);
    span.newest = st.OptInt(2);
  }
  return span;
}

Result<std::string> QueryText(Db& db, const std::string& sql) {
  BK_ASSIGN_OR_RETURN(Stmt st, db.Prepare(sql));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Text(0) : std::string();
}

Result<UsageStats> ReadStats(Db& db) {
  UsageStats s;
  BK_ASSIGN_OR_RETURN(s.format, QueryText(db, "SELECT value FROM meta WHERE key = 'format'"));
  BK_ASSIGN_OR_RETURN(s.journal_mode, QueryText(db, "PRAGMA journal_mode"));
  BK_ASSIGN_OR_RETURN(auto page_size, QueryInt(db, "PRAGMA page_size"));
  BK_ASSIGN_OR_RETURN(auto page_count, QueryInt(db, "PRAGMA page_count"));
  BK_ASSIGN_OR_RETURN(auto free_pages, QueryInt(db, "PRAGMA freelist_count"));
  s.page_size = page_size.value_or(0);
  s.page_count = page_count.value_or(0);
  s.free_pages = free_pages.value_or(0);
  for (std::string_view table :
       {kDeviceTable.info.name, kRollupTable.info.name, kUsageEventTable.info.name, kProcessTable.info.name,
        kEvidenceTable.info.name, kGpuTable.info.name, kHeartbeatTable.info.name}) {
    BK_ASSIGN_OR_RETURN(auto rows, QueryInt(db, fmt::format("SELECT count(*) FROM {}", table)));
    s.tables.push_back({std::string(table), rows.value_or(0)});
  }
  BK_ASSIGN_OR_RETURN(UsageSpan devices, ReadSpan(db, "devices", "devices", "ts_ms / 1000", "1"));
  BK_ASSIGN_OR_RETURN(UsageSpan minute, ReadSpan(db, "minute", "rollups", "window_start", "resolution = 60"));
  BK_ASSIGN_OR_RETURN(UsageSpan hourly,
                      ReadSpan(db, "hourly", "rollups", "window_start", "resolution = 3600"));
  BK_ASSIGN_OR_RETURN(UsageSpan events, ReadSpan(db, "events", "events", "ts_ms / 1000", "1"));
  s.spans = {std::move(devices), std::move(minute), std::move(hourly), std::move(events)};
  return s;
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
  BK_ASSIGN_OR_RETURN(DataFile f, OpenDataFile(o.path, o.create, o.owner, BusyWait{o.busy_timeout_ms, {}},
                                               "GPUBK usage history", o.vfs, sys::RealFileSystem()));
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
  auto version = UserVersion(*db_);
  if (!version) return fail(std::unexpected(version.error()));
  if (*version == kSchemaVersion) return db_->Exec("COMMIT");
  if (auto s = db_->Exec(SchemaV1()); !s) return fail(s);
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
  static const std::string sql = InsertSql(kDeviceTable, "INSERT OR REPLACE");
  for (const DeviceRow& d : rows) {
    BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kInsertDevice, sql.c_str()));
    BindRow(*st, kDeviceTable, d);
    BK_TRY(RunReset(*st));
  }
  return Ok();
}

Status UsageStore::UpsertRollup(const RollupRow& r, int64_t resolution, int64_t window_start) {
  static const std::string sql = UpsertSql(kRollupTable);
  BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kUpsertRollup, sql.c_str()));
  RollupRow row = r;
  row.resolution = resolution;
  row.window_start = window_start;
  BindRow(*st, kRollupTable, row);
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
  static const std::string sql = InsertSql(kUsageEventTable);
  for (const UsageEvent& e : events) {
    BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kInsertEvent, sql.c_str()));
    BindRow(*st, kUsageEventTable, e);
    BK_TRY(RunReset(*st));
  }
  return Ok();
}

Status UsageStore::PutHeartbeat(const HeartbeatRow& h) {
  static const std::string sql = InsertSql(kHeartbeatTable, "INSERT OR REPLACE");
  BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kPutHeartbeat, sql.c_str()));
  BindRow(*st, kHeartbeatTable, h);
  return RunReset(*st);
}

Status UsageStore::PutProcess(const TrackedProcess& p) {
  static const std::string sql = InsertSql(kProcessTable, "INSERT OR REPLACE");
  BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kPutProcess, sql.c_str()));
  BindRow(*st, kProcessTable, p);
  return RunReset(*st);
}

Status UsageStore::DeleteProcess(int gpu, int64_t pid, const std::string& token) {
  BK_ASSIGN_OR_RETURN(Stmt * st,
                      Cached(kDeleteProcess, "DELETE FROM processes WHERE gpu=? AND pid=? AND token=?"));
  st->Bind(1, int64_t{gpu}).Bind(2, pid).Bind(3, token);
  return RunReset(*st);
}

Status UsageStore::PutEvidence(const EvidenceRow& e) {
  static const std::string sql = InsertSql(kEvidenceTable, "INSERT OR REPLACE");
  BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kPutEvidence, sql.c_str()));
  BindRow(*st, kEvidenceTable, e);
  return RunReset(*st);
}

Status UsageStore::DeleteEvidence(const std::string& reservation_id) {
  BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kDeleteEvidence, "DELETE FROM evidence WHERE reservation_id=?"));
  st->Bind(1, reservation_id);
  return RunReset(*st);
}

Status UsageStore::PutGpu(const GpuIdentity& g) {
  static const std::string sql = InsertSql(kGpuTable, "INSERT OR REPLACE");
  BK_ASSIGN_OR_RETURN(Stmt * st, Cached(kPutGpu, sql.c_str()));
  BindRow(*st, kGpuTable, g);
  return RunReset(*st);
}

Result<std::vector<GpuIdentity>> UsageStore::Gpus() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(SelectSql(kGpuTable) + " ORDER BY gpu"));
  return ReadRows(st, kGpuTable);
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
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(SelectSql(kHeartbeatTable) + " WHERE id = 1"));
  return ReadFirstRow(st, kHeartbeatTable);
}

Result<std::vector<TrackedProcess>> UsageStore::Processes() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(SelectSql(kProcessTable) + " ORDER BY gpu, pid, token"));
  return ReadRows(st, kProcessTable);
}

Result<std::vector<EvidenceRow>> UsageStore::Evidence() {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(SelectSql(kEvidenceTable) + " ORDER BY reservation_id"));
  return ReadRows(st, kEvidenceTable);
}

Result<std::vector<RollupRow>> UsageStore::Rollups(const RollupQuery& q) {
  std::string sql =
      SelectSql(kRollupTable) + " WHERE resolution = ? AND window_start >= ? AND window_start < ?";
  if (q.uid) sql += " AND uid = ?";
  if (q.gpu) sql += " AND gpu = ?";
  sql += " ORDER BY window_start, gpu, uid, status LIMIT ?";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(sql));
  st.Bind(1, q.resolution).Bind(2, q.from).Bind(3, q.to);
  int i = 4;
  if (q.uid) st.Bind(i++, int64_t{*q.uid});
  if (q.gpu) st.Bind(i++, int64_t{*q.gpu});
  st.Bind(i, int64_t{q.limit});
  return ReadRows(st, kRollupTable);
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
  st->Bind(1, resolution).Bind(2, from).Bind(3, to);
  SqlValue<std::optional<uint32_t>>::Bind(*st, 4, uid);
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
  std::string sql = "SELECT * FROM (" + SelectSql(kUsageEventTable) + " WHERE ts_ms >= ? AND ts_ms < ?";
  if (q.uid) sql += " AND uid = ?";
  if (q.gpu) sql += " AND gpu = ?";
  sql += " ORDER BY seq DESC LIMIT ?) ORDER BY seq";
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(sql));
  st.Bind(1, q.from_ms).Bind(2, q.to_ms);
  int i = 3;
  if (q.uid) st.Bind(i++, int64_t{*q.uid});
  if (q.gpu) st.Bind(i++, int64_t{*q.gpu});
  st.Bind(i, int64_t{q.limit});
  return ReadRows(st, kUsageEventTable);
}

Result<UsageStore::Cleared> UsageStore::Clear() {
  BK_TRY(Begin());
  auto cleared = [&]() -> Result<Cleared> {
    auto count = [&](std::string_view table) -> Result<int64_t> {
      BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare(fmt::format("SELECT count(*) FROM {}", table)));
      BK_ASSIGN_OR_RETURN(bool row, st.Step());
      return row ? st.Int(0) : 0;
    };
    Cleared c;
    BK_ASSIGN_OR_RETURN(c.events, count(kUsageEventTable.info.name));
    BK_ASSIGN_OR_RETURN(c.rollups, count(kRollupTable.info.name));
    std::string sql;
    for (std::string_view table :
         {kDeviceTable.info.name, kRollupTable.info.name, kUsageEventTable.info.name, kProcessTable.info.name,
          kEvidenceTable.info.name, kGpuTable.info.name, kHeartbeatTable.info.name})
      sql += fmt::format("DELETE FROM {};\n", table);
    BK_TRY(db_->Exec(sql));
    return c;
  }();
  if (!cleared) {
    Rollback();
    return cleared;
  }
  BK_TRY(Commit());
  return cleared;
}

Result<std::vector<DeviceRow>> UsageStore::Devices(int64_t from_ms, int64_t to_ms, int limit) {
  BK_ASSIGN_OR_RETURN(Stmt st, db_->Prepare("SELECT * FROM (" + SelectSql(kDeviceTable) +
                                            " WHERE ts_ms >= ? AND ts_ms < ? ORDER BY ts_ms DESC, gpu DESC "
                                            "LIMIT ?) ORDER BY ts_ms, gpu"));
  st.Bind(1, from_ms).Bind(2, to_ms).Bind(3, int64_t{limit});
  return ReadRows(st, kDeviceTable);
}

// One read transaction, so the counts and spans describe the same moment
// even while the monitor writes.
Result<UsageStats> UsageStore::Stats() {
  if (in_txn_) return ReadStats(*db_);
  BK_TRY(db_->Exec("BEGIN"));
  auto stats = ReadStats(*db_);
  (void)db_->Exec("COMMIT");
  return stats;
}

}  // namespace bk::store
