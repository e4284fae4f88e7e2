#include "server/import_job.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "service/import.h"
#include "sys/file_system.h"

namespace bk::server {
namespace {

constexpr size_t kReadChunk = size_t{1} << 20;
constexpr int64_t kMiB = int64_t{1} << 20;

std::unexpected<Error> TooLarge(int64_t size) {
  return Invalid(fmt::format("the ledger.json is {} bytes; an import reads at most {} MiB", size,
                             ImportJob::kMaxBytes / kMiB));
}

}  // namespace

Status ImportJob::CheckFile(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0)
    return Fail(ErrorKind::kIo,
                fmt::format("cannot inspect the passed ledger.json: {}", std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return Invalid("the passed descriptor is not a regular file; pass the ledger.json");
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || (flags & O_ACCMODE) == O_WRONLY)
    return Invalid("the passed ledger.json is not open for reading");
  if (st.st_size > kMaxBytes) return TooLarge(st.st_size);
  return Ok();
}

Result<std::unique_ptr<ImportJob>> ImportJob::Start(service::BookingService::StagedImport staged,
                                                    sys::UniqueFd file) {
  BK_TRY(CheckFile(file.get()));
  sys::UniqueFd done(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!done.ok()) return Fail(ErrorKind::kIo, fmt::format("eventfd: {}", std::strerror(errno)));
  std::unique_ptr<ImportJob> job(new ImportJob(std::move(staged), std::move(file), std::move(done)));
  job->thread_ = std::thread([j = job.get()] { j->Run(); });
  return job;
}

ImportJob::ImportJob(service::BookingService::StagedImport staged, sys::UniqueFd file, sys::UniqueFd done)
    : staged_(std::move(staged)), file_(std::move(file)), done_(std::move(done)) {
  staged_.spec.progress = [this](service::ImportPhase phase, int64_t n, int64_t total) {
    Report(phase, n, total);
  };
  staged_.spec.stop = &stop_;
}

ImportJob::~ImportJob() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  service::RemoveStaging(sys::RealFileSystem(), staging_path());
}

ImportJob::Progress ImportJob::progress() const {
  std::lock_guard lock(mu_);
  return progress_;
}

void ImportJob::Report(service::ImportPhase phase, int64_t done, int64_t total) {
  std::lock_guard lock(mu_);
  progress_ = {phase, done, total};
}

Result<service::ImportSummary> ImportJob::Finish() {
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  if (!result_) return Fail(ErrorKind::kInternal, "the import job ended without an outcome");
  return *result_;
}

void ImportJob::Run() {
  Result<service::ImportSummary> outcome = Work();
  {
    std::lock_guard lock(mu_);
    result_ = std::move(outcome);
  }
  uint64_t one = 1;
  (void)!write(done_.get(), &one, sizeof(one));
}

Result<service::ImportSummary> ImportJob::Work() {
  BK_ASSIGN_OR_RETURN(std::string text, ReadFile());
  file_.Reset();
  // A staging file left by a daemon that died mid-import is stale.
  service::RemoveStaging(sys::RealFileSystem(), staging_path());
  BK_ASSIGN_OR_RETURN(auto staging, store::LedgerStore::Open(staged_.staging));
  // The store closes before the outcome is told: closing checkpoints its log
  // into the file, which must be whole before it is renamed.
  return service::ImportInto(*staging, staged_.spec, text);
}

// From offset 0 with pread: the client's file offset is not ours to move.
Result<std::string> ImportJob::ReadFile() {
  struct stat st {};
  if (fstat(file_.get(), &st) != 0)
    return Fail(ErrorKind::kIo, fmt::format("cannot read the passed ledger.json: {}", std::strerror(errno)));
  std::string text;
  text.reserve(static_cast<size_t>(std::min<int64_t>(st.st_size, kMaxBytes)));
  char buf[65536];
  while (true) {
    if (stop_) return Fail(ErrorKind::kInternal, "the import was stopped: the daemon is shutting down");
    if (text.size() % kReadChunk < sizeof(buf))
      Report(service::ImportPhase::kReading, text.size(), st.st_size);
    ssize_t n = pread(file_.get(), buf, sizeof(buf), static_cast<off_t>(text.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return Fail(ErrorKind::kIo,
                  fmt::format("cannot read the passed ledger.json: {}", std::strerror(errno)));
    if (n == 0) return text;
    if (static_cast<int64_t>(text.size()) + n > kMaxBytes)
      return TooLarge(static_cast<int64_t>(text.size()) + n);
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace bk::server
