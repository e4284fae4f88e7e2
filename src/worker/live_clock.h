#pragma once
// Clocks and telemetry for the long-running parts (worker, foreground run).

#include <chrono>
#include <memory>

#include "base/result.h"
#include "client/ledger.h"
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

// Fresh GPU samples for launches.
class Sampler {
 public:
  // This host's source (gpu::OpenSource): what a command that needs the local
  // GPUs' UUIDs reads.
  explicit Sampler(const config::Config& config);
  // The launch guard's live state. On a shared server the daemon's monitor
  // owns the telemetry, so the answer is its latest attributed snapshot, asked
  // through `ledger` (what `bk st` shows every user); a launch then needs no
  // NVML or simulation file of its own. In private mode nothing else samples:
  // this host's source, as above.
  Sampler(const config::Config& config, client::Ledger& ledger);
  gpu::Snapshot Sample(int gpu_count);

 private:
  std::unique_ptr<gpu::GpuSource> source_;
};

}  // namespace bk::worker
