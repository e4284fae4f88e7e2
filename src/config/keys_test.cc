#include "config/keys.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "config/config.h"
#include "engine/limit_fields.h"

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

TEST(KeysTest, FairShareLimitsTakeHoursDaysAndNamedEntries) {
  Config c;
  ASSERT_TRUE(ApplyKey(*FindKey("user_max_gpus"), json("4"), c).has_value());
  ASSERT_TRUE(ApplyKey(*FindKey("user_max_booking_hours"), json(24), c).has_value());
  ASSERT_TRUE(ApplyKey(*FindKey("user_max_horizon_days"), json(7), c).has_value());
  const engine::FairShare& fs = c.policy.fair_share;
  EXPECT_EQ(fs.user.max_gpus, 4);
  EXPECT_EQ(fs.user.max_duration, 24 * engine::kHour);
  EXPECT_EQ(fs.user.max_horizon, 7 * engine::kDay);
  ASSERT_TRUE(ApplyKey(*FindKey("user_max_gpus"), json(), c).has_value());
  EXPECT_EQ(fs.user.max_gpus, std::nullopt);

  // From the environment the value is JSON text; null in a user's entry lifts a limit.
  ASSERT_TRUE(
      ApplyKey(*FindKey("user_limits"),
               json(R"({"alice": {"max_gpus": 8, "max_gpu_hours_7d": null, "max_booking_hours": 2}})"), c)
          .has_value());
  EXPECT_EQ(fs.users.at("alice").max_gpus, 8);
  EXPECT_EQ(fs.users.at("alice").max_gpu_hours_7d, engine::kNoLimit);
  EXPECT_EQ(fs.users.at("alice").max_duration, 2 * engine::kHour);
  ASSERT_TRUE(
      ApplyKey(*FindKey("group_limits"), json::parse(R"({"vision": {"max_queued": 0}})"), c).has_value());
  EXPECT_EQ(fs.groups.at("vision").max_queued, 0);

  auto error = [&](const char* key, const json& v) { return ApplyKey(*FindKey(key), v, c).error().message; };
  EXPECT_EQ(error("user_limits", json::parse(R"({"alice": {"max_gpu": 3}})")),
            "user_limits.alice has no limit \"max_gpu\"; the limits are: max_gpus, max_gpu_hours_24h, "
            "max_gpu_hours_7d, max_booking_hours, max_horizon_days, max_queued");
  EXPECT_EQ(error("group_limits", json::parse(R"({"vision": {"max_gpus": 0}})")),
            "group_limits.vision.max_gpus must be between 1 and 1024");
  EXPECT_THAT(error("user_limits", json::parse(R"({"a b": {}})")),
              HasSubstr("must be a login or group name"));
  EXPECT_THAT(error("user_limits", json::parse(R"({"alice": 3})")), HasSubstr("must be an object of limits"));
  EXPECT_THAT(error("user_limits", json("[1]")), HasSubstr("must be a JSON object"));
  EXPECT_EQ(error("user_max_gpus", json(0)), "user_max_gpus must be between 1 and 1024");
}

// The user_* keys are declared one by one (each names its field); they must
// say what the engine's table of limits says.
TEST(KeysTest, EveryLimitHasItsUserKeyWithTheTablesRangeAndUnit) {
  for (const engine::LimitField& f : engine::LimitFields()) {
    const KeySpec* k = FindKey("user_" + std::string(f.name));
    ASSERT_NE(k, nullptr) << f.name;
    EXPECT_EQ(static_cast<int64_t>(k->lo), f.lo) << f.name;
    EXPECT_EQ(static_cast<int64_t>(k->hi), f.hi) << f.name;
    EXPECT_EQ(k->scale, f.unit) << f.name;
    Config c;
    ASSERT_TRUE(ApplyKey(*k, json(f.hi), c).has_value()) << f.name;
    EXPECT_EQ(c.policy.fair_share.user.*f.member, f.hi * f.unit) << f.name;
  }
}

TEST(KeysTest, PathsAreAbsoluteAndTheMetricsFileIsAPromFile) {
  Config c;
  ASSERT_TRUE(
      ApplyKey(*FindKey("metrics_textfile"), json("/var/lib/node_exporter/gpubk.prom"), c).has_value());
  EXPECT_EQ(c.metrics_textfile, "/var/lib/node_exporter/gpubk.prom");
  ASSERT_TRUE(ApplyKey(*FindKey("metrics_textfile"), json(""), c).has_value());
  EXPECT_EQ(c.metrics_textfile, "");
  EXPECT_THAT(ApplyKey(*FindKey("metrics_textfile"), json("gpubk.prom"), c).error().message,
              HasSubstr("must be an absolute path"));
  EXPECT_THAT(ApplyKey(*FindKey("metrics_textfile"), json("/tmp/gpubk.txt"), c).error().message,
              HasSubstr("must end in .prom"));
  ASSERT_TRUE(ApplyKey(*FindKey("calendar_feed_dir"), json("/srv/www/gpus"), c).has_value());
  EXPECT_EQ(c.calendar_feed_dir, "/srv/www/gpus");
  EXPECT_THAT(ApplyKey(*FindKey("calendar_feed_dir"), json("/srv/\nx"), c).error().message,
              HasSubstr("control characters"));
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
