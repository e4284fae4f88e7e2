// The NVML sampler: session life cycle, per-device metrics, process lists.
// The call protocols follow NVML's documented versioned structs (memory v2,
// process lists v3 -> v2 -> v1).

#include "gpu/nvml_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>

#include "base/strings.h"
#include "engine/types.h"

namespace bk::gpu {

using namespace nvml;

namespace {

constexpr unsigned int kMaxPid = 4'194'304;  // PID_MAX_LIMIT on 64-bit Linux
constexpr unsigned int kNoInstance = 0xFFFFFFFFu;
constexpr unsigned int kMaxInstanceId = 1024;  // MIG ids are small; a PID here means a wrong stride
constexpr unsigned int kMaxProcessCapacity = 1 << 16;
constexpr int64_t kMiB = int64_t{1024} * 1024;
constexpr unsigned long long kMaxPlausibleBytes = 1ULL << 50;  // 1 PiB: no GPU has more

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
int64_t WallUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Answers meaning "this call will never work on this device/driver": the
// metric is switched off instead of being asked again every sample.
bool Unsupported(Return rc) { return rc == kErrorNotSupported || rc == kErrorFunctionNotFound; }

// Session-wide failures: the handles are no longer worth anything.
bool SessionFatal(Return rc) {
  return rc == kErrorUninitialized || rc == kErrorDriverNotLoaded || rc == kErrorLibRmVersionMismatch;
}

// A driver string (name, UUID, version): up to the first NUL, within the buffer.
std::string FromBuffer(const char* buf, size_t size) { return std::string(buf, strnlen(buf, size)); }

}  // namespace

const char* NvmlStateName(NvmlReport::State s) {
  switch (s) {
    case NvmlReport::State::kNotTried: return "not-tried";
    case NvmlReport::State::kNoLibrary: return "no-library";
    case NvmlReport::State::kFailed: return "failed";
    case NvmlReport::State::kBackoff: return "backoff";
    case NvmlReport::State::kReady: return "ready";
  }
  return "failed";
}

std::string DescribeNvml(const NvmlReport& report) {
  if (report.state != NvmlReport::State::kReady) return "NVML unavailable: " + report.error;
  return fmt::format("NVML {} (driver {})", report.library,
                     report.driver_version.empty() ? "?" : report.driver_version);
}

// Everything kept per device for the life of a session.
struct NvmlSource::DeviceState {
  Device handle = nullptr;
  std::string handle_error;
  // Stable identity, cached after the first good answer.
  std::string uuid;
  std::string name;
  std::optional<int64_t> total_mb;
  // Metrics switched off for this session, with the stated reason.
  std::map<std::string, std::string, std::less<>> off;
  bool memory_v2_off = false;
  bool list_off[2][kProcessListVersions] = {};  // [graphics][version]
  unsigned long long last_seen_us = 0;          // per-process utilisation cursor
  unsigned int capacity = 16;                   // process-list buffer, in records
  std::vector<uint64_t> buffer;                 // 8-byte aligned record storage
};

struct NvmlSource::RawProcess {
  unsigned int pid = 0;
  unsigned long long memory = 0;
  unsigned int gpu_instance = kNoInstance;
  unsigned int compute_instance = kNoInstance;
};

NvmlSource::NvmlSource(NvmlOptions options)
    : options_(std::move(options)),
      own_proc_(options_.proc == nullptr ? std::make_unique<RealProcReader>() : nullptr),
      identities_(options_.proc != nullptr ? options_.proc : own_proc_.get(), options_.user_name) {
  if (!options_.load) options_.load = [] { return nvml::Load(); };
  if (!options_.monotonic_ns) options_.monotonic_ns = SteadyNs;
  if (!options_.wall_us) options_.wall_us = WallUs;
}

NvmlSource::~NvmlSource() {
  std::lock_guard lock(mu_);
  Shutdown();
}

void NvmlSource::Shutdown() {
  if (initialized_ && lib_) lib_->api().Shutdown();
  initialized_ = false;
  devices_.clear();
}

void NvmlSource::Close() {
  std::lock_guard lock(mu_);
  Shutdown();
  retry_at_ns_ = 0;
}

std::string NvmlSource::Reason(const std::string& what, Return rc) const {
  const char* text = lib_ && lib_->api().ErrorString ? lib_->api().ErrorString(rc) : nullptr;
  if (text == nullptr || *text == '\0') return fmt::format("{}: {}", what, ReturnName(rc));
  return fmt::format("{}: {} ({})", what, text, ReturnName(rc));
}

bool NvmlSource::Fatal(Return rc, const std::string& what) {
  if (!SessionFatal(rc)) return false;
  if (fatal_.empty()) fatal_ = Reason(what, rc);
  return true;
}

void NvmlSource::FailSession(int64_t now_ns, const std::string& reason) {
  Shutdown();
  error_ = std::move(reason);
  retry_at_ns_ = now_ns + options_.retry_ns;
  if (retry_at_ns_ == 0) retry_at_ns_ = 1;  // 0 means "no backoff"
}

bool NvmlSource::EnsureSession(int64_t now_ns, NvmlReport& report) {
  if (initialized_) return true;
  if (retry_at_ns_ != 0 && now_ns < retry_at_ns_) {
    report.state = library_missing_ ? NvmlReport::State::kNoLibrary : NvmlReport::State::kBackoff;
    int64_t left_s = (retry_at_ns_ - now_ns + 999'999'999) / 1'000'000'000;
    report.error = fmt::format("{} (next NVML attempt in {} s)", error_, left_s);
    return false;
  }
  report.state = NvmlReport::State::kFailed;
  if (!lib_) {
    auto loaded = options_.load();
    if (!loaded) {
      library_missing_ = loaded.error().failure == LoadFailure::kNoLibrary;
      if (library_missing_) report.state = NvmlReport::State::kNoLibrary;
      FailSession(now_ns, loaded.error().message);
      report.error = error_;
      return false;
    }
    lib_ = std::move(*loaded);
  }
  library_missing_ = false;
  const Api& api = lib_->api();
  if (Return rc = api.Init(); rc != kSuccess) {
    // nvmlInit failed, so there is nothing to shut down.
    FailSession(now_ns, Reason("NVML initialisation failed", rc));
    report.error = error_;
    return false;
  }
  initialized_ = true;
  unsigned int count = 0;
  if (Return rc = api.DeviceGetCount(&count); rc != kSuccess) {
    FailSession(now_ns, Reason("NVML device count failed", rc));
    report.error = error_;
    return false;
  }
  if (count < 1 || count > engine::kMaxGpus) {
    FailSession(now_ns, fmt::format("NVML reported {} devices; expected 1..{}", count, engine::kMaxGpus));
    report.error = error_;
    return false;
  }
  // A device NVML counts but will not hand out (NO_PERMISSION, a GPU in
  // reset) becomes a placeholder; only when no device answers does the
  // session fail.
  devices_.assign(count, DeviceState{});
  int usable = 0;
  std::string first_error;
  const auto cursor = static_cast<unsigned long long>(std::max<int64_t>(0, options_.wall_us() - 2'000'000));
  for (unsigned int i = 0; i < count; ++i) {
    DeviceState& d = devices_[i];
    d.last_seen_us = cursor;
    Return rc = api.DeviceGetHandleByIndex(i, &d.handle);
    if (rc != kSuccess || d.handle == nullptr) {
      d.handle = nullptr;
      d.handle_error = Reason(fmt::format("NVML device {} handle", i), rc);
      if (first_error.empty()) first_error = d.handle_error;
    } else {
      ++usable;
    }
  }
  if (usable == 0) {
    FailSession(now_ns, first_error);
    report.error = error_;
    return false;
  }
  driver_version_.clear();
  if (api.SystemGetDriverVersion) {
    char buf[kDriverVersionBufferSize] = {};
    if (api.SystemGetDriverVersion(buf, sizeof buf) == kSuccess)
      driver_version_ = FromBuffer(buf, sizeof buf);
  }
  error_.clear();
  retry_at_ns_ = 0;
  return true;
}

Result<int> NvmlSource::DeviceCount() {
  std::lock_guard lock(mu_);
  NvmlReport report;
  if (!EnsureSession(options_.monotonic_ns(), report)) return bk::Fail(ErrorKind::kUnavailable, report.error);
  return static_cast<int>(devices_.size());
}

Snapshot NvmlSource::Sample(int gpu_count) { return Sample(gpu_count, nullptr); }

std::string NvmlSource::Describe() {
  NvmlReport report;
  Sample(0, &report);
  return DescribeNvml(report);
}

Snapshot NvmlSource::Sample(int gpu_count, NvmlReport* out_report) {
  std::lock_guard lock(mu_);
  NvmlReport report;
  const int64_t now_ns = options_.monotonic_ns();
  gpu_count = std::clamp(gpu_count, 0, engine::kMaxGpus);
  auto finish = [&](Snapshot snap) {
    report.error = snap.error;
    if (out_report != nullptr) *out_report = std::move(report);
    return snap;
  };
  if (!EnsureSession(now_ns, report)) return finish(UnknownSnapshot(gpu_count, report.error));

  report.state = NvmlReport::State::kReady;
  report.library = lib_->path();
  report.driver_version = driver_version_;
  report.device_count = static_cast<int>(devices_.size());
  report.devices.resize(gpu_count);
  fatal_.clear();
  identities_.NextSample();
  Snapshot snap;
  snap.devices.reserve(gpu_count);
  for (int i = 0; i < gpu_count; ++i) {
    if (i >= static_cast<int>(devices_.size())) {
      DeviceSample placeholder;
      placeholder.index = i;
      report.devices[i].notes.push_back(
          fmt::format("NVML reports {} GPU(s); index {} has no device", devices_.size(), i));
      snap.devices.push_back(std::move(placeholder));
      continue;
    }
    snap.devices.push_back(SampleDevice(i, now_ns, report.devices[i]));
    if (!fatal_.empty()) {
      // Handles from a dead session must not be used again: close now and
      // let the backoff decide when to try a fresh nvmlInit.
      FailSession(now_ns, fatal_);
      report = NvmlReport{};
      report.state = NvmlReport::State::kFailed;
      return finish(UnknownSnapshot(gpu_count, error_));
    }
  }
  return finish(std::move(snap));
}

DeviceSample NvmlSource::SampleDevice(int index, int64_t now_ns, DeviceReport& report) {
  DeviceState& d = devices_[index];
  DeviceSample out;
  out.index = index;
  if (d.handle == nullptr) {
    report.notes.push_back(d.handle_error);
    return out;  // source none: nothing is known about this GPU
  }
  report.present = true;
  out.source = Source::kNvml;
  ReadIdentity(d, out, report);
  ReadMemory(d, out, report);
  ReadUtilization(d, out, report);
  if (!fatal_.empty()) return out;

  std::vector<std::pair<unsigned, int>> sm;  // pid -> SM %, sorted by pid
  report.process_utilization = ReadProcessUtilization(d, sm, report);
  std::vector<RawProcess> compute, graphics;
  out.process_telemetry = ReadProcessList(d, false, now_ns, compute, report);
  // A graphics failure only loses display processes; the compute list alone
  // decides whether the process list is trustworthy (upstream does the same).
  const bool graphics_ok = ReadProcessList(d, true, now_ns, graphics, report);
  if (!out.process_telemetry) report.process_utilization = false;
  if (!fatal_.empty()) return out;

  // Merge by pid: the same process can be in both lists (max memory, kinds
  // joined "C+G").
  struct Merged {
    unsigned long long memory = 0;
    bool c = false, g = false;
  };
  std::map<unsigned, Merged> merged;
  auto add = [&](const std::vector<RawProcess>& list, bool is_graphics) {
    for (const RawProcess& r : list) {
      Merged& m = merged[r.pid];
      if (r.memory != kValueNotAvailable) m.memory = std::max(m.memory, r.memory);
      (is_graphics ? m.g : m.c) = true;
    }
  };
  add(compute, false);
  if (graphics_ok) add(graphics, true);
  out.processes.reserve(merged.size());
  for (const auto& [pid, m] : merged) {
    ProcessSample p;
    p.pid = static_cast<int>(pid);
    ApplyHostIdentity(identities_.Resolve(p.pid, now_ns), p);
    p.gpu_memory_mb = static_cast<int64_t>(m.memory / kMiB);
    p.kind = m.c && m.g ? "C+G" : m.g ? "G" : "C";
    auto it = std::lower_bound(sm.begin(), sm.end(), std::pair<unsigned, int>(pid, -1));
    if (it != sm.end() && it->first == pid) p.sm_utilization_percent = it->second;
    out.processes.push_back(std::move(p));
  }
  return out;
}

void NvmlSource::ReadIdentity(DeviceState& d, DeviceSample& out, DeviceReport& report) {
  const Api& api = lib_->api();
  // A failed UUID is asked again next sample; only a valid one is cached.
  if (d.uuid.empty() && api.DeviceGetUUID) {
    char buf[kUuidBufferSize] = {};
    Return rc = api.DeviceGetUUID(d.handle, buf, sizeof buf);
    std::string uuid = rc == kSuccess ? FromBuffer(buf, sizeof buf) : "";
    if (rc != kSuccess) {
      if (!Fatal(rc, "uuid")) report.notes.push_back(Reason("uuid", rc));
    } else if (!IsValidDeviceUuid(uuid)) {
      report.notes.push_back(fmt::format("uuid: NVML returned an invalid identifier '{}'", Printable(uuid)));
    } else {
      d.uuid = std::move(uuid);
    }
  } else if (!api.DeviceGetUUID) {
    report.notes.push_back("uuid: nvmlDeviceGetUUID missing from the driver");
  }
  out.uuid = d.uuid;

  if (d.name.empty() && api.DeviceGetName) {
    char buf[kNameBufferSize] = {};
    Return rc = api.DeviceGetName(d.handle, buf, sizeof buf);
    if (rc == kSuccess) {
      d.name = CommandFromCmdline(FromBuffer(buf, sizeof buf));  // trimmed, valid UTF-8
    } else if (!Fatal(rc, "name")) {
      report.notes.push_back(Reason("name", rc));
    }
  }
  out.name = d.name.empty() ? "unknown" : d.name;
}

void NvmlSource::ReadMemory(DeviceState& d, DeviceSample& out, DeviceReport& report) {
  const Api& api = lib_->api();
  std::optional<std::pair<unsigned long long, unsigned long long>> used_total;
  // v2 first: its `used` excludes driver-reserved memory, which v1 counts
  // (gpustat#141). It needs the real struct version, 0x02000028.
  if (!d.memory_v2_off && api.DeviceGetMemoryInfoV2) {
    MemoryV2 m{};
    m.version = kMemoryV2Version;
    Return rc = api.DeviceGetMemoryInfoV2(d.handle, &m);
    if (rc == kSuccess && m.total > 0 && m.used <= m.total && m.free <= m.total) {
      used_total.emplace(m.used, m.total);
      report.memory_version = 2;
    } else if (rc == kSuccess || Unsupported(rc) || rc == kErrorArgumentVersionMismatch ||
               rc == kErrorInvalidArgument) {
      // An old driver, or one whose v2 answers make no sense: v1 from now on.
      d.memory_v2_off = true;
    } else if (Fatal(rc, "memory")) {
      return;
    }
  }
  if (!used_total && api.DeviceGetMemoryInfo && !d.off.contains("memory")) {
    Memory m{};
    Return rc = api.DeviceGetMemoryInfo(d.handle, &m);
    if (rc == kSuccess && m.total > 0 && m.used <= m.total) {
      used_total.emplace(m.used, m.total);
      report.memory_version = 1;
    } else if (rc == kSuccess) {
      // total 0: a unified-memory SoC; there is no separate VRAM to report.
      d.off["memory"] = "memory: NVML reports no dedicated memory (unified-memory device)";
    } else if (Unsupported(rc)) {
      d.off["memory"] = Reason("memory", rc);
    } else if (Fatal(rc, "memory")) {
      return;
    } else {
      report.notes.push_back(Reason("memory", rc));
    }
  } else if (!used_total && !api.DeviceGetMemoryInfo) {
    report.notes.push_back("memory: nvmlDeviceGetMemoryInfo missing from the driver");
  }
  if (auto it = d.off.find("memory"); it != d.off.end()) report.notes.push_back(it->second);
  if (used_total) {
    if (!d.total_mb) d.total_mb = static_cast<int64_t>(used_total->second / kMiB);
    out.memory_used_mb = static_cast<int64_t>(used_total->first / kMiB);
  }
  out.memory_total_mb = d.total_mb;  // stable identity: kept when a later read fails
}

void NvmlSource::ReadUtilization(DeviceState& d, DeviceSample& out, DeviceReport& report) {
  const Api& api = lib_->api();
  if (api.DeviceGetUtilizationRates && !d.off.contains("utilization")) {
    Utilization u{};
    Return rc = api.DeviceGetUtilizationRates(d.handle, &u);
    if (rc == kSuccess && u.gpu <= 100) {
      out.utilization_percent = static_cast<int>(u.gpu);
    } else if (rc == kSuccess) {
      report.notes.push_back(fmt::format("utilization: NVML returned {}%", u.gpu));
    } else if (Unsupported(rc)) {
      d.off["utilization"] = Reason("utilization", rc);
    } else if (!Fatal(rc, "utilization")) {
      report.notes.push_back(Reason("utilization", rc));
    }
  }
  if (api.DeviceGetTemperature && !d.off.contains("temperature")) {
    unsigned int celsius = 0;
    Return rc = api.DeviceGetTemperature(d.handle, kTemperatureGpu, &celsius);
    if (rc == kSuccess && celsius <= 250) {
      out.temperature_c = static_cast<int>(celsius);
    } else if (Unsupported(rc)) {
      d.off["temperature"] = Reason("temperature", rc);
    } else if (rc != kSuccess && !Fatal(rc, "temperature")) {
      report.notes.push_back(Reason("temperature", rc));
    }
  }
  for (const char* metric : {"utilization", "temperature"})
    if (auto it = d.off.find(metric); it != d.off.end()) report.notes.push_back(it->second);
}

bool NvmlSource::ReadProcessUtilization(DeviceState& d, std::vector<std::pair<unsigned, int>>& sm,
                                        DeviceReport& report) {
  const Api& api = lib_->api();
  if (!api.DeviceGetProcessUtilization) return false;  // optional: older drivers
  if (auto it = d.off.find("process utilization"); it != d.off.end()) {
    report.notes.push_back(it->second);
    return false;
  }
  auto failed = [&](Return rc) {
    if (Unsupported(rc)) {
      // Also the answer in MIG mode.
      d.off["process utilization"] = Reason("process utilization", rc);
      report.notes.push_back(d.off["process utilization"]);
    } else if (!Fatal(rc, "process utilization")) {
      report.notes.push_back(Reason("process utilization", rc));
    }
    return false;
  };
  // Size the buffer first. NOT_FOUND means "no samples newer than the
  // cursor", e.g. an idle GPU: supported, nothing to report. (Upstream
  // treats it as unsupported and reports a flapping gap.)
  unsigned int count = 0;
  Return rc = api.DeviceGetProcessUtilization(d.handle, nullptr, &count, d.last_seen_us);
  if (rc == kErrorNotFound || (rc == kSuccess && count == 0)) return true;
  if (rc != kErrorInsufficientSize && rc != kSuccess) return failed(rc);
  std::vector<ProcessUtilizationSample> samples(std::min<size_t>(count, kMaxProcessCapacity) + 8);
  unsigned int n = static_cast<unsigned int>(samples.size());
  rc = api.DeviceGetProcessUtilization(d.handle, samples.data(), &n, d.last_seen_us);
  if (rc == kErrorNotFound) return true;
  if (rc != kSuccess) return failed(rc);
  n = std::min<unsigned int>(n, static_cast<unsigned int>(samples.size()));
  // Newest sample per pid; drop impossible percentages and samples older
  // than the cursor (nvtop#110).
  std::map<unsigned, std::pair<unsigned long long, int>> latest;
  unsigned long long newest = d.last_seen_us;
  for (unsigned int i = 0; i < n; ++i) {
    const ProcessUtilizationSample& s = samples[i];
    if (s.pid == 0 || s.pid > kMaxPid || s.smUtil > 100 || s.timeStamp < d.last_seen_us) continue;
    auto [it, fresh] = latest.try_emplace(s.pid, s.timeStamp, static_cast<int>(s.smUtil));
    if (!fresh && s.timeStamp >= it->second.first) it->second = {s.timeStamp, static_cast<int>(s.smUtil)};
    newest = std::max(newest, s.timeStamp);
  }
  d.last_seen_us = newest;
  for (const auto& [pid, v] : latest) sm.emplace_back(pid, v.second);
  return true;
}

Return NvmlSource::CallList(DeviceState& d, Api::ProcessListFn fn, int version,
                            std::vector<RawProcess>& out) {
  const size_t stride = version == kV1 ? sizeof(ProcessInfoV1) : sizeof(ProcessInfoV2);
  // The list is live: grow on INSUFFICIENT_SIZE, with slack, a few times.
  for (int attempt = 0; attempt < 4; ++attempt) {
    const unsigned int capacity = d.capacity;
    d.buffer.assign(capacity * kMaxProcessRecordBytes / sizeof(uint64_t), 0);
    unsigned int count = capacity;
    Return rc = fn(d.handle, &count, d.buffer.data());
    if (rc == kErrorInsufficientSize) {
      unsigned int want = std::max(count, capacity) * 2 + 8;
      if (want > kMaxProcessCapacity || capacity >= kMaxProcessCapacity) return rc;
      d.capacity = want;
      continue;
    }
    if (rc != kSuccess) return rc;
    if (count > capacity) return kErrorInsufficientSize;  // a driver claiming to have overrun us
    out.clear();
    out.reserve(count);
    const auto* bytes = reinterpret_cast<const unsigned char*>(d.buffer.data());
    for (unsigned int i = 0; i < count; ++i) {
      RawProcess r;
      if (version == kV1) {
        ProcessInfoV1 info;
        std::memcpy(&info, bytes + i * stride, sizeof info);
        r.pid = info.pid;
        r.memory = info.usedGpuMemory;
      } else {
        ProcessInfoV2 info;
        std::memcpy(&info, bytes + i * stride, sizeof info);
        r.pid = info.pid;
        r.memory = info.usedGpuMemory;
        r.gpu_instance = info.gpuInstanceId;
        r.compute_instance = info.computeInstanceId;
      }
      out.push_back(r);
    }
    return kSuccess;
  }
  return kErrorInsufficientSize;
}

bool NvmlSource::ReadProcessList(DeviceState& d, bool graphics, int64_t now_ns, std::vector<RawProcess>& out,
                                 DeviceReport& report) {
  const Api& api = lib_->api();
  const Api::ProcessListFn* fns = graphics ? api.graphics : api.compute;
  bool* off = d.list_off[graphics ? 1 : 0];
  const char* what = graphics ? "graphics processes" : "compute processes";
  const unsigned long long total = d.total_mb ? static_cast<unsigned long long>(*d.total_mb + 1) * kMiB : 0;
  std::optional<std::vector<RawProcess>> unseen;  // structurally fine, but some pids are not in /proc
  int unseen_version = 0;
  std::string first_error;
  for (int v : {kV3, kV2, kV1}) {
    if (fns[v] == nullptr || off[v]) continue;
    std::vector<RawProcess> got;
    Return rc = CallList(d, fns[v], v, got);
    if (rc != kSuccess) {
      if (Fatal(rc, what)) return false;
      if (Unsupported(rc)) off[v] = true;
      if (first_error.empty()) first_error = Reason(fmt::format("{} (v{})", what, v + 1), rc);
      continue;
    }
    // Validation: a driver that writes another record size than the one we
    // read (the R535 _v3 break) yields zero or huge pids, instance ids that
    // are really pids, or memory beyond the GPU's. Such a version is never
    // asked again on this device.
    bool plausible = std::all_of(got.begin(), got.end(), [&](const RawProcess& r) {
      if (r.pid == 0 || r.pid > kMaxPid) return false;
      if (r.memory != kValueNotAvailable && r.memory > (total > 0 ? total : kMaxPlausibleBytes)) return false;
      if (v == kV1) return true;
      bool no_mig = r.gpu_instance == kNoInstance && r.compute_instance == kNoInstance;
      return no_mig || (r.gpu_instance < kMaxInstanceId && r.compute_instance < kMaxInstanceId);
    });
    if (!plausible) {
      off[v] = true;
      report.notes.push_back(
          fmt::format("{}: v{} returned implausible records; using an older API", what, v + 1));
      continue;
    }
    // Every pid should exist in /proc. One that does not may have just
    // exited, or /proc may be another PID namespace; prefer an older
    // version whose pids all exist, else keep this answer.
    bool all_seen = std::all_of(got.begin(), got.end(), [&](const RawProcess& r) {
      return identities_.Resolve(static_cast<int>(r.pid), now_ns).uid.has_value();
    });
    if (all_seen) {
      out = std::move(got);
      if (!graphics) report.process_list_version = v + 1;
      return true;
    }
    if (!unseen) {
      unseen = std::move(got);
      unseen_version = v + 1;
    }
  }
  if (unseen) {
    out = std::move(*unseen);
    if (!graphics) report.process_list_version = unseen_version;
    return true;
  }
  if (first_error.empty()) first_error = fmt::format("{}: no usable NVML process-list function", what);
  report.notes.push_back(first_error);
  return false;
}

NvmlSource& SharedNvml() {
  static NvmlSource* const source = new NvmlSource();
  return *source;
}

}  // namespace bk::gpu
