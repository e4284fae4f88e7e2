#pragma once
// Which GPU source a process uses when no simulation file is configured.

#include <memory>
#include <optional>

#include "gpu/source.h"

namespace bk::gpu {

// NVML when libnvidia-ml loads, else count-only placeholders (a GPU-less
// host is an ordinary state, not an error). Lazy: nothing is loaded until the
// first Sample(), so commands that never look at the GPUs stay fast. Samples
// go through the process-wide NVML owner, SharedNvml().
std::unique_ptr<GpuSource> DefaultSource();

// NVML's device count for gpu_count auto-detection; nullopt when NVML is
// unavailable. Initialises the shared NVML session, which later samples reuse.
std::optional<int> NvmlDeviceCount();

}  // namespace bk::gpu
