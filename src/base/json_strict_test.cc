#include "base/json_strict.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace bk {
namespace {

TEST(StrictJsonTest, ParsesOrdinaryDocuments) {
  auto j = ParseStrictJson(R"({"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]})");
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ((*j)["b"]["a"], 2);
  EXPECT_EQ((*j)["c"][1]["a"], 4);
}

TEST(StrictJsonTest, RefusesADuplicateKeyAtAnyDepth) {
  for (std::string_view text :
       {R"({"a":1,"a":2})", R"({"x":{"k":1,"k":1}})", R"([{"ok":1},{"k":1,"j":2,"k":3}])"}) {
    auto j = ParseStrictJson(text);
    ASSERT_FALSE(j.has_value()) << text;
    EXPECT_EQ(j.error().problem, JsonProblem::kDuplicate) << text;
  }
  EXPECT_EQ(ParseStrictJson(R"({"gpu_count":4,"gpu_count":8})").error().Phrase(),
            "names key \"gpu_count\" twice; keep one");
}

TEST(StrictJsonTest, SameKeyInSiblingObjectsIsFine) {
  EXPECT_TRUE(ParseStrictJson(R"({"a":{"k":1},"b":{"k":2}})").has_value());
  EXPECT_TRUE(ParseStrictJson(R"([{"k":1},{"k":2}])").has_value());
}

TEST(StrictJsonTest, RefusesDeepNesting) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  auto j = ParseStrictJson(deep);
  ASSERT_FALSE(j.has_value());
  EXPECT_EQ(j.error().problem, JsonProblem::kTooDeep);
  EXPECT_TRUE(ParseStrictJson(std::string(10, '[') + std::string(10, ']')).has_value());
}

TEST(StrictJsonTest, SyntaxErrorsSayWhere) {
  auto j = ParseStrictJson("{\"a\":}");
  ASSERT_FALSE(j.has_value());
  EXPECT_EQ(j.error().problem, JsonProblem::kSyntax);
  EXPECT_EQ(j.error().Phrase().rfind("is not valid JSON (parse error at line 1, column 6: syntax error", 0),
            0u)
      << j.error().Phrase();
}

}  // namespace
}  // namespace bk
