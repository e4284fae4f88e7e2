#pragma once
// Clocks and telemetry for the long-running parts (worker, foreground run).

#include <chrono>
#include <memory>

#include "base/result.h"
#include "config/config.h"
#include "gpu/snapshot.h"
#include "gpu/source.h"
#include "sys/clock.h"

namespace bk::worker {

// Starts at `start` and advances in real time: BK_TEST_NOW for a worker, so a
// test can place a booking's end a few real seconds ahead.
class SteppingClock : public sys::Clock {
 public:
  explicit SteppingClock(engine::Seconds start) : start_(start), origin_(std::chrono::steady_clock::now()) {}
  engine::Seconds Now() const override;

 private:
  engine::Seconds start_;
  std::chrono::steady_clock::time_point origin_;
};

// The real clock, or (test builds) a SteppingClock from BK_TEST_NOW.
Result<std::unique_ptr<sys::Clock>> LiveClock(const config::Config& config);

// Fresh GPU samples of this host: the simulation file when configured, else
// NVML (or unknown placeholders).
class Sampler {
 public:
  explicit Sampler(const config::Config& config);
  gpu::Snapshot Sample(int gpu_count);

 private:
  std::string sim_file_;
  std::unique_ptr<gpu::GpuSource> source_;
};

}  // namespace bk::worker
