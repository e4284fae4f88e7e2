// libFuzzer target: a user's presets file (~/.config/gpubk/presets.json), as
// `bk preset` and `bk p NAME` read it. Whatever parses must render to a
// document that parses back to the same presets, and the policy check must
// answer (not crash) for each against a small server's policy.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "config/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace bk;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto presets = config::ParsePresets(text, "presets.json");
  if (!presets) return 0;
  auto again = config::ParsePresets(config::RenderPresets(*presets), "presets.json");
  if (!again) abort();
  auto sorted = *presets;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  if (*again != sorted) abort();
  engine::Policy policy;
  policy.gpu_count = 4;
  policy.disabled_gpus = {3};
  for (const auto& p : *presets) (void)config::CheckPresetPolicy(p, policy);
  return 0;
}
