#pragma once
// Our own declarations of the slice of the NVML C ABI that bk uses. We never
// include nvml.h: bk builds without the CUDA toolkit and loads
// libnvidia-ml.so.1 at run time. Field order and sizes are the ABI; the
// static_asserts pin them for x86-64/aarch64 LP64.
//
// Every entry point is a plain function pointer in `nvml::Api`, filled either
// by dlsym (Load) or by a unit test with fakes, so the sampler above it never
// knows which.

#include <cstdint>
#include <expected>
#include <memory>
#include <string>

#include "base/result.h"

namespace bk::gpu::nvml {

// nvmlReturn_t is a C enum: an int on every ABI we build for.
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorAlreadyInitialized = 5;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorLibraryNotFound = 12;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorResetRequired = 16;
inline constexpr Return kErrorOperatingSystem = 17;
inline constexpr Return kErrorLibRmVersionMismatch = 18;
inline constexpr Return kErrorNoData = 21;
inline constexpr Return kErrorArgumentVersionMismatch = 25;
inline constexpr Return kErrorUnknown = 999;

// Our name for a return code ("NVML_ERROR_NO_PERMISSION"), for messages that
// stay meaningful when nvmlErrorString is missing.
const char* ReturnName(Return rc);

// nvmlDevice_t: an opaque handle owned by the driver.
struct DeviceSt;
using Device = DeviceSt*;

// nvmlMemory_t (v1): total, free, used, in that order.
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(Memory) == 24);

// nvmlMemory_v2_t: `used` excludes the driver-reserved memory that v1 counts.
struct MemoryV2 {
  unsigned int version;  // must be kMemoryV2Version, not 2
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(MemoryV2) == 40);
// NVML_STRUCT_VERSION(Memory, 2) = sizeof | (2 << 24). Passing a bare 2 makes
// the driver answer FUNCTION_NOT_FOUND (NVIDIA/nvidia-settings#78).
inline constexpr unsigned int kMemoryV2Version = static_cast<unsigned int>(sizeof(MemoryV2)) | (2u << 24);
static_assert(kMemoryV2Version == 0x02000028u);

// nvmlUtilization_t: percent of the last sample period; `memory` is
// bandwidth busy time, not capacity.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
static_assert(sizeof(Utilization) == 8);

// nvmlProcessInfo_v1_t, filled by the un-suffixed process-list functions.
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};
static_assert(sizeof(ProcessInfoV1) == 16);

// nvmlProcessInfo_v2_t, filled by the _v2 and (normally) the _v3 functions.
// The instance ids are 0xFFFFFFFF when MIG is off.
struct ProcessInfoV2 {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(sizeof(ProcessInfoV2) == 24);
// Some R535 drivers wrote 32-byte records from the _v3 functions without a
// version bump; buffers are sized for that stride so such a driver can never
// write past our allocation.
inline constexpr size_t kMaxProcessRecordBytes = 32;

// nvmlProcessUtilizationSample_t.
struct ProcessUtilizationSample {
  unsigned int pid;
  unsigned long long timeStamp;  // CPU time in microseconds since the epoch
  unsigned int smUtil;
  unsigned int memUtil;
  unsigned int encUtil;
  unsigned int decUtil;
};
static_assert(sizeof(ProcessUtilizationSample) == 32);

inline constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
inline constexpr unsigned int kTemperatureGpu = 0;               // NVML_TEMPERATURE_GPU
inline constexpr unsigned int kUuidBufferSize = 96;              // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned int kNameBufferSize = 96;              // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned int kDriverVersionBufferSize = 80;     // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

// Process-list versions, indexing Api::compute / Api::graphics.
enum ProcessListVersion { kV1 = 0, kV2 = 1, kV3 = 2, kProcessListVersions = 3 };

// The entry points. Required ones are never null in a loaded Api; optional
// ones are null when the driver predates them and are checked before use.
struct Api {
  // Required.
  Return (*Init)() = nullptr;  // nvmlInit_v2, else nvmlInit
  Return (*Shutdown)() = nullptr;
  Return (*DeviceGetCount)(unsigned int* count) = nullptr;                         // _v2, else plain
  Return (*DeviceGetHandleByIndex)(unsigned int index, Device* device) = nullptr;  // _v2, else plain
  // Optional.
  const char* (*ErrorString)(Return rc) = nullptr;
  Return (*SystemGetDriverVersion)(char* version, unsigned int length) = nullptr;
  Return (*DeviceGetUUID)(Device device, char* uuid, unsigned int length) = nullptr;
  Return (*DeviceGetName)(Device device, char* name, unsigned int length) = nullptr;
  Return (*DeviceGetMemoryInfo)(Device device, Memory* memory) = nullptr;
  Return (*DeviceGetMemoryInfoV2)(Device device, MemoryV2* memory) = nullptr;
  Return (*DeviceGetUtilizationRates)(Device device, Utilization* utilization) = nullptr;
  Return (*DeviceGetTemperature)(Device device, unsigned int sensor, unsigned int* celsius) = nullptr;
  // nvmlDevice{Compute,Graphics}RunningProcesses{,_v2,_v3}. The buffer is an
  // array of ProcessInfoV1 (index kV1) or ProcessInfoV2 (kV2, kV3); the
  // pointer type is void* so one protocol serves every version.
  using ProcessListFn = Return (*)(Device device, unsigned int* count, void* infos);
  ProcessListFn compute[kProcessListVersions] = {};
  ProcessListFn graphics[kProcessListVersions] = {};
  Return (*DeviceGetProcessUtilization)(Device device, ProcessUtilizationSample* samples, unsigned int* count,
                                        unsigned long long last_seen_us) = nullptr;
};

// A loaded libnvidia-ml: keeps the dlopen handle alive as long as the Api is
// in use, and dlcloses it on destruction. Tests build one around a fake Api.
class Library {
 public:
  Library(void* handle, Api api, std::string path) : handle_(handle), api_(api), path_(std::move(path)) {}
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const Api& api() const { return api_; }
  const std::string& path() const { return path_; }  // the soname that loaded, or "fake"

 private:
  void* handle_;  // nullptr for fakes
  Api api_;
  std::string path_;
};

// Why Load failed: no library at all is an ordinary state (no NVIDIA driver),
// a library without the required symbols is a broken installation.
enum class LoadFailure { kNoLibrary, kMissingSymbol };
struct LoadError {
  LoadFailure failure;
  std::string message;
};

// dlopen("libnvidia-ml.so.1"), then "libnvidia-ml.so" (the unversioned name is
// a development symlink that may point elsewhere, so it only comes second),
// then resolves every symbol, newest version first.
std::expected<std::unique_ptr<Library>, LoadError> Load();

}  // namespace bk::gpu::nvml
