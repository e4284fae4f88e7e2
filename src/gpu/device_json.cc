#include "gpu/device_json.h"

namespace bk::gpu {
namespace {

using nlohmann::json;

template <class T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

}  // namespace

json DeviceFieldsJson(const DeviceSample& d) {
  return {{"index", d.index},
          {"uuid", d.uuid},
          {"name", d.name},
          {"source", SourceName(d.source)},
          {"memory_used_mb", Opt(d.memory_used_mb)},
          {"memory_total_mb", Opt(d.memory_total_mb)},
          {"utilization_percent", Opt(d.utilization_percent)},
          {"temperature_c", Opt(d.temperature_c)},
          {"process_telemetry", d.process_telemetry}};
}

}  // namespace bk::gpu
