// Loading libnvidia-ml with dlopen/dlsym.

#include "gpu/nvml_api.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <initializer_list>

namespace bk::gpu::nvml {

const char* ReturnName(Return rc) {
  switch (rc) {
    case 0: return "NVML_SUCCESS";
    case 1: return "NVML_ERROR_UNINITIALIZED";
    case 2: return "NVML_ERROR_INVALID_ARGUMENT";
    case 3: return "NVML_ERROR_NOT_SUPPORTED";
    case 4: return "NVML_ERROR_NO_PERMISSION";
    case 5: return "NVML_ERROR_ALREADY_INITIALIZED";
    case 6: return "NVML_ERROR_NOT_FOUND";
    case 7: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case 8: return "NVML_ERROR_INSUFFICIENT_POWER";
    case 9: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case 10: return "NVML_ERROR_TIMEOUT";
    case 11: return "NVML_ERROR_IRQ_ISSUE";
    case 12: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case 13: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case 14: return "NVML_ERROR_CORRUPTED_INFOROM";
    case 15: return "NVML_ERROR_GPU_IS_LOST";
    case 16: return "NVML_ERROR_RESET_REQUIRED";
    case 17: return "NVML_ERROR_OPERATING_SYSTEM";
    case 18: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case 19: return "NVML_ERROR_IN_USE";
    case 20: return "NVML_ERROR_MEMORY";
    case 21: return "NVML_ERROR_NO_DATA";
    case 22: return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case 23: return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case 24: return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case 25: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    case 26: return "NVML_ERROR_DEPRECATED";
    case 27: return "NVML_ERROR_NOT_READY";
    case 28: return "NVML_ERROR_GPU_NOT_FOUND";
    case 29: return "NVML_ERROR_INVALID_STATE";
    case 30: return "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED";
    case 999: return "NVML_ERROR_UNKNOWN";
    default: return "NVML_ERROR_UNRECOGNISED";
  }
}

Library::~Library() {
  if (handle_ != nullptr) dlclose(handle_);
}

namespace {

// The first of `names` that the library exports, as type T (null if none).
template <class T>
T Resolve(void* handle, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* sym = dlsym(handle, name)) return reinterpret_cast<T>(sym);
  }
  return nullptr;
}

}  // namespace

std::expected<std::unique_ptr<Library>, LoadError> Load() {
  void* handle = nullptr;
  std::string path;
  std::string first_error;
  for (const char* name : {"libnvidia-ml.so.1", "libnvidia-ml.so"}) {
    // RTLD_LOCAL keeps NVML's symbols out of the global namespace.
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      path = name;
      break;
    }
    if (first_error.empty()) {
      const char* e = dlerror();
      first_error = e != nullptr ? e : name;
    }
  }
  if (handle == nullptr) {
    return std::unexpected(
        LoadError{LoadFailure::kNoLibrary, fmt::format("NVML library not found ({})", first_error)});
  }

  Api api;
  api.Init = Resolve<decltype(api.Init)>(handle, {"nvmlInit_v2", "nvmlInit"});
  api.Shutdown = Resolve<decltype(api.Shutdown)>(handle, {"nvmlShutdown"});
  api.DeviceGetCount =
      Resolve<decltype(api.DeviceGetCount)>(handle, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  api.DeviceGetHandleByIndex = Resolve<decltype(api.DeviceGetHandleByIndex)>(
      handle, {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  const char* missing = api.Init == nullptr                     ? "nvmlInit"
                        : api.Shutdown == nullptr               ? "nvmlShutdown"
                        : api.DeviceGetCount == nullptr         ? "nvmlDeviceGetCount"
                        : api.DeviceGetHandleByIndex == nullptr ? "nvmlDeviceGetHandleByIndex"
                                                                : nullptr;
  if (missing != nullptr) {
    dlclose(handle);
    return std::unexpected(
        LoadError{LoadFailure::kMissingSymbol,
                  fmt::format("{} lacks {}; the NVIDIA driver installation is incomplete", path, missing)});
  }

  api.ErrorString = Resolve<decltype(api.ErrorString)>(handle, {"nvmlErrorString"});
  api.SystemGetDriverVersion =
      Resolve<decltype(api.SystemGetDriverVersion)>(handle, {"nvmlSystemGetDriverVersion"});
  api.DeviceGetUUID = Resolve<decltype(api.DeviceGetUUID)>(handle, {"nvmlDeviceGetUUID"});
  api.DeviceGetName = Resolve<decltype(api.DeviceGetName)>(handle, {"nvmlDeviceGetName"});
  api.DeviceGetMemoryInfo = Resolve<decltype(api.DeviceGetMemoryInfo)>(handle, {"nvmlDeviceGetMemoryInfo"});
  api.DeviceGetMemoryInfoV2 =
      Resolve<decltype(api.DeviceGetMemoryInfoV2)>(handle, {"nvmlDeviceGetMemoryInfo_v2"});
  api.DeviceGetUtilizationRates =
      Resolve<decltype(api.DeviceGetUtilizationRates)>(handle, {"nvmlDeviceGetUtilizationRates"});
  api.DeviceGetTemperature =
      Resolve<decltype(api.DeviceGetTemperature)>(handle, {"nvmlDeviceGetTemperature"});
  // Each version separately: the sampler walks v3 -> v2 -> v1 and validates.
  using ListFn = Api::ProcessListFn;
  api.compute[kV1] = Resolve<ListFn>(handle, {"nvmlDeviceGetComputeRunningProcesses"});
  api.compute[kV2] = Resolve<ListFn>(handle, {"nvmlDeviceGetComputeRunningProcesses_v2"});
  api.compute[kV3] = Resolve<ListFn>(handle, {"nvmlDeviceGetComputeRunningProcesses_v3"});
  api.graphics[kV1] = Resolve<ListFn>(handle, {"nvmlDeviceGetGraphicsRunningProcesses"});
  api.graphics[kV2] = Resolve<ListFn>(handle, {"nvmlDeviceGetGraphicsRunningProcesses_v2"});
  api.graphics[kV3] = Resolve<ListFn>(handle, {"nvmlDeviceGetGraphicsRunningProcesses_v3"});
  api.DeviceGetProcessUtilization =
      Resolve<decltype(api.DeviceGetProcessUtilization)>(handle, {"nvmlDeviceGetProcessUtilization"});
  return std::make_unique<Library>(handle, api, path);
}

}  // namespace bk::gpu::nvml
