#include "surface/text.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace bk::surface
