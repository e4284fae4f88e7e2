#include "surface/text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

namespace bk::surface {
namespace {

TEST(ColorTest, ParsesTheThreeModes) {
  EXPECT_EQ(ParseColorMode("auto"), ColorMode::kAuto);
  EXPECT_EQ(ParseColorMode("always"), ColorMode::kAlways);
  EXPECT_EQ(ParseColorMode("never"), ColorMode::kNever);
  EXPECT_EQ(ParseColorMode("yes"), std::nullopt);
  EXPECT_EQ(ParseColorMode(""), std::nullopt);
}

TEST(ColorTest, AlwaysAndNeverIgnoreTheStream) {
  FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(UseColor(fileno(f), ColorMode::kAlways));
  EXPECT_FALSE(UseColor(fileno(f), ColorMode::kNever));
  EXPECT_FALSE(UseColor(fileno(f), ColorMode::kAuto));  // a file is no terminal
  std::fclose(f);
}

TEST(ColorTest, PaintWrapsOnlyWhenOn) {
  EXPECT_EQ(Paint("bk:", Style::kError, true), "\033[1;31mbk:\033[0m");
  EXPECT_EQ(Paint("warning:", Style::kWarning, true), "\033[33mwarning:\033[0m");
  EXPECT_EQ(Paint("created", Style::kGood, true), "\033[32mcreated\033[0m");
  EXPECT_EQ(Paint("bk:", Style::kError, false), "bk:");
}

}  // namespace
}  // namespace bk::surface
