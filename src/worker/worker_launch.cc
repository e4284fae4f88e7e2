// Launching a claimed job: the private spec is read
// and verified against the ledger's digest, the GPU environment is set, the
// command starts without a shell in its own session, and only then is the job
// committed as running. Public messages never carry paths or argv.

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/strings.h"
#include "worker/job_dir.h"
#include "worker/spawn.h"
#include "worker/spec.h"
#include "worker/worker.h"

namespace bk::worker {

using store::JobStatus;
namespace {

std::string PublicSpawnError(ErrorKind k) {
  if (k == ErrorKind::kNotFound) return "scheduled executable or working directory was not found";
  if (k == ErrorKind::kPermission) return "scheduled executable or private job storage was not accessible";
  return "scheduled command could not be started";
}

}  // namespace

void Worker::LaunchFailed(const service::JobView& v, const std::string& token,
                          const std::string& public_message, JobLog* log, const std::string& private_text,
                          bool keep_booking) {
  if (log) log->Line(fmt::format("bk-job-launch-error: {}", private_text));
  service::JobPatch p = Patch(v);
  p.if_status = {JobStatus::kClaimed};
  p.if_claim_token = token;
  p.status = JobStatus::kFailed;
  p.message = public_message;
  p.audit_action = "job-failed";
  p.audit_message = public_message;
  Apply(p);
  ++counts_.failed;
  if (options_.foreground)
    foreground_ = {JobStatus::kFailed, std::nullopt, public_message + ": " + private_text};
  Say(fmt::format("finished: {} status=failed exit=none ({})", Short(v.reservation.id), public_message));
  if (options_.foreground) std::fprintf(err_, "bk: %s\n", Printable(private_text).c_str());
  // A command that cannot start holds its GPUs for nothing; `bk jr` may still
  // retry it until the booking's new end.
  if (!keep_booking) GiveBack(v.reservation.id);
}

void Worker::Launch(const service::JobView& v, const std::string& token,
                    const std::vector<std::string>& tokens) {
  const engine::Reservation& r = v.reservation;
  // Launch on exactly the booked GPUs or not at all: never guess.
  if (tokens.size() != r.gpus.size()) {
    LaunchFailed(v, token, "scheduled command validation failed", nullptr,
                 "GPU tokens do not match the booking", false);
    return;
  }
  auto spec = ReadSpec(SpecsDir(settings_.job_dir), v.job.spec_id, uid_, v.job.digest);
  if (!spec) {
    bool integrity = spec.error().kind == ErrorKind::kCorrupt || spec.error().kind == ErrorKind::kNotFound;
    LaunchFailed(
        v, token,
        integrity ? "private job spec integrity check failed" : "private job storage validation failed",
        nullptr, spec.error().message, false);
    return;
  }
  std::unique_ptr<JobLog> log;
  if (!options_.foreground) {
    auto opened = JobLog::Open(LogPath(settings_.job_dir, r.id), settings_.log_max_mb,
                               LogHeader("bk-job-start", clock_.Now(), r.id, r.gpus, spec->cwd, spec->argv));
    if (!opened) {
      LaunchFailed(v, token,
                   opened.error().kind == ErrorKind::kInvalid ? "scheduled command configuration is invalid"
                                                              : "private job storage validation failed",
                   nullptr, opened.error().message, spec->keep_booking);
      return;
    }
    log = std::move(*opened);
  }
  struct stat st {};
  if (stat(spec->cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    LaunchFailed(v, token, "scheduled working directory is invalid or no longer exists", log.get(),
                 fmt::format("working directory {} does not exist", spec->cwd), spec->keep_booking);
    return;
  }
  std::map<std::string, std::string> overlay = {{"PATH", spec->path},
                                                {"CUDA_VISIBLE_DEVICES", Join(tokens, ",")},
                                                {"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                                                {"BK_RESERVATION_ID", r.id},
                                                {"BK_RESERVED_GPUS", JoinInts(r.gpus)}};
  if (r.memory_mb) overlay["BK_EXPECTED_GPU_MEMORY_MB"] = std::to_string(*r.memory_mb);
  SpawnOptions so;
  so.argv = spec->argv;
  so.cwd = spec->cwd;
  so.path = spec->path;
  so.env = MergeEnvironment(overlay);
  int pipefd[2] = {-1, -1};
  if (log) {
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
      LaunchFailed(v, token, "scheduled command could not be started", log.get(),
                   "cannot create the output pipe", spec->keep_booking);
      return;
    }
    so.output_fd = pipefd[1];
  }
  auto pid = Spawn(so);
  if (pipefd[1] >= 0) close(pipefd[1]);
  if (!pid) {
    if (pipefd[0] >= 0) close(pipefd[0]);
    LaunchFailed(v, token, PublicSpawnError(pid.error().kind), log.get(), pid.error().message,
                 spec->keep_booking);
    return;
  }
  auto child = std::make_unique<Child>();
  child->reservation_id = r.id;
  child->claim_token = token;
  child->pid = *pid;
  child->end = r.end;
  child->gpus = r.gpus;
  child->keep_booking = spec->keep_booking;
  if (log) {
    log->Start(pipefd[0]);
    child->log = std::move(log);
  }
  service::JobPatch p = Patch(v);
  p.if_status = {JobStatus::kClaimed};
  p.if_claim_token = token;
  p.status = JobStatus::kRunning;
  p.runner_pid = *pid;
  p.audit_action = "job-start";
  p.audit_message = fmt::format("pid={}", *pid);
  service::JobPatchResult res;
  bool committed = Apply(p, &res);
  Child& c = *child;
  children_.push_back(std::move(child));
  ++counts_.started;
  if (!committed) {
    // The booking changed between claim and start: stop what just started and
    // say why, without counting it as a failure.
    const engine::Reservation& now_r = res.current.reservation;
    bool cancelled = now_r.status == engine::Status::kCancelled;
    bool ended = !now_r.ActiveAt(clock_.Now());
    c.claim_token.clear();  // the commit at the end must not apply
    RequestTermination(c, cancelled ? StopReason::kCancelled
                          : ended   ? StopReason::kDeadline
                                    : StopReason::kStopRequested);
    service::JobPatch q = Patch(v);
    q.if_status = {JobStatus::kClaimed};
    q.if_claim_token = token;
    q.status = cancelled ? JobStatus::kCancelled : ended ? JobStatus::kMissed : JobStatus::kUncertain;
    q.message = cancelled ? "reservation was cancelled while the claimed command was starting"
                : ended   ? "reservation ended while the claimed command was starting"
                          : "claimed command was stopped before running state could be committed";
    q.audit_action = fmt::format("job-{}", store::kJobStatusNames.Name(*q.status));
    q.audit_message = *q.message;
    Apply(q);
    return;
  }
  Say(fmt::format("started: {} pid={} gpu={}", Short(r.id), *pid, JoinInts(r.gpus)));
}

}  // namespace bk::worker
