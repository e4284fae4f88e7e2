// bk j|jobs, bk jl|job-log, bk jr|job-retry: the caller's managed launches.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "engine/parse.h"
#include "engine/reference.h"
#include "surface/documents.h"
#include "sys/users.h"
#include "worker/cleanup.h"
#include "worker/job_dir.h"
#include "worker/job_log.h"
#include "worker/lease.h"
#include "worker/settings.h"

namespace bk::cli {
namespace {

std::string Clip(const std::string& s, size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 3) + "...";
}

// A job by its number in `bk j` or a prefix of its booking's ID.
Result<service::JobView> Pick(const std::vector<service::JobView>& jobs, const std::string& raw) {
  std::string ref(Trim(raw));
  // Showing a log only reads: a number off the list may still be an ID prefix.
  auto pick = engine::ParseListRef(ref, jobs.size(), "job", "bk j");
  if (pick && pick->is_number) return jobs[pick->index];
  std::vector<const service::JobView*> hits;
  for (const auto& v : jobs)
    if (!ref.empty() && StartsWith(v.reservation.id, ref)) hits.push_back(&v);
  if (hits.empty())
    return Fail(ErrorKind::kNotFound,
                fmt::format("job not found for current user: {}; `bk j` lists your jobs", ref));
  if (hits.size() > 1) return Invalid(fmt::format("ambiguous job ID {}; give more characters", ref));
  return *hits[0];
}

// The table of `bk j`, numbered as `bk jl` and `bk jr` take the numbers.
void PrintJobRows(const Context& ctx, const std::vector<service::JobView>& jobs) {
  ctx.Print(fmt::format("{:<2} {:<8} {:<12} {:<9} {:<22} {}", "#", "ID", "State", "GPU", "Start", "Command"));
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& v = jobs[i];
    // A job the launch guard holds is still pending (its note says why), as in the original.
    std::string_view state = store::kJobStatusNames.Name(v.job.status);
    std::string exit = v.job.exit_code ? fmt::format(" exit={}", *v.job.exit_code) : "";
    ctx.Print(fmt::format("{:<2} {:<8} {:<12} {:<9} {:<22} {}{}", i + 1, v.reservation.ShortId(), state,
                          JoinInts(v.reservation.gpus), engine::FormatLocal(v.reservation.start, *ctx.zone),
                          Clip(v.job.summary, 48), exit));
    if (!v.job.message.empty()) ctx.Print("   note: " + Clip(Printable(v.job.message), 88));
  }
}

const service::JobView& Latest(const std::vector<service::JobView>& jobs) {
  return *std::max_element(jobs.begin(), jobs.end(),
                           [](const service::JobView& a, const service::JobView& b) {
                             return std::tie(a.job.submitted_at, a.reservation.id) <
                                    std::tie(b.job.submitted_at, b.reservation.id);
                           });
}

// Which job `bk jl` shows without an ID: at a terminal with several jobs it
// asks, as the original does (Enter takes the latest); otherwise the latest.
Result<service::JobView> ChooseJob(const Context& ctx, const std::vector<service::JobView>& jobs) {
  if (jobs.size() == 1 || !isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return Latest(jobs);
  PrintJobRows(ctx, jobs);
  std::fputs("Job number or ID (Enter: the latest): ", ctx.out);
  std::fflush(ctx.out);
  std::string line;
  if (!std::getline(std::cin, line)) return Invalid("no job chosen");
  std::string answer(Trim(line));
  if (answer.empty()) return Latest(jobs);
  return Pick(jobs, answer);
}

}  // namespace

