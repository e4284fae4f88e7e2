#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "service/booking_service.h"
#include "service/service_testing.h"
#include "sys/fs.h"
#include "sys/unique_fd.h"

namespace bk::service {
namespace {

class RestoreTest : public ServiceTest {
 protected:
  engine::Reservation Book(int gpu) {
    CreateRequest r;
    r.count = 1;
    r.gpus = {gpu};
    r.duration = engine::kHour;
    r.mode = engine::Mode::kExclusive;
    auto out = service_->Create(admin_, r);
    EXPECT_TRUE(out.has_value()) << (out ? "" : out.error().message);
    return out ? out->reservation : engine::Reservation{};
  }
  std::vector<std::string> Ids() {
    auto l = service_->List(admin_, {.history = true});
    std::vector<std::string> ids;
    if (l)
      for (const auto& r : l->reservations) ids.push_back(r.id);
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  Result<LedgerSwap> RestoreFrom(const std::string& path) {
    sys::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    EXPECT_TRUE(fd.ok()) << path;
    return service_->Restore(admin_, fd.get(), path);
  }
  std::string Bytes(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), {});
  }

  const Actor admin_{static_cast<uint32_t>(getuid()), "owner", true};
  const Actor alice_{static_cast<uint32_t>(getuid()) + 1001, "alice", false};
};

TEST_F(RestoreTest, ARestoredBackupReplacesTheLedgerAndTheOldOneIsKept) {
  auto a = Book(0);
  ASSERT_TRUE(service_->Backup(admin_, Path("backup.db")).has_value());
  Book(1);
  auto out = RestoreFrom(Path("backup.db"));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->checked.reservations, 1);
  EXPECT_EQ(Ids(), std::vector<std::string>{a.id});
  auto history = service_->History(admin_, a.id);
  ASSERT_TRUE(history.has_value());
  EXPECT_EQ(history->events.size(), 1u);  // its "add", as it was
  // The ledger as it was, beside it: owner-only and whole.
  EXPECT_TRUE(out->kept.starts_with(config_.ledger_path + ".replaced-")) << out->kept;
  struct stat st {};
  ASSERT_EQ(stat(out->kept.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto kept = service_->Verify(admin_, out->kept);
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->reservations, 2);
  EXPECT_FALSE(sys::Exists(config_.ledger_path + ".restore"));
  // The restored ledger takes writes again.
  Book(1);
}

TEST_F(RestoreTest, ABackupThatIsNotALedgerIsRefusedAndNothingChanges) {
  auto a = Book(0);
  std::ofstream(Path("junk.db")) << "not a database at all, just text that is long enough to matter";
  std::string before = Bytes(config_.ledger_path);
  auto out = RestoreFrom(Path("junk.db"));
  ASSERT_FALSE(out.has_value());
  EXPECT_EQ(out.error().kind, ErrorKind::kInvalid);
  EXPECT_TRUE(out.error().message.starts_with(Path("junk.db") + " cannot be restored: "))
      << out.error().message;
  EXPECT_TRUE(out.error().message.ends_with("; the ledger is unchanged")) << out.error().message;
  EXPECT_EQ(out.error().message.find('\n'), std::string::npos);
  EXPECT_EQ(Ids(), std::vector<std::string>{a.id});
  EXPECT_EQ(Bytes(config_.ledger_path), before);
  EXPECT_FALSE(sys::Exists(config_.ledger_path + ".restore"));
}

TEST_F(RestoreTest, ABackupOfAnotherPolicyIsRefused) {
  Book(0);
  ASSERT_TRUE(service_->Backup(admin_, Path("backup.db")).has_value());
  Book(1);
  config_.policy.gpu_count = 2;
  Restart();
  auto out = RestoreFrom(Path("backup.db"));
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().message.find("its policy differs from this deployment's: "), std::string::npos)
      << out.error().message;
}

TEST_F(RestoreTest, OnlyAdministratorsRestoreOrClear) {
  Book(0);
  ASSERT_TRUE(service_->Backup(admin_, Path("backup.db")).has_value());
  sys::UniqueFd fd(open(Path("backup.db").c_str(), O_RDONLY | O_CLOEXEC));
  EXPECT_EQ(service_->Restore(alice_, fd.get(), "backup.db").error().kind, ErrorKind::kPermission);
  EXPECT_EQ(service_->Clear(alice_, "").error().kind, ErrorKind::kPermission);
  EXPECT_EQ(Ids().size(), 1u);
}

TEST_F(RestoreTest, ClearKeepsAVerifiedBackupFirst) {
  auto a = Book(0);
  auto out = service_->Clear(admin_, Path("before-clear.db"));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  EXPECT_EQ(out->kept, Path("before-clear.db"));
  EXPECT_TRUE(out->checked.ok());
  EXPECT_EQ(out->checked.reservations, 1);
  EXPECT_TRUE(Ids().empty());
  // The backup restores what was cleared.
  ASSERT_TRUE(RestoreFrom(Path("before-clear.db")).has_value());
  EXPECT_EQ(Ids(), std::vector<std::string>{a.id});
  // A backup file that already exists is refused before anything is cleared.
  auto again = service_->Clear(admin_, Path("before-clear.db"));
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(Ids(), std::vector<std::string>{a.id});
}

// The daemon holds its ledger alone and answers from its calendar: after a
// restore the calendar is the restored ledger's.
class DaemonRestoreTest : public RestoreTest {
 protected:
  DaemonRestoreTest() { exclusive_store_ = true; }
};

TEST_F(DaemonRestoreTest, TheLiveCalendarIsTheRestoredOne) {
  ASSERT_TRUE(service_->Open().has_value());
  ASSERT_TRUE(service_->BeginBatch().has_value());
  auto a = Book(0);
  ASSERT_TRUE(service_->CommitBatch().has_value());
  ASSERT_TRUE(service_->Backup(admin_, Path("backup.db")).has_value());
  ASSERT_TRUE(service_->Clear(admin_, "").has_value());
  // Cleared: GPU 0 is free now.
  auto now = clock_->Now();
  EXPECT_TRUE(service_->Status(admin_, now, now + engine::kDay, std::nullopt)->reservations.empty());
  // A write grouped before the restore is kept aside with the rest.
  ASSERT_TRUE(service_->BeginBatch().has_value());
  Book(1);
  auto out = RestoreFrom(Path("backup.db"));
  ASSERT_TRUE(out.has_value()) << out.error().message;
  ASSERT_TRUE(service_->CommitBatch().has_value());
  EXPECT_EQ(Ids(), std::vector<std::string>{a.id});
  EXPECT_EQ(service_->Verify(admin_, out->kept)->reservations, 1);  // b
  // GPU 0 is a's again: someone else's booking of it now is refused.
  CreateRequest r;
  r.count = 1;
  r.gpus = {0};
  r.duration = engine::kHour;
  r.mode = engine::Mode::kExclusive;
  r.start = engine::T("2026-11-29T18:50:00Z");
  auto refused = service_->Create(alice_, r);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, ErrorKind::kConflict);
  // ... and GPU 1, held only by the booking the restore replaced, is free.
  r.gpus = {1};
  EXPECT_TRUE(service_->Create(alice_, r).has_value());
}

}  // namespace
}  // namespace bk::service
