#include "config/config.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/json_strict.h"
#include "base/strings.h"
#include "engine/civil_time.h"
#include "engine/parse.h"
#include "gpu/open_source.h"
#include "sys/fs.h"
#include "sys/trust.h"
#include "sys/users.h"

namespace bk::config {
namespace {

using nlohmann::json;

// One configurable key: how to read it and where the value goes.
struct Key {
  const char* name;
  const char* default_text;  // rendered default for `bk config`
  std::function<Status(const json&, Config&)> apply;
};

Result<int64_t> IntValue(const std::string& key, const json& v, int64_t lo, int64_t hi) {
  std::optional<int64_t> n;
  if (v.is_number_integer())
    n = v.get<int64_t>();
  else if (v.is_string())
    n = ParseUint(Trim(v.get<std::string>()));
  if (!n) return Invalid(fmt::format("{} must be an integer", key));
  if (*n < lo || *n > hi) return Invalid(fmt::format("{} must be between {} and {}", key, lo, hi));
  return *n;
}

Result<double> FloatValue(const std::string& key, const json& v, double lo, double hi) {
  double d = 0;
  if (v.is_number() && !v.is_boolean()) {
    d = v.get<double>();
  } else if (v.is_string()) {
    std::string s(Trim(v.get<std::string>()));
    char* end = nullptr;
    d = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size()) return Invalid(fmt::format("{} must be a number", key));
  } else {
    return Invalid(fmt::format("{} must be a number", key));
  }
  if (!std::isfinite(d) || d < lo || d > hi)
    return Invalid(fmt::format("{} must be between {} and {}", key, lo, hi));
  return d;
}

Result<bool> BoolValue(const std::string& key, const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_string()) {
    std::string s = ToLower(Trim(v.get<std::string>()));
    if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
    if (s == "0" || s == "false" || s == "no" || s == "off") return false;
  }
  if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) return v.get<int64_t>() == 1;
  return Invalid(fmt::format("{} must be a boolean (true/false, 1/0, yes/no, on/off)", key));
}

// Sizes accept MiB integers or "256g" / "4096m".
Result<int64_t> SizeValue(const std::string& key, const json& v) {
  if (v.is_number_integer() || (v.is_string() && AllDigits(Trim(v.get<std::string>()))))
    return IntValue(key, v, 1, int64_t{1} << 40);
  if (v.is_string()) return engine::ParseSizeMb(v.get<std::string>(), key);
  return Invalid(fmt::format("{} must be a size in MiB or like 256g", key));
}

// JSON text from the environment, or the value itself from a file.
Result<json> Structured(const std::string& key, const json& v) {
  if (!v.is_string()) return v;
  try {
    return json::parse(v.get<std::string>());
  } catch (const json::exception&) {
    return Invalid(fmt::format("{} must be JSON", key));
  }
}

