// libFuzzer target: a simulation file (BK_GPU_SIM_FILE), which the monitor
// re-reads on every sample. The first byte is the configured GPU count.

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpu/source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  int gpu_count = data[0] % 17;
  std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  (void)bk::gpu::ParseSimulation(text, gpu_count, "simulation file fuzz.json");
  return 0;
}
