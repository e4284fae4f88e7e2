#include "store/usage_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <tuple>

#include "base/temp_dir_testing.h"

namespace bk::store {
namespace {

constexpr int64_t kT0 = 1'795'000'000;  // epoch seconds (Hour() aligns it)

int64_t Hour(int64_t t) { return t - t % 3600; }

class UsageStoreTest : public TempDirTest {
 protected:
  std::unique_ptr<UsageStore> OpenRw() {
    auto s = UsageStore::Open({path_, true, getuid(), 1000});
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().message);
    return s ? std::move(*s) : nullptr;
  }

  static RollupRow Row(int64_t window, int gpu, uint32_t uid, std::string status, int64_t samples,
                       int64_t active_samples, int64_t interval_ms = 2000) {
    RollupRow r;
    r.window_start = window;
    r.resolution = 60;
    r.gpu = gpu;
    r.uid = uid;
    r.username = "u" + std::to_string(uid);
    r.status = std::move(status);
    r.samples = samples;
    r.active_samples = active_samples;
    r.observed_ms = samples * interval_ms;
    r.active_ms = active_samples * interval_ms;
    r.memory_max_mb = 1000 + gpu;
    return r;
  }

  std::string path_ = Path("data/usage.db");
};

TEST_F(UsageStoreTest, CreatesPrivateFilesAndRefusesSymlinks) {
  auto s = OpenRw();
  ASSERT_TRUE(s);
  struct stat st;
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(stat(Path("data").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  s.reset();

  std::string link = Path("data/link.db");
  ASSERT_EQ(symlink(path_.c_str(), link.c_str()), 0);
  auto bad = UsageStore::Open({link, false, getuid(), 1000});
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message.find("symbolic link"), std::string::npos) << bad.error().message;
}

TEST_F(UsageStoreTest, ReaderDoesNotCreate) {
  auto s = UsageStore::Open({path_, false, getuid(), 1000});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().kind, ErrorKind::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(Path("data")));
}

TEST_F(UsageStoreTest, RefusesAForeignDatabase) {
  std::filesystem::create_directories(Path("data"));
  chmod(Path("data").c_str(), 0700);
  {
    auto db = Db::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    ASSERT_TRUE(db.has_value());
    ASSERT_TRUE((*db)->Exec("CREATE TABLE x(a)").has_value());
  }
  chmod(path_.c_str(), 0600);
  auto s = UsageStore::Open({path_, true, getuid(), 1000});
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().kind, ErrorKind::kCorrupt);
}

TEST_F(UsageStoreTest, UsesWal) {
  auto s = OpenRw();
  ASSERT_TRUE(s);
  auto st = s->db().Prepare("PRAGMA journal_mode");
  ASSERT_TRUE(st.has_value());
  ASSERT_TRUE(*st->Step());
  EXPECT_EQ(st->Text(0), "wal");
}

TEST_F(UsageStoreTest, RollupsAddIntoBothTiers) {
  auto s = OpenRw();
  ASSERT_TRUE(s);
  const int64_t h = Hour(kT0);
  std::vector<RollupRow> a = {Row(h, 0, 1001, "ok", 30, 10), Row(h + 60, 0, 1001, "ok", 30, 30)};
  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->AddRollups(a));
  ASSERT_TRUE(s->Commit());
  // A partial flush of the same minute from another run adds up.
  std::vector<RollupRow> b = {Row(h + 60, 0, 1001, "ok", 5, 0)};
  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->AddRollups(b));
  ASSERT_TRUE(s->Commit());

  auto minutes = s->Rollups({h, h + 3600, 60, std::nullopt, std::nullopt, 100});
  ASSERT_TRUE(minutes.has_value());
  ASSERT_EQ(minutes->size(), 2u);
  EXPECT_EQ((*minutes)[1].samples, 35);
  EXPECT_EQ((*minutes)[1].active_samples, 30);
  auto hours = s->Rollups({h, h + 3600, 3600, std::nullopt, std::nullopt, 100});
  ASSERT_TRUE(hours.has_value());
  ASSERT_EQ(hours->size(), 1u);
  EXPECT_EQ((*hours)[0].samples, 65);
  EXPECT_EQ((*hours)[0].observed_ms, 65 * 2000);
  EXPECT_EQ((*hours)[0].active_ms, 40 * 2000);
}