Result<std::vector<int>> GpuListValue(const std::string& key, const json& v) {
  if (v.is_string()) {
    std::string s(Trim(v.get<std::string>()));
    if (s.empty()) return std::vector<int>{};
    if (s.front() != '[') return engine::ParseGpuList(s, key);
  }
  BK_ASSIGN_OR_RETURN(json arr, Structured(key, v));
  if (!arr.is_array()) return Invalid(fmt::format("{} must be a list of GPU indexes such as [1, 3]", key));
  std::vector<int> out;
  for (const auto& e : arr) {
    if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > 1023)
      return Invalid(fmt::format("{} must contain GPU indexes between 0 and 1023", key));
    int g = e.get<int>();
    if (std::find(out.begin(), out.end(), g) != out.end())
      return Invalid(fmt::format("{} must not contain repeated GPU indexes", key));
    out.push_back(g);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::map<int, int>> PriorityValue(const std::string& key, const json& v) {
  std::map<int, int> out;
  auto add = [&](const std::string& gpu, int64_t prio) -> Status {
    auto g = ParseUint(Trim(gpu));
    if (!g || *g > 1023) return Invalid(fmt::format("{} GPU index must be between 0 and 1023", key));
    if (prio < 0 || prio > 1000000)
      return Invalid(fmt::format("{} priority must be between 0 and 1000000", key));
    if (prio) out[static_cast<int>(*g)] = static_cast<int>(prio);
    return Ok();
  };
  if (v.is_string() && !Trim(v.get<std::string>()).empty() && Trim(v.get<std::string>()).front() != '{') {
    for (const auto& part : Split(v.get<std::string>(), ',')) {
      auto sep = part.find_first_of("=:");
      auto prio = sep == std::string::npos ? std::nullopt : ParseUint(Trim(part.substr(sep + 1)));
      if (!prio) return Invalid(fmt::format("{} must look like 6=10,7=20", key));
      BK_TRY(add(part.substr(0, sep), *prio));
    }
    return out;
  }
  BK_ASSIGN_OR_RETURN(json obj, Structured(key, v));
  if (obj.is_string() && Trim(obj.get<std::string>()).empty()) return out;
  if (!obj.is_object()) return Invalid(fmt::format("{} must look like 6=10,7=20 or {{\"6\": 10}}", key));
  for (const auto& [gpu, prio] : obj.items()) {
    if (!prio.is_number_integer()) return Invalid(fmt::format("{} priorities must be integers", key));
    BK_TRY(add(gpu, prio.get<int64_t>()));
  }
  return out;
}

bool HasZone(const std::string& s) {
  if (!s.empty() && (s.back() == 'Z' || s.back() == 'z')) return true;
  auto t = s.find_first_of("Tt ");
  if (t == std::string::npos) return false;
  return s.find_first_of("+-", t) != std::string::npos;
}

Result<std::vector<engine::Blackout>> BlackoutsValue(const std::string& key, const json& v) {
  BK_ASSIGN_OR_RETURN(json arr, Structured(key, v));
  if (!arr.is_array())
    return Invalid(fmt::format("{} must be a JSON array of {{start_at, end_at, reason}}", key));
  if (arr.size() > 512) return Invalid(fmt::format("{} may list at most 512 windows", key));
  std::vector<engine::Blackout> out;
  engine::FixedZone utc(0);
  for (size_t i = 0; i < arr.size(); ++i) {
    const json& e = arr[i];
    json start, end, reason = "administrator maintenance";
    if (e.is_object()) {
      start = e.value("start_at", json());
      end = e.value("end_at", json());
      if (e.contains("reason")) reason = e["reason"];
    } else if (e.is_array() && e.size() == 3) {
      start = e[0], end = e[1], reason = e[2];
    } else {
      return Invalid(
          fmt::format("{}[{}] must be {{start_at, end_at, reason}} or [start, end, reason]", key, i));
    }
    if (!start.is_string() || !end.is_string() || !HasZone(start.get<std::string>()) ||
        !HasZone(end.get<std::string>()))
      return Invalid(
          fmt::format("{}[{}] times must be ISO 8601 with a time zone, e.g. 2026-12-01T02:00:00Z", key, i));
    auto s = engine::ParseIsoTime(start.get<std::string>(), utc);
    auto en = engine::ParseIsoTime(end.get<std::string>(), utc);
    if (!s || !en) return Invalid(fmt::format("{}[{}] has an invalid time", key, i));
    if (*s >= *en) return Invalid(fmt::format("{}[{}] must start before it ends", key, i));
    if (!reason.is_string() || Trim(reason.get<std::string>()).empty() ||
        reason.get<std::string>().size() > 512)
      return Invalid(fmt::format("{}[{}] reason must be 1-512 characters", key, i));
    out.push_back({*s, *en, Printable(reason.get<std::string>())});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start, a.end, a.reason) < std::tie(b.start, b.end, b.reason);
  });
  return out;
}

// A check whose value is read elsewhere.
template <class T>
Status Discard(Result<T> r) {
  if (!r) return std::unexpected(r.error());
  return Ok();
}

