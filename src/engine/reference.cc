#include "engine/reference.h"

#include <fmt/format.h>

#include "base/strings.h"

namespace bk::engine {

namespace {
constexpr size_t kMaxNumberDigits = 6;
}

Result<ListRef> ParseListRef(std::string_view token, size_t count, std::string_view what,
                             std::string_view list) {
  std::string ref(Trim(token));
  if (!AllDigits(ref) || ref.size() > kMaxNumberDigits) return ListRef{false, 0, ref};
  int64_t n = ParseUint(ref).value_or(0);
  if (n >= 1 && static_cast<size_t>(n) <= count) return ListRef{true, static_cast<size_t>(n - 1), ""};
  std::string have = count == 0   ? fmt::format("you have no {}s", what)
                     : count == 1 ? fmt::format("you have 1 {}", what)
                                  : fmt::format("you have {} {}s", count, what);
  return Fail(ErrorKind::kNotFound,
              fmt::format("no {} number {}: {} (`{}` numbers them); an ID prefix of digits only needs at "
                          "least {} characters",
                          what, ref, have, list, kMaxNumberDigits + 1));
}

}  // namespace bk::engine
