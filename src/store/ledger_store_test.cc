#include "store/ledger_store.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/temp_dir_testing.h"
#include "engine/reservation_testing.h"
#include "store/fault_vfs.h"
#include "sys/file_system_testing.h"

namespace bk::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LedgerStoreTest : public TempDirTest {
 protected:
  OpenOptions Options(bool create) const {
    OpenOptions o;
    o.path = path_;
    o.create = create;
    o.owner = getuid();
    o.busy_timeout_ms = 1000;
    return o;
  }

  std::unique_ptr<LedgerStore> OpenOrDie(bool create = true) {
    auto s = LedgerStore::Open(Options(create));
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().message);
    return s ? std::move(*s) : nullptr;
  }

  // Whether `store` holds reservation `id`; a failed read fails the test.
  static bool Holds(LedgerStore& store, const std::string& id) {
    auto got = store.Get(id);
    EXPECT_TRUE(got.has_value()) << (got ? "" : got.error().message);
    return got && got->has_value();
  }

  static int Mode(const std::string& p) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return -1;
    return st.st_mode & 07777;
  }

  // Writes `text` to `path` with mode 0600 (creating the data directory 0700).
  void WriteRaw(const std::string& text) {
    std::filesystem::create_directories(dir_);
    ::chmod(dir_.c_str(), 0700);
    std::ofstream(path_, std::ios::binary) << text;
    ::chmod(path_.c_str(), 0600);
  }

  std::string dir_ = Path("data");
  std::string path_ = dir_ + "/ledger.db";
};

engine::Reservation MakeReservation(const std::string& id, uint32_t uid, engine::Seconds start,
                                    engine::Seconds end) {
  engine::Reservation r;
  r.id = id;
  r.uid = uid;
  r.username = "user" + std::to_string(uid);
  r.gpus = {0};
  r.mode = engine::Mode::kShared;
  r.share_units = 1;
  r.start = start;
  r.end = end;
  r.created_at = r.updated_at = start - 100;
  r.op_id = "op-" + id;
  return r;
}

Event MakeEvent(const std::string& id, uint32_t uid, const std::string& message) {
  Event e;
  e.event_id = id;
  e.transaction_id = "tx-" + id;
  e.ts = 1000;
  e.uid = uid;
  e.username = "u";
  e.actor_uid = uid;
  e.actor_username = "u";
  e.action = "add";
  e.reservation_id = "r-" + id;
  e.op_id = "op-" + id;
  e.gpus = {1, 0};
  e.mode = "shared";
  e.share_units = 1;
  e.start = 1000;
  e.end = 2000;
  e.message = message;
  return e;
}

std::vector<std::string> Ids(const std::vector<engine::Reservation>& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs) out.push_back(r.id);
  return out;
}

// ---- opening ----------------------------------------------------------------

TEST_F(LedgerStoreTest, MissingLedgerWithoutCreateReadsEmptyAndCreatesNothing) {
  auto s = OpenOrDie(/*create=*/false);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->in_memory());
  EXPECT_EQ(s->path(), path_);
  auto count = s->CountReservations();
  ASSERT_TRUE(count.has_value());
  EXPECT_EQ(*count, 0);
  auto rows = s->Reservations({});
  ASSERT_TRUE(rows.has_value());
  EXPECT_TRUE(rows->empty());
  auto bound = s->BoundPolicy();
  ASSERT_TRUE(bound.has_value());
  EXPECT_FALSE(bound->has_value());
  EXPECT_FALSE(std::filesystem::exists(dir_));
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(LedgerStoreTest, MissingFileInExistingDirWithoutCreateCreatesNothing) {
  std::filesystem::create_directories(dir_);
  ::chmod(dir_.c_str(), 0700);
  auto s = OpenOrDie(false);
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->in_memory());
  ASSERT_TRUE(s->Insert(MakeReservation("a", 1, 100, 200)).has_value());  // in memory only
  s.reset();
  EXPECT_FALSE(std::filesystem::exists(path_));
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(LedgerStoreTest, CreateMakesPrivateDirAndFileWhateverTheUmask) {
  mode_t old = ::umask(0);
  auto s = OpenOrDie(true);
  ::umask(old);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->in_memory());
  EXPECT_EQ(Mode(dir_), 0700);
  EXPECT_EQ(Mode(path_), 0600);
  // A write creates the WAL file with the database file's mode.
  ASSERT_TRUE(s->Insert(MakeReservation("a", 1, 100, 200)).has_value());
  std::string wal = path_ + "-wal";
  if (std::filesystem::exists(wal)) {
    EXPECT_EQ(Mode(wal), 0600);
  }
}

// The real file system, but creating `path` fails with EIO.
class FailingMakeDir : public sys::ForwardingFileSystem {
 public:
  explicit FailingMakeDir(std::string path) : path_(std::move(path)) {}
  sys::ErrnoResult<void> MakeDir(const std::string& p, mode_t m) override {
    if (p == path_) return std::unexpected(EIO);
    return ForwardingFileSystem::MakeDir(p, m);
  }

 private:
  std::string path_;
};

TEST_F(LedgerStoreTest, FailedDirectoryCreationNamesItAndCreatesNoLedger) {
  OpenOptions o = Options(true);
  o.path = Path("a/b/ledger.db");
  FailingMakeDir failing(Path("a/b"));
  o.fs = &failing;
  auto s = LedgerStore::Open(o);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().message, "cannot create directory " + Path("a/b") + ": Input/output error");
  // The parent made first stays, empty and private, for the next try.
  EXPECT_EQ(Mode(Path("a")), 0700);
  EXPECT_TRUE(std::filesystem::is_empty(Path("a")));
  o.fs = nullptr;
  EXPECT_TRUE(LedgerStore::Open(o).has_value());
}

TEST_F(LedgerStoreTest, SchemaVersionAndWalMode) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  auto st = s->db().Prepare("PRAGMA user_version");
  ASSERT_TRUE(st.has_value());
  auto row = st->Step();
  ASSERT_TRUE(row.has_value() && *row);
  EXPECT_EQ(st->Int(0), LedgerStore::kSchemaVersion);
  auto jm = s->db().Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(jm.has_value());
  ASSERT_TRUE(jm->Step().value_or(false));
  EXPECT_EQ(jm->Text(0), "wal");
  auto ok = s->IntegrityCheck();
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(*ok, "ok");
}

TEST_F(LedgerStoreTest, ReopenKeepsDataAndDoesNotMigrateAgain) {
  {
    auto s = OpenOrDie();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->Insert(MakeReservation("keep", 1, 100, 200)).has_value());
  }
  auto s = OpenOrDie(false);
  ASSERT_TRUE(s);
  EXPECT_FALSE(s->in_memory());
  EXPECT_TRUE(Holds(*s, "keep"));
}

