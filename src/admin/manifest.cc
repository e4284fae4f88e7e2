#include "admin/manifest.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "base/json_strict.h"

namespace bk::admin {

using nlohmann::json;

Result<Manifest> ParseManifest(const std::string& text, const std::string& path) {
  auto doc = ParseStrictJson(text);
  auto bad = [&]() {
    return Invalid(
        fmt::format("{} is not a GPUBK install manifest (gpubk.install.v1); restore it from a "
                    "backup or remove what the install made by hand",
                    path));
  };
  if (!doc || !doc->is_object() || doc->value("schema_version", json()) != "gpubk.install.v1" ||
      !doc->contains("entries") || !(*doc)["entries"].is_array())
    return bad();
  Manifest m;
  for (const json& e : (*doc)["entries"]) {
    if (!e.is_object() || !e.contains("path") || !e["path"].is_string() || !e.contains("existed") ||
        !e["existed"].is_boolean())
      return bad();
    ManifestEntry entry{.path = e["path"].get<std::string>(),
                        .dir = e.value("type", "") == "directory",
                        .existed = e["existed"].get<bool>(),
                        .previous = std::nullopt,
                        .what = e.value("what", "")};
    if (e.contains("previous")) {
      if (!e["previous"].is_string()) return bad();
      entry.previous = e["previous"].get<std::string>();
    }
    if (entry.path.empty() || entry.path[0] != '/') return bad();
    m.entries.push_back(std::move(entry));
  }
  return m;
}

std::string RenderManifest(const Manifest& m) {
  json entries = json::array();
  for (const auto& e : m.entries) {
    json j = {
        {"path", e.path}, {"type", e.dir ? "directory" : "file"}, {"what", e.what}, {"existed", e.existed}};
    if (e.previous) j["previous"] = *e.previous;
    entries.push_back(std::move(j));
  }
  return json{{"schema_version", "gpubk.install.v1"}, {"entries", entries}}.dump(2) + "\n";
}

Manifest Merge(const Manifest& old, const std::vector<Step>& steps) {
  Manifest m = old;
  std::set<std::string> known;
  for (const auto& e : old.entries) known.insert(e.path);
  for (const Step& s : steps) {
    if (known.contains(s.want.path)) continue;
    known.insert(s.want.path);
    m.entries.push_back({.path = s.want.path,
                         .dir = s.want.kind == Kind::kParent || s.want.kind == Kind::kDir,
                         .existed = s.action != Action::kCreate,
                         .previous = s.previous,
                         .what = s.want.what});
  }
  return m;
}

namespace {

Undo UndoFor(const ManifestEntry& e, const std::string& data_dir, bool purge_data) {
  if (e.path == data_dir) return purge_data && !e.existed ? Undo::kRemove : Undo::kKeepData;
  if (e.previous) return Undo::kRestore;
  return e.existed ? Undo::kKeep : Undo::kRemove;
}

}  // namespace

std::vector<Undo> UndoAll(const Manifest& m, const std::string& data_dir, bool purge_data) {
  std::vector<Undo> undo;
  for (const auto& e : m.entries) undo.push_back(UndoFor(e, data_dir, purge_data));
  for (size_t i = 0; i < undo.size(); ++i) {
    if (undo[i] != Undo::kKeepData) continue;
    for (size_t j = 0; j < undo.size(); ++j)
      if (undo[j] == Undo::kRemove && m.entries[i].path.starts_with(m.entries[j].path + "/"))
        undo[j] = Undo::kKeepAbove;
  }
  return undo;
}

}  // namespace bk::admin
