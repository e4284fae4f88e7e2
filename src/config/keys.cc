#include "config/keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "config/config.h"
#include "engine/civil_time.h"
#include "engine/limit_fields.h"
#include "engine/parse.h"

namespace bk::config {
namespace {

using nlohmann::json;

// ---- values, each checked with an error that names the key -----------------

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
Result<int64_t> SizeValue(const std::string& key, const json& v, int64_t lo, int64_t hi) {
  if (v.is_number_integer() || (v.is_string() && AllDigits(Trim(v.get<std::string>()))))
    return IntValue(key, v, lo, hi);
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
    json start, end, reason = "administrator maintenance", gpus = json::array();
    if (e.is_object()) {
      start = e.value("start_at", json());
      end = e.value("end_at", json());
      if (e.contains("reason")) reason = e["reason"];
      if (e.contains("gpus")) gpus = e["gpus"];
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
    engine::Blackout b{*s, *en, Printable(reason.get<std::string>()), {}};
    auto bad_gpus = [&] {
      return Invalid(
          fmt::format("{}[{}] gpus must be a list of GPU indexes, e.g. [0, 2] (omit it for all)", key, i));
    };
    if (!gpus.is_array()) return bad_gpus();
    for (const json& g : gpus) {
      if (!g.is_number_integer() || g.get<int64_t>() < 0 || g.get<int64_t>() >= engine::kMaxGpus)
        return bad_gpus();
      b.gpus.push_back(g.get<int>());
    }
    std::sort(b.gpus.begin(), b.gpus.end());
    b.gpus.erase(std::unique(b.gpus.begin(), b.gpus.end()), b.gpus.end());
    out.push_back(std::move(b));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.start, a.end, a.reason, a.gpus) < std::tie(b.start, b.end, b.reason, b.gpus);
  });
  return out;
}

Result<std::string> ChoiceValue(const std::string& key, const json& v,
                                std::span<const std::string_view> choices) {
  std::string words = Join(std::vector<std::string>(choices.begin(), choices.end()), ", ");
  if (!v.is_string()) return Invalid(fmt::format("{} must be one of: {}", key, words));
  std::string s = ToLower(Trim(v.get<std::string>()));
  if (std::find(choices.begin(), choices.end(), s) == choices.end())
    return Invalid(fmt::format("{} must be one of: {}", key, words));
  return s;
}

// A group name as groupadd(8) takes it; "" or null names none.
Result<std::string> GroupNameValue(const std::string& key, const json& v) {
  if (v.is_null()) return std::string();
  std::string bad = fmt::format("{} must be a group name (letters, digits, _ . -, at most 32) or \"\"", key);
  if (!v.is_string()) return Invalid(bad);
  std::string s(Trim(v.get<std::string>()));
  if (s.size() > 32 || (!s.empty() && s.front() == '-')) return Invalid(bad);
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.' && ch != '-')
      return Invalid(bad);
  return s;
}

// {"NAME": {"max_gpus": 4, "max_gpu_hours_7d": null, ...}}: a name as
// useradd/groupadd take it, and the fields above. null lifts a limit (a
// user's own entry over the user_* keys); an absent field leaves it as it is.
Result<std::map<std::string, engine::Limits>> LimitsValue(const std::string& key, const json& v) {
  BK_ASSIGN_OR_RETURN(json obj, Structured(key, v));
  if (!obj.is_object())
    return Invalid(fmt::format("{} must be a JSON object such as {{\"alice\": {{\"max_gpus\": 4}}}}", key));
  if (obj.size() > 4096) return Invalid(fmt::format("{} may name at most 4096 entries", key));
  std::vector<std::string> names;
  for (const auto& f : engine::LimitFields()) names.emplace_back(f.name);
  std::map<std::string, engine::Limits> out;
  for (const auto& [name, entry] : obj.items()) {
    auto checked = GroupNameValue(key, json(name));
    if (!checked || checked->empty() || *checked != name)
      return Invalid(
          fmt::format("{} name \"{}\" must be a login or group name (letters, digits, _ . -, at most 32)",
                      key, Printable(name.substr(0, 40))));
    if (!entry.is_object())
      return Invalid(fmt::format("{}.{} must be an object of limits: {}", key, name, Join(names, ", ")));
    engine::Limits limits;
    for (const auto& [field, value] : entry.items()) {
      auto fields = engine::LimitFields();
      auto it = std::find_if(fields.begin(), fields.end(),
                             [&](const engine::LimitField& f) { return f.name == field; });
      if (it == fields.end())
        return Invalid(fmt::format("{}.{} has no limit \"{}\"; the limits are: {}", key, name,
                                   Printable(field.substr(0, 40)), Join(names, ", ")));
      if (value.is_null()) {
        limits.*(it->member) = engine::kNoLimit;
        continue;
      }
      BK_ASSIGN_OR_RETURN(int64_t n,
                          IntValue(fmt::format("{}.{}.{}", key, name, field), value, it->lo, it->hi));
      limits.*(it->member) = n * it->unit;
    }
    out[name] = limits;
  }
  return out;
}

