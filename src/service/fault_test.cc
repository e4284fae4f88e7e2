// Proof under I/O faults: every write point of every ledger write (create,
// edit, renew, cancel, import, a schema migration) and of the monitor's usage
// history is made to fail in turn, through the fault-injecting SQLite VFS
// (store/fault_vfs.h), and after each the data must still be whole:
//   - the caller got one clear, one-line error (or success),
//   - the file passes integrity_check and `bk admin data verify`,
//   - what was confirmed before is untouched and the failed write is either
//     fully applied or not at all (reservations, operations, events together);
//     applied after an error only if the error said it may have been,
//   - a power cut never loses a write whose call had returned success,
//   - the next command works, and so does the next write through the same
//     connection (a daemon, the server's monitor) once the disk recovers.
// Each walk first runs its write once without faults to count the points
// (and to learn the "fully applied" state), then replays it from the same
// starting files once per point and fault kind.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "engine/civil_time.h"
#include "engine/parse.h"
#include "service/booking_service.h"
#include "store/fault_vfs.h"
#include "store/ledger_store.h"
#include "store/sqlite.h"
#include "store/usage_store.h"
#include "sys/clock.h"

namespace bk::service {
namespace {

namespace fs = std::filesystem;
using engine::Seconds;
using store::FaultPoint;
using store::FaultVfs;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr Seconds kM = engine::kMinute;
constexpr Seconds kH = engine::kHour;

Seconds T(const char* iso) { return engine::ParseIsoTime(iso, engine::FixedZone(0)).value_or(0); }

// Write points visited, per walk, printed once at the end of the run.
struct Totals : ::testing::Environment {
  std::vector<std::string> lines;
  int64_t all = 0;
  std::set<std::string> messages;  // the distinct errors users saw
  void TearDown() override {
    if (lines.empty()) return;
    std::cout << "I/O fault walks (write points visited):\n";
    for (const auto& l : lines) std::cout << "  " << l << "\n";
    std::cout << "  total: " << all << "\nerrors seen:\n";
    for (const auto& m : messages) std::cout << "  " << m << "\n";
  }
};
Totals* const totals = static_cast<Totals*>(::testing::AddGlobalTestEnvironment(new Totals));

// Every row of `sql`, columns joined by '|', rows by '\n'.
std::string Dump(store::Db& db, const std::string& sql) {
  auto st = db.Prepare(sql);
  if (!st) return "error: " + st.error().message;
  std::string out;
  while (true) {
    auto row = st->Step();
    if (!row) return out + "error: " + row.error().message;
    if (!*row) break;
    int n = st->Columns();
    for (int i = 0; i < n; ++i) out += (st->IsNull(i) ? "-" : st->Text(i)) + (i + 1 < n ? "|" : "\n");
  }
  return out;
}

const char* PointName(FaultPoint p) {
  switch (p) {
    case FaultPoint::kWrite: return "write";
    case FaultPoint::kSync: return "sync";
    case FaultPoint::kTruncate: return "truncate";
    case FaultPoint::kOpen: return "open";
  }
  return "?";
}

// The error code a failing disk gives at each point (what the unix VFS
// itself returns there).
int IoErr(FaultPoint p) {
  switch (p) {
    case FaultPoint::kWrite: return SQLITE_IOERR_WRITE;
    case FaultPoint::kSync: return SQLITE_IOERR_FSYNC;
    case FaultPoint::kTruncate: return SQLITE_IOERR_TRUNCATE;
    case FaultPoint::kOpen: return SQLITE_CANTOPEN;
  }
  return SQLITE_IOERR;
}

// One write under test.
struct Walk {
  std::string name;
  // Runs the write with every file opened through `vfs`, from a fresh process'
  // point of view, and closes everything before returning.
  std::function<Status(const std::string& vfs)> run;
  // What the files hold, without anything random (IDs), read with the default VFS.
  std::function<std::string()> state;
  // Integrity, verify, and the next command, with the default VFS.
  std::function<void(const std::string& label)> check;
  bool durable = true;                  // a success survives a power cut (the ledger's synchronous=FULL)
  std::string same_marker = "op-same";  // in the state once same_connection's second write is in
  // Optional, a long-lived writer's case (the daemon: the ledger held
  // exclusively, the calendar in memory; the server's monitor): the write,
  // then, with the disk repaired, another through the same connection.
  std::function<std::pair<Status, Status>()> same_connection;
};

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // In memory where there is a tmpfs: the walk makes thousands of real
    // fsyncs, which cost nothing there and nothing is proven by the disk.
    std::string base = fs::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
    std::string tmpl_s = base + "/bk-fault-test-XXXXXX";
    std::vector<char> tmpl(tmpl_s.begin(), tmpl_s.end());
    tmpl.push_back('\0');
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl.data();
    config_.data_dir = root_ + "/data";
    config_.ledger_path = config_.data_dir + "/ledger.db";
    config_.config_file = config_.data_dir + "/config.json";
    config_.policy.gpu_count = 4;
    config_.gpu_count_detected = false;
    clock_ = std::make_unique<sys::FixedClock>(T("2026-11-29T18:52:00Z"));
    vfs_ = &FaultVfs::Install();
    vfs_->Reset();
  }
  void TearDown() override {
    vfs_->Reset();
    fs::remove_all(root_);
  }