const std::vector<Key>& Keys() {
  static const std::vector<Key> keys = {
      {"gpu_count", "detected",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.policy.gpu_count, IntValue("gpu_count", v, 1, 1024));
         c.gpu_count_detected = false;
         return Ok();
       }},
      {"slot_minutes", "5",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(int64_t m, IntValue("slot_minutes", v, 1, 60));
         if (60 % m != 0)
           return Invalid(
               "slot_minutes must divide one hour; choose one of: 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60");
         c.policy.slot = m * 60;
         return Ok();
       }},
      {"max_shared_users", "2",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.policy.share_capacity, IntValue("max_shared_users", v, 1, 10000));
         return Ok();
       }},
      {"queue_search_hours", "168",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(int64_t h, IntValue("queue_search_hours", v, 1, 87600));
         c.policy.queue_search = h * engine::kHour;
         return Ok();
       }},
      {"booking_horizon_days", "30",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(int64_t d, IntValue("booking_horizon_days", v, 1, 3650));
         c.policy.horizon = d * engine::kDay;
         return Ok();
       }},
      {"max_booking_duration_hours", "720",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(int64_t h, IntValue("max_booking_duration_hours", v, 1, 87600));
         c.policy.max_duration = h * engine::kHour;
         return Ok();
       }},
      {"booking_blackouts", "[]",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.policy.blackouts, BlackoutsValue("booking_blackouts", v));
         return Ok();
       }},
      {"disabled_gpus", "[]",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.policy.disabled_gpus, GpuListValue("disabled_gpus", v));
         return Ok();
       }},
      {"gpu_priority", "{}",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.policy.gpu_priority, PriorityValue("gpu_priority", v));
         return Ok();
       }},
      {"require_shared_memory", "false",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.policy.require_shared_memory, BoolValue("require_shared_memory", v));
         return Ok();
       }},
      {"shared_memory_reserve_mb", "512",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.policy.shared_memory_reserve_mb,
                             IntValue("shared_memory_reserve_mb", v, 0, 16777216));
         return Ok();
       }},
      {"host_cpus", "null",
       [](const json& v, Config& c) -> Status {
         if (v.is_null()) return c.policy.host_cpus.reset(), Ok();
         BK_ASSIGN_OR_RETURN(c.policy.host_cpus, IntValue("host_cpus", v, 1, 1000000));
         return Ok();
       }},
      {"host_ram_mb", "null",
       [](const json& v, Config& c) -> Status {
         if (v.is_null()) return c.policy.host_ram_mb.reset(), Ok();
         BK_ASSIGN_OR_RETURN(c.policy.host_ram_mb, SizeValue("host_ram_mb", v));
         return Ok();
       }},
      {"default_booking_cpus", "1",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.policy.default_booking_cpus, IntValue("default_booking_cpus", v, 1, 1000000));
         return Ok();
       }},
      {"default_booking_ram_mb", "1024",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.policy.default_booking_ram_mb, SizeValue("default_booking_ram_mb", v));
         return Ok();
       }},
      {"ledger_retention_days", "90",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.ledger_retention_days, IntValue("ledger_retention_days", v, 0, 36500));
         return Ok();
       }},
      {"lock_timeout_seconds", "10",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.lock_timeout_seconds, FloatValue("lock_timeout_seconds", v, 0.001, 3600));
         return Ok();
       }},
      {"timeline_hours", "2",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.timeline_hours, IntValue("timeline_hours", v, 1, 8760));
         return Ok();
       }},
      {"reclaim_after_seconds", "3600",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.reclaim_after_seconds, IntValue("reclaim_after_seconds", v, 0, 30 * 86400));
         return Ok();
       }},
      {"pause_sampling_during_exclusive", "false",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.pause_sampling_during_exclusive,
                             BoolValue("pause_sampling_during_exclusive", v));
         return Ok();
       }},
      // Worker settings: validated here, read by worker/settings.cc from `values`.
      {"worker_poll_seconds", "1",
       [](const json& v, Config&) -> Status {
         return Discard(FloatValue("worker_poll_seconds", v, 0.1, 3600));
       }},
      {"worker_termination_grace_seconds", "5",
       [](const json& v, Config&) -> Status {
         return Discard(FloatValue("worker_termination_grace_seconds", v, 0.1, 60));
       }},
      {"worker_claim_timeout_seconds", "30",
       [](const json& v, Config&) -> Status {
         return Discard(FloatValue("worker_claim_timeout_seconds", v, 1, 7 * 86400));
       }},
      {"worker_recovery_grace_seconds", "5",
       [](const json& v, Config&) -> Status {
         return Discard(FloatValue("worker_recovery_grace_seconds", v, 0.05, 86400));
       }},
      {"worker_live_guard", "true",
       [](const json& v, Config&) -> Status { return Discard(BoolValue("worker_live_guard", v)); }},
      {"worker_max_parallel", "64",
       [](const json& v, Config&) -> Status { return Discard(IntValue("worker_max_parallel", v, 1, 4096)); }},
      {"job_log_max_mb", "64",
       [](const json& v, Config&) -> Status { return Discard(IntValue("job_log_max_mb", v, 0, 1 << 20)); }},
      {"job_log_retention_days", "30",
       [](const json& v, Config&) -> Status {
         return Discard(IntValue("job_log_retention_days", v, 0, 36500));
       }},
      {"monitor_interval_seconds", "2",
       [](const json& v, Config& c) -> Status {
         BK_ASSIGN_OR_RETURN(c.monitor_interval_seconds,
                             FloatValue("monitor_interval_seconds", v, 0.2, 3600));
         return Ok();
       }},
  };
  return keys;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string Suggest(const std::string& unknown) {
  std::string best;
  size_t best_d = 4;
  for (const auto& k : Keys()) {
    size_t d = EditDistance(unknown, k.name);
    if (d < best_d) best_d = d, best = k.name;
  }
  return best.empty() ? "" : fmt::format(" (did you mean {}?)", best);
}

