#include "base/enum_names.h"

#include <gtest/gtest.h>

namespace bk {
namespace {

enum class Color { kRed, kGreen, kBlue };
constexpr auto kColorNames = MakeEnumNames<Color>(std::pair{Color::kRed, std::string_view("red")},
                                                  std::pair{Color::kGreen, std::string_view("green")});

TEST(EnumNames, NamesAndParsesFromOneTable) {
  EXPECT_EQ(kColorNames.Name(Color::kGreen), "green");
  EXPECT_EQ(kColorNames.Parse("red"), Color::kRed);
  EXPECT_FALSE(kColorNames.Parse("Red"));
  EXPECT_EQ(kColorNames.Name(Color::kBlue), "?");  // missing from the table
  for (const auto& [value, name] : kColorNames.entries) EXPECT_EQ(kColorNames.Parse(name), value);
}

}  // namespace
}  // namespace bk
