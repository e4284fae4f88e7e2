#include "cli/line_reader.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace bk::cli {
namespace {

config::EnvFn Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(HistoryPathTest, UnderXdgStateHomeWhenAbsolute) {
  EXPECT_EQ(HistoryPath(Env({{"XDG_STATE_HOME", "/state"}})), "/state/bk/history");
}

TEST(HistoryPathTest, ElseUnderTheHomeDirectory) {
  std::string home_based = HistoryPath(Env({}));
  EXPECT_TRUE(home_based.ends_with("/.local/state/bk/history")) << home_based;
  // A relative XDG_STATE_HOME is ignored, as the XDG specification says.
  EXPECT_EQ(HistoryPath(Env({{"XDG_STATE_HOME", "state"}})), home_based);
}

TEST(PlainLineReaderTest, ReadsLinesAndShowsThePrompt) {
  std::istringstream in("l\nst --json\n");
  char* printed = nullptr;
  size_t size = 0;
  FILE* out = open_memstream(&printed, &size);
  auto reader = PlainLineReader(in, out);
  EXPECT_EQ(reader->Read("bk> "), "l");
  EXPECT_EQ(reader->Read("bk> "), "st --json");
  EXPECT_EQ(reader->Read("bk> "), std::nullopt);
  std::fclose(out);
  EXPECT_EQ(std::string(printed, size), "bk> bk> bk> ");
  free(printed);
}

}  // namespace
}  // namespace bk::cli