  std::unique_ptr<BookingService> Service(const std::string& vfs = "", bool exclusive = false) {
    BookingService::Deps d{&config_, clock_.get(), nullptr, static_cast<uid_t>(getuid()), exclusive};
    d.store_vfs = vfs;
    return std::make_unique<BookingService>(d);
  }

  engine::Reservation Book(const std::string& op, int count, Seconds duration) {
    CreateRequest r;
    r.count = count;
    r.duration = duration;
    r.op_id = op;
    auto out = Service()->Create(me_, r);
    EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message);
    return out ? out->reservation : engine::Reservation{};
  }

  // The files as they are now become the starting point of every replay.
  // (No data directory at all is a baseline too: the first command ever.)
  void SaveBaseline() {
    fs::remove_all(root_ + "/baseline");
    if (fs::exists(config_.data_dir))
      fs::copy(config_.data_dir, root_ + "/baseline", fs::copy_options::recursive);
  }
  void RestoreBaseline() {
    fs::remove_all(config_.data_dir);
    if (!fs::exists(root_ + "/baseline")) return;
    fs::copy(root_ + "/baseline", config_.data_dir, fs::copy_options::recursive);
    fs::permissions(config_.data_dir, fs::perms::owner_all);
  }

  std::string LedgerState() {
    auto db = store::Db::Open(config_.ledger_path, SQLITE_OPEN_READWRITE);
    if (!db) return "cannot open: " + db.error().message;
    std::string s;
    s += Dump(**db, "SELECT user_version FROM pragma_user_version");
    s += Dump(**db, "SELECT type, name FROM sqlite_master ORDER BY name");
    return s + Rows(**db);
  }

  // What the ledger holds, where a missing file, an empty one and one with
  // the schema alone all read the same: no ledger yet.
  std::string ContentState() {
    if (!fs::exists(config_.ledger_path)) return "";
    auto db = store::Db::Open(config_.ledger_path, SQLITE_OPEN_READWRITE);
    if (!db) return "cannot open: " + db.error().message;
    if (Dump(**db, "SELECT user_version FROM pragma_user_version") == "0\n") return "";
    return Rows(**db);
  }

  std::string Rows(store::Db& db) {
    std::string s;
    s += Dump(db, "SELECT key, value FROM meta ORDER BY key");
    s += Dump(db,
              "SELECT op_id, uid, mode, gpus, share_units, memory_mb, start_at, end_at, status, edit_count, "
              "cancel_kind, cancel_op_id FROM reservations ORDER BY op_id, start_at");
    s += Dump(db, "SELECT uid, op_id, action, signature, created_at FROM operations ORDER BY uid, op_id");
    s += Dump(db,
              "SELECT action, op_id, uid, gpus, start_at, end_at, result, message, before IS NULL, "
              "after IS NULL FROM events ORDER BY seq");
    s += Dump(db, "SELECT type, created_at, reason FROM notifications ORDER BY created_at, type");
    return s;
  }

  // Integrity, `bk admin data verify` and the next command.
  void LedgerCheck(const std::string& label) {
    auto svc = Service();
    auto verify = svc->Verify(me_, "");
    ASSERT_TRUE(verify.has_value()) << label << ": " << verify.error().message;
    EXPECT_TRUE(verify->ok()) << label << ": integrity " << verify->integrity;
    CreateRequest next;
    next.count = 1;
    next.duration = 30 * kM;
    next.op_id = "op-next";
    auto out = svc->Create(me_, next);
    EXPECT_TRUE(out.has_value()) << label << ": the next command failed: " << out.error().message;
  }

  Walk LedgerWalk(std::string name, std::function<Status(BookingService&)> op) {
    return Walk{
        std::move(name),
        [this, op](const std::string& vfs) {
          auto svc = Service(vfs);
          return op(*svc);
        },
        [this] { return LedgerState(); },
        [this](const std::string& label) { LedgerCheck(label); },
        true,
        "op-same",
        [this, op]() -> std::pair<Status, Status> {
          auto svc = Service(FaultVfs::kName, /*exclusive=*/true);
          Status first = op(*svc);
          vfs_->Disarm();
          CreateRequest next;
          next.count = 1;
          next.duration = 30 * kM;
          next.op_id = "op-same";
          auto second = svc->Create(me_, next);
          if (!second) return {first, std::unexpected(second.error())};
          return {first, Ok()};
        },
    };
  }

  // The command under test in the create walks: one GPU for an hour.
  Status CreateOne(BookingService& s) {
    CreateRequest r;
    r.count = 1;
    r.duration = 1 * kH;
    r.op_id = "op-create";
    BK_TRY(s.Create(me_, r));
    return Ok();
  }

  // Books base-1 (1 GPU, 1 h) and base-2 (2 GPUs, 2 h), saves that as the
  // baseline, and runs the ledger walk of `op` on booking number `target`.
  void WalkOnBooking(std::string name, int target,
                     std::function<Status(BookingService&, const std::string& id)> op) {
    const std::string ids[] = {Book("base-1", 1, 1 * kH).id, Book("base-2", 2, 2 * kH).id};
    SaveBaseline();
    Run(LedgerWalk(std::move(name), [op, id = ids[target - 1]](BookingService& s) { return op(s, id); }));
  }

  // Replays `w` once per write point and fault kind, from the saved baseline.
  void Run(const Walk& w) {
    RestoreBaseline();
    const std::string before = w.state();
    RestoreBaseline();
    vfs_->Reset();
    Status dry = w.run(FaultVfs::kName);
    ASSERT_TRUE(dry.has_value()) << w.name << " without faults: " << dry.error().message;
    int64_t counts[4];
    for (int p = 0; p < 4; ++p) counts[p] = vfs_->count(static_cast<FaultPoint>(p));
    const int64_t mutations = vfs_->mutations();
    const std::string after = w.state();
    ASSERT_NE(before, after) << w.name << " changed nothing";
    ASSERT_GT(counts[0], 0);

    int64_t visited = 0, failed = 0, failed_applied = 0;
    auto judge = [&](const Status& st, const std::string& label, bool full) {
      ++visited;
      std::string now = w.state();
      if (!st.has_value() && now == after) {
        // An error, yet the write is there: the message must not have
        // said (or implied) that nothing happened.
        ++failed_applied;
        EXPECT_THAT(st.error().message, HasSubstr("may have been recorded")) << label;
      }
      if (st.has_value()) {
        EXPECT_EQ(now, after) << label << ": returned success but the write is not all there";
      } else {
        ++failed;
        const std::string& m = st.error().message;
        EXPECT_FALSE(m.empty()) << label;
        EXPECT_THAT(m, Not(HasSubstr("\n"))) << label;
        if (full) {
          EXPECT_THAT(m, HasSubstr("no space left on device")) << label;
        }
        std::string shown = m;
        for (size_t at; (at = shown.find(root_)) != std::string::npos;)
          shown.replace(at, root_.size(), "DIR");
        totals->messages.insert(shown);
        EXPECT_TRUE(now == before || now == after) << label << ": half applied (" << m << ")\n"
                                                   << "before:\n"
                                                   << before << "after:\n"
                                                   << after << "now:\n"
                                                   << now;
      }
      w.check(label);
    };

    std::string summary = w.name + ":";
    for (int p = 0; p < 4; ++p) {
      auto point = static_cast<FaultPoint>(p);
      for (bool full : {false, true}) {
        for (int64_t n = 1; n <= counts[p]; ++n) {
          RestoreBaseline();
          vfs_->Reset();
          vfs_->FailAt(point, n, full ? SQLITE_FULL : IoErr(point), /*sticky=*/full);
          Status st = w.run(FaultVfs::kName);
          bool hit = vfs_->injected() > 0;
          vfs_->Reset();
          ASSERT_TRUE(hit) << w.name << " " << PointName(point) << " #" << n << " was never reached";
          judge(st, fmt::format("{} {} {} #{}", w.name, full ? "full" : "ioerr", PointName(point), n), full);
          if (HasFatalFailure()) return;
        }
      }
      summary += fmt::format(" {} {}x2", PointName(point), counts[p]);
    }
    for (int64_t n = 1; n <= mutations; ++n) {
      RestoreBaseline();
      vfs_->Reset();
      vfs_->CutPowerAt(n);
      Status st = w.run(FaultVfs::kName);
      ASSERT_TRUE(vfs_->power_cut()) << w.name << " power cut #" << n << " was never reached";
      ASSERT_TRUE(vfs_->RevertUnsynced().has_value());
      vfs_->Reset();
      std::string label = fmt::format("{} power cut at mutation #{}", w.name, n);
      if (!w.durable && st.has_value()) {
        // Not promised durable: a lost sample is fine, a torn one is not.
        ++visited;
        std::string now = w.state();
        EXPECT_TRUE(now == before || now == after) << label << ": half applied";
        w.check(label);
      } else {
        judge(st, label, false);
      }
      if (HasFatalFailure()) return;
    }
    summary += fmt::format(" power-cut {}", mutations);

    // The same connection after a failure, as the daemon would go on. I/O
    // errors only: a full disk takes the same paths, and the walk stays fast.
    if (w.same_connection) {
      int64_t same = 0;
      for (auto point : {FaultPoint::kWrite, FaultPoint::kSync}) {
        for (int64_t n = 1; n <= counts[static_cast<int>(point)]; ++n) {
          RestoreBaseline();
          vfs_->Reset();
          vfs_->FailAt(point, n, IoErr(point));
          auto [first, second] = w.same_connection();
          vfs_->Reset();
          std::string label = fmt::format("{} same connection, ioerr {} #{}", w.name, PointName(point), n);
          ++visited;
          ++same;
          if (!first) ++failed;
          EXPECT_TRUE(second.has_value())
              << label << ": the same connection failed after the disk recovered: " << second.error().message;
          EXPECT_THAT(w.state(), HasSubstr(w.same_marker)) << label;
          w.check(label);
          if (HasFatalFailure()) return;
        }
      }
      summary += fmt::format(" same-connection {}", same);
    }
    summary += fmt::format("; visited {} ({} failed, {} of them applied)", visited, failed, failed_applied);
    totals->lines.push_back(summary);
    totals->all += visited;
  }

  std::string root_;
  config::Config config_;
  std::unique_ptr<sys::FixedClock> clock_;
  FaultVfs* vfs_ = nullptr;
  const Actor me_{static_cast<uint32_t>(getuid()), "me", true};
};

