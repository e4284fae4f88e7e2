#pragma once
// JSON from outside (sockets, MCP, configuration, imports, job specs) parsed
// strictly: bounded nesting and no key twice in one object. nlohmann's parser
// keeps the last of two equal keys while other readers keep the first, so a
// duplicate could mean one thing to a check and another to its use.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "base/result.h"

namespace bk {

enum class JsonProblem {
  kSyntax,     // not JSON at all
  kTooDeep,    // nests deeper than the limit
  kDuplicate,  // an object names one key twice
};

struct JsonError {
  JsonProblem problem = JsonProblem::kSyntax;
  std::string detail;  // the parser's message, "64 levels", "key \"gpu_count\""
  // One phrase for a message: "is not valid JSON (...)", "names key \"x\" twice".
  std::string Phrase() const;
};

inline constexpr int kMaxJsonDepth = 64;

std::expected<nlohmann::json, JsonError> ParseStrictJson(std::string_view text,
                                                         int max_depth = kMaxJsonDepth);

}  // namespace bk