// An absolute path of at most 4096 printable bytes; "" or null turns it off.
Result<std::string> PathValue(const std::string& key, const json& v, std::string_view suffix) {
  if (v.is_null()) return std::string();
  std::string bad = fmt::format("{} must be an absolute path such as /var/lib/gpubk/x, or \"\" for off", key);
  if (!v.is_string()) return Invalid(bad);
  std::string s(Trim(v.get<std::string>()));
  if (s.empty()) return s;
  if (s.front() != '/' || s.size() > 4096) return Invalid(bad);
  for (unsigned char ch : s)
    if (ch < 0x20 || ch == 0x7f) return Invalid(key + " must not contain control characters");
  if (!s.ends_with(suffix)) return Invalid(fmt::format("{} must end in {}", key, suffix));
  return s;
}

// Integer keys keep their bounds in the table's doubles, exactly (below 2^53).
int64_t Lo(const KeySpec& k) { return static_cast<int64_t>(k.lo); }
int64_t Hi(const KeySpec& k) { return static_cast<int64_t>(k.hi); }

// The slot lengths an hour divides into, within the key's range.
std::vector<int> HourDivisors(const KeySpec& k) {
  std::vector<int> out;
  for (int64_t m = Lo(k); m <= Hi(k); ++m)
    if (60 % m == 0) out.push_back(static_cast<int>(m));
  return out;
}

// ---- where values go ---------------------------------------------------------

template <auto Member>
constexpr KeySlot Of() {
  return +[](Config & c) -> auto& { return c.*Member; };
}
template <auto Member>
constexpr KeySlot OfPolicy() {
  return +[](Config & c) -> auto& { return c.policy.*Member; };
}
template <auto Member>
constexpr KeySlot OfLimits() {
  return +[](Config & c) -> auto& { return c.policy.fair_share.user.*Member; };
}
template <auto Member>
constexpr KeySlot OfFairShare() {
  return +[](Config & c) -> auto& { return c.policy.fair_share.*Member; };
}
template <auto Member>
constexpr KeySlot OfWorker() {
  return +[](Config & c) -> auto& { return c.worker.*Member; };
}

template <class T>
void Store(const KeySpec& k, Config& c, T value) {
  std::get<Field<T>>(k.slot)(c) = std::move(value);
}

// Integers go to int, int64_t or optional<int64_t> fields alike.
void StoreInteger(const KeySpec& k, Config& c, int64_t n) {
  if (auto* f = std::get_if<Field<int>>(&k.slot))
    (*f)(c) = static_cast<int>(n);
  else if (auto* g = std::get_if<Field<int64_t>>(&k.slot))
    (*g)(c) = n;
  else
    Store<std::optional<int64_t>>(k, c, n);
}

using enum KeyType;
constexpr auto kUser = KeyScope::kUser;
constexpr int64_t kMaxSizeMb = int64_t{1} << 40;

// The order matters twice: the first near miss is the suggestion, and the
// first bad environment variable is the one reported.
constexpr std::string_view kUsageVisibilities[] = {"self", "lab"};

