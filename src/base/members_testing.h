#pragma once
// For tests: two records compared member by member, with gtest's own message
// for each member that differs.

#include <gtest/gtest.h>

#include <type_traits>

namespace bk {

// EXPECT_EQ on each listed member of a and b (EXPECT_DOUBLE_EQ on a floating
// one); a failure names the member by its place in the list, counting from 1.
template <class S, class... M>
void ExpectSameMembers(const S& a, const S& b, M S::*... members) {
  int n = 0;
  auto one = [&](auto member) {
    ++n;
    if constexpr (std::is_floating_point_v<std::remove_cvref_t<decltype(a.*member)>>)
      EXPECT_DOUBLE_EQ(a.*member, b.*member) << "member #" << n;
    else
      EXPECT_EQ(a.*member, b.*member) << "member #" << n;
  };
  (one(members), ...);
}

}  // namespace bk
