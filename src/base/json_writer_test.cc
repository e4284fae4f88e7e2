#include "base/json_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

namespace bk {
namespace {

using json = nlohmann::json;

TEST(JsonWriterTest, WritesWhatNlohmannWritesForTheSameDocument) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("a").Int(-3);
  w.Key("b").BeginArray().Int(1).String("x\"y\\z").Null().Bool(true).BeginObject().EndObject().EndArray();
  w.Key("c").BeginArray().EndArray();
  w.Key("d").Raw(R"({"k":[1,2]})");
  w.EndObject();
  json want = {{"a", -3},
               {"b", {1, "x\"y\\z", nullptr, true, json::object()}},
               {"c", json::array()},
               {"d", {{"k", {1, 2}}}}};
  EXPECT_EQ(out, want.dump());
}

// Random strings of control characters, ASCII and multi-byte UTF-8 escape
// exactly as nlohmann's dump escapes them.
TEST(JsonWriterTest, EscapesStringsLikeNlohmann) {
  std::mt19937 rng(11);
  const std::vector<std::string> pieces = {
      "\x01", "\x1f", "\n", "\t", "\b",   "\f",       "\r",           "\"",
      "\\",   "/",    "a",  " ",  "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
  for (int i = 0; i < 2000; ++i) {
    std::string s;
    for (int n = std::uniform_int_distribution<int>(0, 12)(rng); n > 0; --n)
      s += pieces[std::uniform_int_distribution<size_t>(0, pieces.size() - 1)(rng)];
    std::string out;
    AppendJsonString(out, s);
    EXPECT_EQ(out, json(s).dump()) << i;
  }
}

TEST(JsonWriterTest, InvalidUtf8BecomesTheReplacementCharacter) {
  for (std::string bad : {std::string("\xff"), std::string("a\xc3"), std::string("\xed\xa0\x80"),
                          std::string("\xc0\xaf"), std::string("\xf4\x90\x80\x80")}) {
    std::string out;
    AppendJsonString(out, bad);
    json parsed = json::parse(out);  // throws on invalid JSON or UTF-8
    EXPECT_NE(parsed.get<std::string>().find("\xef\xbf\xbd"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace bk
