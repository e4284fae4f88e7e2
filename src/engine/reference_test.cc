#include "engine/reference.h"

#include <gtest/gtest.h>

namespace bk::engine {
namespace {

TEST(ListRefTest, NumbersOnTheListPickTheirItem) {
  auto r = ParseListRef(" 3 ", 3, "active reservation", "bk l");
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->is_number);
  EXPECT_EQ(r->index, 2u);
}

TEST(ListRefTest, NumbersOffTheListAreRefusedNotTakenAsPrefixes) {
  for (std::string_view token : {"0", "4", "000004", "999999"}) {
    auto r = ParseListRef(token, 3, "active reservation", "bk l");
    ASSERT_FALSE(r.has_value()) << token;
    EXPECT_EQ(r.error().kind, ErrorKind::kNotFound);
    EXPECT_NE(r.error().message.find("you have 3 active reservations (`bk l` numbers them)"),
              std::string::npos)
        << r.error().message;
  }
}

TEST(ListRefTest, AnEmptyListSaysSo) {
  auto r = ParseListRef("1", 0, "job", "bk j");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("no job number 1: you have no jobs"), std::string::npos)
      << r.error().message;
}

TEST(ListRefTest, LongerDigitTokensAndHexArePrefixes) {
  for (std::string_view token : {"1234567", "4e", "abc", "0ebdf3c3"}) {
    auto r = ParseListRef(token, 3, "active reservation", "bk l");
    ASSERT_TRUE(r.has_value()) << token;
    EXPECT_FALSE(r->is_number) << token;
    EXPECT_EQ(r->prefix, token);
  }
}

}  // namespace
}  // namespace bk::engine