TEST_F(LedgerStoreTest, NonDatabaseFileIsCorruptAndNamesThePath) {
  WriteRaw(std::string(4096, 'x'));
  for (bool create : {false, true}) {
    auto s = LedgerStore::Open(Options(create));
    ASSERT_FALSE(s.has_value()) << "create=" << create;
    EXPECT_EQ(s.error().kind, ErrorKind::kCorrupt) << s.error().message;
    EXPECT_THAT(s.error().message, HasSubstr(path_));
  }
}

TEST_F(LedgerStoreTest, ForeignSqliteDatabaseIsRefused) {
  std::filesystem::create_directories(dir_);
  ::chmod(dir_.c_str(), 0700);
  {
    auto db = Db::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE(
        (*db)->Exec("CREATE TABLE recipes(name TEXT); INSERT INTO recipes VALUES('soup')").has_value());
  }
  ::chmod(path_.c_str(), 0600);
  auto s = LedgerStore::Open(Options(false));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().kind, ErrorKind::kCorrupt);
  EXPECT_THAT(s.error().message, HasSubstr(path_));
  EXPECT_THAT(s.error().message, HasSubstr("not a GPUBK ledger"));
  // Its tables are left alone.
  auto db = Db::Open(path_, SQLITE_OPEN_READWRITE);
  ASSERT_TRUE(db.has_value());
  auto st = (*db)->Prepare("SELECT count(*) FROM sqlite_master WHERE name='reservations'");
  ASSERT_TRUE(st.has_value());
  ASSERT_TRUE(st->Step().value_or(false));
  EXPECT_EQ(st->Int(0), 0);
}

// BUG (reported): LedgerStore::Configure runs PRAGMA journal_mode=WAL before
// Migrate recognises a foreign database, so refusing it still rewrites its
// header to WAL mode. Enable once Open checks the schema before configuring.
TEST_F(LedgerStoreTest, RefusingAForeignDatabaseLeavesItsJournalModeAlone) {
  std::filesystem::create_directories(dir_);
  ::chmod(dir_.c_str(), 0700);
  {
    auto db = Db::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE recipes(name TEXT)").has_value());
  }
  ::chmod(path_.c_str(), 0600);
  ASSERT_FALSE(LedgerStore::Open(Options(false)).has_value());
  auto db = Db::Open(path_, SQLITE_OPEN_READWRITE);
  ASSERT_TRUE(db.has_value());
  auto jm = (*db)->Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(jm.has_value());
  ASSERT_TRUE(jm->Step().value_or(false));
  EXPECT_EQ(jm->Text(0), "delete");
}

TEST_F(LedgerStoreTest, NewerSchemaVersionIsRefused) {
  {
    auto s = OpenOrDie();
    ASSERT_TRUE(s);
    ASSERT_TRUE(s->db().Exec("PRAGMA user_version=99").has_value());
  }
  auto s = LedgerStore::Open(Options(false));
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().kind, ErrorKind::kCorrupt);
  EXPECT_THAT(s.error().message, HasSubstr("schema version 99"));
  EXPECT_THAT(s.error().message, HasSubstr(path_));
}

// ---- reservations -------------------------------------------------------------

TEST_F(LedgerStoreTest, InsertGetRoundTripsEveryField) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  engine::Reservation r;
  r.id = "11111111-2222-3333-4444-555555555555";
  r.uid = 4242;
  r.username = "alice";
  r.gpus = {2, 0};
  r.mode = engine::Mode::kShared;
  r.share_units = 2;
  r.memory_mb = 12288;
  r.cpus = 6;
  r.ram_mb = 32768;
  r.start = 1'800'000'000;
  r.end = 1'800'003'600;
  r.status = engine::Status::kCancelled;
  r.created_at = 1'799'999'000;
  r.updated_at = 1'799'999'500;
  r.op_id = "create-op";
  r.op_signature = std::string(64, 'a');
  r.edit_count = 3;
  r.cancellation = engine::Cancellation{
      1'799'999'600, engine::CancelKind::kAdministrator, "maintenance", 0, "root", "cancel-op"};
  ASSERT_TRUE(s->Insert(r).has_value());

  auto got = s->Get(r.id);
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->has_value());
  engine::ExpectSameReservation(r, **got);

  EXPECT_FALSE(Holds(*s, "nope"));
}

TEST_F(LedgerStoreTest, ExclusiveWithoutMemoryOrCancellationRoundTrips) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  engine::Reservation r = MakeReservation("x1", 7, 1000, 2000);
  r.mode = engine::Mode::kExclusive;
  r.gpus = {3, 1, 2};
  ASSERT_TRUE(s->Insert(r).has_value());
  auto got = s->Get("x1");
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_EQ((*got)->mode, engine::Mode::kExclusive);
  EXPECT_THAT((*got)->gpus, ElementsAre(3, 1, 2));
  EXPECT_FALSE((*got)->memory_mb.has_value());
  EXPECT_FALSE((*got)->cancellation.has_value());
  EXPECT_EQ((*got)->status, engine::Status::kActive);
  EXPECT_EQ((*got)->cpus, 0);
  EXPECT_EQ((*got)->ram_mb, 0);
}

TEST_F(LedgerStoreTest, UpdateChangesEveryFieldAndRejectsUnknownIds) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  engine::Reservation r = MakeReservation("u1", 7, 1000, 2000);
  r.memory_mb = 4096;
  ASSERT_TRUE(s->Insert(r).has_value());

  r.gpus = {2, 0};
  r.mode = engine::Mode::kShared;
  r.share_units = 3;
  r.memory_mb.reset();
  r.cpus = 2;
  r.ram_mb = 2048;
  r.start = 1300;
  r.end = 2600;
  r.updated_at = 1200;
  r.edit_count = 1;
  r.status = engine::Status::kCancelled;
  r.cancellation = engine::Cancellation{1250, engine::CancelKind::kOwner, "done", 7, "user7", "c-op"};
  ASSERT_TRUE(s->Update(r).has_value());
  auto got = s->Get("u1");
  ASSERT_TRUE(got.has_value() && got->has_value());
  engine::ExpectSameReservation(r, **got);

  // Clearing the cancellation writes NULLs back.
  r.cancellation.reset();
  r.status = engine::Status::kActive;
  ASSERT_TRUE(s->Update(r).has_value());
  got = s->Get("u1");
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_FALSE((*got)->cancellation.has_value());

  auto missing = s->Update(MakeReservation("ghost", 7, 1000, 2000));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  auto count = s->CountReservations();
  ASSERT_TRUE(count.has_value());
  EXPECT_EQ(*count, 1);
}

