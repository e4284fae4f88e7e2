#include "config/presets.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "base/json_strict.h"
#include "base/strings.h"
#include "engine/parse.h"
#include "sys/fs.h"

namespace bk::config {
namespace {

using nlohmann::json;

constexpr int kMaxCount = 1024;
constexpr engine::Seconds kMaxDuration = 10 * 365 * engine::kDay;
constexpr int64_t kMaxMemoryMb = 16777216;  // 16 TiB
constexpr int64_t kMaxCpus = 1000000;
constexpr int64_t kMaxRamMb = int64_t{1} << 40;

const std::set<std::string> kMembers = {
    "name",           "mode",          "count", "duration_seconds", "expected_memory_mb", "share_units",
    "preferred_gpus", "excluded_gpus", "cpus",  "ram_mb",           "created_at",         "updated_at"};

// The words of `bk preset` itself: `bk p NAME` could never reach a preset of that name.
const std::set<std::string> kReservedNames = {"list",   "ls",  "l",  "save", "set",     "show", "get",
                                              "delete", "del", "rm", "help", "suggest", "learn"};

// Reads one member of a preset object, each error naming the preset and the field.
class Reader {
 public:
  Reader(const json& j, std::string name) : j_(j), name_(std::move(name)) {}

  std::unexpected<Error> Bad(std::string_view field, std::string_view what) const {
    return Invalid(fmt::format("preset {}: {} {}", name_, field, what));
  }
  const std::string& Name() const { return name_; }
  bool Has(const char* field) const { return j_.contains(field) && !j_[field].is_null(); }

  Result<int64_t> Int(const char* field, int64_t lo, int64_t hi) const {
    const json& v = j_[field];
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      return Bad(field, fmt::format("must be a whole number from {} to {}", lo, hi));
    return v.get<int64_t>();
  }

  // A sorted list of distinct GPU indexes.
  Result<std::vector<int>> Gpus(const char* field) const {
    const json& v = j_[field];
    std::string bad = "must be a sorted list of distinct GPU indexes, e.g. [0, 2]";
    if (!v.is_array()) return Bad(field, bad);
    std::vector<int> out;
    for (const json& g : v) {
      if (!g.is_number_integer() || g.get<int64_t>() < 0 || g.get<int64_t>() >= engine::kMaxGpus)
        return Bad(field, bad);
      if (!out.empty() && g.get<int>() <= out.back()) return Bad(field, bad);
      out.push_back(g.get<int>());
    }
    return out;
  }

  Result<std::string> Time(const char* field) const {
    const json& v = j_[field];
    if (!v.is_string() || v.get<std::string>().size() > 64) return Bad(field, "must be an ISO 8601 time");
    return v.get<std::string>();
  }

 private:
  const json& j_;
  std::string name_;
};

Status CheckShape(const Preset& p, const Reader& r) {
  if (p.mode == engine::Mode::kExclusive && p.share_units)
    return r.Bad("share_units", "must be null for an exclusive preset");
  if (!p.gpus.empty() && std::ssize(p.gpus) != p.count)
    return r.Bad("preferred_gpus", fmt::format("must name exactly count ({}) GPUs", p.count));
  for (int g : p.exclude)
    if (std::binary_search(p.gpus.begin(), p.gpus.end(), g))
      return r.Bad("excluded_gpus", fmt::format("names GPU {}, which preferred_gpus pins", g));
  return Ok();
}

// The numbers and lists of a preset; `p` already holds its name and mode.
Status ReadMembers(const Reader& r, Preset& p) {
  if (!r.Has("count")) return r.Bad("count", "is missing");
  BK_ASSIGN_OR_RETURN(int64_t count, r.Int("count", 1, kMaxCount));
  p.count = static_cast<int>(count);
  if (!r.Has("duration_seconds")) return r.Bad("duration_seconds", "is missing");
  BK_ASSIGN_OR_RETURN(p.duration, r.Int("duration_seconds", 1, kMaxDuration));
  if (r.Has("expected_memory_mb")) {
    BK_ASSIGN_OR_RETURN(p.memory_mb, r.Int("expected_memory_mb", 1, kMaxMemoryMb));
  }
  if (r.Has("share_units")) {
    BK_ASSIGN_OR_RETURN(int64_t units, r.Int("share_units", 1, 1000000));
    p.share_units = static_cast<int>(units);
  }
  if (r.Has("preferred_gpus")) {
    BK_ASSIGN_OR_RETURN(p.gpus, r.Gpus("preferred_gpus"));
  }
  if (r.Has("excluded_gpus")) {
    BK_ASSIGN_OR_RETURN(p.exclude, r.Gpus("excluded_gpus"));
  }
  if (r.Has("cpus")) {
    BK_ASSIGN_OR_RETURN(p.cpus, r.Int("cpus", 1, kMaxCpus));
  }
  if (r.Has("ram_mb")) {
    BK_ASSIGN_OR_RETURN(p.ram_mb, r.Int("ram_mb", 1, kMaxRamMb));
  }
  if (r.Has("created_at")) {
    BK_ASSIGN_OR_RETURN(p.created_at, r.Time("created_at"));
  }
  if (r.Has("updated_at")) {
    BK_ASSIGN_OR_RETURN(p.updated_at, r.Time("updated_at"));
  }
  return CheckShape(p, r);
}

Status CheckUnique(const std::vector<Preset>& presets) {
  if (presets.size() > kMaxPresets) return Invalid(fmt::format("at most {} presets", kMaxPresets));
  std::set<std::string> names;
  for (const auto& p : presets)
    if (!names.insert(p.name).second) return Invalid(fmt::format("preset {} appears twice", p.name));
  return Ok();
}

void SortByName(std::vector<Preset>& presets) {
  std::sort(presets.begin(), presets.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
}

// The lock beside the file, held until the descriptor closes; another writer
// is waited for, 5 s at most.
Result<sys::UniqueFd> Lock(const std::string& path) {
  std::string lock_path = sys::JoinPath(sys::Dirname(path), "." + sys::Basename(path) + ".lock");
  sys::UniqueFd fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.ok()) return Invalid(fmt::format("cannot open {}: {}", lock_path, std::strerror(errno)));
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK)
      return Invalid(fmt::format("cannot lock {}: {}", lock_path, std::strerror(errno)));
    if (std::chrono::steady_clock::now() > deadline)
      return Fail(ErrorKind::kBusy, fmt::format("{} is locked by another bk; try again", lock_path));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return fd;
}

}  // namespace

