#pragma once
// How a person names one item of a numbered list (`bk l`, `bk j`, `bk g`):
// by its number in the list or by a prefix of its ID.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/strings.h"

namespace bk::engine {

struct ListRef {
  bool is_number = false;
  size_t index = 0;    // 0-based, when is_number
  std::string prefix;  // the trimmed token, when not
};

// A token of one to six digits is always a list number. A number that is not
// on the list is refused rather than read as an ID prefix: `bk d 4` with three
// bookings must not cancel one whose ID happens to start with 4. An ID prefix
// made only of digits therefore needs at least seven characters. `what` names
// the items ("active reservation", "job", "booking active now") and `list`
// the command that numbers them.
Result<ListRef> ParseListRef(std::string_view token, size_t count, std::string_view what,
                             std::string_view list);

// The items `pick` names among `items` (the list it was parsed against): the
// numbered one, or every item whose ID, id(item), starts with the prefix.
template <class T, class Id>
std::vector<T> Picked(const ListRef& pick, const std::vector<T>& items, const Id& id) {
  if (pick.is_number) return {items[pick.index]};
  std::vector<T> out;
  for (const T& item : items)
    if (StartsWith(id(item), pick.prefix)) out.push_back(item);
  return out;
}

}  // namespace bk::engine
