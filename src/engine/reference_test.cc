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

TEST(PickedTest, ANumberPicksThatItem) {
  std::vector<std::string> ids = {"aa11", "ab22", "bb33"};
  auto pick = ParseListRef("2", ids.size(), "job", "bk j");
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ(Picked(*pick, ids, [](const std::string& s) { return s; }), std::vector<std::string>{"ab22"});
}

TEST(PickedTest, APrefixPicksEveryItemItStarts) {
  std::vector<std::string> ids = {"aa11", "ab22", "bb33"};
  auto id = [](const std::string& s) { return s; };
  auto a = ParseListRef(" a ", ids.size(), "job", "bk j");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(Picked(*a, ids, id), (std::vector<std::string>{"aa11", "ab22"}));
  auto none = ParseListRef("c", ids.size(), "job", "bk j");
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(Picked(*none, ids, id).empty());
}

}  // namespace
}  // namespace bk::engine