Status CheckPresetName(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 32 && std::isalnum(static_cast<unsigned char>(name[0]));
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-');
  if (!ok)
    return Invalid(
        "preset name must be 1-32 letters, digits, dots, dashes, or underscores, starting with a letter or "
        "digit");
  if (kReservedNames.contains(std::string(name)))
    return Invalid(fmt::format("preset name {} is a `bk preset` subcommand; choose another", name));
  return Ok();
}

Result<Preset> PresetFromJson(const json& j, const std::string& name) {
  Preset p;
  std::string shown = name.empty() && j.is_object() && j.contains("name") && j["name"].is_string()
                          ? Printable(j["name"].get<std::string>())
                          : name;
  Reader r(j, shown.empty() ? "?" : shown);
  if (!j.is_object()) return Invalid(fmt::format("preset {}: must be a JSON object", r.Name()));
  for (const auto& [key, _] : j.items())
    if (!kMembers.contains(key) || (key == "name" && !name.empty()))
      return Invalid(fmt::format("preset {}: unknown field {}", shown, Printable(key)));
  if (name.empty() && !(j.contains("name") && j["name"].is_string())) return r.Bad("name", "is missing");
  p.name = name.empty() ? j["name"].get<std::string>() : name;
  if (auto st = CheckPresetName(p.name); !st)
    return Invalid(fmt::format("preset {}: {}", shown, st.error().message));
  auto mode = j.contains("mode") && j["mode"].is_string() ? engine::ParseMode(j["mode"].get<std::string>())
                                                          : std::nullopt;
  if (!mode) return r.Bad("mode", "must be shared or exclusive");
  p.mode = *mode;
  BK_TRY(ReadMembers(r, p));
  return p;
}

json PresetJson(const Preset& p) {
  auto opt = [](const auto& v) { return v ? json(*v) : json(); };
  json j = {{"name", p.name},
            {"mode", engine::ModeName(p.mode)},
            {"count", p.count},
            {"duration_seconds", p.duration},
            {"expected_memory_mb", opt(p.memory_mb)},
            {"share_units", opt(p.share_units)},
            {"preferred_gpus", p.gpus.empty() ? json() : json(p.gpus)},
            {"excluded_gpus", p.exclude},
            {"cpus", opt(p.cpus)},
            {"ram_mb", opt(p.ram_mb)}};
  if (!p.created_at.empty()) j["created_at"] = p.created_at;
  if (!p.updated_at.empty()) j["updated_at"] = p.updated_at;
  return j;
}

