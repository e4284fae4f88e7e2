#include "gpu/device_json.h"

#include "base/json_opt.h"

namespace bk::gpu {

nlohmann::json DeviceFieldsJson(const DeviceSample& d) {
  return {{"index", d.index},
          {"uuid", d.uuid},
          {"name", d.name},
          {"source", SourceName(d.source)},
          {"memory_used_mb", OptJson(d.memory_used_mb)},
          {"memory_total_mb", OptJson(d.memory_total_mb)},
          {"utilization_percent", OptJson(d.utilization_percent)},
          {"temperature_c", OptJson(d.temperature_c)},
          {"process_telemetry", d.process_telemetry}};
}

}  // namespace bk::gpu