const KeySpec kKeys[] = {
    {.name = "gpu_count",
     .type = kInteger,
     .default_text = "detected",
     .lo = 1,
     .hi = engine::kMaxGpus,
     .doc = "number of GPUs, indexes 0..N-1. **Bound**",
     .slot = OfPolicy<&engine::Policy::gpu_count>(),
     .on_set = [](Config& c) { c.gpu_count_detected = false; }},
    {.name = "slot_minutes",
     .type = kInteger,
     .default_text = "5",
     .lo = 1,
     .hi = 60,
     .scale = 60,
     .divides_hour = true,
     .doc = "booking slot: starts and durations are multiples of it. **Bound** (as `granularity_seconds`)",
     .slot = OfPolicy<&engine::Policy::slot>()},
    {.name = "max_shared_users",
     .type = kInteger,
     .default_text = "2",
     .lo = 1,
     .hi = 10000,
     .doc = "share slots per GPU (a shared booking takes 1 or `--share N`). **Bound**",
     .slot = OfPolicy<&engine::Policy::share_capacity>()},
    {.name = "queue_search_hours",
     .type = kInteger,
     .default_text = "168",
     .lo = 1,
     .hi = 87600,
     .scale = engine::kHour,
     .doc = "how far past the requested start an automatic booking may be queued",
     .slot = OfPolicy<&engine::Policy::queue_search>()},
    {.name = "booking_horizon_days",
     .type = kInteger,
     .default_text = "30",
     .lo = 1,
     .hi = 3650,
     .scale = engine::kDay,
     .doc = "a booking must end within this many days from now",
     .slot = OfPolicy<&engine::Policy::horizon>()},
    {.name = "max_booking_duration_hours",
     .type = kInteger,
     .default_text = "720",
     .lo = 1,
     .hi = 87600,
     .scale = engine::kHour,
     .doc = "longest booking, after edits and renewals too",
     .slot = OfPolicy<&engine::Policy::max_duration>()},
    {.name = "booking_blackouts",
     .type = kBlackouts,
     .default_text = "[]",
     .accepted = "at most 512; start < end; reason 1-512 characters",
     .doc = "windows in which nothing may be booked: `[{\"start_at\", \"end_at\", \"reason\"}]` or "
            "`[start, end, reason]`; times ISO 8601 **with** a zone; shown as `##` in `bk tl`",
     .slot = OfPolicy<&engine::Policy::blackouts>()},
    {.name = "disabled_gpus",
     .type = kGpuList,
     .default_text = "[]",
     .accepted = "indexes below `gpu_count`, no repeats; at least one GPU stays enabled",
     .doc = "GPUs never booked: `[1, 3]` or `\"1,3\"`",
     .slot = OfPolicy<&engine::Policy::disabled_gpus>()},
    {.name = "gpu_priority",
     .type = kGpuPriority,
     .default_text = "{}",
     .accepted = "priority 0-1000000",
     .doc = "placement order among GPUs free at the same earliest start; higher number = chosen later: "
            "`{\"6\": 10, \"7\": 20}` or `6=10,7=20`",
     .slot = OfPolicy<&engine::Policy::gpu_priority>()},
    {.name = "require_shared_memory",
     .type = kBoolean,
     .default_text = "false",
     .doc = "a shared booking without `--mem` records its automatic VRAM budget; without telemetry `--mem` "
            "is then required. **Bound**",
     .slot = OfPolicy<&engine::Policy::require_shared_memory>()},
    {.name = "shared_memory_reserve_mb",
     .type = kInteger,
     .default_text = "512",
     .lo = 0,
     .hi = 16777216,
     .doc = "VRAM per GPU kept out of the shared budget. **Bound**",
     .slot = OfPolicy<&engine::Policy::shared_memory_reserve_mb>()},
    {.name = "host_cpus",
     .type = kInteger,
     .default_text = "null",
     .lo = 1,
     .hi = 1000000,
     .nullable = true,
     .default_doc = "null (off)",
     .doc = "host CPU budget: the CPUs declared by overlapping bookings must fit. **Bound**",
     .slot = OfPolicy<&engine::Policy::host_cpus>()},
    {.name = "host_ram_mb",
     .type = kSize,
     .default_text = "null",
     .lo = 1,
     .hi = kMaxSizeMb,
     .nullable = true,
     .accepted = "MiB integer or size like `\"256g\"`, or null",
     .default_doc = "null (off)",
     .doc = "host RAM budget in MiB. **Bound**",
     .slot = OfPolicy<&engine::Policy::host_ram_mb>()},
    {.name = "default_booking_cpus",
     .type = kInteger,
     .default_text = "1",
     .lo = 1,
     .hi = 1000000,
     .doc = "CPUs a booking declares without `--cpus` (when `host_cpus` is set)",
     .slot = OfPolicy<&engine::Policy::default_booking_cpus>()},
    {.name = "default_booking_ram_mb",
     .type = kSize,
     .default_text = "1024",
     .lo = 1,
     .hi = kMaxSizeMb,
     .accepted = "MiB or size like `\"1g\"`",
     .doc = "RAM a booking declares without `--ram` (when `host_ram_mb` is set)",
     .slot = OfPolicy<&engine::Policy::default_booking_ram_mb>()},
    {.name = "user_max_gpus",
     .type = kInteger,
     .default_text = "null",
     .lo = 1,
     .hi = engine::kMaxGpus,
     .nullable = true,
     .default_doc = "null (no limit)",
     .doc = "fair share: the most GPUs one user holds at any instant, all their bookings together",
     .slot = OfLimits<&engine::Limits::max_gpus>()},
    {.name = "user_max_gpu_hours_24h",
     .type = kInteger,
     .default_text = "null",
     .lo = 1,
     .hi = 100000000,
     .nullable = true,
     .default_doc = "null (no limit)",
     .doc = "fair share: the most GPU-hours one user's bookings hold within any 24 hours (past use counts)",
     .slot = OfLimits<&engine::Limits::max_gpu_hours_24h>()},
    {.name = "user_max_gpu_hours_7d",
     .type = kInteger,
     .default_text = "null",
     .lo = 1,
     .hi = 100000000,
     .nullable = true,
     .default_doc = "null (no limit)",
     .doc = "fair share: the most GPU-hours one user's bookings hold within any 7 days (past use counts)",
     .slot = OfLimits<&engine::Limits::max_gpu_hours_7d>()},
    {.name = "user_max_booking_hours",
     .type = kInteger,
     .default_text = "null",
     .lo = 1,
     .hi = 87600,
     .scale = engine::kHour,
     .nullable = true,
     .default_doc = "null (no limit)",
     .doc = "fair share: the longest booking one user may hold (below `max_booking_duration_hours`)",
     .slot = OfLimits<&engine::Limits::max_duration>()},
    {.name = "user_max_horizon_days",
     .type = kInteger,
     .default_text = "null",
     .lo = 1,
     .hi = 3650,
     .scale = engine::kDay,
     .nullable = true,
     .default_doc = "null (no limit)",
     .doc = "fair share: a user's booking must end within this many days (below `booking_horizon_days`)",
     .slot = OfLimits<&engine::Limits::max_horizon>()},
    {.name = "user_max_queued",
     .type = kInteger,
     .default_text = "null",
     .lo = 0,
     .hi = 100000,
     .nullable = true,
     .default_doc = "null (no limit)",
     .doc = "fair share: how many bookings one user may have waiting to start",
     .slot = OfLimits<&engine::Limits::max_queued>()},
    {.name = "user_limits",
     .type = kLimits,
     .default_text = "{}",
     .accepted =
         "login names; fields `max_gpus`, `max_gpu_hours_24h`, `max_gpu_hours_7d`, `max_booking_hours`, "
         "`max_horizon_days`, `max_queued`; null lifts a limit",
     .doc =
         "fair share for named users, over the `user_*` keys field by field: `{\"alice\": {\"max_gpus\": 8, "
         "\"max_gpu_hours_7d\": null}}`",
     .slot = OfFairShare<&engine::FairShare::users>()},
    {.name = "group_limits",
     .type = kLimits,
     .default_text = "{}",
     .accepted = "Unix group names; the fields of `user_limits`",
     .doc = "fair share for Unix groups: the members of a group **together** stay within its limits "
            "(`{\"vision\": {\"max_gpus\": 4}}`); each member's own limits apply as well",
     .slot = OfFairShare<&engine::FairShare::groups>()},
    {.name = "ledger_retention_days",
     .type = kInteger,
     .default_text = "90",
     .lo = 0,
     .hi = 36500,
     .doc = "reservations that ended, or were cancelled, more than this many days ago are removed with their "
            "jobs (checked at most once a day, during a booking); each removal is recorded as a `prune` "
            "event. Operation IDs and the event history are never removed, so a retry with an old `--op-id` "
            "is refused, never booked again. 0 keeps everything",
     .slot = Of<&Config::ledger_retention_days>()},
    {.name = "lock_timeout_seconds",
     .type = kNumber,
     .default_text = "10",
     .lo = 0.001,
     .hi = 3600,
     .accepted = "0.001-3600 (fractions allowed)",
     .doc = "how long a `bk` waits for the ledger's write lock before exit 75",
     .slot = Of<&Config::lock_timeout_seconds>()},
    {.name = "timeline_hours",
     .type = kInteger,
     .default_text = "2",
     .lo = 1,
     .hi = 8760,
     .doc = "default window of `bk tl` and `bk st -t`",
     .slot = Of<&Config::timeline_hours>()},
    {.name = "reclaim_after_seconds",
     .type = kInteger,
     .default_text = "3600",
     .lo = 0,
     .hi = 30 * 86400,
     .doc =
         "the monitor reclaims a no-show booking after this much consecutive trustworthy evidence; 0 turns "
         "reclamation off",
     .slot = Of<&Config::reclaim_after_seconds>()},
    {.name = "pause_sampling_during_exclusive",
     .type = kBoolean,
     .default_text = "false",
     .default_doc = "false (private); true (server)",
     .doc = "the monitor pauses GPU queries during running exclusive bookings",
     .slot = Of<&Config::pause_sampling_during_exclusive>()},
    {.name = "worker_poll_seconds",
     .type = kNumber,
     .scope = kUser,
     .default_text = "1",
     .lo = 0.1,
     .hi = 3600,
     .doc = "seconds between the worker's checks (`bk w --poll` overrides)",
     .slot = OfWorker<&WorkerSettings::poll_seconds>()},
    {.name = "worker_termination_grace_seconds",
     .type = kNumber,
     .scope = kUser,
     .default_text = "5",
     .lo = 0.1,
     .hi = 60,
     .doc = "SIGTERM this long before a booking's end, SIGKILL at the end",
     .slot = OfWorker<&WorkerSettings::grace_seconds>()},
    {.name = "worker_claim_timeout_seconds",
     .type = kNumber,
     .scope = kUser,
     .default_text = "30",
     .lo = 1,
     .hi = 7 * 86400,
     .doc = "a job claimed by a worker that vanished is marked `uncertain` after this long",
     .slot = OfWorker<&WorkerSettings::claim_timeout_seconds>()},
    {.name = "worker_recovery_grace_seconds",
     .type = kNumber,
     .scope = kUser,
     .default_text = "5",
     .lo = 0.05,
     .hi = 86400,
     .doc = "SIGTERM-to-SIGKILL grace when a new worker stops an orphaned job",
     .slot = OfWorker<&WorkerSettings::recovery_grace_seconds>()},
    {.name = "worker_live_guard",
     .type = kBoolean,
     .scope = kUser,
     .default_text = "true",
     .doc = "sample the booked GPUs once more before a launch and wait while something the monitor would "
            "flag runs there",
     .slot = OfWorker<&WorkerSettings::live_guard>()},
    {.name = "worker_max_parallel",
     .type = kInteger,
     .scope = kUser,
     .default_text = "64",
     .lo = 1,
     .hi = 4096,
     .doc = "jobs one worker runs at once (`--max-parallel` overrides), never more than enabled GPUs times "
            "share slots",
     .slot = OfWorker<&WorkerSettings::max_parallel>()},
    {.name = "job_log_max_mb",
     .type = kInteger,
     .scope = kUser,
     .default_text = "64",
     .lo = 0,
     .hi = 1 << 20,
     .doc = "size of a job's rolling log (two segments of half each); 0: no rotation",
     .slot = OfWorker<&WorkerSettings::log_max_mb>()},
    {.name = "job_log_retention_days",
     .type = kInteger,
     .scope = kUser,
     .default_text = "30",
     .lo = 0,
     .hi = 36500,
     .doc = "finished jobs' logs are removed after this many days",
     .slot = OfWorker<&WorkerSettings::log_retention_days>()},
    {.name = "monitor_interval_seconds",
     .type = kNumber,
     .default_text = "2",
     .lo = 0.2,
     .hi = 3600,
     .doc = "the monitor's sampling period",
     .slot = Of<&Config::monitor_interval_seconds>()},
    {.name = "usage_visibility",
     .type = kChoice,
     .default_text = "\"self\"",
     .choices = kUsageVisibilities,
     .default_doc = "self",
     .doc = "on a server, whose usage history (`bk u users`, `events`, `samples`) a user sees: `self` their "
            "own rows, `lab` everyone's; the owner and administrators always see everyone's",
     .slot = Of<&Config::usage_visibility>()},
    {.name = "admin_group",
     .type = kGroupName,
     .default_text = "\"\"",
     .accepted = "a group name, or \"\" for none",
     .default_doc = "none",
     .doc = "on a server, the Unix group whose members administer it beside root and the owner (`bk admin`, "
            "cancelling or transferring anyone's booking, `bk lg` of admin actions)",
     .slot = Of<&Config::admin_group>()},
    {.name = "metrics_textfile",
     .type = kPath,
     .default_text = "\"\"",
     .suffix = ".prom",  // node_exporter's textfile collector reads only *.prom files
     .accepted = "an absolute path ending in `.prom`, or \"\"",
     .default_doc = "\"\" (off)",
     .doc = "the Prometheus node_exporter textfile the monitor rewrites (atomically) after each sample: GPU "
            "telemetry, bookings per user, reclaims, no-show streaks, the daemon's requests and the ledger's "
            "size (docs/metrics.md)",
     .slot = Of<&Config::metrics_textfile>()},
    {.name = "calendar_feed_dir",
     .type = kPath,
     .default_text = "\"\"",
     .accepted = "an absolute directory path, or \"\"",
     .default_doc = "\"\" (off)",
     .doc = "on a server, the directory where the daemon keeps `USER.ics`, each user's bookings as an "
            "iCalendar feed, rewritten after every change (a calendar app or web server subscribes to it)",
     .slot = Of<&Config::calendar_feed_dir>()},
    {.name = "presets",
     .type = kPresets,
     .default_text = "{}",
     .accepted = "at most 128; names of 1-32 letters, digits, `.`, `_`, `-`; the fields of `bk preset show`",
     .doc = "the lab's presets, listed by every user's `bk preset list` and booked with `bk p NAME`: "
            "`{\"train\": {\"mode\": \"shared\", \"count\": 2, \"duration_seconds\": 14400}}`; a user's "
            "own preset of the same name wins",
     .slot = Of<&Config::presets>()},
};

