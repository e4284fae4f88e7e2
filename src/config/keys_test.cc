#include "config/keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "config/config.h"

namespace bk::config {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

template <class T>
bool Same(const T& a, const T& b) {
  return a == b;
}
// Blackouts have no equality; every default list is empty.
bool Same(const std::vector<engine::Blackout>& a, const std::vector<engine::Blackout>& b) {
  return a.empty() && b.empty();
}

// Config's member initialisers serve tests that build a Config by hand; they
// must say what the table says.
TEST(KeysTest, ConfigStartsAtTheDeclaredDefaults) {
  for (const auto& k : Keys()) {
    if (k.default_text == "detected") continue;
    Config declared, built;
    ASSERT_TRUE(ApplyKey(k, json::parse(k.default_text), declared).has_value()) << k.name;
    EXPECT_TRUE(std::visit([&](auto field) { return Same(field(declared), field(built)); }, k.slot))
        << k.name;
  }
}

TEST(KeysTest, NamesAreUniqueAndFound) {
  std::set<std::string_view> names;
  for (const auto& k : Keys()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name;
    EXPECT_EQ(FindKey(k.name), &k);
    EXPECT_FALSE(k.doc.empty()) << k.name;
  }
  EXPECT_EQ(FindKey("slot_minute"), nullptr);
  EXPECT_EQ(Suggest("slot_minute"), " (did you mean slot_minutes?)");
  EXPECT_EQ(Suggest("completely_unrelated_setting"), "");
}

TEST(KeysTest, ValuesLandInTheirTypedFields) {
  Config c;
  ASSERT_TRUE(ApplyKey(*FindKey("queue_search_hours"), json("24"), c).has_value());
  EXPECT_EQ(c.policy.queue_search, 24 * engine::kHour);
  ASSERT_TRUE(ApplyKey(*FindKey("worker_max_parallel"), json(8), c).has_value());
  EXPECT_EQ(c.worker.max_parallel, 8);
  ASSERT_TRUE(ApplyKey(*FindKey("worker_live_guard"), json("off"), c).has_value());
  EXPECT_FALSE(c.worker.live_guard);
  ASSERT_TRUE(ApplyKey(*FindKey("host_ram_mb"), json("2g"), c).has_value());
  EXPECT_EQ(c.policy.host_ram_mb, std::optional<int64_t>(2048));
  ASSERT_TRUE(ApplyKey(*FindKey("host_ram_mb"), json(), c).has_value());
  EXPECT_FALSE(c.policy.host_ram_mb.has_value());
  c.gpu_count_detected = true;
  ASSERT_TRUE(ApplyKey(*FindKey("gpu_count"), json(3), c).has_value());
  EXPECT_FALSE(c.gpu_count_detected);
  EXPECT_EQ(ApplyKey(*FindKey("worker_recovery_grace_seconds"), json(0.01), c).error().message,
            "worker_recovery_grace_seconds must be between 0.05 and 86400");
  EXPECT_EQ(ApplyKey(*FindKey("job_log_max_mb"), json(-1), c).error().message,
            "job_log_max_mb must be between 0 and 1048576");
}

TEST(KeysTest, ChoiceKeysTakeOneOfTheirWords) {
  Config c;
  EXPECT_EQ(c.usage_visibility, "self");
  ASSERT_TRUE(ApplyKey(*FindKey("usage_visibility"), json(" Lab "), c).has_value());
  EXPECT_EQ(c.usage_visibility, "lab");
  EXPECT_EQ(ApplyKey(*FindKey("usage_visibility"), json("everyone"), c).error().message,
            "usage_visibility must be one of: self, lab");
  EXPECT_EQ(ApplyKey(*FindKey("usage_visibility"), json(1), c).error().message,
            "usage_visibility must be one of: self, lab");
}

TEST(KeysTest, TheAdminGroupIsAGroupNameOrNone) {
  Config c;
  EXPECT_EQ(c.admin_group, "");
  ASSERT_TRUE(ApplyKey(*FindKey("admin_group"), json(" gpu-admins "), c).has_value());
  EXPECT_EQ(c.admin_group, "gpu-admins");
  ASSERT_TRUE(ApplyKey(*FindKey("admin_group"), json(nullptr), c).has_value());
  EXPECT_EQ(c.admin_group, "");
  const std::string bad = "admin_group must be a group name (letters, digits, _ . -, at most 32) or \"\"";
  for (const json& v : {json("a b"), json("-x"), json(std::string(33, 'g')), json(7), json("x;y")})
    EXPECT_EQ(ApplyKey(*FindKey("admin_group"), v, c).error().message, bad) << v.dump();
}

TEST(KeysTest, RowsDocumentEveryKeyOnce) {
  auto deployment = KeyRows(KeyScope::kDeployment);
  auto user = KeyRows(KeyScope::kUser);
  EXPECT_EQ(deployment.size() + user.size(), Keys().size());
  EXPECT_EQ(
      deployment[1],
      "| `slot_minutes` | 5 | `BK_SLOT_MINUTES` | booking slot: starts and durations are multiples of it. "
      "**Bound** (as `granularity_seconds`) | 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60 |");
  EXPECT_THAT(deployment[6], HasSubstr("| `booking_blackouts` | `[]` | `BK_BOOKING_BLACKOUTS` (JSON) |"));
  EXPECT_EQ(user[0],
            "| `worker_poll_seconds` | 1 | `BK_WORKER_POLL_SECONDS` | seconds between the worker's checks "
            "(`bk w --poll` overrides) | 0.1-3600 |");
  EXPECT_THAT(KeyRows(KeyScope::kDeployment)[11], HasSubstr("| null (off) | `BK_HOST_CPUS` |"));
  EXPECT_THAT(KeyRows(KeyScope::kDeployment)[11], HasSubstr("| 1-1000000, or null |"));
}

}  // namespace
}  // namespace bk::config
