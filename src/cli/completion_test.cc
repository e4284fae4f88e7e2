#include "cli/completion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace bk::cli {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

class FakeSource : public CompletionSource {
 public:
  int GpuCount() override { return 4; }
  std::vector<std::string> OwnRefs() override {
    ++ref_calls;
    return {"1a2b3c4d", "9f8e7d6c"};
  }
  int ref_calls = 0;
};

std::vector<std::string> Words(std::vector<std::string> line) {
  FakeSource source;
  return Complete(line, source).words;
}

TEST(CompletionTest, CommandWordsByPrefix) {
  EXPECT_THAT(Words({"re"}), AllOf(Contains("renew"), Contains("reset"), Each(StartsWith("re"))));
  EXPECT_THAT(Words({"ren"}), ElementsAre("renew"));
  EXPECT_THAT(Words({"__"}), IsEmpty());  // hidden words stay hidden
  EXPECT_THAT(Words({"gpu-p"}), IsEmpty());
}

TEST(CompletionTest, AnEmptyFirstWordOffersCommandsAndCountsFromThePolicy) {
  std::vector<std::string> w = Words({""});
  EXPECT_THAT(w, AllOf(Contains("st"), Contains("status"), Contains("1"), Contains("4"), Not(Contains("5"))));
}

TEST(CompletionTest, ReferencesOfYourOwnBookingsWhereABookingIsNamed) {
  EXPECT_THAT(Words({"renew", ""}), ElementsAre("1a2b3c4d", "9f8e7d6c"));
  EXPECT_THAT(Words({"d", "9"}), ElementsAre("9f8e7d6c"));
  EXPECT_THAT(Words({"e", ""}), Contains("1a2b3c4d"));
  EXPECT_THAT(Words({"history", ""}), Contains("1a2b3c4d"));
  EXPECT_THAT(Words({"agent", "cancel", ""}), Contains("1a2b3c4d"));
  // The second positional of renew is a duration, not a reference.
  EXPECT_THAT(Words({"renew", "1a2b3c4d", ""}), Contains("30m"));
}

TEST(CompletionTest, NoReferencesWhereTheyAreNotYours) {
  FakeSource source;
  EXPECT_THAT(Complete({"admin", "cancel", ""}, source).words, IsEmpty());
  EXPECT_THAT(Complete({"c", "d", ""}, source).words, IsEmpty());
  EXPECT_THAT(Complete({"st", ""}, source).words, IsEmpty());
  EXPECT_EQ(source.ref_calls, 0);  // and the ledger is not asked
}

TEST(CompletionTest, OptionsOfTheCommandAtHand) {
  EXPECT_THAT(Words({"1", "1h", "--g"}), AllOf(Contains("--gpu"), Each(StartsWith("--g"))));
  EXPECT_THAT(Words({"renew", "--"}), AllOf(Contains("--help"), Contains("--json")));
  EXPECT_THAT(Words({"u", "--si"}), ElementsAre("--since"));
  EXPECT_THAT(Words({"x", "1", "2h", "-"}), AllOf(Contains("--at"), Contains("-t")));
}

TEST(CompletionTest, ValuesFromThePolicyAndTheOptionsOwnHelp) {
  EXPECT_THAT(Words({"1", "1h", "--gpu", ""}), ElementsAre("0", "1", "2", "3"));
  EXPECT_THAT(Words({"x", "2", "1h", "-e", ""}), ElementsAre("0", "1", "2", "3"));
  EXPECT_THAT(Words({"1", ""}), Contains("30m"));
  EXPECT_THAT(Words({"slots", ""}), ElementsAre("1", "2", "3", "4"));
  EXPECT_THAT(Words({"skill", "install", "--agent", ""}), AllOf(Contains("codex"), Contains("claude")));
}

TEST(CompletionTest, SubcommandsAndChoicesOfPositionals) {
  EXPECT_THAT(Words({"admin", ""}), AllOf(Contains("data"), Contains("policy"), Contains("cluster")));
  EXPECT_THAT(Words({"admin", "data", ""}), ElementsAre("import", "verify", "backup", "restore", "clear"));
  EXPECT_THAT(Words({"usage", ""}), AllOf(Contains("me"), Contains("users"), Contains("capabilities")));
  EXPECT_THAT(Words({"shell", ""}), ElementsAre("init", "env"));
  EXPECT_THAT(Words({"shell", "init", ""}), ElementsAre("bash", "zsh"));
  EXPECT_THAT(Words({"completion", ""}), ElementsAre("bash", "zsh", "fish"));
  EXPECT_THAT(Words({"service", "install", ""}), ElementsAre("worker", "monitor"));
  EXPECT_THAT(Words({"c", ""}), AllOf(Contains("rec"), Contains("check")));
  EXPECT_THAT(Words({"c", "2", ""}), Contains("1h"));  // bk c COUNT DURATION books
}

TEST(CompletionTest, PathsAreLeftToTheShell) {
  FakeSource source;
  EXPECT_TRUE(Complete({"admin", "data", "verify", ""}, source).files);
  EXPECT_TRUE(Complete({"run", "1", "30m", "--", "py"}, source).files);
  EXPECT_TRUE(Complete({"service", "install", "worker", "--target-dir", ""}, source).files);
  EXPECT_FALSE(Complete({"st", ""}, source).files);
}

TEST(CompletionTest, UnknownWordsCompleteNothing) {
  EXPECT_THAT(Words({"nonsense", ""}), IsEmpty());
  EXPECT_THAT(Words({"admin", "nonsense", ""}), IsEmpty());
}

TEST(CompletionTest, ScriptsForThreeShells) {
  EXPECT_NE(CompletionScript("bash").find("complete -"), std::string::npos);
  EXPECT_TRUE(CompletionScript("zsh").starts_with("#compdef bk"));
  EXPECT_NE(CompletionScript("fish").find("complete -c bk"), std::string::npos);
  for (const char* s : {"bash", "zsh", "fish"})
    EXPECT_NE(CompletionScript(s).find("bk __complete"), std::string::npos);
  EXPECT_EQ(CompletionScript("tcsh"), "");
}

}  // namespace
}  // namespace bk::cli
