#include "gpu/select.h"

#include "gpu/nvml_source.h"

namespace bk::gpu {

namespace {

class AutoSource : public GpuSource {
 public:
  Snapshot Sample(int gpu_count) override {
    NvmlReport report;
    Snapshot snap = SharedNvml().Sample(gpu_count, &report);
    // No driver installed: behave exactly like CountOnlySource. Any other
    // failure (init, driver mismatch) keeps its stated reason.
    if (report.state == NvmlReport::State::kNoLibrary) return UnknownSnapshot(gpu_count);
    return snap;
  }
};

}  // namespace

std::unique_ptr<GpuSource> DefaultSource() { return std::make_unique<AutoSource>(); }

std::optional<int> NvmlDeviceCount() {
  auto n = SharedNvml().DeviceCount();
  if (!n) return std::nullopt;
  return *n;
}

}  // namespace bk::gpu
