#include "cli/command_tree.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <set>

#include "base/env_testing.h"
#include "base/temp_dir_testing.h"
#include "cli/context.h"
#include "cli/help.h"

namespace bk::cli {
namespace {

// Every node below the top level, with the words that name it.
void Walk(const std::vector<CommandNode>& nodes, std::vector<std::string> words,
          const std::function<void(const CommandNode&, const std::vector<std::string>&)>& visit) {
  for (const auto& n : nodes) {
    std::vector<std::string> here = words;
    here.push_back(n.name);
    visit(n, here);
    Walk(n.subcommands, here, visit);
  }
}

TEST(CommandTreeTest, NamesExactlyTheWordsBkDispatches) {
  std::set<std::string> tree;
  for (const auto& n : CommandTree()) {
    EXPECT_TRUE(tree.insert(n.name).second) << n.name << " twice";
    for (const auto& a : n.aliases) EXPECT_TRUE(tree.insert(a).second) << a << " twice";
  }
  std::vector<std::string> names = CommandNames();
  std::set<std::string> dispatched(names.begin(), names.end());
  for (const auto& w : dispatched)
    EXPECT_TRUE(tree.contains(w)) << "bk " << w << " is missing from the command tree";
  for (const auto& w : tree)
    EXPECT_TRUE(dispatched.contains(w)) << "bk " << w << " is in the tree but not a command";
}

TEST(CommandTreeTest, EveryTopLevelCommandSitsInASectionOfTheHelp) {
  std::string help = MainHelp(true);
  for (const auto& g : CommandGroups()) EXPECT_NE(help.find("\n" + g), std::string::npos) << g;
  for (const auto& n : CommandTree()) {
    EXPECT_NE(std::ranges::find(CommandGroups(), n.group), CommandGroups().end()) << n.name;
    EXPECT_FALSE(n.summary.empty()) << n.name;
  }
}

TEST(CommandTreeTest, SubcommandWordsAreUniqueAndSummarised) {
  Walk(CommandTree(), {}, [](const CommandNode& n, const std::vector<std::string>& words) {
    EXPECT_FALSE(n.summary.empty()) << words.back();
    std::set<std::string> seen;
    for (const auto& s : n.subcommands) {
      EXPECT_TRUE(seen.insert(s.name).second) << s.name;
      for (const auto& a : s.aliases) EXPECT_TRUE(seen.insert(a).second) << a;
    }
  });
}

TEST(CommandTreeTest, FindsCommandsByAliasAndStopsAtTheFirstOtherWord) {
  size_t consumed = 0;
  const CommandNode* n = FindCommand({"admin", "data", "verify", "/tmp/x.db"}, &consumed);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->name, "verify");
  EXPECT_EQ(consumed, 3u);
  n = FindCommand({"c", "rec", "1"}, &consumed);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->name, "recommend");
  EXPECT_EQ(consumed, 2u);
  EXPECT_EQ(FindCommand({"nonsense"}, &consumed), nullptr);
  EXPECT_EQ(consumed, 0u);
}

// Every command that parses options does so through an ArgSpec that Describe
// reads; its options all say what they do. The walk runs nothing: a home
// directory of its own stays empty.
TEST(CommandTreeTest, DescribeReadsEveryLeafsOptionsAndWritesNothing) {
  TempDir home("bk-describe");
  SavedEnv saved_home("HOME"), saved_data("BK_DATA_DIR"), saved_xdg("XDG_CONFIG_HOME");
  setenv("HOME", home.path().c_str(), 1);
  unsetenv("BK_DATA_DIR");
  unsetenv("XDG_CONFIG_HOME");
  size_t leaves = 0, described = 0;
  Walk(CommandTree(), {}, [&](const CommandNode& n, const std::vector<std::string>& words) {
    if (!n.subcommands.empty()) return;
    ++leaves;
    std::vector<SpecInfo> specs = Describe(words);
    if (specs.empty()) {
      ADD_FAILURE() << "nothing describes bk " << ::testing::PrintToString(words);
      return;
    }
    ++described;
    for (const auto& spec : specs) {
      EXPECT_TRUE(spec.prog.starts_with("bk")) << spec.prog;
      EXPECT_FALSE(spec.description.empty()) << spec.prog;
      for (const auto& o : spec.options) {
        EXPECT_FALSE(o.help.empty()) << spec.prog << " " << o.names.front() << " has no help";
        EXPECT_FALSE(o.names.empty()) << spec.prog;
      }
    }
  });
  EXPECT_EQ(described, leaves) << "a command without an ArgSpec cannot be completed or documented";
  EXPECT_TRUE(std::filesystem::is_empty(home.path()));
}

TEST(CommandTreeTest, DescribeSeesTheBookingOptions) {
  std::vector<SpecInfo> specs = Describe({"book"});
  ASSERT_FALSE(specs.empty());
  bool gpu = false, count = false;
  for (const auto& o : specs.back().options) {
    gpu |= std::ranges::find(o.names, "--gpu") != o.names.end() && o.metavar == "LIST";
    count |= o.positional && o.names.front() == "count" && o.needed;
  }
  EXPECT_TRUE(gpu);
  EXPECT_TRUE(count);
}

}  // namespace
}  // namespace bk::cli