TEST_F(FaultTest, Create) {
  Book("base-1", 1, 1 * kH);
  Book("base-2", 2, 2 * kH);
  SaveBaseline();
  Run(LedgerWalk("create", [this](BookingService& s) { return CreateOne(s); }));
}

// The first write ever: no data directory, no ledger. The file is created
// for the write; a failure may leave it behind (a ledger file is never
// removed), but never with half a booking in it.
TEST_F(FaultTest, FirstCreate) {
  SaveBaseline();
  Walk w = LedgerWalk("first create", [this](BookingService& s) { return CreateOne(s); });
  w.state = [this] { return ContentState(); };
  w.same_connection = nullptr;  // a daemon creates its ledger when it starts
  Run(w);
}

TEST_F(FaultTest, Edit) {
  WalkOnBooking("edit", 2, [this](BookingService& s, const std::string& id) -> Status {
    EditRequest r;
    r.ref = id;
    r.duration = 3 * kH;
    r.op_id = "op-edit";
    BK_TRY(s.Edit(me_, r));
    return Ok();
  });
}

TEST_F(FaultTest, Renew) {
  WalkOnBooking("renew", 1, [this](BookingService& s, const std::string& id) -> Status {
    BK_TRY(s.Renew(me_, RenewRequest{id, 30 * kM, "op-renew"}));
    return Ok();
  });
}

