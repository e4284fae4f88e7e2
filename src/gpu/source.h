#pragma once
// Where GPU telemetry comes from: NVML, a simulation file, or
// nothing but a configured count.

#include <memory>
#include <string>

#include "base/result.h"
#include "gpu/snapshot.h"

namespace bk::gpu {

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  // One sample of `gpu_count` devices. A source that cannot sample (a failing
  // driver, a missing or malformed simulation file) returns a Snapshot with
  // placeholder devices and `error` set; it never throws. Bookings go on
  // without telemetry, as they do on a host without GPUs.
  virtual Snapshot Sample(int gpu_count) = 0;
  // What this source reads, for `bk config`: "simulation PATH", "NVML ...",
  // "none (GPU count only)". May load the driver.
  virtual std::string Describe() = 0;
};

// Every GPU "unknown" (BK_GPU_COUNT alone, or no driver).
class CountOnlySource : public GpuSource {
 public:
  Snapshot Sample(int gpu_count) override;
  std::string Describe() override { return "none (GPU count only)"; }
};

// BK_GPU_SIM_FILE, re-read on every sample so tests can script processes
// appearing and leaving. Format: docs/simulation.md (the original's format,
// plus a top-level "error": "text" that makes the sample fail like NVML).
class SimFileSource : public GpuSource {
 public:
  explicit SimFileSource(std::string path) : path_(std::move(path)) {}
  Snapshot Sample(int gpu_count) override;
  // The file read strictly: why it cannot serve as telemetry, as an error.
  Result<Snapshot> Load(int gpu_count);
  // "simulation PATH", or with " unavailable: REASON" when it cannot be read.
  std::string Describe() override;

 private:
  std::string path_;
};

// Parses simulation JSON text (exposed for tests). `what` names the source in errors.
Result<Snapshot> ParseSimulation(const std::string& text, int gpu_count, const std::string& what);

// Placeholder devices for `gpu_count` GPUs.
Snapshot UnknownSnapshot(int gpu_count, std::string error = "");

// Number of GPUs in a simulation file (for gpu_count auto-detection), or the
// parse error.
Result<int> CountSimulatedGpus(const std::string& path);

}  // namespace bk::gpu