TEST_F(UsageStoreTest, UsersCombinesHoursAndEdgeMinutes) {
  auto s = OpenRw();
  ASSERT_TRUE(s);
  const int64_t h = Hour(kT0);
  std::vector<RollupRow> rows;
  // Three hours of alice on GPU 0 (booked, busy half the time) and bob unbooked on GPU 1.
  for (int64_t m = 0; m < 180; ++m) {
    rows.push_back(Row(h + m * 60, 0, 1001, "ok", 30, m % 2 == 0 ? 30 : 0));
    rows.push_back(Row(h + m * 60, 1, 1002, "unreserved", 30, 30));
  }
  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->AddRollups(rows));
  ASSERT_TRUE(s->Commit());

  // From 30 minutes into the first hour to 20 minutes into the third.
  auto users = s->Users(h + 1800, h + 2 * 3600 + 1200, std::nullopt);
  ASSERT_TRUE(users.has_value());
  ASSERT_EQ(users->size(), 2u);
  const UserUsage& alice = (*users)[0];
  EXPECT_EQ(alice.uid, 1001u);
  EXPECT_EQ(alice.username, "u1001");
  const int64_t minutes = 30 + 60 + 20;
  EXPECT_EQ(alice.sampled_ms, minutes * 60'000);
  EXPECT_EQ(alice.reserved_ms, minutes * 60'000);
  EXPECT_EQ(alice.active_ms, minutes / 2 * 60'000);
  EXPECT_EQ(alice.idle_reserved_ms, minutes / 2 * 60'000);
  EXPECT_EQ(alice.unbooked_ms, 0);
  EXPECT_EQ(alice.gpus, std::vector<int>{0});
  const UserUsage& bob = (*users)[1];
  EXPECT_EQ(bob.unbooked_ms, minutes * 60'000);
  EXPECT_EQ(bob.reserved_ms, 0);
  EXPECT_EQ(bob.max_memory_mb, 1001);

  auto only_bob = s->Users(h, h + 3 * 3600, 1002u);
  ASSERT_TRUE(only_bob.has_value());
  ASSERT_EQ(only_bob->size(), 1u);
  EXPECT_EQ((*only_bob)[0].sampled_ms, 180 * 60'000);

  // Inside one hour: minutes only.
  auto inside = s->Users(h + 600, h + 1200, 1001u);
  ASSERT_TRUE(inside.has_value());
  ASSERT_EQ(inside->size(), 1u);
  EXPECT_EQ((*inside)[0].sampled_ms, 10 * 60'000);
}

TEST_F(UsageStoreTest, EventsNewestLimitOldestFirst) {
  auto s = OpenRw();
  ASSERT_TRUE(s);
  std::vector<UsageEvent> events;
  for (int i = 0; i < 5; ++i) {
    UsageEvent e;
    e.ts_ms = kT0 * 1000 + i;
    e.kind = "process-start";
    e.gpu = i % 2;
    e.pid = 100 + i;
    e.uid = 1001;
    e.username = "alice";
    events.push_back(e);
  }
  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->AddEvents(events));
  ASSERT_TRUE(s->Commit());
  auto got = s->Events({kT0 * 1000, kT0 * 1000 + 10, std::nullopt, std::nullopt, 3});
  ASSERT_TRUE(got.has_value());
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ((*got)[0].pid, 102);
  EXPECT_EQ((*got)[2].pid, 104);
  auto gpu1 = s->Events({kT0 * 1000, kT0 * 1000 + 10, std::nullopt, 1, 10});
  ASSERT_TRUE(gpu1.has_value());
  EXPECT_EQ(gpu1->size(), 2u);
}

TEST_F(UsageStoreTest, StateRoundTrips) {
  auto s = OpenRw();
  ASSERT_TRUE(s);
  HeartbeatRow h;
  h.monitor_id = "abc";
  h.pid = 42;
  h.uid = 1000;
  h.status = "running";
  h.started_ms = 1;
  h.sampled_ms = 2;
  h.written_ms = 3;
  h.samples = 7;
  h.sample_state = "paused";
  TrackedProcess p{1, 4242, "tok", 1001u, "alice", "host", "ok", "r1", 5};
  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->PutHeartbeat(h));
  ASSERT_TRUE(s->PutProcess(p));
  ASSERT_TRUE(s->PutEvidence({"r1", 100, 200, std::nullopt}));
  ASSERT_TRUE(s->PutEvidence({"r2", std::nullopt, 200, 150}));
  ASSERT_TRUE(s->Commit());
  s.reset();

  s = OpenRw();
  auto hb = s->Heartbeat();
  ASSERT_TRUE(hb.has_value() && hb->has_value());
  EXPECT_EQ((*hb)->monitor_id, "abc");
  EXPECT_EQ((*hb)->samples, 7);
  EXPECT_EQ((*hb)->sample_state, "paused");
  EXPECT_FALSE((*hb)->stopped_ms.has_value());
  auto procs = s->Processes();
  ASSERT_TRUE(procs.has_value());
  ASSERT_EQ(procs->size(), 1u);
  EXPECT_EQ((*procs)[0].uid, 1001u);
  EXPECT_EQ((*procs)[0].token, "tok");
  auto ev = s->Evidence();
  ASSERT_TRUE(ev.has_value());
  ASSERT_EQ(ev->size(), 2u);
  EXPECT_EQ((*ev)[0].since_ms, 100);
  EXPECT_EQ((*ev)[1].used_ms, 150);

  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->DeleteProcess(1, 4242, "tok"));
  ASSERT_TRUE(s->DeleteEvidence("r1"));
  ASSERT_TRUE(s->Commit());
  EXPECT_TRUE(s->Processes()->empty());
  EXPECT_EQ(s->Evidence()->size(), 1u);
}

TEST_F(UsageStoreTest, PruneByAge) {
  auto s = OpenRw();
  ASSERT_TRUE(s);
  const int64_t now = Hour(kT0);
  const int64_t day = 86400;
  std::vector<DeviceRow> devices = {{(now - 3 * day) * 1000, 0, "ok", "simulation", 1, 1, 2, 0},
                                    {(now - 1 * day) * 1000, 0, "ok", "simulation", 1, 1, 2, 0}};
  std::vector<RollupRow> rollups = {Row(now - 40 * day, 0, 1, "ok", 1, 1),
                                    Row(now - 10 * day, 0, 1, "ok", 1, 1)};
  UsageEvent old_event;
  old_event.ts_ms = (now - 400 * day) * 1000;
  old_event.kind = "process-start";
  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->AddDevices(devices));
  ASSERT_TRUE(s->AddRollups(rollups));
  ASSERT_TRUE(s->AddEvents({&old_event, 1}));
  ASSERT_TRUE(s->Prune(now * 1000, UsageRetention{}));
  ASSERT_TRUE(s->Commit());
  EXPECT_EQ(s->Devices(0, now * 1000, 100)->size(), 1u);
  EXPECT_EQ(s->Rollups({0, now, 60, std::nullopt, std::nullopt, 100})->size(), 1u);    // 35 days of minutes
  EXPECT_EQ(s->Rollups({0, now, 3600, std::nullopt, std::nullopt, 100})->size(), 2u);  // 400 days of hours
  EXPECT_TRUE(s->Events({0, now * 1000, std::nullopt, std::nullopt, 10})->empty());
}

TEST_F(UsageStoreTest, ClearEmptiesEveryRecordInPlace) {
  auto s = OpenRw();
  ASSERT_TRUE(s);
  const int64_t now = Hour(kT0);
  std::vector<DeviceRow> devices = {{now * 1000, 0, "ok", "simulation", 1, 1, 2, 0}};
  std::vector<RollupRow> rollups = {Row(now, 0, 1, "ok", 1, 1), Row(now + 60, 1, 1, "ok", 1, 1)};
  UsageEvent event;
  event.ts_ms = now * 1000;
  event.kind = "process-start";
  HeartbeatRow h;
  h.monitor_id = "abc";
  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->AddDevices(devices));
  ASSERT_TRUE(s->AddRollups(rollups));  // two minute rows and their one hour
  ASSERT_TRUE(s->AddEvents({&event, 1}));
  ASSERT_TRUE(s->PutHeartbeat(h));
  ASSERT_TRUE(s->PutProcess({1, 4242, "tok", 1001u, "alice", "host", "ok", "r1", 5}));
  ASSERT_TRUE(s->PutEvidence({"r1", 100, 200, std::nullopt}));
  ASSERT_TRUE(s->PutGpu({0, "GPU-0", "A100", 81920, 1}));
  ASSERT_TRUE(s->Commit());

  auto cleared = s->Clear();
  ASSERT_TRUE(cleared.has_value()) << cleared.error().message;
  EXPECT_EQ(cleared->events, 1);
  EXPECT_EQ(cleared->rollups, 4);  // two GPUs, each a minute and an hour row
  EXPECT_TRUE(s->Devices(0, (now + 3600) * 1000, 100)->empty());
  EXPECT_TRUE(s->Rollups({0, now + 3600, 3600, std::nullopt, std::nullopt, 100})->empty());
  EXPECT_TRUE(s->Events({0, (now + 3600) * 1000, std::nullopt, std::nullopt, 10})->empty());
  EXPECT_FALSE(s->Heartbeat()->has_value());
  EXPECT_TRUE(s->Processes()->empty());
  EXPECT_TRUE(s->Evidence()->empty());
  EXPECT_TRUE(s->Gpus()->empty());
  // Still a usage.db: it opens again and takes samples.
  s.reset();
  s = OpenRw();
  ASSERT_TRUE(s);
  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->AddDevices(devices));
  ASSERT_TRUE(s->Commit());
  EXPECT_EQ(s->Devices(0, (now + 1) * 1000, 100)->size(), 1u);
}

