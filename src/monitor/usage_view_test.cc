#include "monitor/usage_view.h"

#include <gtest/gtest.h>

namespace bk::monitor {
namespace {

UsageQuery Query(UsageKind kind, std::optional<uint32_t> uid = std::nullopt) {
  UsageQuery q;
  q.kind = kind;
  q.uid = uid;
  return q;
}

TEST(UsageVisibleToTest, SelfNarrowsAnOrdinaryUsersRowsToTheirOwn) {
  for (UsageKind kind : {UsageKind::kUsers, UsageKind::kEvents, UsageKind::kSamples}) {
    auto q = UsageVisibleTo(Query(kind), "self", 1001, false);
    ASSERT_TRUE(q.has_value());
    EXPECT_EQ(q->uid, 1001u);
    EXPECT_TRUE(q->own_rows_only);
    // Asking for oneself by name is the same; for someone else, refused naming the setting.
    EXPECT_TRUE(UsageVisibleTo(Query(kind, 1001), "self", 1001, false).has_value());
    auto other = UsageVisibleTo(Query(kind, 1002), "self", 1001, false);
    ASSERT_FALSE(other.has_value());
    EXPECT_EQ(other.error().kind, ErrorKind::kPermission);
    EXPECT_NE(other.error().message.find("usage_visibility is self"), std::string::npos);
  }
}

TEST(UsageVisibleToTest, AdministratorsAndLabSeeEveryone) {
  auto admin = UsageVisibleTo(Query(UsageKind::kUsers), "self", 0, true);
  ASSERT_TRUE(admin.has_value());
  EXPECT_FALSE(admin->uid.has_value());
  EXPECT_FALSE(admin->own_rows_only);
  auto lab = UsageVisibleTo(Query(UsageKind::kEvents, 1002), "lab", 1001, false);
  ASSERT_TRUE(lab.has_value());
  EXPECT_EQ(lab->uid, 1002u);
  EXPECT_FALSE(lab->own_rows_only);
  // The store's own description is nobody's use.
  auto storage = UsageVisibleTo(Query(UsageKind::kStorage), "self", 1001, false);
  ASSERT_TRUE(storage.has_value());
  EXPECT_FALSE(storage->own_rows_only);
}

}  // namespace
}  // namespace bk::monitor
