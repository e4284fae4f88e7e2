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

}  // namespace
}  // namespace bk::engine
