#include "shell/rc_block.h"

#include <gtest/gtest.h>

namespace bk::shell {
namespace {

TEST(RcBlockTest, RunsTheHookBoundedInInteractiveShellsOnly) {
  std::string b = RcBlock("/opt/it's/bk");
  EXPECT_TRUE(b.starts_with(std::string(kRcBegin) + "\n"));
  EXPECT_TRUE(b.ends_with(std::string(kRcEnd) + "\n"));
  EXPECT_NE(
      b.find("case $- in\n  *i*) timeout -k 0.2s 1s '/opt/it'\\''s/bk' login --hook 2>/dev/null || : ;;\n"
             "esac\n"),
      std::string::npos);
}

TEST(RcBlockTest, AddsOnceAndKeepsEveryOtherLine) {
  std::string block = RcBlock("/usr/bin/bk");
  std::string rc = "export A=1\nalias ll='ls -l'";  // no final newline
  std::string with = WithRcBlock(rc, block);
  EXPECT_EQ(with, rc + "\n" + block);
  EXPECT_TRUE(HasRcBlock(with));
  EXPECT_EQ(WithRcBlock(with, block), with);  // idempotent
  EXPECT_EQ(WithoutRcBlock(with), rc + "\n");
  EXPECT_EQ(WithRcBlock("", block), block);
  EXPECT_FALSE(HasRcBlock(rc));
  EXPECT_EQ(WithoutRcBlock(rc), rc);
}

TEST(RcBlockTest, ReplacesInPlaceAndRemovesOnlyTheBlock) {
  std::string old_block = RcBlock("/old/bk"), new_block = RcBlock("/new/bk");
  std::string rc = "before\n" + old_block + "after\n";
  EXPECT_EQ(WithRcBlock(rc, new_block), "before\n" + new_block + "after\n");
  EXPECT_EQ(WithoutRcBlock(rc), "before\nafter\n");
  // A marker inside another line is no marker.
  std::string quoted = "echo '" + std::string(kRcBegin) + "'\n";
  EXPECT_FALSE(HasRcBlock(quoted));
  // An end marker lost by hand: only the begin line goes.
  std::string broken = "a\n" + std::string(kRcBegin) + "\nb\n";
  EXPECT_EQ(WithoutRcBlock(broken), "a\nb\n");
}

TEST(RcBlockTest, ZshReadsZshrcEveryOtherShellBashrc) {
  EXPECT_EQ(DefaultRcFile("/usr/bin/zsh", "/home/a"), "/home/a/.zshrc");
  EXPECT_EQ(DefaultRcFile("/bin/bash", "/home/a"), "/home/a/.bashrc");
  EXPECT_EQ(DefaultRcFile("", "/home/a"), "/home/a/.bashrc");
}

}  // namespace
}  // namespace bk::shell
