#pragma once
// The one place that decides where a process's GPU telemetry comes from: the
// simulation file when the configuration names one (BK_GPU_SIM_FILE), else
// NVML when libnvidia-ml loads, else count-only placeholders (a GPU-less
// host is an ordinary state, not an error). The monitor (daemon and `bk m`),
// the private ledger, the worker and gpu_count detection all open it here,
// so a simulation is just another source: whatever reads NVML in production
// reads the file the same way in a test.
//
// It takes the configured path rather than a config::Config because config/
// sits above gpu/ (it detects gpu_count through this file).

#include <functional>
#include <memory>
#include <string>

#include "gpu/source.h"

namespace bk::gpu {

struct OpenedSource {
  std::unique_ptr<GpuSource> source;
  // For the monitor's exclusive-window pause: drops the NVML session so the
  // booking holder has the driver alone. Empty when nothing is held open.
  std::function<void()> on_pause;
};

// `sim_file` is the configuration's gpu_sim_file, "" when none. Lazy: no
// library is loaded before the first Sample() or Describe(), so commands that
// never look at the GPUs stay fast. NVML samples go through the process-wide
// owner, SharedNvml().
OpenedSource OpenSource(const std::string& sim_file);

// gpu_count when the configuration does not set it: the GPUs of the source
// OpenSource(sim_file) reads, at least 1. Without a simulation file this asks
// /proc/driver/nvidia, then NVML (whose session later samples reuse).
int DetectGpuCount(const std::string& sim_file);

}  // namespace bk::gpu
