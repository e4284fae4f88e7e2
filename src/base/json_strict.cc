#include "base/json_strict.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

namespace bk {

namespace {

// Thrown from the parser callback to stop at the first problem.
struct Stop {
  JsonError error;
};

}  // namespace

std::string JsonError::Phrase() const {
  switch (problem) {
    case JsonProblem::kSyntax: return fmt::format("is not valid JSON ({})", detail);
    case JsonProblem::kTooDeep: return fmt::format("nests deeper than {}", detail);
    case JsonProblem::kDuplicate: return fmt::format("names {} twice; keep one", detail);
  }
  return "is not valid JSON";
}

std::expected<nlohmann::json, JsonError> ParseStrictJson(std::string_view text, int max_depth) {
  using json = nlohmann::json;
  // The keys seen so far in each object still open, innermost last.
  std::vector<std::unordered_set<std::string>> open;
  auto check = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > max_depth) throw Stop{{JsonProblem::kTooDeep, fmt::format("{} levels", max_depth)}};
    switch (event) {
      case json::parse_event_t::object_start: open.emplace_back(); break;
      case json::parse_event_t::object_end:
        if (!open.empty()) open.pop_back();
        break;
      case json::parse_event_t::key: {
        const auto& key = parsed.get_ref<const std::string&>();
        if (!open.empty() && !open.back().insert(key).second)
          throw Stop{{JsonProblem::kDuplicate, fmt::format("key {}", json(key).dump())}};
        break;
      }
      default: break;
    }
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const Stop& s) {
    return std::unexpected(s.error);
  } catch (const json::exception& e) {
    // parse_error, or out_of_range for numbers such as 1e400. The text starts
    // "[json.exception.parse_error.101] ", which says nothing to a user.
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0) {
      if (auto close = what.find("] "); close != std::string::npos) what.erase(0, close + 2);
    }
    return std::unexpected(JsonError{JsonProblem::kSyntax, what});
  }
}

}  // namespace bk
