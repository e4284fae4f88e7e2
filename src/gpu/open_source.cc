#include "gpu/open_source.h"

#include <dirent.h>

#include "gpu/nvml_source.h"

namespace bk::gpu {

namespace {

// NVML when the library loads, else exactly CountOnlySource.
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

  std::string Describe() override {
    NvmlReport report;
    SharedNvml().Sample(0, &report);
    if (report.state == NvmlReport::State::kNoLibrary) return CountOnlySource().Describe();
    return DescribeNvml(report);
  }
};

int CountNvidiaGpus() {
  int n = 0;
  if (DIR* d = opendir("/proc/driver/nvidia/gpus")) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') ++n;
    closedir(d);
  }
  // No /proc entry (WSL, some containers): ask NVML; the session it opens is
  // the one later samples reuse.
  if (n == 0) {
    if (auto nvml = SharedNvml().DeviceCount()) n = *nvml;
  }
  return n;
}

}  // namespace

OpenedSource OpenSource(const std::string& sim_file) {
  if (!sim_file.empty()) return {std::make_unique<SimFileSource>(sim_file), {}};
  return {std::make_unique<AutoSource>(), [] { SharedNvml().Close(); }};
}

int DetectGpuCount(const std::string& sim_file) {
  int n = sim_file.empty() ? CountNvidiaGpus() : CountSimulatedGpus(sim_file).value_or(1);
  return n > 0 ? n : 1;
}

}  // namespace bk::gpu
