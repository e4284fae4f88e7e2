#include "store/fault_vfs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/temp_dir_testing.h"
#include "store/sqlite.h"

namespace bk::store {
namespace {

using ::testing::HasSubstr;

class FaultVfsTest : public TempDirTest {
 protected:
  void SetUp() override {
    vfs_ = &FaultVfs::Install();
    vfs_->Reset();
  }
  void TearDown() override { vfs_->Reset(); }

  std::unique_ptr<Db> Open(bool faulty) {
    auto db = Db::Open(path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, faulty ? FaultVfs::kName : "");
    EXPECT_TRUE(db.has_value()) << db.error().message;
    return db ? std::move(*db) : nullptr;
  }

  int64_t Rows() {
    auto db = Open(false);
    auto st = db->Prepare("SELECT count(*) FROM t");
    EXPECT_TRUE(st.has_value());
    EXPECT_TRUE(st->Step().value_or(false));
    return st->Int(0);
  }

  std::string path_ = Path("t.db");
  FaultVfs* vfs_ = nullptr;
};

TEST_F(FaultVfsTest, CountsAndFailsTheNthWrite) {
  {
    auto db = Open(false);
    ASSERT_TRUE(db->Exec("PRAGMA journal_mode=WAL; CREATE TABLE t(x)").has_value());
  }
  {
    auto db = Open(true);
    ASSERT_TRUE(db->Exec("INSERT INTO t VALUES(1)").has_value());
    EXPECT_GT(vfs_->count(FaultPoint::kWrite), 0);
    EXPECT_GT(vfs_->count(FaultPoint::kSync), 0);  // journal_mode persists; FULL syncs the WAL by default
    EXPECT_EQ(vfs_->count(FaultPoint::kOpen), 2);  // the database and its WAL
  }
  vfs_->Reset();
  vfs_->FailAt(FaultPoint::kWrite, 1, SQLITE_FULL, /*sticky=*/true);
  {
    auto db = Open(true);
    auto st = db->Exec("INSERT INTO t VALUES(2)");
    ASSERT_FALSE(st.has_value());
    EXPECT_EQ(st.error().kind, ErrorKind::kIo);
    EXPECT_THAT(st.error().message, HasSubstr("no space left on device"));
    EXPECT_GT(vfs_->injected(), 0);
  }
  vfs_->Reset();
  EXPECT_EQ(Rows(), 1);
}

TEST_F(FaultVfsTest, PowerCutDropsWhatWasNeverSynced) {
  {
    auto db = Open(false);
    ASSERT_TRUE(db->Exec("PRAGMA journal_mode=WAL; CREATE TABLE t(x); INSERT INTO t VALUES(1)").has_value());
  }
  vfs_->CutPowerAt(1'000'000);  // armed before the open: the files as they are now are durable
  {
    auto db = Open(true);
    // synchronous=OFF: the commit reaches the WAL file but is never synced.
    ASSERT_TRUE(db->Exec("PRAGMA synchronous=OFF; INSERT INTO t VALUES(2)").has_value());
    vfs_->CutPowerAt(vfs_->mutations() + 1);  // the next mutation (the close's checkpoint) fails
  }
  EXPECT_TRUE(vfs_->power_cut());
  ASSERT_TRUE(vfs_->RevertUnsynced().has_value());
  vfs_->Reset();
  EXPECT_EQ(Rows(), 1);  // the unsynced row is gone, the file is whole

  vfs_->CutPowerAt(1'000'000);
  {
    auto db = Open(true);
    ASSERT_TRUE(db->Exec("PRAGMA synchronous=FULL; INSERT INTO t VALUES(3)").has_value());
    vfs_->CutPowerAt(vfs_->mutations() + 1);
  }
  EXPECT_TRUE(vfs_->power_cut());
  ASSERT_TRUE(vfs_->RevertUnsynced().has_value());
  vfs_->Reset();
  EXPECT_EQ(Rows(), 2);
}

}  // namespace
}  // namespace bk::store
