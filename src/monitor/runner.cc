#include "monitor/runner.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "sys/fs.h"
#include "sys/random.h"
#include "sys/users.h"

namespace bk::monitor {

std::string NewMonitorId() {
  std::string id = sys::NewUuid();
  std::erase(id, '-');
  return id;
}

std::string UsagePath(const config::Config& c) {
  return sys::JoinPath(sys::Dirname(c.ledger_path), "usage.db");
}
std::string UsageLockPath(const config::Config& c) {
  return sys::JoinPath(sys::Dirname(c.ledger_path), "usage.lock");
}

// ---- Sampler ----------------------------------------------------------------

Sampler::Sampler(Options options) : opt_(std::move(options)) {}

Sampler::~Sampler() {
  Stop();
  if (event_fd_ >= 0) close(event_fd_);
}

Status Sampler::Start() {
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) return Fail(ErrorKind::kIo, "cannot create the monitor's eventfd");
  thread_ = std::thread([this] { Run(); });
  return Ok();
}

void Sampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Sampler::SetWindows(std::vector<Window> windows) {
  std::lock_guard lock(mu_);
  windows_ = std::move(windows);
}

std::vector<RawSample> Sampler::Take() {
  uint64_t n = 0;
  (void)!read(event_fd_, &n, sizeof n);
  std::lock_guard lock(mu_);
  std::vector<RawSample> out(std::make_move_iterator(queue_.begin()), std::make_move_iterator(queue_.end()));
  queue_.clear();
  return out;
}

void Sampler::Run() {
  using Steady = std::chrono::steady_clock;
  auto next = Steady::now();
  bool was_paused = false;
  while (true) {
    std::vector<Window> windows;
    {
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, next, [&] { return stop_; });
      if (stop_) return;
      windows = windows_;
    }
    RawSample s;
    s.at_ms = opt_.now_ms();
    s.paused = opt_.pause_during_exclusive && Inside(windows, s.at_ms);
    if (s.paused && !was_paused && opt_.on_pause) opt_.on_pause();
    was_paused = s.paused;
    if (!s.paused) s.snapshot = opt_.source->Sample(opt_.gpu_count);
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(s));
      // A loop that cannot keep up loses the oldest samples; the monitor
      // then sees a gap, which restarts no-show streaks (never the reverse).
      while (queue_.size() > 16) queue_.pop_front();
    }
    uint64_t one = 1;
    (void)!write(event_fd_, &one, sizeof one);
    next += std::chrono::milliseconds(opt_.interval_ms);
    if (next < Steady::now()) next = Steady::now();
  }
}

// ---- Runner -----------------------------------------------------------------

Runner::Runner(const config::Config& config, const sys::Clock& clock, LogFn log)
    : config_(config), clock_(clock), log_(std::move(log)) {}

Runner::~Runner() { Stop(); }

gpu::Snapshot Runner::LatestSource::Sample(int gpu_count) {
  if (!runner_->monitor_) return gpu::UnknownSnapshot(gpu_count);
  return runner_->monitor_->latest();
}

std::string Runner::LatestSource::Describe() {
  if (runner_->source_description_.empty()) return "none (the monitor has not started)";
  return runner_->source_description_ + " (sampled by the daemon's monitor)";
}