Result<int> RunJobs(Context& ctx, const std::vector<std::string>& args) {
  bool json = false, cleanup = false;
  ArgSpec spec("bk jobs", "Your commands bound to bookings (bk N DUR -- CMD) and what became of them.");
  spec.Flag("--json", &json, "print the bk.agent.v1 jobs document");
  spec.Flag("--cleanup", &cleanup, "remove private specs and logs no job needs any more");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(worker::Settings settings, worker::LoadSettings(ctx.config, config::ProcessEnv()));
  // A linked or shared job directory is refused before anything is read or removed.
  if (cleanup) BK_TRY(worker::CheckJobDir(settings.job_dir, getuid()));
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(auto jobs, ledger->Jobs({false}));
  engine::Seconds now = ledger->Now();
  worker::WorkerStatus ws =
      worker::Inspect(settings.job_dir, worker::InstanceIdentity(ctx.config), getuid(), now);
  std::optional<worker::CleanupReport> specs, logs;
  if (cleanup && worker::JobDirExists(settings.job_dir)) {
    specs = worker::CleanupSpecs(settings.job_dir, jobs, now, getuid());
    logs = worker::CleanupLogs(settings.job_dir, jobs, now, settings.log_retention_days, getuid());
  } else if (cleanup) {
    specs = logs = worker::CleanupReport{};
  }
  bool failed = (specs && specs->failed) || (logs && logs->failed);
  if (json) {
    ctx.PrintDoc(surface::JobsDoc(
        jobs, ledger->actor().uid, ledger->policy(), now, worker::StatusJson(ws, ledger->actor().username),
        specs ? worker::SpecReportJson(*specs) : "null", logs ? worker::LogReportJson(*logs) : "null"));
    return failed ? 2 : 0;
  }
  ctx.Print(worker::StatusLine(ws, *ctx.zone));
  if (jobs.empty()) {
    ctx.Print("No jobs.");
  } else {
    PrintJobRows(ctx, jobs);
  }
  if (specs)
    ctx.Print(fmt::format("spec cleanup: removed={} retained={} deferred={} failed={}", specs->removed,
                          specs->retained, specs->deferred, specs->failed));
  if (logs)
    ctx.Print(fmt::format("log cleanup: removed={} retained={} kept={}B failed={}", logs->removed,
                          logs->retained, logs->bytes_retained, logs->failed));
  for (const auto* r : {specs ? &*specs : nullptr, logs ? &*logs : nullptr})
    if (r)
      for (const auto& w : r->warnings) ctx.Warn(w);
  return failed ? 2 : 0;
}

Result<int> RunJobLog(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref;
  ArgSpec spec("bk job-log", "Print a job's private log (its output); the latest job without an ID.");
  spec.Positional("id", &ref, "job number in `bk j` or booking ID prefix");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(worker::Settings settings, worker::LoadSettings(ctx.config, config::ProcessEnv()));
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(auto jobs, ledger->Jobs({false}));
  if (jobs.empty())
    return Fail(ErrorKind::kNotFound, "you have no jobs; `bk 1 30m -- COMMAND` books and schedules one");
  service::JobView v;
  if (ref) {
    BK_ASSIGN_OR_RETURN(v, Pick(jobs, *ref));
  } else {
    BK_ASSIGN_OR_RETURN(v, ChooseJob(ctx, jobs));
  }
  auto text = worker::ReadJobLog(worker::LogPath(settings.job_dir, v.reservation.id), getuid());
  if (!text) {
    if (text.error().kind != ErrorKind::kNotFound) return std::unexpected(text.error());
    ctx.Print("job log unavailable: it has not been created or was removed by the retention policy");
    return 0;
  }
  std::fwrite(text->data(), 1, text->size(), ctx.out);
  return 0;
}

Result<int> RunJobRetry(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref;
  bool risk = false;
  ArgSpec spec("bk job-retry", "Queue a failed, interrupted or uncertain job again while its booking lasts.");
  spec.NeededPositional("id", &ref, "job number in `bk j` or booking ID prefix");
  spec.Flag("--accept-duplicate-risk", &risk,
            "retry an uncertain job (its earlier run may have done part of the work)");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref) return Invalid("give a job number or ID; `bk j` lists your jobs");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::JobView v, ledger->RetryJob({*ref, risk}));
  ctx.Print(fmt::format("job retry queued: {}", v.reservation.ShortId()));
  return 0;
}

}  // namespace bk::cli
