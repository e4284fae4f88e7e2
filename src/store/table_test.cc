#include "store/table.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

namespace bk::store {
namespace {

struct Sample {
  int64_t seq = 0;
  std::string key;
  uint32_t uid = 0;
  std::optional<int64_t> size;
  std::vector<int> gpus;
  bool flag = false;
  std::string note;
  int64_t count = 0;
};

// clang-format off
constexpr auto kSampleTable = [] {
  using S = Sample;
  return MakeTable(TableInfo{"samples", "key, uid"},
                   Field<&S::seq>{"seq", "INTEGER NOT NULL"},
                   Field<&S::key>{"key", "TEXT NOT NULL"},
                   Field<&S::uid>{"uid", "INTEGER NOT NULL", "owner"},
                   Field<&S::size>{"size", "INTEGER", {}, Merge::kMax},
                   Field<&S::gpus>{"gpus", "TEXT NOT NULL"},
                   Field<&S::flag>{"flag", "INTEGER NOT NULL DEFAULT 0"},
                   Field<&S::note, EmptyAsNull>{"note", "TEXT"},
                   Field<&S::count>{"count", "INTEGER NOT NULL", {}, Merge::kSum});
}();

constexpr auto kLogTable = [] {
  using S = Sample;
  return MakeTable(TableInfo{"log"},
                   Field<&S::seq>{"seq", "INTEGER PRIMARY KEY AUTOINCREMENT"},
                   Field<&S::key>{"key", "TEXT NOT NULL"});
}();
// clang-format on

TEST(TableTest, StatementsComeFromTheFields) {
  EXPECT_EQ(ColumnList(kSampleTable), "seq, key, uid, size, gpus, flag, note, count");
  EXPECT_EQ(ColumnList(kLogTable, "l."), "l.seq, l.key");
  EXPECT_EQ(SelectSql(kLogTable), "SELECT seq, key FROM log");
  EXPECT_EQ(CreateTableSql(kSampleTable),
            "CREATE TABLE samples(\n  seq INTEGER NOT NULL,\n  key TEXT NOT NULL,\n  uid INTEGER NOT NULL,\n"
            "  size INTEGER,\n  gpus TEXT NOT NULL,\n  flag INTEGER NOT NULL DEFAULT 0,\n  note TEXT,\n"
            "  count INTEGER NOT NULL,\n  PRIMARY KEY (key, uid)\n) STRICT;\n");
  EXPECT_EQ(
      CreateTableSql(kLogTable, "CREATE TABLE IF NOT EXISTS"),
      "CREATE TABLE IF NOT EXISTS log(\n  seq INTEGER PRIMARY KEY AUTOINCREMENT,\n  key TEXT NOT NULL\n) "
      "STRICT;\n");
  // SQLite assigns an AUTOINCREMENT column: never written.
  EXPECT_EQ(InsertSql(kLogTable), "INSERT INTO log(key) VALUES(?1)");
  EXPECT_EQ(UpdateSql(kLogTable), "UPDATE log SET key=?1 WHERE key=?1");
  EXPECT_EQ(UpsertSql(kSampleTable),
            "INSERT INTO samples(seq, key, uid, size, gpus, flag, note, count) "
            "VALUES(?1,?2,?3,?4,?5,?6,?7,?8) ON CONFLICT(key, uid) DO UPDATE SET seq=excluded.seq, "
            "size=max(size, excluded.size), gpus=excluded.gpus, flag=excluded.flag, note=excluded.note, "
            "count=count+excluded.count");
  EXPECT_EQ(std::get<2>(kSampleTable.fields).JsonKey(), "owner");
  EXPECT_EQ(std::get<1>(kSampleTable.fields).JsonKey(), "key");
}

TEST(TableTest, RowsRoundTripAndUnsetIsNull) {
  auto db = Db::Open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  ASSERT_TRUE(db.has_value());
  ASSERT_TRUE((*db)->Exec(CreateTableSql(kSampleTable)).has_value());
  Sample full{7, "a", 4'000'000'000u, 12, {0, 3}, true, "why", 2};
  Sample bare{8, "b", 1, std::nullopt, {}, false, "", 0};
  for (const Sample& s : {full, bare}) {
    auto st = (*db)->Prepare(InsertSql(kSampleTable));
    ASSERT_TRUE(st.has_value());
    BindRow(*st, kSampleTable, s);
    ASSERT_TRUE(st->Run().has_value());
  }
  auto st = (*db)->Prepare(SelectSql(kSampleTable) + " ORDER BY seq");
  ASSERT_TRUE(st.has_value());
  auto rows = ReadRows(*st, kSampleTable);
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 2u);
  const Sample& a = (*rows)[0];
  EXPECT_EQ(a.seq, 7);
  EXPECT_EQ(a.key, "a");
  EXPECT_EQ(a.uid, 4'000'000'000u);
  EXPECT_EQ(a.size, 12);
  EXPECT_EQ(a.gpus, (std::vector<int>{0, 3}));
  EXPECT_TRUE(a.flag);
  EXPECT_EQ(a.note, "why");
  EXPECT_EQ(a.count, 2);
  const Sample& b = (*rows)[1];
  EXPECT_EQ(b.size, std::nullopt);
  EXPECT_TRUE(b.gpus.empty());
  EXPECT_FALSE(b.flag);
  EXPECT_EQ(b.note, "");

  auto types = (*db)->Prepare("SELECT typeof(size), typeof(note), gpus FROM samples WHERE key = 'b'");
  ASSERT_TRUE(types.has_value());
  ASSERT_TRUE(*types->Step());
  EXPECT_EQ(types->Text(0), "null");
  EXPECT_EQ(types->Text(1), "null");
  EXPECT_EQ(types->Text(2), "");
}

TEST(TableTest, UpsertMergesByRule) {
  auto db = Db::Open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  ASSERT_TRUE(db.has_value());
  ASSERT_TRUE((*db)->Exec(CreateTableSql(kSampleTable)).has_value());
  for (const Sample& s :
       {Sample{1, "k", 5, 10, {1}, false, "", 2}, Sample{2, "k", 5, 4, {2}, true, "x", 3}}) {
    auto st = (*db)->Prepare(UpsertSql(kSampleTable));
    ASSERT_TRUE(st.has_value());
    BindRow(*st, kSampleTable, s);
    ASSERT_TRUE(st->Run().has_value());
  }
  auto st = (*db)->Prepare(SelectSql(kSampleTable));
  ASSERT_TRUE(st.has_value());
  auto rows = ReadRows(*st, kSampleTable);
  ASSERT_TRUE(rows.has_value());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].seq, 2);
  EXPECT_EQ((*rows)[0].size, 10);  // max
  EXPECT_EQ((*rows)[0].count, 5);  // sum
  EXPECT_EQ((*rows)[0].gpus, (std::vector<int>{2}));
  EXPECT_EQ((*rows)[0].note, "x");
}

TEST(TableTest, ParseGpusSkipsNoise) {
  EXPECT_EQ(ParseGpus("0,2,10"), (std::vector<int>{0, 2, 10}));
  EXPECT_EQ(ParseGpus(" 1, ,3,"), (std::vector<int>{1, 3}));
  EXPECT_TRUE(ParseGpus("").empty());
}

}  // namespace
}  // namespace bk::store
