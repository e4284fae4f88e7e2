// BK_GPU_SIM_FILE: the upstream simulation format
// plus the "error" extension. User documentation: docs/simulation.md.

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <expected>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "base/json_strict.h"
#include "base/strings.h"
#include "engine/types.h"
#include "gpu/source.h"

namespace bk::gpu {

namespace {

using nlohmann::json;

constexpr size_t kMaxFileBytes = size_t{4} * 1024 * 1024;
using ::bk::engine::kMaxGpus;
constexpr size_t kMaxProcesses = 100000;
constexpr int64_t kMaxPid = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxUid = (int64_t{1} << 32) - 2;
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr const char* kFix = "fix the file or unset BK_GPU_SIM_FILE";

// A validation problem, already naming the JSON path ("gpus[1].index must be ...").
using Problem = std::string;
template <class T>
using Parsed = std::expected<T, Problem>;

std::string Shown(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

Problem RangeProblem(const std::string& path, int64_t lo, int64_t hi, const std::string& got) {
  if (hi == kInt64Max) return fmt::format("{} must be at least {} (got {})", path, lo, got);
  return fmt::format("{} must be between {} and {} (got {})", path, lo, hi, got);
}

// An integer in [lo, hi]. Booleans, strings and non-integral numbers are refused;
// integral floats such as 5.0 are accepted (as upstream does).
Parsed<int64_t> ToInt(const json& v, const std::string& path, int64_t lo, int64_t hi) {
  int64_t out = 0;
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(kInt64Max)) return std::unexpected(RangeProblem(path, lo, hi, Shown(v)));
    out = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    out = v.get<int64_t>();
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    if (!std::isfinite(d) || std::trunc(d) != d) return std::unexpected(path + " must be an integer");
    if (d < -9.0e18 || d > 9.0e18) return std::unexpected(RangeProblem(path, lo, hi, Shown(v)));
    out = static_cast<int64_t>(d);
  } else {
    return std::unexpected(path + " must be an integer");
  }
  if (out < lo || out > hi) return std::unexpected(RangeProblem(path, lo, hi, std::to_string(out)));
  return out;
}

const json* Field(const json& object, const char* key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// Absent -> `fallback`; null is refused, as upstream does for these fields.
Parsed<int64_t> IntField(const json& object, const char* key, const std::string& path, int64_t lo, int64_t hi,
                         int64_t fallback) {
  const json* v = Field(object, key);
  if (v == nullptr) return fallback;
  return ToInt(*v, path + "." + key, lo, hi);
}

// Absent or null -> nullopt.
Parsed<std::optional<int64_t>> OptionalIntField(const json& object, const char* key, const std::string& path,
                                                int64_t lo, int64_t hi) {
  const json* v = Field(object, key);
  if (v == nullptr || v->is_null()) return std::optional<int64_t>();
  auto n = ToInt(*v, path + "." + key, lo, hi);
  if (!n) return std::unexpected(n.error());
  return std::optional<int64_t>(*n);
}

// Absent or null -> `fallback`.
Parsed<std::string> StringField(const json& object, const char* key, const std::string& path,
                                const std::string& fallback) {
  const json* v = Field(object, key);
  if (v == nullptr || v->is_null()) return fallback;
  if (!v->is_string()) return std::unexpected(fmt::format("{}.{} must be a string", path, key));
  return v->get<std::string>();
}

bool IsLowerHex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Container fields are kept only as a valid pair, as upstream does.
void SetContainer(const json& raw, ProcessSample& p) {
  const json* runtime = Field(raw, "container_runtime");
  const json* id = Field(raw, "container_id");
  if (runtime == nullptr || id == nullptr || !runtime->is_string() || !id->is_string()) return;
  std::string r = runtime->get<std::string>();
  std::string i = id->get<std::string>();
  if (r != "docker" && r != "containerd" && r != "podman") return;
  if (i.size() < 12 || i.size() > 64 || !IsLowerHex(i)) return;
  p.container_runtime = std::move(r);
  p.container_id = std::move(i);
}

Parsed<ProcessSample> ParseProcess(const json& raw, const std::string& path) {
  if (!raw.is_object()) return std::unexpected(path + " must be an object");
  ProcessSample p;
  const json* pid = Field(raw, "pid");
  if (pid == nullptr) return std::unexpected(path + ".pid is required");
  BK_ASSIGN_OR_RETURN(int64_t pid_value, ToInt(*pid, path + ".pid", 1, kMaxPid));
  p.pid = static_cast<int>(pid_value);
  BK_ASSIGN_OR_RETURN(auto uid, OptionalIntField(raw, "uid", path, 0, kMaxUid));
  if (uid) p.uid = static_cast<uid_t>(*uid);
  BK_ASSIGN_OR_RETURN(auto host_uid, OptionalIntField(raw, "host_uid", path, 0, kMaxUid));
  p.host_uid = host_uid ? std::optional<uid_t>(static_cast<uid_t>(*host_uid)) : p.uid;
  BK_ASSIGN_OR_RETURN(p.username, StringField(raw, "username", path, "?"));
  BK_ASSIGN_OR_RETURN(p.command, StringField(raw, "command", path, ""));
  BK_ASSIGN_OR_RETURN(p.gpu_memory_mb, IntField(raw, "gpu_memory_mb", path, 0, kInt64Max, 0));
  BK_ASSIGN_OR_RETURN(auto sm, OptionalIntField(raw, "sm_utilization_percent", path, 0, 100));
  if (sm) p.sm_utilization_percent = static_cast<int>(*sm);
  BK_ASSIGN_OR_RETURN(p.kind, StringField(raw, "kind", path, "C"));
  BK_ASSIGN_OR_RETURN(p.host_start_id, StringField(raw, "host_start_id", path, ""));
  const json* source = Field(raw, "identity_source");
  p.identity_source = "host";
  if (source != nullptr && source->is_string()) {
    std::string s = source->get<std::string>();
    if (s == "container-reservation" || s == "container-ambiguous") p.identity_source = s;
  }
  SetContainer(raw, p);
  return p;
}

Parsed<DeviceSample> ParseDevice(const json& raw, const std::string& path) {
  if (!raw.is_object()) return std::unexpected(path + " must be an object");
  DeviceSample d;
  const json* index = Field(raw, "index");
  if (index == nullptr) return std::unexpected(path + ".index is required");
  BK_ASSIGN_OR_RETURN(int64_t index_value, ToInt(*index, path + ".index", 0, kMaxGpus - 1));
  d.index = static_cast<int>(index_value);

  const json* uuid = Field(raw, "uuid");
  if (uuid != nullptr && !uuid->is_null()) {
    if (!uuid->is_string()) return std::unexpected(path + ".uuid must be a string");
    std::string u = uuid->get<std::string>();
    if (IsValidDeviceUuid(u)) d.uuid = std::move(u);  // like NVML: an unusable UUID reads as unknown
  }
  BK_ASSIGN_OR_RETURN(d.name, StringField(raw, "name", path, "simulated"));
  BK_ASSIGN_OR_RETURN(int64_t used, IntField(raw, "memory_used_mb", path, 0, kInt64Max, 0));
  BK_ASSIGN_OR_RETURN(int64_t total, IntField(raw, "memory_total_mb", path, 0, kInt64Max, 0));
  if (used > total) {
    return std::unexpected(
        fmt::format("{}.memory_used_mb ({}) exceeds memory_total_mb ({})", path, used, total));
  }
  d.memory_used_mb = used;
  d.memory_total_mb = total;
  BK_ASSIGN_OR_RETURN(auto util, OptionalIntField(raw, "utilization_percent", path, 0, 100));
  if (util) d.utilization_percent = static_cast<int>(*util);
  BK_ASSIGN_OR_RETURN(auto temp, OptionalIntField(raw, "temperature_c", path, -100, 250));
  if (temp) d.temperature_c = static_cast<int>(*temp);

  const json* processes = Field(raw, "processes");
  if (processes != nullptr && !processes->is_null()) {
    if (!processes->is_array()) return std::unexpected(path + ".processes must be an array");
    if (processes->size() > kMaxProcesses) {
      return std::unexpected(
          fmt::format("{}.processes has {} entries; at most {}", path, processes->size(), kMaxProcesses));
    }
    d.processes.reserve(processes->size());
    for (size_t i = 0; i < processes->size(); ++i) {
      BK_ASSIGN_OR_RETURN(ProcessSample p,
                          ParseProcess((*processes)[i], fmt::format("{}.processes[{}]", path, i)));
      d.processes.push_back(std::move(p));
    }
  }
  d.source = Source::kSimulation;
  d.process_telemetry = true;
  return d;
}

struct SimFile {
  std::vector<DeviceSample> devices;  // index order, contiguous from 0
  std::optional<std::string> error;   // the "error" extension
};

Parsed<std::vector<DeviceSample>> ParseDevices(const json& gpus) {
  if (!gpus.is_array()) return std::unexpected(std::string("gpus must be an array"));
  if (gpus.empty()) return std::unexpected(std::string("gpus must list at least one GPU"));
  if (gpus.size() > static_cast<size_t>(kMaxGpus)) {
    return std::unexpected(fmt::format("gpus has {} entries; at most {}", gpus.size(), kMaxGpus));
  }
  std::vector<int> seen_at(kMaxGpus, -1);
  std::vector<DeviceSample> devices;
  devices.reserve(gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) {
    const std::string path = fmt::format("gpus[{}]", i);
    BK_ASSIGN_OR_RETURN(DeviceSample d, ParseDevice(gpus[i], path));
    if (seen_at[d.index] >= 0) {
      return std::unexpected(
          fmt::format("{}.index {} is already used by gpus[{}]", path, d.index, seen_at[d.index]));
    }
    seen_at[d.index] = static_cast<int>(i);
    devices.push_back(std::move(d));
  }
  // Unique indices are contiguous from 0 exactly when each of 0..n-1 is used.
  const size_t n = devices.size();
  for (size_t index = 0; index < n; ++index) {
    if (seen_at[index] < 0) {
      return std::unexpected(fmt::format(
          "gpus indices must run from 0 to {} without gaps, but index {} is missing", n - 1, index));
    }
  }
  std::vector<DeviceSample> by_index(n);
  for (DeviceSample& d : devices) by_index[d.index] = std::move(d);
  return by_index;
}

Parsed<SimFile> ParseSimFile(const std::string& text) {
  auto parsed = ParseStrictJson(text);
  if (!parsed) {
    std::string what = parsed.error().problem == JsonProblem::kSyntax
                           ? "not valid JSON: " + parsed.error().detail
                           : parsed.error().Phrase();
    // The message may quote raw input bytes: keep it printable ASCII so it stays
    // one line and can itself be serialised as JSON.
    for (char& c : what)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    return std::unexpected(what);
  }
  json doc = std::move(*parsed);
  SimFile file;
  const json* gpus = &doc;
  if (doc.is_object()) {
    if (const json* error = Field(doc, "error"); error != nullptr && !error->is_null()) {
      if (!error->is_string()) return std::unexpected(std::string("error must be a string"));
      std::string text_value = Printable(error->get<std::string>());
      if (!Trim(text_value).empty()) file.error = std::move(text_value);
    }
    gpus = Field(doc, "gpus");
    if (gpus == nullptr) {
      if (file.error) return file;  // {"error": "..."} alone is a complete file
      return std::unexpected(std::string("gpus is required (an object with a gpus array, or an array)"));
    }
  } else if (!doc.is_array()) {
    return std::unexpected(std::string("the top level must be an object with a gpus array, or an array"));
  }
  BK_ASSIGN_OR_RETURN(file.devices, ParseDevices(*gpus));
  return file;
}

std::string ErrnoText(int err) {
  char buf[256];
  return strerror_r(err, buf, sizeof buf);  // GNU variant: returns the message
}

std::string InvalidMessage(const std::string& what, const Problem& problem) {
  return fmt::format("{} is invalid: {}; {}", what, problem, kFix);
}

Result<std::string> ReadSimFile(const std::string& path) {
  auto fail = [&](const std::string& why) {
    return Invalid(fmt::format("cannot read simulation file {}: {}; {}", path, why, kFix));
  };
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(ErrnoText(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { close(fd); }
  } closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0) return fail(ErrnoText(errno));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  auto too_big = [&] {
    return Invalid(fmt::format("simulation file {} is larger than 4 MiB; {}", path, kFix));
  };
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) return too_big();
  std::string text;
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[65536];
  while (true) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail(ErrnoText(errno));
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > kMaxFileBytes) return too_big();
    text.append(buf, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace

Result<Snapshot> ParseSimulation(const std::string& text, int gpu_count, const std::string& what) {
  auto file = ParseSimFile(text);
  if (!file) return Invalid(InvalidMessage(what, file.error()));
  gpu_count = std::max(gpu_count, 0);
  if (file->error) return UnknownSnapshot(gpu_count, *file->error);
  Snapshot snapshot;
  std::vector<DeviceSample>& devices = file->devices;
  if (devices.size() > static_cast<size_t>(gpu_count)) devices.resize(gpu_count);
  snapshot.devices = std::move(devices);
  // Configured GPUs the file does not describe read as unknown.
  Snapshot rest = UnknownSnapshot(gpu_count);
  for (size_t i = snapshot.devices.size(); i < rest.devices.size(); ++i) {
    snapshot.devices.push_back(std::move(rest.devices[i]));
  }
  return snapshot;
}

Result<Snapshot> SimFileSource::Load(int gpu_count) {
  BK_ASSIGN_OR_RETURN(std::string text, ReadSimFile(path_));
  return ParseSimulation(text, gpu_count, "simulation file " + path_);
}

Snapshot SimFileSource::Sample(int gpu_count) {
  auto snapshot = Load(gpu_count);
  if (!snapshot) return UnknownSnapshot(gpu_count, snapshot.error().message);
  return std::move(*snapshot);
}

std::string SimFileSource::Describe() {
  Snapshot snapshot = Sample(0);
  if (snapshot.ok()) return "simulation " + path_;
  return fmt::format("simulation {} unavailable: {}", path_, snapshot.error);
}

Result<int> CountSimulatedGpus(const std::string& path) {
  BK_ASSIGN_OR_RETURN(std::string text, ReadSimFile(path));
  auto file = ParseSimFile(text);
  if (!file) return Invalid(InvalidMessage("simulation file " + path, file.error()));
  return std::max<int>(1, static_cast<int>(file->devices.size()));
}

}  // namespace bk::gpu
