#include "engine/types.h"

#include <gtest/gtest.h>

#include <optional>
#include <string_view>

namespace bk::engine {
namespace {

TEST(ModeTest, Names) {
  EXPECT_EQ(ModeName(Mode::kShared), "shared");
  EXPECT_EQ(ModeName(Mode::kExclusive), "exclusive");
}

TEST(ModeTest, ParsesEveryAliasCaseInsensitively) {
  struct Case {
    std::string_view text;
    std::optional<Mode> mode;
  };
  const Case cases[] = {
      {"s", Mode::kShared},
      {"shared", Mode::kShared},
      {"auto", Mode::kShared},
      {"S", Mode::kShared},
      {"Shared", Mode::kShared},
      {"AUTO", Mode::kShared},
      {" shared ", Mode::kShared},
      {"x", Mode::kExclusive},
      {"exclusive", Mode::kExclusive},
      {"X", Mode::kExclusive},
      {"EXCLUSIVE", Mode::kExclusive},
      {"\texclusive\n", Mode::kExclusive},
      {"", std::nullopt},
      {"e", std::nullopt},
      {"excl", std::nullopt},
      {"share", std::nullopt},
      {"sharedx", std::nullopt},
      {"s x", std::nullopt},
      {"exclusively", std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(ParseMode(c.text), c.mode) << "'" << c.text << "'";
}

TEST(ModeTest, NameRoundTrips) {
  for (Mode m : {Mode::kShared, Mode::kExclusive}) EXPECT_EQ(ParseMode(ModeName(m)), m);
}

TEST(IntervalTest, HalfOpenOverlap) {
  const Interval i{100, 200};
  EXPECT_TRUE(i.Overlaps(150, 160));
  EXPECT_TRUE(i.Overlaps(50, 101));
  EXPECT_TRUE(i.Overlaps(199, 300));
  EXPECT_TRUE(i.Overlaps(0, 1000));
  EXPECT_FALSE(i.Overlaps(200, 300));  // touching at the end
  EXPECT_FALSE(i.Overlaps(0, 100));    // touching at the start
  EXPECT_FALSE(i.Overlaps(300, 400));
  EXPECT_EQ(i, (Interval{100, 200}));
  EXPECT_NE(i, (Interval{100, 201}));
}

}  // namespace
}  // namespace bk::engine