std::string EnvName(const std::string& key) {
  std::string out = "BK_";
  for (char c : key) out += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

// Environment values are text; show "4" as 4 and "[1,3]" as a list.
std::string AsJsonText(const std::string& v) {
  try {
    json j = json::parse(v);
    if (!j.is_string()) return j.dump();
  } catch (const json::exception&) {
  }
  return json(v).dump();
}

// Applies `doc`'s known keys (skipping those in `ignore`), refusing unknown ones.
Status ApplyDocument(const json& doc, const std::string& where, Config& c,
                     const std::vector<std::string>& ignore) {
  for (const auto& [key, value] : doc.items()) {
    if (std::find(ignore.begin(), ignore.end(), key) != ignore.end()) continue;
    if (key == "config_version") {
      if (!value.is_number_integer() || value.get<int64_t>() != 1)
        return Invalid(fmt::format("{}: config_version must be 1", where));
      continue;
    }
    auto it = std::find_if(Keys().begin(), Keys().end(), [&](const Key& k) { return key == k.name; });
    if (it == Keys().end()) return Invalid(fmt::format("{}: unknown key {}{}", where, key, Suggest(key)));
    if (auto st = it->apply(value, c); !st) return Invalid(fmt::format("{}: {}", where, st.error().message));
    c.values[key] = value.dump();
    c.sources[key] = "file";
  }
  return Ok();
}

void Defaults(Config& c) {
  for (const auto& k : Keys()) {
    c.values[k.name] = k.default_text;
    c.sources[k.name] = "default";
  }
}

Status Finish(Config& c) {
  if (c.gpu_count_detected) {
    c.policy.gpu_count = gpu::DetectGpuCount(c.gpu_sim_file);
    c.values["gpu_count"] = std::to_string(c.policy.gpu_count);
    c.sources["gpu_count"] = "detected";
  }
  for (int g : c.policy.disabled_gpus)
    if (g >= c.policy.gpu_count)
      return Invalid(fmt::format("disabled_gpus names GPU {} but gpu_count is {}", g, c.policy.gpu_count));
  if (c.policy.EnabledGpus().empty())
    return Invalid("disabled_gpus disables every GPU; leave at least one enabled");
  return Ok();
}

const std::vector<std::string> kServerOnlyKeys = {
    "schema_version", "directory", "owner_uid", "owner", "socket",
    "data_dir",       "access",    "group",     "gid",   "test_now"};

}  // namespace

