#pragma once
// Every configuration key, declared once: its name in config.json, type,
// default, accepted values, environment override, where its value goes in
// Config, and one line of documentation. Parsing config.json and a server's
// config.json, the defaults, the BK_<KEY> overrides, the `effective` values
// of `bk config --json`, the suggestions for a misspelt key and the key
// listing of `bk config --keys` are all derived from this table, so a new key
// is one entry here plus its field in Config.

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/result.h"
#include "config/presets.h"
#include "engine/policy.h"

namespace bk::config {

struct Config;

// kChoice: one word of `choices`; kGroupName: a Unix group's name, or "" (none);
// kPresets: the lab's presets, NAME -> preset. kPath: an absolute path, or ""
// (off). kLimits: fair-share limits by
// user or group name, NAME -> {max_gpus, ...}.
enum class KeyType {
  kInteger,
  kNumber,
  kBoolean,
  kSize,
  kGpuList,
  kGpuPriority,
  kBlackouts,
  kChoice,
  kGroupName,
  kPresets,
  kLimits,
  kPath
};

// Whose setting a key is, which decides where its BK_<KEY> variable applies.
enum class KeyScope {
  kDeployment,  // the ledger's policy and the monitor: BK_<KEY> only in a private deployment
  kUser,        // each user's worker: on a server BK_<KEY> applies where the server's file is silent
};

// Where a key's value is stored: a reference into Config of the parsed type.
template <class T>
using Field = T& (*)(Config&);
using KeySlot = std::variant<Field<int>, Field<int64_t>, Field<std::optional<int64_t>>, Field<double>,
                             Field<bool>, Field<std::vector<int>>, Field<std::map<int, int>>,
                             Field<std::vector<engine::Blackout>>, Field<std::string>,
                             Field<std::vector<Preset>>, Field<std::map<std::string, engine::Limits>>>;

struct KeySpec {
  std::string_view name;  // in config.json; the environment variable is BK_<NAME>
  KeyType type;
  KeyScope scope = KeyScope::kDeployment;
  // JSON text, as `bk config` shows it and as it is applied before any file;
  // "detected" when Load finds the value itself (gpu_count).
  std::string_view default_text;
  double lo = 0, hi = 0;                      // kInteger, kNumber, kSize: the accepted range
  int64_t scale = 1;                          // kInteger: stored as value * scale (hours as seconds)
  bool nullable = false;                      // null switches the setting off
  bool divides_hour = false;                  // kInteger: only divisors of 60 (slot lengths)
  std::string_view suffix;                    // kPath: the name must end so (".prom")
  std::span<const std::string_view> choices;  // kChoice: the accepted words
  std::string_view accepted;                  // documentation, when the type and range do not say it all
  std::string_view default_doc;               // documentation, when default_text alone would mislead
  std::string_view doc;                       // one line: what it does
  KeySlot slot;
  void (*on_set)(Config&) = nullptr;  // after a value from a file or the environment
};

// In the order suggestions and environment overrides are tried.
std::span<const KeySpec> Keys();
// One window as `booking_blackouts` holds it in config.json (gpus only when
// it closes some, not all): what the key's parser reads back.
nlohmann::json BlackoutJson(const engine::Blackout& b);
const KeySpec* FindKey(std::string_view name);
std::string EnvName(const KeySpec& key);  // BK_<NAME>

// Parses `value` (JSON from a file, or a JSON string holding environment
// text), checks its range and stores it. Errors name the key and what it
// accepts, e.g. "slot_minutes must be between 1 and 60".
Status ApplyKey(const KeySpec& key, const nlohmann::json& value, Config& c);

// " (did you mean slot_minutes?)" for a near miss, else "".
std::string Suggest(std::string_view unknown);

// Environment variables that are not keys but that Load reads.
struct EnvVar {
  std::string_view name;
  std::string_view doc;
};
std::span<const EnvVar> EnvironmentVariables();

// A key's documentation in words: what `bk config --keys`, the guides and
// gpubk-config(5) say about it.
struct KeyDoc {
  std::string default_value;  // as config.json would hold it, or what "detected" means
  std::string env;            // BK_<NAME>
  bool env_json = false;      // the variable holds JSON text (blackouts, presets)
  std::string accepted;       // range, choices or shape
};
KeyDoc Document(const KeySpec& key);

// Documentation, one Markdown table row per key of `scope`:
// | `key` | default | `BK_KEY` | doc | accepted values |
std::vector<std::string> KeyRows(KeyScope scope);

}  // namespace bk::config
