#pragma once
// One GPU's sample as JSON, as `bk m --json` and `bk gpu-probe --json` show it.

#include <nlohmann/json.hpp>

#include "gpu/snapshot.h"

namespace bk::gpu {

// The device's own fields (index, uuid, name, source, memory, utilization,
// temperature, process_telemetry; unknown values null). Each caller adds its
// view of the processes.
nlohmann::json DeviceFieldsJson(const DeviceSample& d);

}  // namespace bk::gpu
