#include "gpu/source.h"

namespace bk::gpu {

Snapshot UnknownSnapshot(int gpu_count, std::string error) {
  Snapshot snapshot;
  snapshot.error = std::move(error);
  for (int i = 0; i < gpu_count; ++i) {
    DeviceSample device;
    device.index = i;
    device.name = "unknown";
    device.source = Source::kNone;
    snapshot.devices.push_back(std::move(device));
  }
  return snapshot;
}

Snapshot CountOnlySource::Sample(int gpu_count) { return UnknownSnapshot(gpu_count); }

}  // namespace bk::gpu