std::string OriginalLedger(const Config& c, const EnvFn& env) {
  if (c.deployment != Deployment::kPrivate) return "";
  std::vector<std::string> candidates = {sys::JoinPath(c.data_dir, "ledger.json")};
  if (!env("BK_DATA_DIR")) {
    auto xdg = env("XDG_DATA_HOME");
    std::string base = (xdg && StartsWith(*xdg, "/")) ? *xdg : sys::HomeDir() + "/.local/share";
    candidates.push_back(base + "/bk/ledger.json");
  }
  for (const auto& p : candidates)
    if (sys::Exists(p)) return p;
  return "";
}

Status ApplyConfigText(std::string_view text, const std::string& path, Config& c) {
  auto doc = ParseStrictJson(text);
  if (!doc && doc.error().problem == JsonProblem::kSyntax)
    return Invalid(fmt::format("config file {} is not valid JSON; fix or remove it", path));
  if (!doc) return Invalid(fmt::format("config file {} {}", path, doc.error().Phrase()));
  if (!doc->is_object()) return Invalid(fmt::format("config file {} must hold a JSON object", path));
  return ApplyDocument(*doc, path, c, {});
}

Result<std::string> ParseConnection(std::string_view text, const std::string& path) {
  auto parsed = ParseStrictJson(text);
  if (!parsed)
    return Invalid(
        fmt::format("{} {}; run `bk server disconnect` and connect again", path, parsed.error().Phrase()));
  const json& j = *parsed;
  if (!j.is_object() || !j.contains("config") || !j["config"].is_string())
    return Invalid(
        fmt::format("{} does not name a server config; run `bk server connect CONFIG` again", path));
  return j["config"].get<std::string>();
}

std::string ConnectionFile(const EnvFn& env) {
  auto xdg = env("XDG_CONFIG_HOME");
  std::string base = (xdg && StartsWith(*xdg, "/")) ? *xdg : sys::HomeDir() + "/.config";
  return base + "/gpubk/server.json";
}

Result<Config> LoadServer(const std::string& path, const EnvFn& env, bool trusted) {
  Config c;
  Defaults(c);
  c.server_config = path;
  c.config_file = path;
  if (!StartsWith(path, "/")) return Invalid(fmt::format("server config {} must be an absolute path", path));
  if (struct stat st{}; lstat(path.c_str(), &st) != 0) {
    if (errno == EACCES)
      return Fail(
          ErrorKind::kPermission,
          fmt::format("permission denied reading server config {}; the server is limited to a group: ask its "
                      "owner to add you to it (then log in again)",
                      path));
    return Invalid(
        fmt::format("server config {} does not exist; check the path or run `bk server init`", path));
  }
  auto text = sys::ReadSmallFile(path, 1 << 20);
  if (!text) return Invalid(fmt::format("cannot read server config {}: {}", path, text.error().message));
  auto parsed = ParseStrictJson(*text);
  if (!parsed && parsed.error().problem == JsonProblem::kSyntax)
    return Invalid(fmt::format("server config {} is not valid JSON", path));
  if (!parsed) return Invalid(fmt::format("server config {} {}", path, parsed.error().Phrase()));
  json doc = std::move(*parsed);
  // A string key, `absent` when missing, nothing when of another type
  // (json::value() would throw on a number there).
  auto str_or = [&](const char* key, const char* absent) -> std::optional<std::string> {
    if (!doc.contains(key)) return absent;
    if (!doc[key].is_string()) return std::nullopt;
    return doc[key].get<std::string>();
  };
  if (!doc.is_object() || str_or("schema_version", "") != "gpubk.server.v1")
    return Invalid(fmt::format("{} is not a GPUBK server config (schema_version gpubk.server.v1)", path));
  auto str = [&](const char* key) -> Result<std::string> {
    if (!doc.contains(key) || !doc[key].is_string() || doc[key].get<std::string>().empty())
      return Invalid(fmt::format("{}: {} must be a non-empty string", path, key));
    return doc[key].get<std::string>();
  };
  // A UID is below 2^32 - 1 ((uid_t)-1 means "none"); anything larger would
  // wrap to some other user's UID.
  auto id = [&](const char* key) {
    return doc[key].is_number_unsigned() && doc[key].get<uint64_t>() < UINT32_MAX;
  };
  if (!doc.contains("owner_uid") || !id("owner_uid"))
    return Invalid(fmt::format("{}: owner_uid must be a UID", path));
  c.owner_uid = doc["owner_uid"].get<uint32_t>();
  c.owner = sys::UserName(c.owner_uid);
  if (trusted) BK_TRY(sys::CheckTrustedFile(path, c.owner_uid));
  BK_ASSIGN_OR_RETURN(c.socket_path, str("socket"));
  // Checked on every load, not only at connect: a few lstat calls.
  BK_TRY(sys::CheckSocketDirectory(c.socket_path, c.owner_uid));
  BK_ASSIGN_OR_RETURN(c.data_dir, str("data_dir"));
  auto access = str_or("access", "world");
  if (!access || (*access != "world" && *access != "group"))
    return Invalid(fmt::format("{}: access must be world or group", path));
  c.access = *access;
  auto group = str_or("group", "");
  if (!group) return Invalid(fmt::format("{}: group must be a group name", path));
  c.group = *group;
  if (doc.contains("gid") && !id("gid")) return Invalid(fmt::format("{}: gid must be a GID", path));
  if (doc.contains("gid")) c.gid = doc["gid"].get<uint32_t>();
#ifdef BK_TEST_HOOKS
  if (doc.contains("test_now") && doc["test_now"].is_string())
    c.server_test_now = doc["test_now"].get<std::string>();
#endif
  c.ledger_path = sys::JoinPath(c.data_dir, "ledger.db");
  c.deployment = path == "/etc/gpubk/config.json" ? Deployment::kSystem : Deployment::kServer;
  c.pause_sampling_during_exclusive = true;
  c.values["pause_sampling_during_exclusive"] = "true";
  c.gpu_count_detected = true;
  c.gpu_sim_file = env("BK_GPU_SIM_FILE").value_or("");
  BK_TRY(ApplyDocument(doc, path, c, kServerOnlyKeys));
  c.config_file_present = true;
  BK_TRY(Finish(c));
  return c;
}