TEST_F(LedgerStoreTest, DuplicateIdAndBadIntervalAreRefused) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->Insert(MakeReservation("dup", 1, 100, 200)).has_value());
  EXPECT_FALSE(s->Insert(MakeReservation("dup", 1, 300, 400)).has_value());
  EXPECT_FALSE(s->Insert(MakeReservation("empty", 1, 300, 300)).has_value());  // CHECK end > start
}

TEST_F(LedgerStoreTest, ActiveFootprintsFiltersStatusEndAndExcept) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  const engine::Seconds now = 10'000;
  auto live = MakeReservation("live", 1, 9'000, 12'000);
  live.gpus = {2, 0};
  live.mode = engine::Mode::kShared;
  live.share_units = 2;
  live.memory_mb = 1000;
  live.cpus = 3;
  live.ram_mb = 4096;
  auto future = MakeReservation("future", 1, 11'000, 13'000);
  future.mode = engine::Mode::kExclusive;
  auto ended = MakeReservation("ended", 1, 8'000, now);  // end == now: over
  auto cancelled = MakeReservation("cancelled", 1, 9'000, 12'000);
  cancelled.status = engine::Status::kCancelled;
  auto expired = MakeReservation("expired", 1, 9'000, 12'000);
  expired.status = engine::Status::kExpired;
  for (const auto& r : {live, future, ended, cancelled, expired}) ASSERT_TRUE(s->Insert(r).has_value());

  auto fp = s->ActiveFootprints(now);
  ASSERT_TRUE(fp.has_value());
  ASSERT_EQ(fp->size(), 2u);
  const engine::Footprint* l = nullptr;
  const engine::Footprint* f = nullptr;
  for (const auto& x : *fp) (x.start == 9'000 ? l : f) = &x;
  ASSERT_TRUE(l && f);
  EXPECT_THAT(l->gpus, ElementsAre(2, 0));
  EXPECT_EQ(l->mode, engine::Mode::kShared);
  EXPECT_EQ(l->share_units, 2);
  EXPECT_EQ(l->memory_mb, std::optional<int64_t>(1000));
  EXPECT_EQ(l->cpus, 3);
  EXPECT_EQ(l->ram_mb, 4096);
  EXPECT_EQ(l->end, 12'000);
  EXPECT_EQ(f->mode, engine::Mode::kExclusive);
  EXPECT_EQ(f->start, 11'000);

  auto except = s->ActiveFootprints(now, "live");
  ASSERT_TRUE(except.has_value());
  ASSERT_EQ(except->size(), 1u);
  EXPECT_EQ((*except)[0].start, 11'000);

  auto earlier = s->ActiveFootprints(now - 1);  // "ended" still counts one second earlier
  ASSERT_TRUE(earlier.has_value());
  EXPECT_EQ(earlier->size(), 3u);
}

TEST_F(LedgerStoreTest, ReservationsQueryFiltersAndOrders) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  // Inserted out of order on purpose.
  auto c = MakeReservation("c", 1, 2000, 3000);
  auto b2 = MakeReservation("b2", 1, 1000, 2500);
  auto b1 = MakeReservation("b1", 1, 1000, 2500);
  auto a = MakeReservation("a", 1, 1000, 2000);
  auto other = MakeReservation("o", 2, 1500, 1600);
  auto gone = MakeReservation("gone", 1, 500, 900);
  auto cancelled = MakeReservation("x", 1, 4000, 5000);
  cancelled.status = engine::Status::kCancelled;
  for (const auto& r : {c, b2, b1, a, other, gone, cancelled}) ASSERT_TRUE(s->Insert(r).has_value());

  auto all = s->Reservations({});
  ASSERT_TRUE(all.has_value());
  EXPECT_THAT(Ids(*all), ElementsAre("gone", "a", "b1", "b2", "o", "c", "x"));

  ReservationQuery mine;
  mine.uid = 1;
  auto m = s->Reservations(mine);
  ASSERT_TRUE(m.has_value());
  EXPECT_THAT(Ids(*m), ElementsAre("gone", "a", "b1", "b2", "c", "x"));

  ReservationQuery active;
  active.uid = 1;
  active.active_only = true;
  active.now = 2000;  // "a" ends exactly now
  auto act = s->Reservations(active);
  ASSERT_TRUE(act.has_value());
  EXPECT_THAT(Ids(*act), ElementsAre("b1", "b2", "c"));

  ReservationQuery window;
  window.include_cancelled = false;
  window.overlap_start = 1600;  // end > 1600
  window.overlap_end = 2000;    // start < 2000
  auto w = s->Reservations(window);
  ASSERT_TRUE(w.has_value());
  EXPECT_THAT(Ids(*w), ElementsAre("a", "b1", "b2"));

  ReservationQuery no_cancelled;
  no_cancelled.include_cancelled = false;
  no_cancelled.overlap_start = 3500;
  auto nc = s->Reservations(no_cancelled);
  ASSERT_TRUE(nc.has_value());
  EXPECT_TRUE(nc->empty());
  no_cancelled.include_cancelled = true;
  nc = s->Reservations(no_cancelled);
  ASSERT_TRUE(nc.has_value());
  EXPECT_THAT(Ids(*nc), ElementsAre("x"));
}

TEST_F(LedgerStoreTest, ByPrefixIsLiteralAndHonoursUidAndLimit) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  for (const auto& [id, uid] : std::vector<std::pair<std::string, uint32_t>>{
           {"abc%1", 1}, {"abc_2", 1}, {"abcd3", 1}, {"abcd4", 2}, {"abd", 1}, {"xabc", 1}}) {
    ASSERT_TRUE(s->Insert(MakeReservation(id, uid, 100, 200)).has_value());
  }
  auto ids = [&](const std::string& prefix, std::optional<uint32_t> uid, int limit = 16) {
    auto r = s->ByPrefix(prefix, uid, limit);
    EXPECT_TRUE(r.has_value());
    return r ? Ids(*r) : std::vector<std::string>{};
  };
  EXPECT_THAT(ids("abc", std::nullopt), ElementsAre("abc%1", "abc_2", "abcd3", "abcd4"));
  EXPECT_THAT(ids("abc%", std::nullopt), ElementsAre("abc%1"));  // LIKE would match all four
  EXPECT_THAT(ids("abc_", std::nullopt), ElementsAre("abc_2"));
  EXPECT_THAT(ids("%", std::nullopt), ElementsAre());
  EXPECT_THAT(ids("_", std::nullopt), ElementsAre());
  EXPECT_THAT(ids("abcd", 1u), ElementsAre("abcd3"));
  EXPECT_THAT(ids("abcd", 2u), ElementsAre("abcd4"));
  EXPECT_THAT(ids("abcd", 3u), ElementsAre());
  EXPECT_THAT(ids("abc", std::nullopt, 2), ElementsAre("abc%1", "abc_2"));
  EXPECT_THAT(ids("abd", std::nullopt), ElementsAre("abd"));
  EXPECT_THAT(ids("bc", std::nullopt), ElementsAre());  // a prefix, not a substring
}

// ---- operations, events, notifications ---------------------------------------

TEST_F(LedgerStoreTest, OperationsAreUniquePerUidAndOpId) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  Operation op{5, "job-1", "create", "r1", std::string(64, 'f'), 123};
  ASSERT_TRUE(s->InsertOperation(op).has_value());
  auto dup = s->InsertOperation(Operation{5, "job-1", "edit", "r2", "sig", 124});
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().kind, ErrorKind::kInvalid);
  EXPECT_THAT(dup.error().message, HasSubstr("constraint"));
  // Another user may use the same string.
  ASSERT_TRUE(s->InsertOperation(Operation{6, "job-1", "create", "r3", "sig", 125}).has_value());

  auto found = s->FindOperation(5, "job-1");
  ASSERT_TRUE(found.has_value() && found->has_value());
  EXPECT_EQ((*found)->uid, 5u);
  EXPECT_EQ((*found)->op_id, "job-1");
  EXPECT_EQ((*found)->action, "create");
  EXPECT_EQ((*found)->reservation_id, "r1");
  EXPECT_EQ((*found)->signature, std::string(64, 'f'));
  EXPECT_EQ((*found)->created_at, 123);
  auto theirs = s->FindOperation(6, "job-1");
  ASSERT_TRUE(theirs.has_value() && theirs->has_value());
  EXPECT_EQ((*theirs)->reservation_id, "r3");
  auto none = s->FindOperation(7, "job-1");
  ASSERT_TRUE(none.has_value());
  EXPECT_FALSE(none->has_value());
}

