#pragma once
// For tests: a name table checked whole, so that every enum's table test
// asks the same questions.

#include <gtest/gtest.h>

#include <initializer_list>
#include <string_view>

#include "base/enum_names.h"

namespace bk {

// Every entry's name is its value's name and parses back to that value,
// names are not repeated, and none of `strangers` parses.
template <class E, size_t N>
void ExpectNamesRoundTrip(const EnumNames<E, N>& names, std::initializer_list<std::string_view> strangers) {
  for (const auto& [value, name] : names.entries) {
    EXPECT_EQ(names.Name(value), name);
    EXPECT_EQ(names.Parse(name), value) << name;
    int same = 0;
    for (const auto& other : names.entries) same += other.second == name;
    EXPECT_EQ(same, 1) << name;
  }
  for (std::string_view s : strangers) EXPECT_FALSE(names.Parse(s)) << s;
}

}  // namespace bk
