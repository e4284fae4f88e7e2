#include "agent/mcp_jobs.h"

#include <fmt/format.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "surface/documents.h"
#include "worker/cleanup.h"
#include "worker/job_dir.h"
#include "worker/job_log.h"
#include "worker/lease.h"
#include "worker/submit.h"

namespace bk::agent {
namespace {

using nlohmann::json;

constexpr int64_t kMaxLogChars = 128000;
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The UTF-8 character at s[i]: its length and whether it is well formed. An
// ill-formed one spans its longest valid beginning (at least one byte), which
// becomes one U+FFFD, as Python's decoder does.
struct Utf8Char {
  size_t length;
  bool valid;
};

Utf8Char NextChar(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return {1, true};
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0) return {1, false};
  // The second byte's range excludes overlong forms, surrogates and code
  // points past U+10FFFF.
  unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
  unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  size_t k = 1;
  for (; k < n && i + k < s.size(); ++k) {
    auto b = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80) break;
  }
  return {k, k == n};
}

// The last `max_chars` characters of `bytes` read as UTF-8 (a tail cut inside
// a character starts with U+FFFD, as in the original).
std::string LastChars(std::string_view bytes, int64_t max_chars) {
  std::vector<std::string_view> chars;
  for (size_t i = 0; i < bytes.size();) {
    Utf8Char c = NextChar(bytes, i);
    chars.push_back(c.valid ? bytes.substr(i, c.length) : kReplacement);
    i += c.length;
  }
  size_t first = chars.size() > static_cast<size_t>(max_chars) ? chars.size() - max_chars : 0;
  std::string out;
  for (size_t i = first; i < chars.size(); ++i) out += chars[i];
  return out;
}

Result<service::JobView> OwnJob(client::Ledger& ledger, std::string_view raw) {
  std::string ref(Trim(raw));
  if (ref.empty()) return Invalid("reservation ID is required");
  BK_ASSIGN_OR_RETURN(auto jobs, ledger.Jobs({false}));
  std::vector<const service::JobView*> hits;
  for (const auto& v : jobs)
    if (StartsWith(v.reservation.id, ref)) hits.push_back(&v);
  if (hits.empty()) return Fail(ErrorKind::kNotFound, "reservation not found for current UID");
  if (hits.size() > 1) return Invalid("ambiguous reservation short ID");
  return *hits[0];
}

using RenderReport = std::string (*)(const worker::CleanupReport&);

// One cleanup as `bk j --cleanup` runs it: nothing to do without a job
// directory; any failure before the sweep becomes the report's one failure.
template <class Sweep>
std::string CleanupDoc(client::Ledger& ledger, const Result<worker::Settings>& settings,
                       std::string_view kind, std::string_view key, std::string_view what,
                       RenderReport render, Sweep sweep) {
  worker::CleanupReport report;
  auto jobs = settings ? ledger.Jobs({false})
                       : Result<std::vector<service::JobView>>(std::unexpected(settings.error()));
  if (!jobs) {
    report.failed = 1;
    report.warnings.push_back(fmt::format("private job {} cleanup failed: {}", what, jobs.error().message));
  } else if (worker::JobDirExists(settings->job_dir)) {
    report = sweep(settings->job_dir, *jobs, ledger.Now());
  }
  return Dump({{"schema_version", "bk.agent.v1"}, {"kind", kind}, {key, json::parse(render(report))}});
}

}  // namespace

Status CheckWorkingDirectory(sys::FileSystem& fs, const std::string& path) {
  if (path.empty() || path[0] != '/') return Invalid("job working directory must be absolute");
  if (auto st = fs.Stat(path); !st || !st->IsDir())
    return Invalid(fmt::format("job working directory does not exist: {}", Printable(path)));
  // The worker starts the command there as this user: it must list and enter it.
  if (!fs.Access(path, R_OK | X_OK))
    return Invalid(fmt::format("job working directory is not readable: {}", Printable(path)));
  return Ok();
}

Result<std::string> CreateWithCommand(client::Ledger& ledger, const config::Config& config,
                                      const worker::Settings& settings, service::CreateRequest request,
                                      const std::vector<std::string>& argv,
                                      const std::optional<std::string>& cwd) {
  if (cwd) BK_TRY(CheckWorkingDirectory(sys::RealFileSystem(), *cwd));
  BK_ASSIGN_OR_RETURN(worker::Submission submission,
                      worker::Submit(settings, argv, getuid(), ledger.Now(), cwd.value_or("")));
  request.job = submission.binding;
  auto booked = ledger.Create(request);
  worker::Withdraw(submission, booked ? &*booked : nullptr, getuid());
  if (!booked) return std::unexpected(booked.error());
  engine::Seconds now = ledger.Now();
  worker::WorkerStatus ws =
      worker::Inspect(settings.job_dir, worker::InstanceIdentity(config), getuid(), now);
  return surface::BookingResultDoc(worker::WithSchedulingWarning(*booked, ws), ledger.actor().uid,
                                   ledger.policy(), now, worker::StatusJson(ws, ledger.actor().username));
}

Result<std::string> JobLogDoc(client::Ledger& ledger, const worker::Settings& settings, std::string_view ref,
                              int64_t max_chars) {
  if (max_chars < 1 || max_chars > kMaxLogChars)
    return Invalid(fmt::format("max_chars must be between 1 and {}", kMaxLogChars));
  BK_ASSIGN_OR_RETURN(service::JobView v, OwnJob(ledger, ref));
  // A character is at most 4 bytes: this many bytes always hold the tail.
  BK_ASSIGN_OR_RETURN(
      worker::LogTail tail,
      worker::ReadJobLogTail(worker::LogPath(settings.job_dir, v.reservation.id), getuid(), 4 * max_chars));
  return Dump({{"schema_version", "bk.agent.v1"},
               {"kind", "job_log"},
               {"reservation_id", v.reservation.id},
               {"status", store::kJobStatusNames.Name(v.job.status)},
               {"available", tail.segments > 0},
               {"segments", tail.segments},
               {"text", LastChars(tail.bytes, max_chars)},
               {"truncated_to_chars", max_chars}});
}

std::string SpecCleanupDoc(client::Ledger& ledger, const Result<worker::Settings>& settings) {
  return CleanupDoc(ledger, settings, "job-spec-cleanup", "private_job_cleanup", "spec",
                    worker::SpecReportJson,
                    [](const std::string& root, const auto& jobs, engine::Seconds now) {
                      return worker::CleanupSpecs(root, jobs, now, getuid());
                    });
}

std::string LogCleanupDoc(client::Ledger& ledger, const Result<worker::Settings>& settings) {
  int64_t days = settings ? settings->log_retention_days : 0;
  return CleanupDoc(ledger, settings, "job-log-cleanup", "private_job_log_cleanup", "log",
                    worker::LogReportJson,
                    [days](const std::string& root, const auto& jobs, engine::Seconds now) {
                      return worker::CleanupLogs(root, jobs, now, days, getuid());
                    });
}

}  // namespace bk::agent