TEST_F(LedgerStoreTest, EventsAreAppendOnly) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->AppendEvent(MakeEvent("e1", 1, "created")).has_value());
  auto upd = s->db().Exec("UPDATE events SET message='forged'");
  ASSERT_FALSE(upd.has_value());
  EXPECT_THAT(upd.error().message, HasSubstr("append-only"));
  auto del = s->db().Exec("DELETE FROM events");
  ASSERT_FALSE(del.has_value());
  EXPECT_THAT(del.error().message, HasSubstr("append-only"));
  auto events = s->EventsForReservation("r-e1");
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].message, "created");
  // Event IDs are unique.
  EXPECT_FALSE(s->AppendEvent(MakeEvent("e1", 1, "again")).has_value());
}

TEST_F(LedgerStoreTest, ResetEmptiesEveryTableInPlace) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->BindPolicy(R"({"gpu_count":4})").has_value());
  ASSERT_TRUE(s->Insert(MakeReservation("r1", 1, 1000, 2000)).has_value());
  ASSERT_TRUE(s->Insert(MakeReservation("r2", 1, 3000, 4000)).has_value());
  JobRecord job;
  job.reservation_id = "r1";
  job.uid = 1;
  job.spec_id = "spec";
  job.digest = std::string(64, 'a');
  job.summary = "python train.py";
  ASSERT_TRUE(s->InsertJob(job).has_value());
  ASSERT_TRUE(s->InsertOperation(Operation{1, "op-1", "create", "r1", "sig", 123}).has_value());
  ASSERT_TRUE(s->AppendEvent(MakeEvent("e1", 1, "created")).has_value());
  ASSERT_TRUE(s->AppendEvent(MakeEvent("e2", 1, "created")).has_value());
  ASSERT_TRUE(s->AppendEvent(MakeEvent("e3", 1, "cancelled")).has_value());
  Notification n;
  n.id = "n1";
  n.uid = 1;
  n.reservation_id = "r1";
  n.type = "reservation-reclaimed";
  ASSERT_TRUE(s->InsertNotification(n).has_value());
  struct stat before {};
  ASSERT_EQ(::stat(path_.c_str(), &before), 0);

  auto cleared = s->Reset();
  ASSERT_TRUE(cleared.has_value()) << cleared.error().message;
  EXPECT_EQ(cleared->reservations, 2);
  EXPECT_EQ(cleared->events, 3);
  for (const char* table : {"reservations", "jobs", "operations", "events", "notifications", "meta"}) {
    auto st = s->db().Prepare(std::string("SELECT count(*) FROM ") + table);
    ASSERT_TRUE(st.has_value());
    ASSERT_TRUE(st->Step().value_or(false));
    EXPECT_EQ(st->Int(0), 0) << table;
  }
  // The same file, mode and schema; the history is append-only again.
  struct stat after {};
  ASSERT_EQ(::stat(path_.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_EQ(Mode(path_), 0600);
  ASSERT_TRUE(s->AppendEvent(MakeEvent("e4", 1, "created")).has_value());
  auto del = s->db().Exec("DELETE FROM events");
  ASSERT_FALSE(del.has_value());
  EXPECT_THAT(del.error().message, HasSubstr("append-only"));
  // The handle still works, and a new one sees the same empty ledger.
  ASSERT_TRUE(s->Insert(MakeReservation("r1", 1, 1000, 2000)).has_value());
  auto other = OpenOrDie(false);
  ASSERT_TRUE(other);
  EXPECT_EQ(other->CountReservations().value_or(-1), 1);
  EXPECT_EQ(other->BoundPolicy().value_or(std::nullopt), std::nullopt);
}

TEST_F(LedgerStoreTest, EventFieldsRoundTrip) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  Event e = MakeEvent("full", 9, "updated");
  e.action = "edit";
  e.actor_uid = 0;
  e.actor_username = "root";
  e.before = R"({"end_at":"x"})";
  e.after = R"({"end_at":"y"})";
  e.signature = "sig";
  e.result = "ok";
  Event bare = MakeEvent("bare", 9, "created");
  bare.share_units.reset();
  bare.mode = "exclusive";
  ASSERT_TRUE(s->AppendEvent(e).has_value());
  ASSERT_TRUE(s->AppendEvent(bare).has_value());
  auto got = s->EventsForUid(9, 10);
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), 2u);
  const Event& g = (*got)[0];
  EXPECT_GT(g.seq, 0);
  EXPECT_LT(g.seq, (*got)[1].seq);
  EXPECT_EQ(g.event_id, "full");
  EXPECT_EQ(g.transaction_id, "tx-full");
  EXPECT_EQ(g.ts, 1000);
  EXPECT_EQ(g.uid, 9u);
  EXPECT_EQ(g.actor_uid, 0u);
  EXPECT_EQ(g.actor_username, "root");
  EXPECT_EQ(g.action, "edit");
  EXPECT_EQ(g.reservation_id, "r-full");
  EXPECT_EQ(g.op_id, "op-full");
  EXPECT_THAT(g.gpus, ElementsAre(1, 0));
  EXPECT_EQ(g.mode, "shared");
  EXPECT_EQ(g.share_units, std::optional<int64_t>(1));
  EXPECT_EQ(g.start, 1000);
  EXPECT_EQ(g.end, 2000);
  EXPECT_EQ(g.result, "ok");
  EXPECT_EQ(g.message, "updated");
  EXPECT_EQ(g.before, R"({"end_at":"x"})");
  EXPECT_EQ(g.after, R"({"end_at":"y"})");
  EXPECT_EQ(g.signature, "sig");
  const Event& b = (*got)[1];
  EXPECT_FALSE(b.share_units.has_value());
  EXPECT_EQ(b.before, "");
  EXPECT_EQ(b.after, "");
  // Empty before/after are stored as NULL.
  auto st = s->db().Prepare("SELECT before IS NULL, after IS NULL FROM events WHERE event_id='bare'");
  ASSERT_TRUE(st.has_value());
  ASSERT_TRUE(st->Step().value_or(false));
  EXPECT_EQ(st->Int(0), 1);
  EXPECT_EQ(st->Int(1), 1);
}

