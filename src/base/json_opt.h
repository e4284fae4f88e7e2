#pragma once
// An optional value in a JSON document: the value, or null when there is none.

#include <nlohmann/json.hpp>
#include <optional>

namespace bk {

template <class T>
nlohmann::json OptJson(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace bk
