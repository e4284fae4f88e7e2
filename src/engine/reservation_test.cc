#include "engine/reservation.h"

#include <gtest/gtest.h>

#include "base/enum_names_testing.h"

namespace bk::engine {
namespace {

TEST(StatusNames, EveryStatusRoundTripsAndStrangersAreRefused) {
  EXPECT_EQ(kStatusNames.entries.size(), 3u);
  EXPECT_EQ(StatusName(Status::kCancelled), "cancelled");
  EXPECT_EQ(ParseStatus("expired"), Status::kExpired);
  ExpectNamesRoundTrip(kStatusNames, {"Active", "canceled", ""});
}

TEST(CancelKindNames, EveryKindRoundTripsAndStrangersAreRefused) {
  EXPECT_EQ(kCancelKindNames.entries.size(), 4u);
  EXPECT_EQ(kCancelKindNames.Name(CancelKind::kAdministrator), "administrator");
  EXPECT_EQ(kCancelKindNames.Name(CancelKind::kReleased), "released");
  // "reclaim" is the event's action, not the kind.
  ExpectNamesRoundTrip(kCancelKindNames, {"admin", "reclaim", ""});
}

TEST(PeakShareUnits, CountsTheBusiestInstantNotTheSum) {
  auto shared = [](Seconds start, Seconds end, int units) {
    Reservation r;
    r.start = start, r.end = end, r.share_units = units;
    return r;
  };
  // In the cell [0, 600): one slot until 300, then two; the first ends at 300.
  Reservation a = shared(-300, 300, 1), b = shared(300, 900, 1), c = shared(450, 900, 1);
  EXPECT_EQ(PeakShareUnits({&a, &b}, 0), 1);   // back to back: never both
  EXPECT_EQ(PeakShareUnits({&a, &b, &c}, 0), 2);
  Reservation wide = shared(0, 600, 2);
  EXPECT_EQ(PeakShareUnits({&wide, &c}, 0), 3);
  EXPECT_EQ(PeakShareUnits({}, 0), 0);
}

}  // namespace
}  // namespace bk::engine
