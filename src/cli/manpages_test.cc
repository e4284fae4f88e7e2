#include "cli/manpages.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <regex>
#include <tuple>

#include "cli/command_tree.h"
#include "config/keys.h"
#include "rpc/methods.h"

namespace bk::cli {
namespace {

// The page as a reader sees it: fonts and escapes gone.
std::string Plain(std::string text) {
  text = std::regex_replace(text, std::regex(R"(\\f[BIRP])"), "");
  text = std::regex_replace(text, std::regex(R"(\\-)"), "-");
  text = std::regex_replace(text, std::regex(R"(\\&)"), "");
  return std::regex_replace(text, std::regex(R"(\\e)"), "\\");
}

class ManPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto& p : ManPages("2026-12-02")) pages_[p.file] = p.text;
  }
  std::string Page(const std::string& file) { return Plain(pages_.at(file)); }
  std::map<std::string, std::string> pages_;
};

TEST_F(ManPagesTest, FivePagesEachWithItsTitleLine) {
  for (const char* f : {"bk.1", "bk-server.1", "bk-admin.8", "gpubk-config.5", "gpubk-protocol.7"}) {
    ASSERT_TRUE(pages_.contains(f)) << f;
    EXPECT_NE(pages_[f].find("\n.TH "), std::string::npos) << f;
    EXPECT_NE(pages_[f].find("\"2026-12-02\""), std::string::npos) << f;
    EXPECT_NE(pages_[f].find(".SH NAME\n"), std::string::npos) << f;
  }
}

// Every command word (aliases too) and every option of every command is in
// the page that documents it: bk-server(1) for `bk server`, bk-admin(8) for
// `bk admin`, bk(1) for the rest.
TEST_F(ManPagesTest, EveryCommandAndOptionIsDocumented) {
  std::function<void(const CommandNode&, std::vector<std::string>, const std::string&)> check =
      [&](const CommandNode& n, std::vector<std::string> words, const std::string& page) {
        words.push_back(n.name);
        std::string heading = "bk";
        for (const auto& w : words) heading += " " + w;
        std::string text = Page(page);
        EXPECT_NE(text.find(heading), std::string::npos) << heading << " not in " << page;
        for (const auto& a : n.aliases) EXPECT_NE(text.find(a), std::string::npos) << a << " not in " << page;
        if (n.subcommands.empty())
          for (const auto& spec : Describe(words))
            for (const auto& o : spec.options)
              for (const auto& name : o.names) {
                std::string shown = name;
                if (o.positional)
                  for (auto& c : shown) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                EXPECT_NE(text.find(shown), std::string::npos)
                    << heading << " " << shown << " not in " << page;
                std::string help = o.help.substr(0, 20);
                std::erase(help, '`');
                EXPECT_NE(text.find(help), std::string::npos) << heading << " " << shown;
              }
        for (const auto& s : n.subcommands) check(s, words, page);
      };
  for (const auto& n : CommandTree()) {
    std::string page = n.name == "server" ? "bk-server.1" : n.name == "admin" ? "bk-admin.8" : "bk.1";
    check(n, {}, page);
    EXPECT_NE(Page("bk.1").find("bk " + n.name), std::string::npos) << n.name;
  }
}

TEST_F(ManPagesTest, TheOverviewIsBkHelp) {
  std::string text = Page("bk.1");
  for (const char* line : {"START HERE", "bk renew REF 30m", "TIME AND POLICY", "SEVERAL HOSTS"})
    EXPECT_NE(text.find(line), std::string::npos) << line;
}

TEST_F(ManPagesTest, EveryConfigurationKeyWithItsDefaultRangeAndVariable) {
  std::string text = Page("gpubk-config.5");
  for (const auto& k : config::Keys()) {
    config::KeyDoc d = config::Document(k);
    EXPECT_FALSE(k.doc.empty()) << k.name;
    EXPECT_NE(text.find("\n" + std::string(k.name) + "\n"), std::string::npos) << k.name;
    EXPECT_NE(text.find("Environment: " + d.env), std::string::npos) << k.name;
    std::string def = d.default_value;
    std::erase(def, '`');
    EXPECT_NE(text.find("Default: " + def + "."), std::string::npos) << k.name;
    EXPECT_NE(text.find("Accepted: "), std::string::npos) << k.name;
  }
  for (const auto& v : config::EnvironmentVariables())
    EXPECT_NE(text.find(std::string(v.name)), std::string::npos) << v.name;
}

TEST_F(ManPagesTest, EveryProtocolMethod) {
  std::string text = Page("gpubk-protocol.7");
  std::vector<std::string> names;
  std::apply([&](const auto&... m) { (names.emplace_back(m.name), ...); }, rpc::methods::kAll);
  EXPECT_GT(names.size(), 20u);
  for (const auto& name : names) EXPECT_NE(text.find(name + "\n"), std::string::npos) << name;
  EXPECT_NE(text.find("SO_PEERCRED"), std::string::npos);
}

TEST_F(ManPagesTest, NoLineStartsWithAStrayControlCharacter) {
  for (const auto& [file, text] : pages_) {
    std::regex macro(R"(^(\.(TH|SH|SS|TP|PP|RS|RE|B|br|nf|fi|PD|\\")( .*)?|[^.'].*|)$)");
    size_t at = 0;
    while (at < text.size()) {
      size_t end = text.find('\n', at);
      std::string line = text.substr(at, end - at);
      EXPECT_TRUE(std::regex_match(line, macro)) << file << ": " << line;
      at = end + 1;
    }
  }
}

}  // namespace
}  // namespace bk::cli
