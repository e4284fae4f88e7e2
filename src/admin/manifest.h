#pragma once
// The install manifest (/etc/gpubk/install.json, root's, 0600): what each
// path the install touched was before its first install, so that uninstall
// puts back exactly that. A re-install keeps the first record of a path.

#include <optional>
#include <string>
#include <vector>

#include "admin/plan.h"
#include "base/result.h"

namespace bk::admin {

struct ManifestEntry {
  std::string path;
  bool dir = false;
  bool existed = false;                 // there before the first install: never removed
  std::optional<std::string> previous;  // a file's text before the install replaced it
  std::string what;
};

struct Manifest {
  std::vector<ManifestEntry> entries;  // in the order the install made them
};

Result<Manifest> ParseManifest(const std::string& text, const std::string& path);
std::string RenderManifest(const Manifest& m);
// `old` with a record for each step's path it does not hold yet.
Manifest Merge(const Manifest& old, const std::vector<Step>& steps);

// What uninstall does with an entry: remove what the install created, put
// back a replaced file's text, keep what was there before, the data (unless
// purged) and the directories above what is kept.
enum class Undo { kRemove, kRestore, kKeep, kKeepData, kKeepAbove };
// One per entry, in the manifest's order.
std::vector<Undo> UndoAll(const Manifest& m, const std::string& data_dir, bool purge_data);

}  // namespace bk::admin
