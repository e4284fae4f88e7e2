#include "engine/occupancy.h"

#include <algorithm>
#include <utility>

namespace bk::engine {

std::vector<int> ClaimedGpus(const Footprint& f, int gpu_count) {
  std::vector<int> out;
  for (int g : f.gpus)
    if (g >= 0 && g < gpu_count && std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  return out;
}

int64_t DeclaredMemoryMb(const Footprint& f) {
  return f.memory_mb.has_value() && *f.memory_mb != 0 ? std::max<int64_t>(1, *f.memory_mb) : 0;
}

Occupancy::Occupancy(int gpu_count, bool budgets)
    : gpus_(static_cast<std::size_t>(std::max(0, gpu_count))), budgets_(budgets) {}

Occupancy::Occupancy(int gpu_count, bool budgets, const std::vector<Footprint>& footprints)
    : Occupancy(gpu_count, budgets) {
  struct Deltas {
    std::vector<std::pair<Seconds, GpuSteps::Values>> steps;
    std::vector<std::pair<Seconds, MemorySteps::Values>> declared;
    std::map<int, std::vector<std::pair<Seconds, MemorySteps::Values>>> automatic;
  };
  std::vector<Deltas> per_gpu(gpus_.size());
  std::vector<std::pair<Seconds, HostSteps::Values>> host;
  for (const Footprint& f : footprints) {
    if (f.start >= f.end) continue;
    if (budgets_) {
      host.push_back({f.start, {f.cpus, f.ram_mb}});
      host.push_back({f.end, {-f.cpus, -f.ram_mb}});
    }
    const bool exclusive = f.mode == Mode::kExclusive;
    const int64_t units = exclusive ? 0 : f.share_units;
    const int64_t declared = DeclaredMemoryMb(f);
    for (int g : ClaimedGpus(f, this->gpu_count())) {
      Deltas& d = per_gpu[static_cast<std::size_t>(g)];
      d.steps.push_back({f.start, {units, 1, exclusive ? 1 : 0}});
      d.steps.push_back({f.end, {-units, -1, exclusive ? -1 : 0}});
      if (exclusive) continue;
      auto& memory = declared != 0 ? d.declared : d.automatic[f.share_units];
      const int64_t amount = declared != 0 ? declared : 1;
      memory.push_back({f.start, {amount}});
      memory.push_back({f.end, {-amount}});
    }
  }
  for (std::size_t g = 0; g < gpus_.size(); ++g) {
    gpus_[g].steps.Assign(std::move(per_gpu[g].steps));
    gpus_[g].declared_mb.Assign(std::move(per_gpu[g].declared));
    for (auto& [units, deltas] : per_gpu[g].automatic) gpus_[g].automatic[units].Assign(std::move(deltas));
  }
  if (budgets_) host_.Assign(std::move(host));
}

void Occupancy::Apply(const Footprint& f, int sign) {
  if (f.start >= f.end) return;
  if (budgets_) host_.Add(f.start, f.end, {sign * f.cpus, sign * f.ram_mb});
  const bool exclusive = f.mode == Mode::kExclusive;
  const int64_t units = exclusive ? 0 : f.share_units;
  const int64_t declared = DeclaredMemoryMb(f);
  for (int g : ClaimedGpus(f, gpu_count())) {
    PerGpu& p = gpus_[static_cast<std::size_t>(g)];
    p.steps.Add(f.start, f.end, {sign * units, sign, exclusive ? sign : 0});
    if (exclusive) continue;
    if (declared != 0) {
      p.declared_mb.Add(f.start, f.end, {sign * declared});
      continue;
    }
    auto it = p.automatic.try_emplace(f.share_units).first;
    it->second.Add(f.start, f.end, {sign});
    if (it->second.empty()) p.automatic.erase(it);  // no budget of this size left
  }
}

}  // namespace bk::engine
