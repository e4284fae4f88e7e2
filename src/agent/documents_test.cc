#include "agent/documents.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "agent/agent_testing.h"
#include "monitor/runner.h"
#include "store/usage_store.h"

namespace bk::agent {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(RenderTest, PrettyAndCompactKeepEveryField) {
  std::string pretty = Render(R"({"a":null,"capabilities":{"x":true}})", false);
  EXPECT_THAT(pretty, HasSubstr("\n  \"a\": null"));
  EXPECT_THAT(pretty, HasSubstr("capabilities"));
  EXPECT_EQ(Render(R"({"a":null,"b":[1,{"c":"x y"}],"capabilities":{"x":true}})", true),
            R"({"a": null, "b": [1, {"c": "x y"}], "capabilities": {"x": true}})");
}

class ContextTest : public LedgerFixture {};

TEST_F(ContextTest, PrivateLedgerWithoutBudgets) {
  auto doc = ContextDoc(*ledger_, config_);
  ASSERT_TRUE(doc.has_value()) << doc.error().message;
  json d = json::parse(*doc);
  EXPECT_EQ(d["schema_version"], "bk.agent.v1");
  EXPECT_EQ(d["kind"], "context");
  EXPECT_EQ(d["deployment"], "private");
  EXPECT_EQ(d["generated_at"], "2026-11-29T18:49:00Z");
  EXPECT_EQ(d["policy"]["gpu_count"], 8);
  EXPECT_EQ(d["policy"]["enabled_gpus"].size(), 8u);
  EXPECT_TRUE(d["policy"]["host_cpus"].is_null());
  EXPECT_TRUE(d["policy"]["host_ram_mb"].is_null());
  EXPECT_EQ(d["policy"]["storage_transport"], "direct");
  EXPECT_EQ(d["host_budget"]["cpus"]["enforced"], false);
  EXPECT_EQ(d["gpu_advice"]["gpus"].size(), 8u);
  EXPECT_EQ(d["gpu_advice"]["gpus"][3]["live"]["status"], "unknown");
  EXPECT_EQ(d["gpu_advice"]["order"].size(), 8u);
  EXPECT_TRUE(d["reservations"].is_array());
  EXPECT_EQ(d["capabilities"]["idempotent_booking"], true);
  EXPECT_EQ(d["capabilities"]["scheduled_jobs"], true);
  EXPECT_EQ(d["actor"]["username"], ledger_->actor().username);
}

TEST_F(ContextTest, EachGpuCarriesItsRecentHistory) {
  auto before = ContextDoc(*ledger_, config_);
  ASSERT_TRUE(before.has_value()) << before.error().message;
  json none = json::parse(*before)["gpu_advice"]["gpus"][2]["history"];
  EXPECT_EQ(none, json::parse(R"({"average_utilization_percent": 0.0, "busy_fraction": 0.0,
      "memory_percent": 0.0, "predicted_percent": 0.0, "sample_count": 0})"));
  // What `bk m` recorded a minute ago: GPU 2 at 40% with a quarter of its memory.
  {
    auto usage = store::UsageStore::Open({monitor::UsagePath(config_), true, getuid()});
    ASSERT_TRUE(usage.has_value()) << usage.error().message;
    // ts_ms, gpu, state, source, utilisation, VRAM used and total, processes
    store::DeviceRow row{(clock_->Now() - 60) * 1000, 2, "ok", "simulation", 40, 20480, 81920, 0};
    ASSERT_TRUE((*usage)->Begin().has_value());
    ASSERT_TRUE((*usage)->AddDevices(std::vector{row}).has_value());
    ASSERT_TRUE((*usage)->Commit().has_value());
  }
  auto after = ContextDoc(*ledger_, config_);
  ASSERT_TRUE(after.has_value()) << after.error().message;
  json h = json::parse(*after)["gpu_advice"]["gpus"][2]["history"];
  EXPECT_EQ(h["sample_count"], 1);
  EXPECT_EQ(h["average_utilization_percent"], 40.0);
  EXPECT_EQ(h["memory_percent"], 25.0);
  EXPECT_EQ(h["busy_fraction"], 1.0);
  EXPECT_EQ(h["predicted_percent"], 53.5);  // 40 x 0.65 + 25 + 25 x 0.10
  EXPECT_EQ(json::parse(*after)["gpu_advice"]["gpus"][0]["history"]["sample_count"], 0);
}

class BudgetContextTest : public LedgerFixture {
 protected:
  void SetUp() override {
    extra_env_ = {{"BK_HOST_CPUS", "16"}, {"BK_HOST_RAM_MB", "65536"}};
    LedgerFixture::SetUp();
  }
};

TEST_F(BudgetContextTest, ShowsBudgetsAndWhatBookingsDeclare) {
  service::CreateRequest r;
  r.count = 1;
  r.duration = 2 * engine::kHour;
  r.gpus = {1};
  r.cpus = 4;
  r.ram_mb = 32768;
  r.op_id = "experiment-001";
  ASSERT_TRUE(ledger_->Create(r).has_value());

  auto doc = ContextDoc(*ledger_, config_);
  ASSERT_TRUE(doc.has_value()) << doc.error().message;
  json d = json::parse(*doc);
  EXPECT_EQ(d["policy"]["host_cpus"], 16);
  EXPECT_EQ(d["policy"]["host_ram_mb"], 65536);
  EXPECT_EQ(d["policy"]["default_booking_cpus"], 1);
  EXPECT_EQ(d["host_budget"]["cpus"],
            json({{"total", 16}, {"booked_now", 4}, {"free_now", 12}, {"enforced", true}}));
  EXPECT_EQ(d["host_budget"]["ram_mb"]["free_now"], 32768);
  ASSERT_EQ(d["reservations"].size(), 1u);
  EXPECT_EQ(d["reservations"][0]["cpus"], 4);
  EXPECT_EQ(d["reservations"][0]["ram_mb"], 32768);
  EXPECT_EQ(d["reservations"][0]["gpus"], json({1}));
  EXPECT_EQ(d["capabilities"]["host_budgets"], true);

  // The compact form is the same document on one line.
  std::string compact = Render(*doc, true);
  EXPECT_THAT(compact, Not(HasSubstr("\n")));
  EXPECT_EQ(json::parse(compact), d);
  EXPECT_THAT(compact,
              HasSubstr(R"("host_budget": {"cpus": {"booked_now": 4, "enforced": true, "free_now": 12, )"));
}

TEST_F(ContextTest, WithCapabilitiesAddsTheFlags) {
  json d = json::parse(WithCapabilities(R"({"kind":"x"})", *ledger_));
  EXPECT_EQ(d["kind"], "x");
  EXPECT_EQ(d["capabilities"]["renew"], true);
  EXPECT_EQ(d["capabilities"]["kernel_peer_credentials"], false);
  EXPECT_EQ(json::parse(CapabilitiesJson(*ledger_)), d["capabilities"]);
}

}  // namespace
}  // namespace bk::agent