const EnvVar kEnvironment[] = {
    {"BK_DATA_DIR", "the private data directory"},
    {"BK_CONFIG_FILE", "a server's `config.json`"},
    {"BK_GPU_SIM_FILE", "simulated telemetry"},
    {"BK_TEST_NOW",
     "fixed clock, honoured only by builds with tests enabled; a daemon takes a test clock only from its "
     "config file"},
};

size_t EditDistance(std::string_view a, std::string_view b) {
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

std::string AcceptedValues(const KeySpec& k) {
  if (!k.accepted.empty()) return std::string(k.accepted);
  if (k.type == kBoolean) return "boolean";
  if (k.type == kChoice) return Join(std::vector<std::string>(k.choices.begin(), k.choices.end()), ", ");
  if (k.divides_hour) return JoinInts(HourDivisors(k), ", ");
  std::string range =
      k.type == kNumber ? fmt::format("{}-{}", k.lo, k.hi) : fmt::format("{}-{}", Lo(k), Hi(k));
  return k.nullable ? range + ", or null" : range;
}

std::string DefaultDoc(const KeySpec& k) {
  if (!k.default_doc.empty()) return std::string(k.default_doc);
  if (k.default_text.starts_with('[') || k.default_text.starts_with('{'))
    return fmt::format("`{}`", k.default_text);
  return std::string(k.default_text);
}

}  // namespace