TEST_F(UsageStoreTest, StatsCountRowsAndSpans) {
  auto s = OpenRw();
  ASSERT_TRUE(s);
  auto empty = s->Stats();
  ASSERT_TRUE(empty.has_value()) << empty.error().message;
  EXPECT_GT(empty->page_size, 0);
  EXPECT_EQ(empty->format, "gpubk.usage.sqlite");
  EXPECT_EQ(empty->journal_mode, "wal");
  ASSERT_EQ(empty->spans.size(), 4u);
  EXPECT_EQ(empty->spans[1].name, "minute");
  EXPECT_EQ(empty->spans[1].rows, 0);
  EXPECT_FALSE(empty->spans[1].oldest.has_value());

  const int64_t h = Hour(kT0);
  std::vector<DeviceRow> devices = {{h * 1000 + 500, 0, "ok", "simulation", 1, 1, 2, 0},
                                    {(h + 90) * 1000, 0, "ok", "simulation", 1, 1, 2, 0}};
  std::vector<RollupRow> rollups = {Row(h, 0, 1, "ok", 1, 1), Row(h + 60, 0, 1, "ok", 1, 1),
                                    Row(h + 3600, 1, 2, "unreserved", 1, 1)};
  UsageEvent e;
  e.ts_ms = (h + 30) * 1000;
  e.kind = "monitor-start";
  ASSERT_TRUE(s->Begin());
  ASSERT_TRUE(s->AddDevices(devices));
  ASSERT_TRUE(s->AddRollups(rollups));
  ASSERT_TRUE(s->AddEvents({&e, 1}));
  ASSERT_TRUE(s->Commit());

  auto got = s->Stats();
  ASSERT_TRUE(got.has_value()) << got.error().message;
  std::map<std::string, int64_t> rows;
  for (const auto& t : got->tables) rows[t.name] = t.rows;
  EXPECT_EQ(rows, (std::map<std::string, int64_t>{{"devices", 2},
                                                  {"rollups", 5},
                                                  {"events", 1},
                                                  {"processes", 0},
                                                  {"evidence", 0},
                                                  {"gpus", 0},
                                                  {"heartbeat", 0}}));
  const auto& sp = got->spans;
  EXPECT_EQ((std::tuple{sp[0].name, sp[0].rows, sp[0].oldest, sp[0].newest}),
            (std::tuple{std::string("devices"), int64_t{2}, std::optional(h), std::optional(h + 90)}));
  EXPECT_EQ((std::tuple{sp[1].name, sp[1].rows, sp[1].oldest, sp[1].newest}),
            (std::tuple{std::string("minute"), int64_t{3}, std::optional(h), std::optional(h + 3600)}));
  EXPECT_EQ((std::tuple{sp[2].name, sp[2].rows, sp[2].oldest, sp[2].newest}),
            (std::tuple{std::string("hourly"), int64_t{2}, std::optional(h), std::optional(h + 3600)}));
  EXPECT_EQ((std::tuple{sp[3].name, sp[3].rows, sp[3].oldest}),
            (std::tuple{std::string("events"), int64_t{1}, std::optional(h + 30)}));
  EXPECT_GE(got->page_count, got->free_pages);
}

}  // namespace
}  // namespace bk::store