TEST_F(LedgerStoreTest, EventsForUidReturnsNewestNOldestFirst) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  for (int i = 1; i <= 5; ++i) {
    ASSERT_TRUE(
        s->AppendEvent(MakeEvent("mine" + std::to_string(i), 1, "m" + std::to_string(i))).has_value());
    ASSERT_TRUE(
        s->AppendEvent(MakeEvent("theirs" + std::to_string(i), 2, "t" + std::to_string(i))).has_value());
  }
  auto got = s->EventsForUid(1, 3);
  ASSERT_TRUE(got.has_value());
  std::vector<std::string> messages;
  for (const auto& e : *got) messages.push_back(e.message);
  EXPECT_THAT(messages, ElementsAre("m3", "m4", "m5"));
  auto all = s->EventsForUid(2, 100);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 5u);
  EXPECT_EQ(all->front().message, "t1");
  auto none = s->EventsForUid(3, 10);
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

// Read marks are per recipient and per notification: marking someone
// else's, or one already read, changes nothing.
TEST_F(LedgerStoreTest, NotificationReadMarks) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  auto note = [](const std::string& id, uint32_t uid, engine::Seconds at) {
    return Notification{id, uid, "r-" + id, "reservation-reclaimed", at, 0, "root", "why", "msg"};
  };
  ASSERT_TRUE(s->InsertNotification(note("n1", 1, 100)).has_value());
  ASSERT_TRUE(s->InsertNotification(note("n2", 1, 200)).has_value());
  ASSERT_TRUE(s->InsertNotification(note("other", 2, 300)).has_value());
  EXPECT_EQ(s->CountUnreadNotifications(1).value_or(-1), 2);
  EXPECT_EQ(s->MarkNotificationsRead(1, {"n2", "other", "missing"}, 500).value_or(-1), 1);
  EXPECT_EQ(s->MarkNotificationsRead(1, {"n2"}, 600).value_or(-1), 0);
  EXPECT_EQ(s->CountUnreadNotifications(1).value_or(-1), 1);
  EXPECT_EQ(s->CountUnreadNotifications(2).value_or(-1), 1);
  auto unread = s->UnreadNotificationsForUid(1, 10);
  ASSERT_TRUE(unread.has_value());
  ASSERT_EQ(unread->size(), 1u);
  EXPECT_EQ((*unread)[0].id, "n1");
  // The archive keeps read ones.
  EXPECT_EQ(s->NotificationsForUid(1, 10).value_or(std::vector<Notification>{}).size(), 2u);
}

// A version 2 ledger (before read marks) gains the table on open, with every
// notification it holds unread.
TEST_F(LedgerStoreTest, VersionTwoLedgerGainsReadMarks) {
  {
    auto s = OpenOrDie();
    ASSERT_TRUE(s);
    ASSERT_TRUE(
        s->InsertNotification(Notification{"n1", 1, "r1", "reservation-reclaimed", 100, 0, "root", "", ""})
            .has_value());
    ASSERT_TRUE(s->db().Exec("DROP TABLE notification_reads; PRAGMA user_version=2").has_value());
  }
  auto s = OpenOrDie(false);
  ASSERT_TRUE(s);
  auto st = s->db().Prepare("PRAGMA user_version");
  ASSERT_TRUE(st.has_value());
  ASSERT_TRUE(st->Step().value_or(false));
  EXPECT_EQ(st->Int(0), LedgerStore::kSchemaVersion);
  EXPECT_EQ(s->CountUnreadNotifications(1).value_or(-1), 1);
  EXPECT_EQ(s->MarkNotificationsRead(1, {"n1"}, 200).value_or(-1), 1);
  EXPECT_EQ(s->CountUnreadNotifications(1).value_or(-1), 0);
}

Announcement Notice(const std::string& id, engine::Seconds starts, engine::Seconds expires) {
  return Announcement{.id = id,
                      .level = AnnouncementLevel::kCritical,
                      .message = "maintenance " + id,
                      .created_at = 100,
                      .starts_at = starts,
                      .expires_at = expires,
                      .actor_uid = 0,
                      .actor_username = "root"};
}

// Shown from its start until its expiry, never once archived; the archive
// keeps every row with who archived it.
TEST_F(LedgerStoreTest, AnnouncementsActiveWindowAndArchive) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->InsertAnnouncement(Notice("a1", 100, 200)).has_value());
  ASSERT_TRUE(s->InsertAnnouncement(Notice("a2", 150, 300)).has_value());
  auto ids = [&](engine::Seconds now) {
    std::vector<std::string> out;
    for (const auto& a : s->ActiveAnnouncements(now).value_or(std::vector<Announcement>{}))
      out.push_back(a.id);
    return out;
  };
  EXPECT_THAT(ids(99), ElementsAre());
  EXPECT_THAT(ids(100), ElementsAre("a1"));
  EXPECT_THAT(ids(199), ElementsAre("a1", "a2"));
  EXPECT_THAT(ids(200), ElementsAre("a2"));
  Announcement archived = Notice("a2", 150, 300);
  archived.archived_at = 160;
  archived.archived_by_uid = 7;
  archived.archived_by_username = "ops";
  ASSERT_TRUE(s->UpdateAnnouncement(archived).has_value());
  EXPECT_THAT(ids(199), ElementsAre("a1"));
  auto all = s->Announcements();
  ASSERT_TRUE(all.has_value());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].archived_by_username, "ops");
  EXPECT_EQ((*all)[1].archived_by_uid, 7u);
  EXPECT_EQ((*all)[1].level, AnnouncementLevel::kCritical);
  EXPECT_FALSE((*all)[0].archived_at.has_value());
  // An update of a row that is not there changes nothing and says so.
  auto missing = s->UpdateAnnouncement(Notice("zz", 1, 2));
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
}

