#include "surface/text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

namespace bk::surface {
namespace {

TEST(DisplayWidthTest, CountsCodePointsNotBytes) {
  EXPECT_EQ(DisplayWidth("GPU"), 3);
  EXPECT_EQ(DisplayWidth("\u00b7\u00b7"), 2);
  EXPECT_EQ(DisplayWidth("H100\u2026"), 5);
}

TEST(FitWordsTest, KeepsWhatFits) {
  EXPECT_EQ(FitWords("NVIDIA H100 80GB HBM3", 21), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(FitWords("NVIDIA H100 80GB HBM3", 40), "NVIDIA H100 80GB HBM3");
}

TEST(FitWordsTest, CutsAfterAWordWithAnEllipsis) {
  EXPECT_EQ(FitWords("NVIDIA H100 80GB HBM3", 20), "NVIDIA H100 80GB\u2026");
  EXPECT_EQ(FitWords("NVIDIA H100 80GB HBM3", 14), "NVIDIA H100\u2026");
  EXPECT_LE(DisplayWidth(FitWords("NVIDIA H100 80GB HBM3", 14)), 14);
}

TEST(FitWordsTest, CutsAFirstWordTooLongInside) {
  EXPECT_EQ(FitWords("NVIDIA-A100-SXM4-80GB", 10), "NVIDIA-A1\u2026");
  EXPECT_EQ(FitWords("abc", 1), "\u2026");
  EXPECT_EQ(FitWords("abc", 0), "");
}

TEST(AlignRowsTest, EveryColumnAsWideAsItsWidestCell) {
  EXPECT_EQ(AlignRows({{"1", "shared", "slots", "1/2", "GPU", "0,3"},
                       {"12", "exclusive", "slots", "all", "GPU", "1"}},
                      "rlllll", "  "),
            "   1 shared    slots 1/2 GPU 0,3\n"
            "  12 exclusive slots all GPU 1\n");
}

TEST(AlignRowsTest, RightAlignsAndCountsCodePoints) {
  EXPECT_EQ(AlignRows({{"\u00b7\u00b7", "5"}, {"abc", "10"}}, "lr", ""), "\u00b7\u00b7   5\nabc 10\n");
}

TEST(LocalTimesTest, WritesUtcInstantsInTheZone) {
  FixedZone shanghai(8 * 3600);
  EXPECT_EQ(LocalTimes("nearest available: GPU=0 2026-11-29T20:45:00Z -> 2026-11-29T21:45:00Z", shanghai),
            "nearest available: GPU=0 2026-11-30 04:45 +0800 -> 2026-11-30 05:45 +0800");
  EXPECT_EQ(LocalTimes("sample 2026-11-29T18:49:07.250+00:00: gpus=2", FixedZone(-5 * 3600)),
            "sample 2026-11-29 13:49:07 -0500: gpus=2");
}

TEST(LocalTimesTest, LeavesEverythingElse) {
  FixedZone z(3600);
  for (const char* text :
       {"no time here", "2026-11-29T18:49:00+08:00 has an offset", "2026-11-29 18:49",
        "x2026-11-29T18:49:00Z glued to a word", "2026-13-40T25:00:00Z is no date", "2026-11-29T18:49:00"})
    EXPECT_EQ(LocalTimes(text, z), text);
}

TEST(UnreadNoticeLineTest, DescribesTheNewest) {
  store::Notification n;
  n.reservation_id = "3f2a19c0-0000-4000-8000-000000000000";
  n.type = "reservation-admin-cancelled";
  n.reason = "GPU maintenance";
  EXPECT_EQ(UnreadNoticeLine({1, {n}}),
            "notice: 1 unread (admin cancelled 3f2a19c0: GPU maintenance); read it with `bk n`");
  n.type = "reservation-reclaimed";
  n.reason = std::string(80, 'x');
  EXPECT_EQ(UnreadNoticeLine({2, {n}}),
            "notice: 2 unread (reclaimed 3f2a19c0: " + std::string(57, 'x') + "...); read them with `bk n`");
  EXPECT_EQ(UnreadNoticeLine(service::UnreadNotifications{}), "");
}

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
