#include "engine/types.h"

#include "base/strings.h"

namespace bk::engine {

std::string_view ModeName(Mode mode) { return mode == Mode::kShared ? "shared" : "exclusive"; }

std::optional<Mode> ParseMode(std::string_view text) {
  std::string t = ToLower(Trim(text));
  if (t == "s" || t == "shared" || t == "auto") return Mode::kShared;
  if (t == "x" || t == "exclusive") return Mode::kExclusive;
  return std::nullopt;
}

}  // namespace bk::engine