// The table's own checks hold whatever a caller forgets: an empty message or
// an expiry not after the start is refused.
TEST_F(LedgerStoreTest, AnnouncementTableRefusesImpossibleRows) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  Announcement empty = Notice("a1", 100, 200);
  empty.message.clear();
  EXPECT_FALSE(s->InsertAnnouncement(empty).has_value());
  EXPECT_FALSE(s->InsertAnnouncement(Notice("a2", 200, 200)).has_value());
  EXPECT_TRUE(s->Announcements().value_or(std::vector<Announcement>{{}}).empty());
}

// A version 3 ledger (before announcements) gains the table on open and keeps what it held.
TEST_F(LedgerStoreTest, VersionThreeLedgerGainsAnnouncements) {
  {
    auto s = OpenOrDie();
    ASSERT_TRUE(s);
    ASSERT_TRUE(
        s->InsertNotification(Notification{"n1", 1, "r1", "reservation-reclaimed", 100, 0, "root", "", ""})
            .has_value());
    ASSERT_TRUE(s->db().Exec("DROP TABLE announcements; PRAGMA user_version=3").has_value());
  }
  auto s = OpenOrDie(false);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->CountUnreadNotifications(1).value_or(-1), 1);
  ASSERT_TRUE(s->InsertAnnouncement(Notice("a1", 100, 200)).has_value());
  EXPECT_EQ(s->ActiveAnnouncements(150).value_or(std::vector<Announcement>{}).size(), 1u);
}

TEST_F(LedgerStoreTest, NotificationsPerUidNewestFirst) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  auto note = [](const std::string& id, uint32_t uid, engine::Seconds at, const std::string& rid) {
    return Notification{id,         uid, rid, "reservation-admin-cancelled", at, 0, "root", "reason " + id,
                        "msg " + id};
  };
  ASSERT_TRUE(s->InsertNotification(note("n1", 1, 100, "r1")).has_value());
  ASSERT_TRUE(s->InsertNotification(note("n3", 1, 300, "r2")).has_value());
  ASSERT_TRUE(s->InsertNotification(note("n2", 1, 200, "r1")).has_value());
  ASSERT_TRUE(s->InsertNotification(note("other", 2, 400, "r9")).has_value());

  auto mine = s->NotificationsForUid(1, 10);
  ASSERT_TRUE(mine.has_value());
  std::vector<std::string> ids;
  for (const auto& n : *mine) ids.push_back(n.id);
  EXPECT_THAT(ids, ElementsAre("n3", "n2", "n1"));
  const auto& first = (*mine)[0];
  EXPECT_EQ(first.uid, 1u);
  EXPECT_EQ(first.reservation_id, "r2");
  EXPECT_EQ(first.type, "reservation-admin-cancelled");
  EXPECT_EQ(first.created_at, 300);
  EXPECT_EQ(first.actor_uid, 0u);
  EXPECT_EQ(first.actor_username, "root");
  EXPECT_EQ(first.reason, "reason n3");
  EXPECT_EQ(first.message, "msg n3");

  auto limited = s->NotificationsForUid(1, 2);
  ASSERT_TRUE(limited.has_value());
  ASSERT_EQ(limited->size(), 2u);
  EXPECT_EQ((*limited)[1].id, "n2");

  auto per_res = s->NotificationsForReservation("r1");
  ASSERT_TRUE(per_res.has_value());
  ASSERT_EQ(per_res->size(), 2u);
  EXPECT_EQ((*per_res)[0].id, "n1");  // oldest first
  EXPECT_EQ((*per_res)[1].id, "n2");
}

// ---- transactions and policy ---------------------------------------------------

TEST_F(LedgerStoreTest, WriteTxnRollsBackUnlessCommitted) {
  auto s = OpenOrDie();
  ASSERT_TRUE(s);
  {
    auto txn = s->BeginWrite();
    ASSERT_TRUE(txn.has_value());
    ASSERT_TRUE(s->Insert(MakeReservation("dropped", 1, 100, 200)).has_value());
    ASSERT_TRUE(s->AppendEvent(MakeEvent("dropped-ev", 1, "x")).has_value());
    EXPECT_TRUE(Holds(*s, "dropped"));  // visible inside the transaction
  }
  EXPECT_FALSE(Holds(*s, "dropped"));
  auto events = s->EventsForUid(1, 10);
  ASSERT_TRUE(events.has_value());
  EXPECT_TRUE(events->empty());

  {
    auto txn = s->BeginWrite();  // the previous one is really over
    ASSERT_TRUE(txn.has_value()) << txn.error().message;
    ASSERT_TRUE(s->Insert(MakeReservation("kept", 1, 100, 200)).has_value());
    ASSERT_TRUE(txn->Commit().has_value());
  }
  s.reset();
  auto again = OpenOrDie(false);
  ASSERT_TRUE(again);
  EXPECT_TRUE(Holds(*again, "kept"));
  EXPECT_FALSE(Holds(*again, "dropped"));
}

// data_version moves when another connection commits, and only then: this
// connection's own commits are counted by commits() instead.
TEST_F(LedgerStoreTest, DataVersionMovesWhenAnotherConnectionCommits) {
  auto reader = OpenOrDie();
  auto writer = OpenOrDie();
  ASSERT_TRUE(reader && writer);
  auto version = [&] {
    auto v = reader->DataVersion();
    EXPECT_TRUE(v.has_value()) << (v ? "" : v.error().message);
    return v ? *v : -1;
  };
  auto commit = [](LedgerStore& s, const std::string& id) {
    auto txn = s.BeginWrite();
    ASSERT_TRUE(txn.has_value()) << txn.error().message;
    ASSERT_TRUE(s.Insert(MakeReservation(id, 1, 100, 200)).has_value());
    ASSERT_TRUE(txn->Commit().has_value());
  };
  const int64_t v0 = version();
  EXPECT_EQ(version(), v0) << "nothing happened";
  commit(*writer, "theirs");
  const int64_t v1 = version();
  EXPECT_NE(v1, v0);
  EXPECT_EQ(version(), v1);
  {
    auto txn = writer->BeginWrite();  // rolled back: nothing committed
    ASSERT_TRUE(txn.has_value());
    ASSERT_TRUE(writer->Insert(MakeReservation("dropped", 1, 100, 200)).has_value());
  }
  EXPECT_EQ(version(), v1);
  const uint64_t own = reader->commits();
  commit(*reader, "mine");
  EXPECT_EQ(reader->commits(), own + 1);
  EXPECT_EQ(version(), v1) << "this connection's own commit";
}

