#pragma once
// Telemetry from NVIDIA's NVML, loaded with dlopen (no CUDA toolkit needed).
// Sampled per GPU: identity (UUID, name, total memory), used memory,
// utilization and the process list; nvml_api.h pins how the ABI is called.
//
// Degradation, never a crash:
//  - no libnvidia-ml, a failed nvmlInit or a session-wide error (driver
//    unloaded, library/driver mismatch) -> placeholder devices and a stated
//    reason in Snapshot.error; the session is closed and NVML is not retried
//    for 30 s (monotonic);
//  - one metric failing -> that metric is nullopt and the reason is a note in
//    the DeviceReport; NOT_SUPPORTED (and FUNCTION_NOT_FOUND) switch the
//    metric off for that device for the life of the session;
//  - the compute-process query failing -> DeviceSample.process_telemetry
//    false, so nobody mistakes an empty list for an idle GPU.
//
// Threads: one NvmlSource owns NVML (nvmlInit..nvmlShutdown and the dlopen
// handle). Every public method takes an internal mutex, so calls from several
// threads are serialised and nvmlShutdown can never run while another query
// is inside libnvidia-ml (the use-after-free nvitop hit). Production code uses
// the one process-wide instance, SharedNvml(); tests build their own around a
// fake nvml::Api.
//
// Laziness: constructing an NvmlSource does nothing; the library is loaded
// and initialised on the first Sample() or DeviceCount().

#include <sys/types.h>

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "gpu/nvml_api.h"
#include "gpu/procfs.h"
#include "gpu/source.h"

namespace bk::gpu {

struct NvmlOptions {
  // Loads the library: nvml::Load by default; tests return a fake.
  std::function<std::expected<std::unique_ptr<nvml::Library>, nvml::LoadError>()> load;
  // Where PIDs are attributed: the real /proc by default.
  const ProcReader* proc = nullptr;
  std::function<std::string(uid_t)> user_name;  // sys::UserName by default
  // Monotonic time for the re-init backoff and the identity cache; wall time
  // in microseconds for NVML's per-process utilisation cursor.
  std::function<int64_t()> monotonic_ns;
  std::function<int64_t()> wall_us;
  int64_t retry_ns = 30'000'000'000;  // a failed nvmlInit is retried after 30 s
};

// What a sample could and could not read, per device; for the monitor's
// capability gaps and for `bk gpu-probe`.
struct DeviceReport {
  bool present = false;              // NVML gave a handle for this index
  bool process_utilization = false;  // per-process utilisation was read (maybe with no samples)
  int process_list_version = 0;      // 3, 2 or 1: the process-list API that answered; 0 none
  int memory_version = 0;            // 2 or 1: the memory API that answered; 0 none
  std::vector<std::string> notes;    // stated reasons for whatever is missing
};

struct NvmlReport {
  enum class State {
    kNotTried,   // nothing sampled yet
    kNoLibrary,  // libnvidia-ml is not installed: an ordinary GPU-less host
    kFailed,     // loading, init or the session failed; see error
    kBackoff,    // a recent failure; NVML is not retried before the backoff ends
    kReady,      // the snapshot came from NVML
  };
  State state = State::kNotTried;
  std::string library;                // the soname that loaded
  std::string driver_version;         // "" when unknown
  int device_count = 0;               // NVML's own count (may differ from gpu_count)
  std::string error;                  // equals Snapshot.error
  std::vector<DeviceReport> devices;  // one per sampled index
};
const char* NvmlStateName(NvmlReport::State s);
// What a report says NVML is, for `bk config`: "NVML LIBRARY (driver V)" or
// "NVML unavailable: REASON".
std::string DescribeNvml(const NvmlReport& report);

class NvmlSource : public GpuSource {
 public:
  explicit NvmlSource(NvmlOptions options = {});
  ~NvmlSource() override;
  NvmlSource(const NvmlSource&) = delete;
  NvmlSource& operator=(const NvmlSource&) = delete;

  // `gpu_count` devices, index order; NVML devices beyond it are ignored and
  // missing ones are placeholders with a note. Processes carry their host
  // identity (identity_source "host"); container attribution against bookings
  // is the caller's step (gpu::Attribute), since only it knows the bookings.
  Snapshot Sample(int gpu_count) override;
  Snapshot Sample(int gpu_count, NvmlReport* report);
  std::string Describe() override;

  // NVML's device count (1..1024), initialising NVML if needed; the error
  // states why NVML is unavailable.
  Result<int> DeviceCount();

  // Drops the session (nvmlShutdown) now; the next call re-initialises
  // without waiting for a backoff. For the monitor's exclusive-window pause.
  void Close();

 private:
  struct DeviceState;
  struct RawProcess;

  bool EnsureSession(int64_t now_ns, NvmlReport& report);
  void FailSession(int64_t now_ns, const std::string& reason);
  void Shutdown();
  std::string Reason(const std::string& what, nvml::Return rc) const;
  bool Fatal(nvml::Return rc, const std::string& what);
  DeviceSample SampleDevice(int index, int64_t now_ns, DeviceReport& report);
  void ReadIdentity(DeviceState& d, DeviceSample& out, DeviceReport& report);
  void ReadMemory(DeviceState& d, DeviceSample& out, DeviceReport& report);
  void ReadUtilization(DeviceState& d, DeviceSample& out, DeviceReport& report);
  bool ReadProcessUtilization(DeviceState& d, std::vector<std::pair<unsigned, int>>& sm,
                              DeviceReport& report);
  bool ReadProcessList(DeviceState& d, bool graphics, int64_t now_ns, std::vector<RawProcess>& out,
                       DeviceReport& report);
  nvml::Return CallList(DeviceState& d, nvml::Api::ProcessListFn fn, int version,
                        std::vector<RawProcess>& out);

  std::mutex mu_;
  NvmlOptions options_;
  std::unique_ptr<ProcReader> own_proc_;
  ProcIdentities identities_;
  std::unique_ptr<nvml::Library> lib_;
  bool initialized_ = false;
  bool library_missing_ = false;
  int64_t retry_at_ns_ = 0;  // 0: no backoff
  std::string error_;        // why NVML is unavailable
  std::string driver_version_;
  std::vector<DeviceState> devices_;
  std::string fatal_;  // a session-wide failure seen during this sample
};

// The process-wide NVML owner. Intentionally never destroyed: static
// destruction order at exit must not run nvmlShutdown under another thread.
NvmlSource& SharedNvml();

}  // namespace bk::gpu
