#include "server/import_job.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "service/import.h"
#include "service/service_testing.h"
#include "sys/file_system_testing.h"

namespace bk::server {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

const service::Actor kRoot{0, "root", true};
const service::Actor kNobody{65534, "nobody", false};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Fixture() {
  std::filesystem::path here(__FILE__);
  return ReadAll(
      (here.parent_path().parent_path().parent_path() / "tests/fixtures/upstream-ledger.json").string());
}

// The daemon's import path: PrepareImport, a job on its own thread into the
// staging ledger, AdoptImport; with the live ledger held as the daemon holds it.
class ImportJobTest : public service::ServiceTest {
 protected:
  ImportJobTest() {
    clock_->Set(engine::T("2026-11-29T18:50:00Z"));
    exclusive_store_ = true;
  }
  void SetUp() override {
    ServiceTest::SetUp();
    ASSERT_TRUE(service_->Open().has_value());
  }

  sys::UniqueFd File(const std::string& name, const std::string& text, int flags = O_RDONLY) {
    std::string path = Path(name);
    std::ofstream(path, std::ios::binary) << text;
    return sys::UniqueFd(open(path.c_str(), flags | O_CLOEXEC));
  }

  std::unique_ptr<ImportJob> Start(const std::string& text) {
    auto staged = service_->PrepareImport(kRoot);
    EXPECT_TRUE(staged.has_value()) << staged.error().message;
    if (!staged) return nullptr;
    auto job = ImportJob::Start(std::move(*staged), File("ledger.json", text));
    EXPECT_TRUE(job.has_value()) << job.error().message;
    return job ? std::move(*job) : nullptr;
  }

  // Waits (bounded) until the worker says it is done, as the event loop does.
  static Result<service::ImportSummary> Wait(ImportJob& job) {
    pollfd p{job.fd(), POLLIN, 0};
    EXPECT_EQ(poll(&p, 1, 60000), 1) << "the job did not finish";
    return job.Finish();
  }

  std::string Staging() const { return service::StagingPath(config_.ledger_path); }
  int64_t Reservations() {
    auto all = service_->List(kRoot, service::ListQuery{true, std::nullopt, true});
    EXPECT_TRUE(all.has_value()) << all.error().message;
    return all ? all->total : -1;
  }
};

TEST_F(ImportJobTest, AFinishedJobIsSwappedInAndItsStagingFileIsGone) {
  auto job = Start(Fixture());
  ASSERT_TRUE(job);
  auto summary = Wait(*job);
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->reservations, 5);
  EXPECT_TRUE(std::filesystem::exists(Staging()));
  EXPECT_EQ(Reservations(), 0) << "nothing is live before the swap";
  uint64_t generation = service_->Generation();
  ASSERT_TRUE(service_->AdoptImport(job->staging_path()).has_value());
  job.reset();
  EXPECT_FALSE(std::filesystem::exists(Staging()));
  EXPECT_EQ(Reservations(), 5);
  EXPECT_NE(service_->Generation(), generation) << "read caches must see the new ledger";
  auto verify = service_->Verify(kRoot, "");
  ASSERT_TRUE(verify.has_value()) << verify.error().message;
  EXPECT_TRUE(verify->ok());
}

TEST_F(ImportJobTest, ABadRecordLeavesNoStagingFileAndTheLiveLedgerUntouched) {
  json doc = json::parse(Fixture());
  doc["reservations"][3]["gpus"] = json::array({"x"});
  std::string before = ReadAll(config_.ledger_path);
  auto job = Start(doc.dump());
  ASSERT_TRUE(job);
  auto summary = Wait(*job);
  ASSERT_FALSE(summary.has_value());
  EXPECT_THAT(summary.error().message, HasSubstr("reservations[3].gpus[0]"));
  EXPECT_THAT(summary.error().message, HasSubstr("nothing was imported"));
  job.reset();
  EXPECT_FALSE(std::filesystem::exists(Staging()));
  EXPECT_FALSE(std::filesystem::exists(Staging() + "-wal"));
  EXPECT_EQ(ReadAll(config_.ledger_path), before);
}

TEST_F(ImportJobTest, TheSwapIsRefusedOnceTheLiveLedgerHoldsABooking) {
  auto job = Start(Fixture());
  ASSERT_TRUE(job);
  ASSERT_TRUE(Wait(*job).has_value());
  service::CreateRequest r;
  r.count = 1;
  r.duration = 3600;
  ASSERT_TRUE(service_->Create(service::Actor{1000, "alice", false}, r).has_value());
  auto adopted = service_->AdoptImport(job->staging_path());
  ASSERT_FALSE(adopted.has_value());
  EXPECT_THAT(adopted.error().message, HasSubstr("ledger import needs an empty ledger"));
  job.reset();
  EXPECT_FALSE(std::filesystem::exists(Staging()));
  EXPECT_EQ(Reservations(), 1);
}

TEST_F(ImportJobTest, AJobDestroyedBeforeItFinishesLeavesNothing) {
  auto job = Start(Fixture());
  ASSERT_TRUE(job);
  job.reset();  // stops the worker wherever it is and waits for it
  EXPECT_FALSE(std::filesystem::exists(Staging()));
  EXPECT_EQ(Reservations(), 0);
}

