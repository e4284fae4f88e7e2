#pragma once
// A fake libnvidia-ml for unit tests and the benchmark: plain C-ABI functions
// reading one global FakeNvml, wired into an nvml::Api exactly as dlsym
// would wire the real library.

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu/nvml_api.h"
#include "gpu/nvml_source.h"

namespace bk::gpu::fake {

struct Proc {
  unsigned int pid;
  unsigned long long memory;
  unsigned int gi = 0xFFFFFFFFu, ci = 0xFFFFFFFFu;
};

struct Gpu {
  std::string uuid = "GPU-00000000-0000-0000-0000-000000000000";
  std::string name = "Fake GPU";
  unsigned long long total = 80ULL << 30, reserved = 512ULL << 20, used = 1ULL << 30;
  unsigned int util = 37, temp = 51;
  std::vector<Proc> compute, graphics;
  std::vector<nvml::ProcessUtilizationSample> samples;
  // Record size the _v3 functions write: 24 (correct), 32 (the R535 break) or 16.
  size_t v3_record = 24;
  // Return codes forced per entry point name ("util", "temp", "uuid", "name",
  // "mem", "mem2", "compute3", "compute2", "compute1", "graphics3", ...,
  // "procutil", "handle").
  std::map<std::string, nvml::Return> rc;
};

struct Nvml {
  std::vector<Gpu> gpus;
  nvml::Return init_rc = nvml::kSuccess;
  int init_calls = 0, shutdown_calls = 0;
  std::map<std::string, int> calls;  // per entry point name
  unsigned long long last_seen_asked = 0;
  unsigned int memory_v2_version_seen = 0;
};

inline Nvml* g = nullptr;

inline int Index(nvml::Device d) { return static_cast<int>(reinterpret_cast<intptr_t>(d)) - 1; }
inline Gpu& Dev(nvml::Device d) { return g->gpus.at(Index(d)); }
// The forced code for `name` on `d`, counting the call.
inline nvml::Return Forced(nvml::Device d, const std::string& name) {
  ++g->calls[name];
  auto it = Dev(d).rc.find(name);
  return it == Dev(d).rc.end() ? nvml::kSuccess : it->second;
}

inline nvml::Return Init() {
  ++g->init_calls;
  return g->init_rc;
}
inline nvml::Return Shutdown() {
  ++g->shutdown_calls;
  return nvml::kSuccess;
}
inline const char* ErrorString(nvml::Return rc) {
  switch (rc) {
    case nvml::kErrorNotSupported: return "Not Supported";
    case nvml::kErrorDriverNotLoaded: return "Driver Not Loaded";
    case nvml::kErrorNoPermission: return "Insufficient Permissions";
    default: return "Fake Error";
  }
}
inline nvml::Return GetCount(unsigned int* n) {
  *n = static_cast<unsigned int>(g->gpus.size());
  return nvml::kSuccess;
}
inline nvml::Return GetHandle(unsigned int i, nvml::Device* d) {
  if (i >= g->gpus.size()) return nvml::kErrorInvalidArgument;
  if (auto it = g->gpus[i].rc.find("handle"); it != g->gpus[i].rc.end()) return it->second;
  *d = reinterpret_cast<nvml::Device>(static_cast<intptr_t>(i + 1));
  return nvml::kSuccess;
}
inline nvml::Return DriverVersion(char* buf, unsigned int n) {
  std::snprintf(buf, n, "%s", "550.54.15");
  return nvml::kSuccess;
}
inline nvml::Return Uuid(nvml::Device d, char* buf, unsigned int n) {
  if (auto rc = Forced(d, "uuid")) return rc;
  std::snprintf(buf, n, "%s", Dev(d).uuid.c_str());
  return nvml::kSuccess;
}
inline nvml::Return Name(nvml::Device d, char* buf, unsigned int n) {
  if (auto rc = Forced(d, "name")) return rc;
  std::snprintf(buf, n, "%s", Dev(d).name.c_str());
  return nvml::kSuccess;
}
inline nvml::Return Mem(nvml::Device d, nvml::Memory* m) {
  if (auto rc = Forced(d, "mem")) return rc;
  // v1 counts reserved memory as used.
  m->total = Dev(d).total;
  m->used = Dev(d).used + Dev(d).reserved;
  m->free = m->total - m->used;
  return nvml::kSuccess;
}
inline nvml::Return Mem2(nvml::Device d, nvml::MemoryV2* m) {
  if (auto rc = Forced(d, "mem2")) return rc;
  g->memory_v2_version_seen = m->version;
  // What real drivers do with a bare 2 (nvidia-settings#78).
  if (m->version != 0x02000028u) return nvml::kErrorFunctionNotFound;
  m->total = Dev(d).total;
  m->reserved = Dev(d).reserved;
  m->used = Dev(d).used;
  m->free = m->total - m->used - m->reserved;
  return nvml::kSuccess;
}
inline nvml::Return Util(nvml::Device d, nvml::Utilization* u) {
  if (auto rc = Forced(d, "util")) return rc;
  u->gpu = Dev(d).util;
  u->memory = 5;
  return nvml::kSuccess;
}
inline nvml::Return Temp(nvml::Device d, unsigned int sensor, unsigned int* t) {
  if (auto rc = Forced(d, "temp")) return rc;
  if (sensor != nvml::kTemperatureGpu) return nvml::kErrorInvalidArgument;
  *t = Dev(d).temp;
  return nvml::kSuccess;
}

// The process-list protocol: count in = capacity, INSUFFICIENT_SIZE with the
// needed count, records of `record` bytes.
inline nvml::Return List(nvml::Device d, const std::string& name, const std::vector<Proc>& procs,
                         size_t record, unsigned int* count, void* infos) {
  if (auto rc = Forced(d, name)) return rc;
  if (*count < procs.size()) {
    *count = static_cast<unsigned int>(procs.size());
    return nvml::kErrorInsufficientSize;
  }
  auto* out = static_cast<unsigned char*>(infos);
  for (size_t i = 0; i < procs.size(); ++i) {
    unsigned char rec[32] = {};
    std::memcpy(rec, &procs[i].pid, 4);
    std::memcpy(rec + 8, &procs[i].memory, 8);
    if (record >= 24) {
      std::memcpy(rec + 16, &procs[i].gi, 4);
      std::memcpy(rec + 20, &procs[i].ci, 4);
    }
    std::memcpy(out + i * record, rec, record);  // record 32: usedGpuCcProtectedMemory = 0
  }
  *count = static_cast<unsigned int>(procs.size());
  return nvml::kSuccess;
}
// Version 1, 2 or 3 of the compute or graphics process-list call (named
// "compute1" ... "graphics3" for forced failures): records of 16, 24 or the
// device's v3_record bytes.
template <bool kGraphics, int kVersion>
nvml::Return ProcessList(nvml::Device d, unsigned int* n, void* p) {
  const std::string name = (kGraphics ? "graphics" : "compute") + std::to_string(kVersion);
  const size_t record = kVersion == 1 ? 16 : kVersion == 2 ? 24 : Dev(d).v3_record;
  return List(d, name, kGraphics ? Dev(d).graphics : Dev(d).compute, record, n, p);
}
inline nvml::Return ProcUtil(nvml::Device d, nvml::ProcessUtilizationSample* s, unsigned int* n,
                             unsigned long long last_seen) {
  if (auto rc = Forced(d, "procutil")) return rc;
  g->last_seen_asked = last_seen;
  std::vector<nvml::ProcessUtilizationSample> fresh;
  for (const auto& x : Dev(d).samples)
    if (x.timeStamp > last_seen) fresh.push_back(x);
  if (fresh.empty()) return nvml::kErrorNotFound;  // what real NVML says when nothing is new
  if (s == nullptr || *n < fresh.size()) {
    *n = static_cast<unsigned int>(fresh.size());
    return nvml::kErrorInsufficientSize;
  }
  std::copy(fresh.begin(), fresh.end(), s);
  *n = static_cast<unsigned int>(fresh.size());
  return nvml::kSuccess;
}

inline nvml::Api Api() {
  nvml::Api a;
  a.Init = Init;
  a.Shutdown = Shutdown;
  a.DeviceGetCount = GetCount;
  a.DeviceGetHandleByIndex = GetHandle;
  a.ErrorString = ErrorString;
  a.SystemGetDriverVersion = DriverVersion;
  a.DeviceGetUUID = Uuid;
  a.DeviceGetName = Name;
  a.DeviceGetMemoryInfo = Mem;
  a.DeviceGetMemoryInfoV2 = Mem2;
  a.DeviceGetUtilizationRates = Util;
  a.DeviceGetTemperature = Temp;
  a.compute[nvml::kV1] = ProcessList<false, 1>;
  a.compute[nvml::kV2] = ProcessList<false, 2>;
  a.compute[nvml::kV3] = ProcessList<false, 3>;
  a.graphics[nvml::kV1] = ProcessList<true, 1>;
  a.graphics[nvml::kV2] = ProcessList<true, 2>;
  a.graphics[nvml::kV3] = ProcessList<true, 3>;
  a.DeviceGetProcessUtilization = ProcUtil;
  return a;
}

// A loader handing out `api` as if dlopen had found it.
inline auto Loader(nvml::Api api) {
  return [api]() -> std::expected<std::unique_ptr<nvml::Library>, nvml::LoadError> {
    return std::make_unique<nvml::Library>(nullptr, api, "fake");
  };
}

}  // namespace bk::gpu::fake
