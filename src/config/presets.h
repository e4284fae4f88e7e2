#pragma once
// Saved booking patterns: a user's own in $XDG_CONFIG_HOME/gpubk/presets.json
// (document gpubk.presets.v1) and the lab's in the deployment's `presets` key.
// A preset holds what shapes a booking, never its start. The document's
// checks are here, for both sources; what the current policy allows is
// checked separately, when a preset is saved and again when it is used, since
// an administrator may change the policy in between.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "engine/policy.h"
#include "engine/types.h"

namespace bk::config {

inline constexpr std::string_view kPresetsSchema = "gpubk.presets.v1";
inline constexpr size_t kMaxPresets = 128;
inline constexpr int64_t kMaxPresetsFileBytes = 1 << 20;

struct Preset {
  std::string name;
  engine::Mode mode = engine::Mode::kShared;
  int count = 1;
  engine::Seconds duration = 0;
  std::optional<int64_t> memory_mb;  // per GPU
  std::optional<int> share_units;    // shared only; absent = 1
  std::vector<int> gpus;             // pinned, sorted; empty = automatic
  std::vector<int> exclude;          // sorted
  std::optional<int64_t> cpus;
  std::optional<int64_t> ram_mb;
  std::string created_at, updated_at;  // ISO 8601 UTC; empty for the lab's
  bool operator==(const Preset&) const = default;
};

// "preset name must be 1-32 letters, digits, dots, dashes, or underscores" unless
// `name` is one (starting with a letter or digit); the words of `bk preset`
// itself (list, save, show, rm, ...) are refused too.
Status CheckPresetName(std::string_view name);

// One preset object of the document. Errors say "preset NAME: FIELD ...".
// `name` is the object's key in the lab's form, which carries no "name" member
// (empty: the member is required).
Result<Preset> PresetFromJson(const nlohmann::json& j, const std::string& name = "");
nlohmann::json PresetJson(const Preset& p);

// The whole file: errors are prefixed with `path`. At most kMaxPresets, unique names.
Result<std::vector<Preset>> ParsePresets(std::string_view text, const std::string& path);
// The document, sorted by name, indented as people read it.
std::string RenderPresets(std::vector<Preset> presets);

// The `presets` configuration key: an object NAME -> preset (without "name"),
// errors naming `key`. Sorted by name.
Result<std::vector<Preset>> LabPresetsValue(const std::string& key, const nlohmann::json& v);

// Whether `policy` lets the preset book: count within the enabled GPUs,
// duration a multiple of the slot and within the longest booking, pinned GPUs
// enabled, shared slots within the capacity. The error names the preset.
Status CheckPresetPolicy(const Preset& p, const engine::Policy& policy);

// The user's presets at `path`: none when the file is absent. The file must be
// a regular single-link file of `owner`, no group/other permission bits, at
// most 1 MiB, a valid document; any other is refused, naming the fix.
Result<std::vector<Preset>> ReadPresets(const std::string& path, uid_t owner);
// Reads, changes and writes back the user's presets under the lock file
// beside them (5 s at most), creating the directory 0700 and the file 0600.
// Nothing is written when `change` fails.
Status UpdatePresets(const std::string& path, uid_t owner,
                     const std::function<Status(std::vector<Preset>&)>& change);

}  // namespace bk::config