TEST_F(LedgerStoreTest, SecondWriterIsBusyWhileATransactionIsOpen) {
  auto a = OpenOrDie();
  ASSERT_TRUE(a);
  auto txn = a->BeginWrite();
  ASSERT_TRUE(txn.has_value());
  auto o = Options(false);
  o.busy_timeout_ms = 50;
  auto c = LedgerStore::Open(o);
  ASSERT_TRUE(c.has_value());
  auto blocked = (*c)->BeginWrite();
  ASSERT_FALSE(blocked.has_value());
  EXPECT_EQ(blocked.error().kind, ErrorKind::kBusy);
}

// ---- group commit ------------------------------------------------------------

// Inserts reservation `id` in a write of its own (a savepoint inside a
// group); commits it unless `keep` is false.
void Book(LedgerStore& s, const std::string& id, bool keep = true) {
  auto txn = s.BeginWrite();
  ASSERT_TRUE(txn.has_value()) << txn.error().message;
  ASSERT_TRUE(s.Insert(MakeReservation(id, 1, 100, 200)).has_value());
  if (keep) {
    ASSERT_TRUE(txn->Commit().has_value());
  }
}

class GroupCommitTest : public LedgerStoreTest {
 protected:
  void SetUp() override {
    vfs_ = &FaultVfs::Install();
    vfs_->Reset();
  }
  void TearDown() override { vfs_->Reset(); }

  // The ledger as the daemon opens it, through the fault-injecting VFS.
  std::unique_ptr<LedgerStore> OpenFaulty() {
    auto o = Options(true);
    o.exclusive = true;
    o.vfs = FaultVfs::kName;
    auto s = LedgerStore::Open(o);
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().message);
    return s ? std::move(*s) : nullptr;
  }

  // What another process finds on disk once the daemon is gone.
  std::vector<std::string> OnDisk() {
    auto s = OpenOrDie(false);
    std::vector<std::string> ids;
    for (const auto& r : s->Reservations({}).value_or(std::vector<engine::Reservation>{}))
      ids.push_back(r.id);
    return ids;
  }

  FaultVfs* vfs_ = nullptr;
};

TEST_F(GroupCommitTest, WritesOfAGroupSeeEachOtherAndShareOneSync) {
  auto s = OpenFaulty();
  ASSERT_TRUE(s);
  std::vector<std::vector<std::string>> told;
  s->OnCommit([&](const std::vector<engine::Reservation>& written) {
    told.emplace_back();
    for (const auto& r : written) told.back().push_back(r.id);
  });
  vfs_->Reset();
  Book(*s, "alone");
  const int64_t one_write = vfs_->count(FaultPoint::kSync);
  ASSERT_GT(one_write, 0);

  vfs_->Reset();
  ASSERT_TRUE(s->BeginGroup().has_value());
  for (const char* id : {"a", "b", "c"}) {
    Book(*s, id);
    EXPECT_TRUE(Holds(*s, id));  // the next write of the group sees it
  }
  EXPECT_EQ(vfs_->count(FaultPoint::kSync), 0);  // nothing durable yet
  ASSERT_TRUE(s->CommitGroup().has_value());
  EXPECT_EQ(vfs_->count(FaultPoint::kSync), one_write);
  EXPECT_EQ(told, (std::vector<std::vector<std::string>>{{"alone"}, {"a"}, {"b"}, {"c"}}));
  EXPECT_EQ(s->commits(), 4u);
  s.reset();
  EXPECT_EQ(OnDisk(), (std::vector<std::string>{"a", "alone", "b", "c"}));
}

TEST_F(GroupCommitTest, AWriteDroppedInAGroupTakesOnlyItself) {
  auto s = OpenFaulty();
  ASSERT_TRUE(s);
  std::vector<std::string> told;
  s->OnCommit([&](const std::vector<engine::Reservation>& written) {
    for (const auto& r : written) told.push_back(r.id);
  });
  ASSERT_TRUE(s->BeginGroup().has_value());
  Book(*s, "a");
  Book(*s, "dropped", /*keep=*/false);
  EXPECT_FALSE(Holds(*s, "dropped"));
  EXPECT_TRUE(Holds(*s, "a"));
  Book(*s, "c");
  ASSERT_TRUE(s->CommitGroup().has_value());
  EXPECT_EQ(told, (std::vector<std::string>{"a", "c"}));
  s.reset();
  EXPECT_EQ(OnDisk(), (std::vector<std::string>{"a", "c"}));
}

TEST_F(GroupCommitTest, AFailedGroupCommitLosesEveryWriteAndSaysSo) {
  auto s = OpenFaulty();
  ASSERT_TRUE(s);
  Book(*s, "before");
  int rollbacks = 0;
  s->OnGroupRollback([&] { ++rollbacks; });
  ASSERT_TRUE(s->BeginGroup().has_value());
  Book(*s, "a");
  Book(*s, "b");
  vfs_->Reset();
  vfs_->FailAt(FaultPoint::kSync, 1, SQLITE_IOERR_FSYNC);
  auto st = s->CommitGroup();
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(st.error().kind, ErrorKind::kIo);
  EXPECT_THAT(st.error().message, HasSubstr("it may have been recorded all the same"));
  EXPECT_EQ(rollbacks, 1);
  EXPECT_FALSE(Holds(*s, "a"));
  EXPECT_FALSE(Holds(*s, "b"));
  EXPECT_TRUE(Holds(*s, "before"));
  // The disk recovers: the next group and the next lone write work.
  vfs_->Disarm();
  ASSERT_TRUE(s->BeginGroup().has_value());
  Book(*s, "after");
  ASSERT_TRUE(s->CommitGroup().has_value());
  Book(*s, "alone");
  EXPECT_EQ(rollbacks, 1);
  s.reset();
  EXPECT_EQ(OnDisk(), (std::vector<std::string>{"after", "alone", "before"}));
}