Result<std::vector<Preset>> ParsePresets(std::string_view text, const std::string& path) {
  auto doc = ParseStrictJson(text);
  if (!doc) return Invalid(fmt::format("{} {}", path, doc.error().Phrase()));
  auto fail = [&](const std::string& what) { return Invalid(fmt::format("{}: {}", path, what)); };
  if (!doc->is_object() || doc->value("schema_version", json()) != json(kPresetsSchema))
    return fail(fmt::format("not a {} document (schema_version)", kPresetsSchema));
  for (const auto& [key, _] : doc->items())
    if (key != "schema_version" && key != "presets") return fail("unknown member " + Printable(key));
  const json presets = doc->value("presets", json::array());
  if (!presets.is_array()) return fail("presets must be a list");
  std::vector<Preset> out;
  for (const json& j : presets) {
    auto p = PresetFromJson(j);
    if (!p) return fail(p.error().message);
    out.push_back(std::move(*p));
  }
  if (auto st = CheckUnique(out); !st) return fail(st.error().message);
  SortByName(out);
  return out;
}

std::string RenderPresets(std::vector<Preset> presets) {
  SortByName(presets);
  json list = json::array();
  for (const auto& p : presets) list.push_back(PresetJson(p));
  return json{{"schema_version", kPresetsSchema}, {"presets", list}}.dump(2) + "\n";
}

Result<std::vector<Preset>> LabPresetsValue(const std::string& key, const json& v) {
  json obj = v;
  if (v.is_string()) {
    auto parsed = ParseStrictJson(v.get<std::string>());
    if (!parsed) return Invalid(fmt::format("{} must be JSON", key));
    obj = *parsed;
  }
  if (!obj.is_object())
    return Invalid(
        fmt::format("{} must be an object NAME -> {{\"mode\", \"count\", \"duration_seconds\", ...}}", key));
  std::vector<Preset> out;
  for (const auto& [name, j] : obj.items()) {
    auto p = PresetFromJson(j, name);
    if (!p) return Invalid(fmt::format("{}: {}", key, p.error().message));
    out.push_back(std::move(*p));
  }
  if (auto st = CheckUnique(out); !st) return Invalid(fmt::format("{}: {}", key, st.error().message));
  SortByName(out);
  return out;
}

Status CheckPresetPolicy(const Preset& p, const engine::Policy& policy) {
  auto no = [&](const std::string& why) {
    return Invalid(fmt::format("preset {} does not fit this deployment's policy: {}", p.name, why));
  };
  std::vector<int> enabled = policy.EnabledGpus();
  if (p.count > std::ssize(enabled))
    return no(fmt::format("it books {} GPUs and {} are enabled", p.count, enabled.size()));
  if (p.duration % policy.slot != 0)
    return no(fmt::format("its duration {} is not a multiple of the {} slot",
                          engine::FormatDuration(p.duration), engine::FormatDuration(policy.slot)));
  if (p.duration > policy.max_duration)
    return no(fmt::format("its duration {} is longer than the longest booking, {}",
                          engine::FormatDuration(p.duration), engine::FormatDuration(policy.max_duration)));
  for (int g : p.gpus)
    if (!policy.GpuEnabled(g)) return no(fmt::format("it pins GPU {}, which is not enabled", g));
  if (p.mode == engine::Mode::kShared && p.share_units.value_or(1) > policy.share_capacity)
    return no(
        fmt::format("it takes {} shared slots and a GPU has {}", *p.share_units, policy.share_capacity));
  return Ok();
}

Result<std::vector<Preset>> ReadPresets(const std::string& path, uid_t owner) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::vector<Preset>{};
    return Invalid(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  if (S_ISLNK(st.st_mode))
    return Invalid(
        fmt::format("{} is a symbolic link; presets must be a regular file (remove the link)", path));
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
    return Invalid(fmt::format("{} must be a regular file with one link", path));
  if (st.st_uid != owner)
    return Invalid(fmt::format("{} belongs to UID {}, not to you; remove it", path, st.st_uid));
  if (st.st_mode & 077)
    return Invalid(fmt::format("{} is open to group or others (mode {:04o}); run chmod 600 {}", path,
                               st.st_mode & 07777, path));
  if (st.st_size > kMaxPresetsFileBytes)
    return Invalid(fmt::format("{} is larger than 1 MiB; presets keep at most {}", path, kMaxPresets));
  BK_ASSIGN_OR_RETURN(std::string text, sys::ReadSmallFile(path, kMaxPresetsFileBytes));
  return ParsePresets(text, path);
}

Status UpdatePresets(const std::string& path, uid_t owner,
                     const std::function<Status(std::vector<Preset>&)>& change) {
  BK_TRY(sys::EnsurePrivateDir(sys::Dirname(path), 0700, owner));
  BK_ASSIGN_OR_RETURN(sys::UniqueFd lock, Lock(path));
  BK_ASSIGN_OR_RETURN(std::vector<Preset> presets, ReadPresets(path, owner));
  BK_TRY(change(presets));
  BK_TRY(CheckUnique(presets));
  return sys::WriteFileAtomic(path, RenderPresets(std::move(presets)), 0600);
}

}  // namespace bk::config
