#pragma once
// One name table per enum: the same table gives an enum value's stable name
// (in JSON, on the socket, in the ledger) and parses it back, so the two can
// never disagree.

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

namespace bk {

template <class E, size_t N>
struct EnumNames {
  std::array<std::pair<E, std::string_view>, N> entries;

  std::string_view Name(E value) const {
    for (const auto& [e, name] : entries)
      if (e == value) return name;
    return "?";
  }
  std::optional<E> Parse(std::string_view name) const {
    for (const auto& [e, n] : entries)
      if (n == name) return e;
    return std::nullopt;
  }
};

template <class E, class... Entries>
constexpr auto MakeEnumNames(Entries... entries) {
  return EnumNames<E, sizeof...(Entries)>{{entries...}};
}

// An enum that names its table through `EnumNamesOf(E)`, found by
// argument-dependent lookup beside the enum, so that generic code (table
// columns, JSON forms) stores and reads it by name.
template <class E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) {
  EnumNamesOf(e).Parse("");
};

}  // namespace bk