TEST_F(GroupCommitTest, AFullDiskAtTheGroupCommitNamesIt) {
  auto s = OpenFaulty();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->BeginGroup().has_value());
  Book(*s, "a");
  vfs_->Reset();
  vfs_->FailAt(FaultPoint::kWrite, 1, SQLITE_FULL, /*sticky=*/true);
  auto st = s->CommitGroup();
  ASSERT_FALSE(st.has_value());
  EXPECT_THAT(st.error().message, HasSubstr("the disk is full"));
  vfs_->Disarm();
  EXPECT_FALSE(Holds(*s, "a"));
  s.reset();
  EXPECT_TRUE(OnDisk().empty());
}

// SQLite rolls a whole transaction back after an I/O error in a statement
// (here while spilling its page cache to the WAL), the group's earlier
// writes with it: no later write may then run (and commit) on its own.
TEST_F(GroupCommitTest, AWriteThatLosesTheGroupFailsEveryWriteAfterIt) {
  auto s = OpenFaulty();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->db().Exec("PRAGMA cache_size=10").has_value());
  int rollbacks = 0;
  s->OnGroupRollback([&] { ++rollbacks; });
  ASSERT_TRUE(s->BeginGroup().has_value());
  Book(*s, "a");
  vfs_->Reset();
  vfs_->FailAt(FaultPoint::kWrite, 1, SQLITE_IOERR_WRITE, /*sticky=*/true);
  {
    auto txn = s->BeginWrite();
    ASSERT_TRUE(txn.has_value());
    Status st = Ok();
    for (int i = 0; i < 5000 && st; ++i)
      st = s->Insert(MakeReservation(fmt::format("bulk-{:05}", i), 1, 100, 200));
    ASSERT_FALSE(st.has_value()) << "the page cache never spilled";
  }
  vfs_->Disarm();
  auto next = s->BeginWrite();
  ASSERT_FALSE(next.has_value());
  EXPECT_EQ(next.error().kind, ErrorKind::kIo);
  auto st = s->CommitGroup();
  ASSERT_FALSE(st.has_value());
  EXPECT_THAT(st.error().message, HasSubstr("rolled back the open transaction"));
  EXPECT_EQ(rollbacks, 1);
  Book(*s, "after");
  s.reset();
  EXPECT_EQ(OnDisk(), (std::vector<std::string>{"after"}));
}

TEST_F(GroupCommitTest, AnEmptyGroupCommitsNothing) {
  auto s = OpenFaulty();
  ASSERT_TRUE(s);
  vfs_->Reset();
  ASSERT_TRUE(s->BeginGroup().has_value());
  ASSERT_TRUE(s->BeginGroup().has_value());  // already open: one group still
  ASSERT_TRUE(s->CommitGroup().has_value());
  ASSERT_TRUE(s->CommitGroup().has_value());  // none open: nothing to do
  EXPECT_EQ(vfs_->count(FaultPoint::kSync), 0);
  EXPECT_EQ(s->commits(), 0u);
}

TEST_F(LedgerStoreTest, BindPolicyPersists) {
  {
    auto s = OpenOrDie();
    ASSERT_TRUE(s);
    auto none = s->BoundPolicy();
    ASSERT_TRUE(none.has_value());
    EXPECT_FALSE(none->has_value());
    ASSERT_TRUE(s->BindPolicy(R"({"gpu_count":4})").has_value());
    auto bound = s->BoundPolicy();
    ASSERT_TRUE(bound.has_value() && bound->has_value());
    EXPECT_EQ(**bound, R"({"gpu_count":4})");
  }
  auto s = OpenOrDie(false);
  ASSERT_TRUE(s);
  auto bound = s->BoundPolicy();
  ASSERT_TRUE(bound.has_value() && bound->has_value());
  EXPECT_EQ(**bound, R"({"gpu_count":4})");
  ASSERT_TRUE(s->BindPolicy(R"({"gpu_count":8})").has_value());
  bound = s->BoundPolicy();
  ASSERT_TRUE(bound.has_value() && bound->has_value());
  EXPECT_EQ(**bound, R"({"gpu_count":8})");
}

TEST_F(LedgerStoreTest, GroupWritableLedgerIsRefused) {
  {
    auto s = OpenOrDie();
    ASSERT_TRUE(s);
  }
  ::chmod(path_.c_str(), 0660);
  auto s = LedgerStore::Open(Options(false));
  ASSERT_FALSE(s.has_value());
  EXPECT_THAT(s.error().message, HasSubstr(path_));
}

}  // namespace
}  // namespace bk::store

namespace bk::store {
namespace {

TEST_F(LedgerStoreTest, PruneForgetsOldRecordsButKeepsOperationsAndHistory) {
  auto s = OpenOrDie();
  ASSERT_NE(s, nullptr);
  engine::Reservation old_done = MakeReservation("old", 1, 100, 200);
  engine::Reservation old_cancel = MakeReservation("gone", 1, 5000, 6000);
  old_cancel.status = engine::Status::kCancelled;
  old_cancel.updated_at = 300;
  engine::Reservation recent = MakeReservation("recent", 1, 900, 1500);
  engine::Reservation future = MakeReservation("future", 1, 9000, 9900);
  for (const auto& r : {old_done, old_cancel, recent, future}) {
    ASSERT_TRUE(s->Insert(r).has_value());
    ASSERT_TRUE(s->InsertOperation({1, "op-" + r.id, "create", r.id, "sig", 0}).has_value());
    Event e;
    e.event_id = "ev-" + r.id;
    e.reservation_id = r.id;
    e.action = "add";
    ASSERT_TRUE(s->AppendEvent(e).has_value());
  }
  auto removed = s->PruneIfDue(/*now=*/2000, /*cutoff=*/1000);
  ASSERT_TRUE(removed.has_value()) << removed.error().message;
  ASSERT_EQ(removed->size(), 2u);
  EXPECT_EQ((*removed)[0].id, "gone");
  EXPECT_EQ((*removed)[1].id, "old");
  EXPECT_FALSE(s->Get("old").value().has_value());
  EXPECT_FALSE(s->Get("gone").value().has_value());
  EXPECT_TRUE(s->Get("recent").value().has_value());
  EXPECT_TRUE(s->Get("future").value().has_value());
  // An old operation ID is still known, so a late retry cannot book anew;
  // the audit history stays whole.
  EXPECT_TRUE(s->FindOperation(1, "op-old").value().has_value());
  EXPECT_TRUE(s->FindOperation(1, "op-recent").value().has_value());
  EXPECT_EQ(s->EventsForReservation("old").value().size(), 1u);
  // At most once a day.
  ASSERT_TRUE(s->Insert(MakeReservation("old2", 1, 100, 200)).has_value());
  EXPECT_EQ(s->PruneIfDue(2000 + 3600, 1000).value().size(), 0u);
  EXPECT_EQ(s->PruneIfDue(2000 + engine::kDay, 1000).value().size(), 1u);
}

}  // namespace
}  // namespace bk::store
