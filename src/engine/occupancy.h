#pragma once
// What a set of reservations occupies, per GPU and on the host, as step
// functions that take and give back one footprint at a time. The daemon keeps
// one for its whole life and changes it per commit; a command in private mode
// builds one from the footprints it read. The calendar (calendar.h) answers
// placements from either.

#include <cstddef>
#include <map>
#include <vector>

#include "engine/footprint.h"
#include "engine/step_map.h"

namespace bk::engine {

class Occupancy {
 public:
  // Channels of a GPU's step function: shared units, reservations holding
  // the GPU, exclusive ones among them.
  enum GpuChannel : std::size_t { kUnits = 0, kHolders = 1, kExclusive = 2 };
  // Channels of the host's step function (only kept with budgets on).
  enum HostChannel : std::size_t { kCpus = 0, kRamMb = 1 };
  using GpuSteps = StepMap<3>;
  using HostSteps = StepMap<2>;
  using MemorySteps = StepMap<1>;

  Occupancy(int gpu_count, bool budgets);
  // All at once: one sort per GPU instead of one insertion per footprint.
  Occupancy(int gpu_count, bool budgets, const std::vector<Footprint>& footprints);

  void Add(const Footprint& f) { Apply(f, +1); }
  // Gives back exactly what Add(f) took.
  void Remove(const Footprint& f) { Apply(f, -1); }

  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  const GpuSteps& Gpu(int gpu) const { return gpus_[static_cast<std::size_t>(gpu)].steps; }
  // Shared VRAM: the MB declared with --mem, and how many automatic budgets
  // of each slot count, whose size is known only per request (a GPU's total).
  const MemorySteps& DeclaredMemory(int gpu) const {
    return gpus_[static_cast<std::size_t>(gpu)].declared_mb;
  }
  const std::map<int, MemorySteps>& AutomaticMemory(int gpu) const {
    return gpus_[static_cast<std::size_t>(gpu)].automatic;
  }
  const HostSteps& Host() const { return host_; }

 private:
  struct PerGpu {
    GpuSteps steps;
    MemorySteps declared_mb;
    std::map<int, MemorySteps> automatic;  // by share units
  };
  void Apply(const Footprint& f, int sign);

  std::vector<PerGpu> gpus_;
  HostSteps host_;
  bool budgets_;
};

// The configured GPUs a footprint claims, each once (a GPU listed twice is
// still one claim; a GPU no longer configured claims nothing).
std::vector<int> ClaimedGpus(const Footprint& f, int gpu_count);
// A shared footprint's declared VRAM per GPU, or 0 for the automatic budget
// (an explicit 0 means "none", as upstream).
int64_t DeclaredMemoryMb(const Footprint& f);

}  // namespace bk::engine
