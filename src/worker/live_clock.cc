#include "worker/live_clock.h"

#include "gpu/open_source.h"

namespace bk::worker {

engine::Seconds SteppingClock::Now() const {
  auto elapsed = std::chrono::steady_clock::now() - origin_;
  return start_ + std::chrono::duration_cast<std::chrono::seconds>(elapsed).count();
}

Result<std::unique_ptr<sys::Clock>> LiveClock(const config::Config& config) {
  if (config.test_now) {
    BK_ASSIGN_OR_RETURN(auto fixed, sys::ClockFromTestNow(*config.test_now));
    return std::unique_ptr<sys::Clock>(std::make_unique<SteppingClock>(fixed->Now()));
  }
  return std::unique_ptr<sys::Clock>(std::make_unique<sys::RealClock>());
}

namespace {

// The daemon's answer to status.get: the snapshot its monitor last took and
// attributed. An unreachable daemon is a failed sample, so the guard waits.
class DaemonSource : public gpu::GpuSource {
 public:
  explicit DaemonSource(client::Ledger& ledger) : ledger_(ledger) {}
  gpu::Snapshot Sample(int gpu_count) override {
    engine::Seconds now = ledger_.Now();
    auto status = ledger_.Status(now, now + 1, 0);
    if (!status) return gpu::UnknownSnapshot(gpu_count, status.error().message);
    return std::move(status->snapshot);
  }
  std::string Describe() override { return "the daemon's monitor"; }

 private:
  client::Ledger& ledger_;
};

}  // namespace

Sampler::Sampler(const config::Config& config) : source_(gpu::OpenSource(config.gpu_sim_file).source) {}

Sampler::Sampler(const config::Config& config, client::Ledger& ledger) {
  if (config.deployment == config::Deployment::kPrivate)
    source_ = gpu::OpenSource(config.gpu_sim_file).source;
  else
    source_ = std::make_unique<DaemonSource>(ledger);
}

gpu::Snapshot Sampler::Sample(int gpu_count) { return source_->Sample(gpu_count); }

}  // namespace bk::worker
