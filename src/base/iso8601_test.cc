#include "base/iso8601.h"

#include <gtest/gtest.h>

namespace bk {
namespace {

TEST(ScanIso, ReadsDateTimeAndOffsetInBothForms) {
  auto t = ScanIso("2026-11-29T18:49:07+08:00");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->civil, (CivilTime{2026, 11, 29, 18, 49, 7}));
  EXPECT_EQ(t->offset, 8 * 3600);
  auto basic = ScanIso(" 20261129t184907-0530 ");
  ASSERT_TRUE(basic);
  EXPECT_EQ(basic->civil, t->civil);
  EXPECT_EQ(basic->offset, -(5 * 3600 + 30 * 60));
  auto z = ScanIso("2026-11-29 18:49Z");
  ASSERT_TRUE(z);
  EXPECT_EQ(z->offset, 0);
  EXPECT_EQ(CivilToEpoch(z->civil) - *z->offset, 1795978140);
}

TEST(ScanIso, NaiveTimesAndDatesHaveNoOffset) {
  auto t = ScanIso("2026-11-29T18:49:07.123456");
  ASSERT_TRUE(t);
  EXPECT_FALSE(t->offset);
  EXPECT_EQ(t->civil.second, 7);
  auto d = ScanIso("2026-02-28");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->civil, (CivilTime{2026, 2, 28, 0, 0, 0}));
}

TEST(ScanIso, NamesWhatIsWrong) {
  EXPECT_EQ(ScanIso("2026-02-29").error(), IsoError::kDate);
  EXPECT_EQ(ScanIso("2026-11-29T24:00").error(), IsoError::kClock);
  EXPECT_EQ(ScanIso("2026-11-29T18:49+24:00").error(), IsoError::kShape);
  EXPECT_EQ(ScanIso("29/11/2026").error(), IsoError::kShape);
  EXPECT_EQ(ScanIso("2026-11-29T18:49:07.").error(), IsoError::kShape);
  EXPECT_EQ(ScanIso("").error(), IsoError::kShape);
}

}  // namespace
}  // namespace bk
