#pragma once
// One sample of GPU telemetry, whatever produced it.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/enum_names.h"

namespace bk::gpu {

struct ProcessSample {
  int pid = 0;
  std::optional<uid_t> uid;  // nullopt when it cannot be attributed
  std::string username = "?";
  std::string command;  // kept in memory only, never persisted raw
  int64_t gpu_memory_mb = 0;
  std::optional<int> sm_utilization_percent;
  std::string kind = "C";                // C, G or C+G
  std::string host_start_id;             // PID-reuse token
  std::string identity_source = "host";  // host | container-reservation | container-ambiguous
  std::string container_runtime;
  std::string container_id;
  std::optional<uid_t> host_uid;  // the UID on the host (differs from uid for container attribution)
};

enum class Source { kNone, kSimulation, kNvml };
const char* SourceName(Source s);  // "none" | "simulation" | "nvml"

struct DeviceSample {
  int index = 0;
  std::string uuid;  // "" when unknown
  std::string name = "unknown";
  std::optional<int64_t> memory_used_mb;  // nullopt when unknown
  std::optional<int64_t> memory_total_mb;
  std::optional<int> utilization_percent;
  std::optional<int> temperature_c;
  std::vector<ProcessSample> processes;
  Source source = Source::kNone;
  bool process_telemetry = false;  // processes[] is trustworthy
};

struct Snapshot {
  std::vector<DeviceSample> devices;  // exactly gpu_count entries, index order
  std::string error;                  // non-empty when the whole sample failed
  bool ok() const { return error.empty(); }
};

// Whether a GPU is in use right now; unknown when telemetry cannot tell.
enum class LiveStatus { kUnknown, kIdle, kBusy };
// The names shown in text and documents and sent on the socket.
inline constexpr auto kLiveStatusNames =
    MakeEnumNames<LiveStatus>(std::pair{LiveStatus::kIdle, std::string_view("idle")},
                              std::pair{LiveStatus::kBusy, std::string_view("busy")},
                              std::pair{LiveStatus::kUnknown, std::string_view("unknown")});
constexpr const auto& EnumNamesOf(LiveStatus) { return kLiveStatusNames; }
inline std::string_view LiveStatusName(LiveStatus s) { return kLiveStatusNames.Name(s); }

// Live state of one GPU for placement advice and `bk st`.
struct LiveState {
  LiveStatus status = LiveStatus::kUnknown;
  std::string reason;     // "user=alice pid=4242", "util=87%", "live state unavailable"
  double score = 45.0;    // lower is better
  int process_count = 0;  // non-system processes
};
LiveState ClassifyLive(const DeviceSample& device);
// System processes that never make a GPU busy (display servers, persistence daemon).
// Matches the basename of the command's first word, case-insensitively.
bool IsSystemProcess(const std::string& command);

// A stable device identifier usable in CUDA_VISIBLE_DEVICES: ASCII, starts
// with "GPU-" or "MIG-", at most 256 bytes, only alphanumerics and -_/.: characters.
bool IsValidDeviceUuid(std::string_view uuid);

}  // namespace bk::gpu
