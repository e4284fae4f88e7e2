#include "worker/live_clock.h"

#include "gpu/select.h"

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

Sampler::Sampler(const config::Config& config) : sim_file_(config.gpu_sim_file) {}

gpu::Snapshot Sampler::Sample(int gpu_count) {
  if (!sim_file_.empty()) return gpu::SimFileSource(sim_file_).Sample(gpu_count);
  if (!source_) source_ = gpu::DefaultSource();
  return source_->Sample(gpu_count);
}

}  // namespace bk::worker
