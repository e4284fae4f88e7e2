#include "gpu/snapshot.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "base/strings.h"

namespace bk::gpu {

const char* SourceName(Source s) {
  switch (s) {
    case Source::kNone: return "none";
    case Source::kSimulation: return "simulation";
    case Source::kNvml: return "nvml";
  }
  return "none";
}

bool IsSystemProcess(const std::string& command) {
  static constexpr std::array<std::string_view, 7> kSystem = {
      "gnome-shell", "kwin_wayland", "kwin_x11", "nvidia-persistenced", "nvidia-powerd", "xorg", "xwayland"};
  std::string_view cmd = Trim(command);
  std::string_view first = cmd.substr(0, cmd.find_first_of(" \t\r\n\f\v"));
  auto slash = first.rfind('/');
  if (slash != std::string_view::npos) first = first.substr(slash + 1);
  if (first.empty()) return false;
  const std::string name = ToLower(first);
  return std::find(kSystem.begin(), kSystem.end(), name) != kSystem.end();
}

bool IsValidDeviceUuid(std::string_view uuid) {
  if (uuid.size() > 256 || !(StartsWith(uuid, "GPU-") || StartsWith(uuid, "MIG-"))) return false;
  for (char c : uuid) {
    bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
              c == '_' || c == '/' || c == '.' || c == ':';
    if (!ok) return false;
  }
  return true;
}

namespace {

// The process a busy reason names: highest SM utilization, then most memory,
// then lowest pid.
bool Outranks(const ProcessSample& a, const ProcessSample& b) {
  int sa = a.sm_utilization_percent.value_or(-1), sb = b.sm_utilization_percent.value_or(-1);
  if (sa != sb) return sa > sb;
  if (a.gpu_memory_mb != b.gpu_memory_mb) return a.gpu_memory_mb > b.gpu_memory_mb;
  return a.pid < b.pid;
}

}  // namespace

LiveState ClassifyLive(const DeviceSample& device) {
  LiveState state;
  if (device.source == Source::kNone) {
    state.status = LiveStatus::kUnknown;
    state.reason = "live state unavailable";
    state.score = 45.0;
    return state;
  }
  const ProcessSample* top = nullptr;
  for (const ProcessSample& p : device.processes) {
    if (IsSystemProcess(p.command)) continue;
    ++state.process_count;
    if (top == nullptr || Outranks(p, *top)) top = &p;
  }
  const int util = std::clamp(device.utilization_percent.value_or(0), 0, 100);
  const int64_t used = std::max<int64_t>(0, device.memory_used_mb.value_or(0));
  const int64_t total = std::max<int64_t>(0, device.memory_total_mb.value_or(0));
  const double mem_percent = total > 0 ? std::min(100.0, 100.0 * static_cast<double>(used) / total) : 0.0;
  // used >= max(1024, 10% of total), exactly, without overflow or rounding.
  const int64_t tenth_up = total / 10 + (total % 10 != 0);
  const bool memory_busy = used >= 1024 && used >= tenth_up;

  if (top != nullptr || util >= 10 || memory_busy) {
    state.status = LiveStatus::kBusy;
    if (top != nullptr) {
      state.reason = fmt::format("user={} pid={}", top->username, top->pid);
    } else if (util >= 10) {
      state.reason = fmt::format("util={}%", util);
    } else {
      state.reason = fmt::format("memory={}MiB", used);
    }
    state.score = std::min(100.0, 70.0 + 0.20 * util + 0.10 * mem_percent + 5.0 * state.process_count);
  } else {
    state.status = LiveStatus::kIdle;
    state.reason = "";
    state.score = std::min(20.0, 0.50 * util + 0.10 * mem_percent);
  }
  return state;
}

}  // namespace bk::gpu
