#pragma once
// The daemon's import of a ledger.json passed as a descriptor: a worker
// thread reads the file, validates it and writes a staging ledger
// (service::ImportInto) while the event loop keeps answering everyone. The
// worker shares nothing mutable with the service: it gets the import's spec
// (read-only policy and config), the staging store's options and the file.
// The loop polls fd(); once it is readable, Finish gives the outcome and the
// loop swaps the staging ledger in (BookingService::AdoptImport). Destroying
// a job stops the worker, waits for it and removes the staging file, so a
// refused, failed or interrupted import leaves nothing behind.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "base/result.h"
#include "service/booking_service.h"
#include "sys/unique_fd.h"

namespace bk::server {

// What writes hear while an import runs, and a second import too.
inline constexpr std::string_view kImportBusy = "an import is in progress; try again when it finishes";

class ImportJob {
 public:
  // The largest ledger.json an import reads.
  static constexpr int64_t kMaxBytes = int64_t{128} << 20;
  // A regular file, open for reading, of at most kMaxBytes; checked before
  // any work starts, so a wrong descriptor is refused at once.
  static Status CheckFile(int fd);
  static Result<std::unique_ptr<ImportJob>> Start(service::BookingService::StagedImport staged,
                                                  sys::UniqueFd file);
  ~ImportJob();
  ImportJob(const ImportJob&) = delete;
  ImportJob& operator=(const ImportJob&) = delete;

  // Readable once the worker has finished.
  int fd() const { return done_.get(); }
  struct Progress {
    service::ImportPhase phase = service::ImportPhase::kReading;
    int64_t done = 0;
    int64_t total = 0;
  };
  Progress progress() const;
  // The worker's outcome, once fd() is readable. On success the staging
  // ledger is complete and closed at staging_path().
  Result<service::ImportSummary> Finish();
  const std::string& staging_path() const { return staged_.staging.path; }

 private:
  ImportJob(service::BookingService::StagedImport staged, sys::UniqueFd file, sys::UniqueFd done);
  void Run();
  Result<service::ImportSummary> Work();
  Result<std::string> ReadFile();
  void Report(service::ImportPhase phase, int64_t done, int64_t total);

  service::BookingService::StagedImport staged_;
  sys::UniqueFd file_;
  sys::UniqueFd done_;  // an eventfd the worker signals when it returns
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  Progress progress_;                                     // guarded by mu_
  std::optional<Result<service::ImportSummary>> result_;  // guarded by mu_
  std::thread thread_;
};

}  // namespace bk::server