std::span<const KeySpec> Keys() { return kKeys; }

json BlackoutJson(const engine::Blackout& b) {
  json j = {{"start_at", engine::FormatIsoUtc(b.start)},
            {"end_at", engine::FormatIsoUtc(b.end)},
            {"reason", b.reason}};
  if (!b.gpus.empty()) j["gpus"] = b.gpus;
  return j;
}

const KeySpec* FindKey(std::string_view name) {
  for (const auto& k : kKeys)
    if (k.name == name) return &k;
  return nullptr;
}

std::string EnvName(const KeySpec& key) {
  std::string out = "BK_";
  for (char c : key.name) out += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  return out;
}

Status ApplyKey(const KeySpec& k, const json& v, Config& c) {
  const std::string name(k.name);
  if (k.nullable && v.is_null()) {
    Store<std::optional<int64_t>>(k, c, std::nullopt);
    return Ok();
  }
  switch (k.type) {
    case kInteger: {
      BK_ASSIGN_OR_RETURN(int64_t n, IntValue(name, v, Lo(k), Hi(k)));
      if (k.divides_hour && 60 % n != 0)
        return Invalid(
            fmt::format("{} must divide one hour; choose one of: {}", name, JoinInts(HourDivisors(k), ", ")));
      StoreInteger(k, c, n * k.scale);
      break;
    }
    case kSize: {
      BK_ASSIGN_OR_RETURN(int64_t n, SizeValue(name, v, Lo(k), Hi(k)));
      StoreInteger(k, c, n);
      break;
    }
    case kNumber: {
      BK_ASSIGN_OR_RETURN(double d, FloatValue(name, v, k.lo, k.hi));
      Store(k, c, d);
      break;
    }
    case kBoolean: {
      BK_ASSIGN_OR_RETURN(bool b, BoolValue(name, v));
      Store(k, c, b);
      break;
    }
    case kGpuList: {
      BK_ASSIGN_OR_RETURN(auto gpus, GpuListValue(name, v));
      Store(k, c, std::move(gpus));
      break;
    }
    case kGpuPriority: {
      BK_ASSIGN_OR_RETURN(auto priority, PriorityValue(name, v));
      Store(k, c, std::move(priority));
      break;
    }
    case kBlackouts: {
      BK_ASSIGN_OR_RETURN(auto windows, BlackoutsValue(name, v));
      Store(k, c, std::move(windows));
      break;
    }
    case kChoice: {
      BK_ASSIGN_OR_RETURN(std::string word, ChoiceValue(name, v, k.choices));
      Store(k, c, std::move(word));
      break;
    }
    case kGroupName: {
      BK_ASSIGN_OR_RETURN(std::string group, GroupNameValue(name, v));
      Store(k, c, std::move(group));
      break;
    }
    case kPresets: {
      BK_ASSIGN_OR_RETURN(auto presets, LabPresetsValue(name, v));
      Store(k, c, std::move(presets));
      break;
    }
    case kLimits: {
      BK_ASSIGN_OR_RETURN(auto limits, LimitsValue(name, v));
      Store(k, c, std::move(limits));
      break;
    }
    case kPath: {
      BK_ASSIGN_OR_RETURN(std::string path, PathValue(name, v, k.suffix));
      Store(k, c, std::move(path));
      break;
    }
  }
  if (k.on_set) k.on_set(c);
  return Ok();
}

std::string Suggest(std::string_view unknown) {
  std::string_view best;
  size_t best_d = 4;
  for (const auto& k : kKeys) {
    size_t d = EditDistance(unknown, k.name);
    if (d < best_d) best_d = d, best = k.name;
  }
  return best.empty() ? "" : fmt::format(" (did you mean {}?)", best);
}

std::span<const EnvVar> EnvironmentVariables() { return kEnvironment; }

KeyDoc Document(const KeySpec& key) {
  // Blackouts, presets and limits have no short form: their variable holds JSON text.
  return {DefaultDoc(key), EnvName(key),
          key.type == kBlackouts || key.type == kPresets || key.type == kLimits, AcceptedValues(key)};
}

std::vector<std::string> KeyRows(KeyScope scope) {
  std::vector<std::string> rows;
  for (const auto& k : kKeys) {
    if (k.scope != scope) continue;
    KeyDoc d = Document(k);
    rows.push_back(fmt::format("| `{}` | {} | `{}`{} | {} | {} |", k.name, d.default_value, d.env,
                               d.env_json ? " (JSON)" : "", k.doc, d.accepted));
  }
  return rows;
}

}  // namespace bk::config