TEST_F(ImportJobTest, AStaleStagingFileIsReplaced) {
  std::ofstream(Staging()) << "left by a daemon that died mid-import";
  auto job = Start(Fixture());
  ASSERT_TRUE(job);
  ASSERT_TRUE(Wait(*job).has_value());
  ASSERT_TRUE(service_->AdoptImport(job->staging_path()).has_value());
  EXPECT_EQ(Reservations(), 5);
}

TEST_F(ImportJobTest, OnlyAnAdministratorMayPrepareAndOnlyForAnEmptyLedger) {
  auto refused = service_->PrepareImport(kNobody);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, ErrorKind::kPermission);
  EXPECT_EQ(refused.error().message, service::kImportNeedsAdmin);
  ASSERT_TRUE(service_->ImportUpstream(kRoot, Fixture()).has_value());
  auto used = service_->PrepareImport(kRoot);
  ASSERT_FALSE(used.has_value());
  EXPECT_THAT(used.error().message, HasSubstr("already holds 5 reservations"));
}

TEST_F(ImportJobTest, OnlyARegularReadableFileOfBoundedSizeIsTaken) {
  sys::UniqueFd dir(open(root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto directory = ImportJob::CheckFile(dir.get());
  ASSERT_FALSE(directory.has_value());
  EXPECT_THAT(directory.error().message, HasSubstr("not a regular file"));

  sys::UniqueFd write_only = File("w.json", "{}", O_WRONLY);
  auto unreadable = ImportJob::CheckFile(write_only.get());
  ASSERT_FALSE(unreadable.has_value());
  EXPECT_THAT(unreadable.error().message, HasSubstr("not open for reading"));

  sys::UniqueFd big = File("big.json", "", O_RDWR);
  ASSERT_EQ(ftruncate(big.get(), ImportJob::kMaxBytes + 1), 0);
  auto large = ImportJob::CheckFile(big.get());
  ASSERT_FALSE(large.has_value());
  EXPECT_THAT(large.error().message, HasSubstr("at most 128 MiB"));

  sys::UniqueFd fine = File("ok.json", "{}");
  EXPECT_TRUE(ImportJob::CheckFile(fine.get()).has_value());
}

TEST_F(ImportJobTest, ProgressGoesThroughEveryPhase) {
  json doc = json::parse(Fixture());
  json many = json::array();
  for (int i = 0; i < 600; ++i) {
    json r = doc["reservations"][0];
    r["id"] = fmt::format("00000000-0000-4000-8000-{:012}", i);
    r["op_id"] = fmt::format("op-{}", i);
    many.push_back(r);
  }
  doc["reservations"] = many;
  std::set<service::ImportPhase> seen;
  auto staged = service_->PrepareImport(kRoot);
  ASSERT_TRUE(staged.has_value());
  staged->spec.progress = [&](service::ImportPhase phase, int64_t, int64_t) { seen.insert(phase); };
  std::string text = doc.dump();
  auto store = store::LedgerStore::Open(staged->staging);
  ASSERT_TRUE(store.has_value()) << store.error().message;
  auto summary = service::ImportInto(**store, staged->spec, text);
  ASSERT_TRUE(summary.has_value()) << summary.error().message;
  EXPECT_EQ(summary->reservations, 600);
  EXPECT_TRUE(seen.count(service::ImportPhase::kValidating));
  EXPECT_TRUE(seen.count(service::ImportPhase::kWriting));
}

// Renames fail; everything else is the real file system.
class NoRename : public sys::ForwardingFileSystem {
 public:
  sys::ErrnoResult<void> Rename(const std::string&, const std::string&) override {
    return std::unexpected(EXDEV);
  }
};

TEST_F(ImportJobTest, AFailedRenameOrALeftoverLogLeavesTheLedgerAsItWas) {
  std::string ledger = Path("live.db"), staging = Path("live.db.import");
  std::ofstream(ledger) << "live";
  std::ofstream(staging) << "staged";
  NoRename no_rename;
  auto refused = service::ReplaceLedger(no_rename, staging, ledger);
  ASSERT_FALSE(refused.has_value());
  EXPECT_THAT(refused.error().message, HasSubstr("nothing was imported"));
  EXPECT_EQ(ReadAll(ledger), "live");

  std::ofstream(ledger + "-wal") << "pages";
  auto logged = service::ReplaceLedger(sys::RealFileSystem(), staging, ledger);
  ASSERT_FALSE(logged.has_value());
  EXPECT_THAT(logged.error().message, HasSubstr("live.db-wal is still there"));
  EXPECT_EQ(ReadAll(ledger), "live");

  std::filesystem::remove(ledger + "-wal");
  ASSERT_TRUE(service::ReplaceLedger(sys::RealFileSystem(), staging, ledger).has_value());
  EXPECT_EQ(ReadAll(ledger), "staged");
  EXPECT_FALSE(std::filesystem::exists(staging));
}

}  // namespace
}  // namespace bk::server