TEST_F(FaultTest, Cancel) {
  WalkOnBooking("cancel", 1, [this](BookingService& s, const std::string& id) -> Status {
    BK_TRY(s.Cancel(me_, CancelRequest{id, "op-cancel", std::nullopt}));
    return Ok();
  });
}

std::string ReadFixture() {
  fs::path here(__FILE__);
  std::ifstream in(here.parent_path().parent_path().parent_path() / "tests/fixtures/upstream-ledger.json");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(FaultTest, Import) {
  const std::string fixture = ReadFixture();
  ASSERT_FALSE(fixture.empty());
  // An existing, empty ledger: the import writes into the file directly.
  ASSERT_TRUE(
      store::LedgerStore::Open({config_.ledger_path, true, static_cast<uid_t>(getuid())}).has_value());
  SaveBaseline();
  const Actor root{0, "root", true};
  Run(LedgerWalk("import", [root, fixture](BookingService& s) -> Status {
    BK_TRY(s.ImportUpstream(root, fixture));
    return Ok();
  }));
}

TEST_F(FaultTest, Migration) {
  Book("base-1", 1, 1 * kH);
  Book("base-2", 2, 2 * kH);
  {
    // Back to schema version 1, as a ledger written by an older bk: version 2
    // only added the jobs table and one index.
    auto db = store::Db::Open(config_.ledger_path, SQLITE_OPEN_READWRITE);
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE((*db)
                    ->Exec("DROP INDEX reservations_by_owner_active; DROP TABLE jobs; PRAGMA user_version=1")
                    .has_value());
  }
  SaveBaseline();
  // Any command migrates on open; `bk l` writes nothing else.
  Run(LedgerWalk("migration", [this](BookingService& s) -> Status {
    BK_TRY(s.List(me_, ListQuery{}));
    return Ok();
  }));
}

// The monitor's usage history: one sample per transaction.
class UsageFaultTest : public FaultTest {
 protected:
  std::string UsagePath() const { return config_.data_dir + "/usage.db"; }

  Result<std::unique_ptr<store::UsageStore>> OpenUsage(const std::string& vfs) {
    return store::UsageStore::Open({UsagePath(), true, getuid(), 1000, vfs});
  }

  // One sample as `bk m --once` writes it: a fresh store, one transaction.
  Status Sample(const std::string& vfs, int64_t ts_ms) {
    BK_ASSIGN_OR_RETURN(auto u, OpenUsage(vfs));
    return SampleOn(*u, ts_ms);
  }

  Status SampleOn(store::UsageStore& store, int64_t ts_ms) {
    store::UsageStore* u = &store;
    BK_TRY(u->Begin());
    auto body = [&]() -> Status {
      store::DeviceRow d0{ts_ms, 0, "ok", "simulation", 40, 1000, 80000, 1};
      store::DeviceRow d1{ts_ms, 1, "ok", "simulation", 0, 0, 80000, 0};
      store::DeviceRow rows[] = {d0, d1};
      BK_TRY(u->AddDevices(rows));
      store::RollupRow r;
      r.window_start = ts_ms / 1000 / 60 * 60;
      r.uid = getuid();
      r.username = "me";
      r.status = "ok";
      r.samples = 1;
      r.active_samples = 1;
      r.observed_ms = 2000;
      r.active_ms = 2000;
      store::RollupRow rollups[] = {r};
      BK_TRY(u->AddRollups(rollups));
      store::UsageEvent e;
      e.ts_ms = ts_ms;
      e.kind = "process-start";
      e.gpu = 0;
      e.pid = 4242;
      e.uid = getuid();
      e.username = "me";
      e.status = "ok";
      store::UsageEvent events[] = {e};
      BK_TRY(u->AddEvents(events));
      BK_TRY(u->PutProcess({0, 4242, "t", getuid(), "me", "host", "ok", "", ts_ms}));
      store::HeartbeatRow h;
      h.monitor_id = "m";
      h.status = "running";
      h.sampled_ms = ts_ms;
      h.written_ms = ts_ms;
      BK_TRY(u->PutHeartbeat(h));
      return u->Commit();
    }();
    if (!body) u->Rollback();
    return body;
  }

  std::string UsageState() {
    auto db = store::Db::Open(UsagePath(), SQLITE_OPEN_READWRITE);
    if (!db) return "cannot open: " + db.error().message;
    std::string s = Dump(**db, "SELECT user_version FROM pragma_user_version");
    std::string tables = Dump(**db, "SELECT name FROM sqlite_master WHERE type='table' ORDER BY name");
    s += tables;
    std::istringstream names(tables);
    for (std::string t; std::getline(names, t);) s += t + ":\n" + Dump(**db, "SELECT * FROM " + t);
    return s;
  }
};

TEST_F(UsageFaultTest, UsageHistory) {
  const int64_t t0 = T("2026-11-29T18:52:00Z") * 1000;
  ASSERT_TRUE(Sample("", t0).has_value());
  SaveBaseline();
  Walk w{
      "usage history",
      [this, t0](const std::string& vfs) { return Sample(vfs, t0 + 2000); },
      [this] { return UsageState(); },
      [this, t0](const std::string& label) {
        auto db = store::Db::Open(UsagePath(), SQLITE_OPEN_READWRITE);
        ASSERT_TRUE(db.has_value()) << label;
        EXPECT_EQ(Dump(**db, "PRAGMA integrity_check"), "ok\n") << label;
        db->reset();
        auto next = Sample("", t0 + 4000);
        EXPECT_TRUE(next.has_value()) << label << ": the next sample failed: " << next.error().message;
      },
      // synchronous=NORMAL: a power cut may lose the newest samples, by design.
      /*durable=*/false,
      std::to_string(t0 + 4000),
      // The monitor of a shared server keeps its store open across samples.
      [this, t0]() -> std::pair<Status, Status> {
        auto u = OpenUsage(FaultVfs::kName);
        if (!u) return {std::unexpected(u.error()), std::unexpected(u.error())};
        Status first = SampleOn(**u, t0 + 2000);
        vfs_->Disarm();
        return {first, SampleOn(**u, t0 + 4000)};
      },
  };
  Run(w);
}

}  // namespace
}  // namespace bk::service
