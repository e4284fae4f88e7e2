#include "engine/reservation.h"

#include <gtest/gtest.h>

namespace bk::engine {
namespace {

TEST(StatusNames, EveryStatusRoundTripsAndStrangersAreRefused) {
  EXPECT_EQ(kStatusNames.entries.size(), 3u);
  for (const auto& [status, name] : kStatusNames.entries) {
    EXPECT_EQ(StatusName(status), name);
    EXPECT_EQ(ParseStatus(name), status);
  }
  EXPECT_EQ(StatusName(Status::kCancelled), "cancelled");
  EXPECT_FALSE(ParseStatus("Active"));
  EXPECT_FALSE(ParseStatus("canceled"));
  EXPECT_FALSE(ParseStatus(""));
}

TEST(CancelKindNames, EveryKindRoundTripsAndStrangersAreRefused) {
  EXPECT_EQ(kCancelKindNames.entries.size(), 3u);
  for (const auto& [kind, name] : kCancelKindNames.entries) {
    EXPECT_EQ(kCancelKindNames.Name(kind), name);
    EXPECT_EQ(kCancelKindNames.Parse(name), kind);
  }
  EXPECT_EQ(kCancelKindNames.Name(CancelKind::kAdministrator), "administrator");
  EXPECT_FALSE(kCancelKindNames.Parse("admin"));
  EXPECT_FALSE(kCancelKindNames.Parse("reclaim"));  // the event's action, not the kind
  EXPECT_FALSE(kCancelKindNames.Parse(""));
}

}  // namespace
}  // namespace bk::engine
