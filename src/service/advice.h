#pragma once
// Placement advice from live telemetry: GPU order,
// scores and VRAM capacities, plus the per-GPU view shown to users.

#include <vector>

#include "engine/calendar.h"
#include "gpu/snapshot.h"
#include "service/types.h"

namespace bk::service {

struct Advice {
  engine::GpuAdvice engine;
  std::vector<GpuView> views;  // indexed by GPU
  bool any_memory_telemetry = false;
};

Advice BuildAdvice(const gpu::Snapshot& snapshot, const engine::Policy& policy);

}  // namespace bk::service
