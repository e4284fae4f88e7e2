#pragma once
// Reading a host's reply. Any field may be missing or of another type (an
// older bk, a broken or hostile host): a field of the wrong type reads as
// absent, so a reply can be refused but never crash the client.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/civil_time.h"
#include "base/iso8601.h"

namespace bk::cluster {

inline const nlohmann::json& Field(const nlohmann::json& obj, std::string_view key) {
  static const nlohmann::json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

inline std::string StrField(const nlohmann::json& obj, std::string_view key, std::string def = "") {
  const nlohmann::json& v = Field(obj, key);
  return v.is_string() ? v.get<std::string>() : def;
}

inline bool BoolField(const nlohmann::json& obj, std::string_view key, bool def = false) {
  const nlohmann::json& v = Field(obj, key);
  return v.is_boolean() ? v.get<bool>() : def;
}

inline double NumField(const nlohmann::json& obj, std::string_view key, double def = 0) {
  const nlohmann::json& v = Field(obj, key);
  return v.is_number() ? v.get<double>() : def;
}

// The integers of an array field (GPU indexes); anything else in it is skipped.
inline std::vector<int> IntsField(const nlohmann::json& obj, std::string_view key) {
  std::vector<int> out;
  const nlohmann::json& v = Field(obj, key);
  if (v.is_array())
    for (const auto& x : v)
      if (x.is_number_integer()) out.push_back(x.get<int>());
  return out;
}

// An ISO 8601 instant in epoch seconds (a host's times are UTC; a naive one reads as UTC).
inline std::optional<int64_t> InstantField(const nlohmann::json& obj, std::string_view key) {
  const nlohmann::json& v = Field(obj, key);
  if (!v.is_string()) return std::nullopt;
  auto t = ScanIso(v.get_ref<const std::string&>());
  if (!t) return std::nullopt;
  return CivilToEpoch(t->civil) - t->offset.value_or(0);
}

}  // namespace bk::cluster