Status Runner::Start(service::BookingService& service, uid_t owner) {
  BK_TRY(sys::EnsurePrivateDir(sys::Dirname(config_.ledger_path), 0700, owner));
  BK_ASSIGN_OR_RETURN(UsageLock lock, UsageLock::Take(UsageLockPath(config_)));
  lock_.emplace(std::move(lock));
  store::UsageOpenOptions uo{UsagePath(config_), true, owner,
                             static_cast<int>(config_.lock_timeout_seconds * 1000)};
  BK_ASSIGN_OR_RETURN(usage_, store::UsageStore::Open(uo));
  Options o;
  o.config = &config_;
  o.service = &service;
  o.actor.uid = owner;
  o.actor.username = sys::UserName(owner);
  o.actor.admin = true;
  o.usage = usage_.get();
  o.interval_ms = static_cast<int64_t>(config_.monitor_interval_seconds * 1000);
  o.reclaim_after_ms = config_.reclaim_after_seconds * 1000;
  o.pause_during_exclusive = config_.pause_sampling_during_exclusive;
  o.monitor_id = NewMonitorId();
  o.pid = getpid();
  o.uid = owner;
  monitor_ = std::make_unique<Monitor>(o);
  BK_TRY(monitor_->Start(clock_.NowMs()));
  if (!config_.metrics_textfile.empty()) {
    metrics_.emplace(config_, service, o.actor);
    metrics_->SetRequests(requests_);
  }

  source_ = gpu::OpenSource(config_.gpu_sim_file);
  source_description_ = source_.source->Describe();
  Sampler::Options so;
  so.source = source_.source.get();
  so.gpu_count = config_.policy.gpu_count;
  so.interval_ms = o.interval_ms;
  so.pause_during_exclusive = o.pause_during_exclusive;
  so.now_ms = [this] { return clock_.NowMs(); };
  so.on_pause = source_.on_pause;
  sampler_ = std::make_unique<Sampler>(so);
  Publish();  // before the first sample: it may already fall in an exclusive window
  BK_TRY(sampler_->Start());
  // The first sample is taken at once; ingesting it before the daemon answers
  // anyone means its first bookings are placed with the GPUs' live state, not
  // "unknown". A source that hangs delays the start by at most five seconds.
  pollfd first{sampler_->fd(), POLLIN, 0};
  if (poll(&first, 1, 5000) == 1) OnReadable();
  log_(fmt::format("monitor started: interval={}s reclaim_after={}s pause_during_exclusive={} usage={}",
                   config_.monitor_interval_seconds, config_.reclaim_after_seconds,
                   o.pause_during_exclusive ? "true" : "false", uo.path));
  return Ok();
}

void Runner::Warn(const std::string& line) {
  // An error that repeats every sample is logged once until it changes.
  if (line == last_warning_) return;
  last_warning_ = line;
  log_(line);
}

void Runner::Publish() {
  auto windows = monitor_->ExclusiveWindows();
  if (!windows) return Warn("monitor: cannot read exclusive windows: " + windows.error().message);
  sampler_->SetWindows(std::move(*windows));
}

void Runner::OnReadable() {
  if (!sampler_) return;
  for (RawSample& s : sampler_->Take()) {
    auto report = monitor_->Ingest(std::move(s));
    if (!report) {
      // Sampling goes on: the evidence for reclamation is kept in memory, so
      // only the history gets a hole. The reason is kept for usage queries
      // (and so `bk doctor`), since the heartbeat in usage.db cannot say it.
      not_recording_ = report.error().message;
      Warn("monitor: sample not recorded: " + not_recording_);
      continue;
    }
    if (!not_recording_.empty()) {
      log_("monitor: recording again");
      not_recording_.clear();
      last_warning_.clear();
    }
    for (const auto& d : report->decisions)
      if (d.reclaimed)
        log_(fmt::format("monitor: reclaimed {} of {}: {}", d.reservation_id, d.username, d.reason));
    for (const auto& w : report->warnings) Warn("monitor: " + w);
    if (report->failed) Warn("monitor: sample failed: " + report->snapshot.error);
    if (metrics_)
      if (auto st = metrics_->Write(*report, monitor_->samples()); !st)
        Warn("monitor: metrics: " + st.error().message);
  }
  Publish();
}

void Runner::SetRequests(const RequestStats* requests) {
  requests_ = requests;
  if (metrics_) metrics_->SetRequests(requests);
}

void Runner::OnWrite() {
  if (monitor_ && sampler_) Publish();
}

void Runner::Stop() {
  if (!sampler_) return;
  sampler_->Stop();
  OnReadable();
  if (auto st = monitor_->Stop(clock_.NowMs()); !st)
    log_("monitor: cannot record the stop: " + st.error().message);
  else
    log_(fmt::format("monitor stopped: samples={}", monitor_->samples()));
  sampler_.reset();
}

}  // namespace bk::monitor
