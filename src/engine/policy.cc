#include "engine/policy.h"

#include <algorithm>

namespace bk::engine {

bool Blackout::Covers(int gpu) const {
  return gpus.empty() || std::binary_search(gpus.begin(), gpus.end(), gpu);
}

bool Policy::GpuEnabled(int gpu) const {
  return gpu >= 0 && gpu < gpu_count &&
         std::find(disabled_gpus.begin(), disabled_gpus.end(), gpu) == disabled_gpus.end();
}

std::vector<int> Policy::EnabledGpus() const {
  std::vector<int> out;
  for (int g = 0; g < gpu_count; ++g)
    if (GpuEnabled(g)) out.push_back(g);
  return out;
}

int Policy::Priority(int gpu) const {
  auto it = gpu_priority.find(gpu);
  return it == gpu_priority.end() ? 0 : it->second;
}

}  // namespace bk::engine
