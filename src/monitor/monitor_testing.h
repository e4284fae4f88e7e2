#pragma once
// For src/monitor tests: scripted GPU snapshots.

#include <string>
#include <utility>
#include <vector>

#include "gpu/snapshot.h"

namespace bk::monitor {

// Simulated idle 80 GiB GPUs with process telemetry: GPU i (uuid
// GPU-0000000i) runs the processes per_gpu[i].
inline gpu::Snapshot Snap(std::vector<std::vector<gpu::ProcessSample>> per_gpu) {
  gpu::Snapshot s;
  for (size_t i = 0; i < per_gpu.size(); ++i) {
    gpu::DeviceSample d;
    d.index = static_cast<int>(i);
    d.uuid = "GPU-0000000" + std::to_string(i);
    d.name = "Sim";
    d.memory_total_mb = 81920;
    d.memory_used_mb = 0;
    d.utilization_percent = 0;
    d.source = gpu::Source::kSimulation;
    d.process_telemetry = true;
    d.processes = std::move(per_gpu[i]);
    s.devices.push_back(std::move(d));
  }
  return s;
}

}  // namespace bk::monitor