std::string ServerSocketPath(const std::string& directory) { return directory + "/run/broker.sock"; }

std::string RenderServerConfig(const ServerSpec& s) {
  json j = {{"schema_version", "gpubk.server.v1"},
            {"config_version", 1},
            {"directory", s.directory},
            {"owner_uid", s.owner_uid},
            {"owner", s.owner},
            {"socket", ServerSocketPath(s.directory)},
            {"data_dir", s.directory + "/data"},
            {"access", s.access},
            {"gpu_count", s.gpu_count},
            {"slot_minutes", s.slot_minutes},
            {"max_shared_users", s.max_shared},
            {"pause_sampling_during_exclusive", true}};
  if (s.host_cpus) j["host_cpus"] = *s.host_cpus;
  if (s.host_ram_mb) j["host_ram_mb"] = *s.host_ram_mb;
  if (s.access == "group") {
    j["group"] = s.group;
    if (s.gid) j["gid"] = *s.gid;
  }
  return j.dump(2) + "\n";
}

const char* DeploymentName(Deployment d) {
  switch (d) {
    case Deployment::kPrivate: return "private";
    case Deployment::kServer: return "server";
    case Deployment::kSystem: return "system";
  }
  return "private";
}

EnvFn ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

Result<Config> Load(const EnvFn& env) {
  uid_t uid = sys::CurrentUid();
  // Shared deployments: BK_CONFIG_FILE > the server this user connected to > /etc/gpubk.
  if (!env("BK_DATA_DIR")) {
    std::string why;
    std::string server;
    if (auto f = env("BK_CONFIG_FILE"); f && !f->empty()) {
      server = *f;
      why = "BK_CONFIG_FILE is set";
    } else if (std::string conn = ConnectionFile(env); sys::Exists(conn)) {
      auto text = sys::ReadSmallFile(conn, 64 * 1024);
      BK_ASSIGN_OR_RETURN(server, ParseConnection(text.value_or(""), conn));
      why = fmt::format("connected with `bk server connect` ({})", conn);
    } else if (sys::Exists("/etc/gpubk/config.json")) {
      server = "/etc/gpubk/config.json";
      why = "system deployment /etc/gpubk/config.json";
    }
    if (!server.empty()) {
      BK_ASSIGN_OR_RETURN(Config c, LoadServer(server, env, false));
      c.why = why;
      for (const char* name : {"BK_CONFIG_FILE", "BK_GPU_SIM_FILE", "BK_TEST_NOW"})
        if (env(name)) c.env_overrides.push_back(name);
#ifdef BK_TEST_HOOKS
      c.test_now = env("BK_TEST_NOW");
#endif
      return c;
    }
  }

  Config c;
  if (auto dir = env("BK_DATA_DIR")) {
    if (dir->empty() || dir->size() > 4096 || dir->find('\0') != std::string::npos)
      return Invalid("BK_DATA_DIR must be a non-empty path of at most 4096 characters");
    c.data_dir = *dir;
    if (StartsWith(c.data_dir, "~/")) c.data_dir = sys::HomeDir() + c.data_dir.substr(1);
    c.why = "BK_DATA_DIR is set";
  } else {
    auto xdg = env("XDG_DATA_HOME");
    std::string base = (xdg && StartsWith(*xdg, "/")) ? *xdg : sys::HomeDir() + "/.local/share";
    c.data_dir = base + "/gpubk";
    c.why = "no server configured; using your private ledger";
  }
  c.deployment = Deployment::kPrivate;
  c.ledger_path = sys::JoinPath(c.data_dir, "ledger.db");
  c.config_file = sys::JoinPath(c.data_dir, "config.json");
  c.gpu_sim_file = env("BK_GPU_SIM_FILE").value_or("");
  c.gpu_count_detected = true;
  c.owner_uid = uid;
  c.owner = sys::UserName(uid);
  Defaults(c);

  if (sys::Exists(c.config_file)) {
    c.config_file_present = true;
    BK_TRY(sys::CheckDataFile(c.config_file, uid));
    BK_ASSIGN_OR_RETURN(std::string text, sys::ReadSmallFile(c.config_file, 1 << 20));
    BK_TRY(ApplyConfigText(text, c.config_file, c));
  }
  for (const auto& k : Keys()) {
    std::string name = EnvName(k.name);
    auto v = env(name);
    if (!v) continue;
    BK_TRY(k.apply(json(*v), c));
    c.values[k.name] = AsJsonText(*v);
    c.sources[k.name] = "environment";
    c.env_overrides.push_back(name);
  }
  for (const char* name : {"BK_DATA_DIR", "BK_GPU_SIM_FILE", "BK_TEST_NOW"})
    if (env(name)) c.env_overrides.push_back(name);
  std::sort(c.env_overrides.begin(), c.env_overrides.end());
  BK_TRY(Finish(c));
#ifdef BK_TEST_HOOKS
  c.test_now = env("BK_TEST_NOW");
#endif
  return c;
}

std::string BoundPolicyJson(const engine::Policy& p) {
  json j = {{"version", 1},
            {"gpu_count", p.gpu_count},
            {"granularity_seconds", p.slot},
            {"max_shared_reservations_per_gpu", p.share_capacity},
            {"require_shared_memory", p.require_shared_memory},
            {"shared_memory_reserve_mb", p.shared_memory_reserve_mb},
            {"host_cpus", p.host_cpus ? json(*p.host_cpus) : json()},
            {"host_ram_mb", p.host_ram_mb ? json(*p.host_ram_mb) : json()}};
  return j.dump();
}

std::string ComparePolicy(const std::string& ledger_json, const std::string& local_json) {
  json a, b;
  try {
    a = json::parse(ledger_json);
    b = json::parse(local_json);
  } catch (const json::exception&) {
    return "policy: ledger=unreadable local=" + local_json;
  }
  std::vector<std::string> diffs;
  for (const auto& [key, value] : b.items()) {
    json other = a.contains(key) ? a[key] : json();
    if (other != value)
      diffs.push_back(fmt::format("{}: ledger={} local={}", key, other.dump(), value.dump()));
  }
  return Join(diffs, "; ");
}

}  // namespace bk::config
