#include "config/config.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "base/env_testing.h"
#include "base/temp_dir_testing.h"
#include "engine/civil_time.h"
#include "engine/parse.h"
#include "sys/file_system_testing.h"
#include "sys/users.h"

namespace bk::config {
namespace {

using json = nlohmann::json;
using ::testing::AllOf, ::testing::ElementsAre, ::testing::EndsWith, ::testing::HasSubstr, ::testing::Pair,
    ::testing::UnorderedElementsAre;

engine::Seconds T(const char* iso) {
  auto t = engine::ParseIsoTime(iso, engine::FixedZone(0));
  EXPECT_TRUE(t.has_value()) << iso;
  return t.value_or(0);
}

class ConfigTest : public TempDirTest {
 protected:
  static EnvFn EnvOf(std::map<std::string, std::string> copy) {
    return [copy](const std::string& name) -> std::optional<std::string> {
      auto it = copy.find(name);
      if (it == copy.end()) return std::nullopt;
      return it->second;
    };
  }

  // env_ plus `extra` (which wins); env_ itself is left as it was.
  Result<Config> LoadWith(const std::map<std::string, std::string>& extra) {
    auto env = env_;
    for (const auto& [k, v] : extra) env[k] = v;
    return Load(EnvOf(env));
  }

  Config LoadOk(const std::map<std::string, std::string>& extra = {}) {
    auto c = LoadWith(extra);
    EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().message);
    return c ? *c : Config{};
  }

  std::string LoadError(const std::map<std::string, std::string>& extra) {
    auto c = LoadWith(extra);
    EXPECT_FALSE(c.has_value());
    if (c) return "";
    EXPECT_EQ(c.error().kind, ErrorKind::kInvalid) << c.error().message;
    return c.error().message;
  }

  void WriteConfig(const std::string& text, mode_t mode = 0600) {
    std::string path = Path("config.json");
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
  }

  // Every test runs private, away from any real connection file.
  std::map<std::string, std::string> env_{{"BK_DATA_DIR", root()}, {"XDG_CONFIG_HOME", Path("xdg-config")}};
};

// ---- locations and defaults ---------------------------------------------------

TEST_F(ConfigTest, Defaults) {
  Config c = LoadOk({{"BK_GPU_COUNT", "4"}});
  EXPECT_EQ(c.deployment, Deployment::kPrivate);
  EXPECT_EQ(c.data_dir, root());
  EXPECT_EQ(c.ledger_path, Path("ledger.db"));
  EXPECT_EQ(c.config_file, Path("config.json"));
  EXPECT_FALSE(c.config_file_present);
  EXPECT_EQ(c.why, "BK_DATA_DIR is set");
  const engine::Policy& p = c.policy;
  EXPECT_EQ(p.slot, 300);
  EXPECT_EQ(p.share_capacity, 2);
  EXPECT_EQ(p.queue_search, 168 * engine::kHour);
  EXPECT_EQ(p.horizon, 30 * engine::kDay);
  EXPECT_EQ(p.max_duration, 720 * engine::kHour);
  EXPECT_TRUE(p.blackouts.empty());
  EXPECT_TRUE(p.disabled_gpus.empty());
  EXPECT_TRUE(p.gpu_priority.empty());
  EXPECT_FALSE(p.require_shared_memory);
  EXPECT_EQ(p.shared_memory_reserve_mb, 512);
  EXPECT_FALSE(p.host_cpus.has_value());
  EXPECT_FALSE(p.host_ram_mb.has_value());
  EXPECT_FALSE(p.BudgetsOn());
  EXPECT_EQ(p.default_booking_cpus, 1);
  EXPECT_EQ(p.default_booking_ram_mb, 1024);
  EXPECT_EQ(c.ledger_retention_days, 90);
  EXPECT_DOUBLE_EQ(c.lock_timeout_seconds, 10.0);
  EXPECT_EQ(c.timeline_hours, 2);
  EXPECT_EQ(c.reclaim_after_seconds, 3600);
  EXPECT_FALSE(c.pause_sampling_during_exclusive);
  EXPECT_DOUBLE_EQ(c.monitor_interval_seconds, 2.0);
  EXPECT_EQ(c.sources["slot_minutes"], "default");
  EXPECT_EQ(c.values["slot_minutes"], "5");
  EXPECT_EQ(c.sources["max_shared_users"], "default");
  EXPECT_EQ(c.values["booking_horizon_days"], "30");
  EXPECT_EQ(c.values["host_cpus"], "null");
  EXPECT_FALSE(c.test_now.has_value());
}

TEST_F(ConfigTest, GpuCountIsDetectedWhenNotConfigured) {
  Config c = LoadOk();
  EXPECT_TRUE(c.gpu_count_detected);
  EXPECT_GE(c.policy.gpu_count, 1);
  EXPECT_EQ(c.sources["gpu_count"], "detected");
  EXPECT_EQ(c.values["gpu_count"], std::to_string(c.policy.gpu_count));
}

TEST_F(ConfigTest, DataDirTildeExpandsToHome) {
  Config c = LoadOk({{"BK_DATA_DIR", "~/bk-test-data"}, {"BK_GPU_COUNT", "1"}});
  EXPECT_EQ(c.data_dir, sys::HomeDir() + "/bk-test-data");
  EXPECT_EQ(c.ledger_path, sys::HomeDir() + "/bk-test-data/ledger.db");
}

TEST_F(ConfigTest, EmptyDataDirIsRefused) {
  EXPECT_THAT(LoadError({{"BK_DATA_DIR", ""}}), HasSubstr("BK_DATA_DIR"));
}

TEST_F(ConfigTest, XdgDataHomeGivesTheDefaultPrivateDirectory) {
  if (std::filesystem::exists("/etc/gpubk/config.json"))
    GTEST_SKIP() << "a system deployment is installed here";
  env_.erase("BK_DATA_DIR");
  Config c = LoadOk({{"XDG_DATA_HOME", Path("xdg-data")}, {"BK_GPU_COUNT", "2"}});
  EXPECT_EQ(c.deployment, Deployment::kPrivate);
  EXPECT_EQ(c.data_dir, Path("xdg-data/gpubk"));
  EXPECT_THAT(c.data_dir, EndsWith("/gpubk"));
  EXPECT_EQ(c.ledger_path, Path("xdg-data/gpubk/ledger.db"));
  EXPECT_EQ(c.why, "no server configured; using your private ledger");
  EXPECT_FALSE(std::filesystem::exists(c.data_dir));  // loading creates nothing
}

TEST_F(ConfigTest, RelativeXdgDataHomeFallsBackToHome) {
  if (std::filesystem::exists("/etc/gpubk/config.json"))
    GTEST_SKIP() << "a system deployment is installed here";
  SavedEnv home("HOME");
  ::setenv("HOME", root().c_str(), 1);
  env_.erase("BK_DATA_DIR");
  auto c = LoadWith({{"XDG_DATA_HOME", "relative/path"}, {"BK_GPU_COUNT", "2"}});
  home.Restore();
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->data_dir, Path(".local/share/gpubk"));
}

// ---- environment overrides ---------------------------------------------------

TEST_F(ConfigTest, SlotMinutes) {
  Config c = LoadOk({{"BK_SLOT_MINUTES", "15"}});
  EXPECT_EQ(c.policy.slot, 900);
  EXPECT_EQ(c.sources["slot_minutes"], "environment");
  EXPECT_EQ(c.values["slot_minutes"], "15");  // rendered as a number, not the env text
  EXPECT_EQ(LoadOk({{"BK_SLOT_MINUTES", " 60 "}}).policy.slot, 3600);
  EXPECT_EQ(LoadOk({{"BK_SLOT_MINUTES", "1"}}).policy.slot, 60);
}

TEST_F(ConfigTest, SlotMinutesMustDivideAnHour) {
  EXPECT_THAT(LoadError({{"BK_SLOT_MINUTES", "7"}}),
              AllOf(HasSubstr("slot_minutes must divide one hour"),
                    HasSubstr("1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60")));
  EXPECT_THAT(LoadError({{"BK_SLOT_MINUTES", "0"}}), HasSubstr("slot_minutes must be between 1 and 60"));
  EXPECT_THAT(LoadError({{"BK_SLOT_MINUTES", "120"}}), HasSubstr("slot_minutes must be between 1 and 60"));
  EXPECT_THAT(LoadError({{"BK_SLOT_MINUTES", "five"}}), HasSubstr("slot_minutes must be an integer"));
  EXPECT_THAT(LoadError({{"BK_SLOT_MINUTES", "-5"}}), HasSubstr("slot_minutes must be an integer"));
}

TEST_F(ConfigTest, GpuCount) {
  Config c = LoadOk({{"BK_GPU_COUNT", "8"}});
  EXPECT_EQ(c.policy.gpu_count, 8);
  EXPECT_FALSE(c.gpu_count_detected);
  EXPECT_EQ(c.sources["gpu_count"], "environment");
  EXPECT_THAT(LoadError({{"BK_GPU_COUNT", "0"}}), HasSubstr("gpu_count must be between 1 and 1024"));
  EXPECT_THAT(LoadError({{"BK_GPU_COUNT", "1025"}}), HasSubstr("gpu_count must be between 1 and 1024"));
  EXPECT_THAT(LoadError({{"BK_GPU_COUNT", "2.5"}}), HasSubstr("gpu_count must be an integer"));
}

TEST_F(ConfigTest, DisabledGpus) {
  Config csv = LoadOk({{"BK_GPU_COUNT", "4"}, {"BK_DISABLED_GPUS", "1,3"}});
  EXPECT_THAT(csv.policy.disabled_gpus, UnorderedElementsAre(1, 3));
  EXPECT_THAT(csv.policy.EnabledGpus(), ElementsAre(0, 2));
  EXPECT_EQ(csv.sources["disabled_gpus"], "environment");
  Config js = LoadOk({{"BK_GPU_COUNT", "4"}, {"BK_DISABLED_GPUS", "[3, 1]"}});
  EXPECT_THAT(js.policy.disabled_gpus, ElementsAre(1, 3));
  Config none = LoadOk({{"BK_GPU_COUNT", "4"}, {"BK_DISABLED_GPUS", ""}});
  EXPECT_TRUE(none.policy.disabled_gpus.empty());

  EXPECT_THAT(LoadError({{"BK_GPU_COUNT", "4"}, {"BK_DISABLED_GPUS", "4"}}),
              HasSubstr("disabled_gpus names GPU 4 but gpu_count is 4"));
  EXPECT_THAT(LoadError({{"BK_GPU_COUNT", "2"}, {"BK_DISABLED_GPUS", "[0,1]"}}),
              HasSubstr("disables every GPU"));
  EXPECT_THAT(LoadError({{"BK_GPU_COUNT", "4"}, {"BK_DISABLED_GPUS", "[1,1]"}}), HasSubstr("repeated"));
  EXPECT_THAT(LoadError({{"BK_GPU_COUNT", "4"}, {"BK_DISABLED_GPUS", "[-1]"}}),
              HasSubstr("between 0 and 1023"));
  EXPECT_THAT(LoadError({{"BK_GPU_COUNT", "4"}, {"BK_DISABLED_GPUS", "[1,"}}),
              HasSubstr("disabled_gpus must be JSON"));
  EXPECT_FALSE(LoadWith({{"BK_GPU_COUNT", "4"}, {"BK_DISABLED_GPUS", "one"}}).has_value());
}

TEST_F(ConfigTest, GpuPriority) {
  Config csv = LoadOk({{"BK_GPU_COUNT", "8"}, {"BK_GPU_PRIORITY", "6=10,7=20"}});
  EXPECT_THAT(csv.policy.gpu_priority, ElementsAre(Pair(6, 10), Pair(7, 20)));
  EXPECT_EQ(csv.policy.Priority(7), 20);
  EXPECT_EQ(csv.policy.Priority(0), 0);
  Config colon = LoadOk({{"BK_GPU_COUNT", "8"}, {"BK_GPU_PRIORITY", "6:10"}});
  EXPECT_THAT(colon.policy.gpu_priority, ElementsAre(Pair(6, 10)));
  Config js = LoadOk({{"BK_GPU_COUNT", "8"}, {"BK_GPU_PRIORITY", R"({"6": 10, "7": 20, "1": 0})"}});
  EXPECT_THAT(js.policy.gpu_priority, ElementsAre(Pair(6, 10), Pair(7, 20)));  // zero = default, dropped

  EXPECT_THAT(LoadError({{"BK_GPU_PRIORITY", "6=ten"}}), HasSubstr("must look like 6=10,7=20"));
  EXPECT_THAT(LoadError({{"BK_GPU_PRIORITY", "6"}}), HasSubstr("must look like 6=10,7=20"));
  EXPECT_THAT(LoadError({{"BK_GPU_PRIORITY", "x=1"}}), HasSubstr("GPU index must be between 0 and 1023"));
  EXPECT_THAT(LoadError({{"BK_GPU_PRIORITY", "1=2000000"}}),
              HasSubstr("priority must be between 0 and 1000000"));
  EXPECT_THAT(LoadError({{"BK_GPU_PRIORITY", R"({"6": "high"})"}}), HasSubstr("priorities must be integers"));
  EXPECT_THAT(LoadError({{"BK_GPU_PRIORITY", "[1]"}}), HasSubstr("gpu_priority must look like"));
}

TEST_F(ConfigTest, BookingBlackouts) {
  Config c =
      LoadOk({{"BK_BOOKING_BLACKOUTS",
               R"([{"start_at":"2026-12-02T02:00:00Z","end_at":"2026-12-02T04:00:00Z","reason":"later"},
                          ["2026-12-01T10:00:00+08:00","2026-12-01T12:00:00+08:00","power work"]])"}});
  ASSERT_EQ(c.policy.blackouts.size(), 2u);
  // Sorted by start; the offset is honoured.
  EXPECT_EQ(c.policy.blackouts[0].start, T("2026-12-01T02:00:00Z"));
  EXPECT_EQ(c.policy.blackouts[0].end, T("2026-12-01T04:00:00Z"));
  EXPECT_EQ(c.policy.blackouts[0].reason, "power work");
  EXPECT_EQ(c.policy.blackouts[1].start, T("2026-12-02T02:00:00Z"));
  EXPECT_EQ(c.policy.blackouts[1].reason, "later");
  EXPECT_EQ(c.sources["booking_blackouts"], "environment");

  Config no_reason = LoadOk(
      {{"BK_BOOKING_BLACKOUTS", R"([{"start_at":"2026-12-02T02:00:00Z","end_at":"2026-12-02T04:00:00Z"}])"}});
  ASSERT_EQ(no_reason.policy.blackouts.size(), 1u);
  EXPECT_EQ(no_reason.policy.blackouts[0].reason, "administrator maintenance");

  // Some GPUs only: sorted, repeats dropped; none listed means all.
  Config some =
      LoadOk({{"BK_GPU_COUNT", "4"},
              {"BK_BOOKING_BLACKOUTS",
               R"([{"start_at":"2026-12-02T02:00:00Z","end_at":"2026-12-02T04:00:00Z","gpus":[3,1,3]}])"}});
  EXPECT_EQ(some.policy.blackouts[0].gpus, (std::vector<int>{1, 3}));
  EXPECT_TRUE(some.policy.blackouts[0].Covers(3));
  EXPECT_FALSE(some.policy.blackouts[0].Covers(0));
  EXPECT_THAT(
      LoadError({{"BK_GPU_COUNT", "4"},
                 {"BK_BOOKING_BLACKOUTS",
                  R"([{"start_at":"2026-12-02T02:00:00Z","end_at":"2026-12-02T04:00:00Z","gpus":[4]}])"}}),
      HasSubstr("booking_blackouts names GPU 4 but gpu_count is 4"));
  EXPECT_THAT(
      LoadError({{"BK_BOOKING_BLACKOUTS",
                  R"([{"start_at":"2026-12-02T02:00:00Z","end_at":"2026-12-02T04:00:00Z","gpus":"1"}])"}}),
      HasSubstr("gpus must be a list of GPU indexes"));
}

TEST_F(ConfigTest, BookingBlackoutsRefuseNaiveAndBadTimes) {
  EXPECT_THAT(LoadError({{"BK_BOOKING_BLACKOUTS",
                          R"([{"start_at":"2026-12-01T02:00:00","end_at":"2026-12-01T04:00:00Z"}])"}}),
              AllOf(HasSubstr("booking_blackouts[0]"), HasSubstr("with a time zone")));
  EXPECT_THAT(LoadError({{"BK_BOOKING_BLACKOUTS",
                          R"([{"start_at":"2026-12-01T02:00:00Z","end_at":"2026-12-01 04:00"}])"}}),
              HasSubstr("with a time zone"));
  EXPECT_THAT(LoadError({{"BK_BOOKING_BLACKOUTS", R"([{"start_at":"2026-12-01","end_at":"2026-12-02"}])"}}),
              HasSubstr("with a time zone"));
  EXPECT_THAT(LoadError({{"BK_BOOKING_BLACKOUTS",
                          R"([{"start_at":"2026-12-01T04:00:00Z","end_at":"2026-12-01T02:00:00Z"}])"}}),
              HasSubstr("must start before it ends"));
  EXPECT_THAT(
      LoadError({{"BK_BOOKING_BLACKOUTS",
                  R"([{"start_at":"2026-12-01T02:00:00Z","end_at":"2026-12-01T04:00:00Z","reason":" "}])"}}),
      HasSubstr("reason must be 1-512 characters"));
  EXPECT_THAT(LoadError({{"BK_BOOKING_BLACKOUTS", R"({"start_at":"x"})"}}),
              HasSubstr("must be a JSON array"));
  EXPECT_THAT(LoadError({{"BK_BOOKING_BLACKOUTS", "not json"}}), HasSubstr("booking_blackouts must be JSON"));
}

TEST_F(ConfigTest, HostBudgets) {
  Config c = LoadOk({{"BK_HOST_CPUS", "32"}, {"BK_HOST_RAM_MB", "256g"}});
  EXPECT_EQ(c.policy.host_cpus, std::optional<int64_t>(32));
  EXPECT_EQ(c.policy.host_ram_mb, std::optional<int64_t>(262144));
  EXPECT_TRUE(c.policy.BudgetsOn());
  EXPECT_EQ(LoadOk({{"BK_HOST_RAM_MB", "262144"}}).policy.host_ram_mb, std::optional<int64_t>(262144));
  EXPECT_EQ(LoadOk({{"BK_HOST_RAM_MB", "4096m"}}).policy.host_ram_mb, std::optional<int64_t>(4096));
  Config only_cpus = LoadOk({{"BK_HOST_CPUS", "8"}});
  EXPECT_TRUE(only_cpus.policy.BudgetsOn());
  EXPECT_FALSE(only_cpus.policy.host_ram_mb.has_value());
  EXPECT_EQ(LoadOk({{"BK_DEFAULT_BOOKING_RAM_MB", "2g"}}).policy.default_booking_ram_mb, 2048);
  EXPECT_EQ(LoadOk({{"BK_DEFAULT_BOOKING_CPUS", "4"}}).policy.default_booking_cpus, 4);

  EXPECT_THAT(LoadError({{"BK_HOST_CPUS", "0"}}), HasSubstr("host_cpus must be between 1 and 1000000"));
  EXPECT_THAT(LoadError({{"BK_HOST_CPUS", "many"}}), HasSubstr("host_cpus must be an integer"));
  EXPECT_THAT(LoadError({{"BK_HOST_RAM_MB", "lots"}}), HasSubstr("host_ram_mb"));
  EXPECT_THAT(LoadError({{"BK_HOST_RAM_MB", "0"}}), HasSubstr("host_ram_mb must be between 1"));
}

TEST_F(ConfigTest, Booleans) {
  for (const char* yes : {"yes", "1", "on", "true", "TRUE", " Yes "})
    EXPECT_TRUE(LoadOk({{"BK_REQUIRE_SHARED_MEMORY", yes}}).policy.require_shared_memory) << yes;
  for (const char* no : {"no", "0", "off", "false", "False"})
    EXPECT_FALSE(LoadOk({{"BK_REQUIRE_SHARED_MEMORY", no}}).policy.require_shared_memory) << no;
  EXPECT_TRUE(LoadOk({{"BK_PAUSE_SAMPLING_DURING_EXCLUSIVE", "on"}}).pause_sampling_during_exclusive);
  EXPECT_THAT(LoadError({{"BK_REQUIRE_SHARED_MEMORY", "maybe"}}),
              AllOf(HasSubstr("require_shared_memory must be a boolean"), HasSubstr("yes/no")));
  EXPECT_THAT(LoadError({{"BK_REQUIRE_SHARED_MEMORY", "2"}}), HasSubstr("must be a boolean"));
}

TEST_F(ConfigTest, OtherNumericKeys) {
  Config c = LoadOk({{"BK_MAX_SHARED_USERS", "4"},
                     {"BK_QUEUE_SEARCH_HOURS", "24"},
                     {"BK_BOOKING_HORIZON_DAYS", "7"},
                     {"BK_MAX_BOOKING_DURATION_HOURS", "48"},
                     {"BK_SHARED_MEMORY_RESERVE_MB", "0"},
                     {"BK_LEDGER_RETENTION_DAYS", "0"},
                     {"BK_LOCK_TIMEOUT_SECONDS", "2.5"},
                     {"BK_TIMELINE_HOURS", "6"},
                     {"BK_RECLAIM_AFTER_SECONDS", "600"},
                     {"BK_MONITOR_INTERVAL_SECONDS", "0.5"}});
  EXPECT_EQ(c.policy.share_capacity, 4);
  EXPECT_EQ(c.policy.queue_search, 24 * engine::kHour);
  EXPECT_EQ(c.policy.horizon, 7 * engine::kDay);
  EXPECT_EQ(c.policy.max_duration, 48 * engine::kHour);
  EXPECT_EQ(c.policy.shared_memory_reserve_mb, 0);
  EXPECT_EQ(c.ledger_retention_days, 0);
  EXPECT_DOUBLE_EQ(c.lock_timeout_seconds, 2.5);
  EXPECT_EQ(c.timeline_hours, 6);
  EXPECT_EQ(c.reclaim_after_seconds, 600);
  EXPECT_DOUBLE_EQ(c.monitor_interval_seconds, 0.5);

  EXPECT_THAT(LoadError({{"BK_MAX_SHARED_USERS", "0"}}),
              HasSubstr("max_shared_users must be between 1 and 10000"));
  EXPECT_THAT(LoadError({{"BK_LOCK_TIMEOUT_SECONDS", "soon"}}),
              HasSubstr("lock_timeout_seconds must be a number"));
  EXPECT_THAT(LoadError({{"BK_LOCK_TIMEOUT_SECONDS", "0"}}),
              HasSubstr("lock_timeout_seconds must be between"));
  EXPECT_THAT(LoadError({{"BK_MONITOR_INTERVAL_SECONDS", "0.1"}}),
              HasSubstr("monitor_interval_seconds must be between"));
  EXPECT_THAT(LoadError({{"BK_LOCK_TIMEOUT_SECONDS", "nan"}}), HasSubstr("lock_timeout_seconds"));
}

TEST_F(ConfigTest, EnvOverridesListsTheBkVariablesThatWereSet) {
  Config c = LoadOk({{"BK_SLOT_MINUTES", "10"},
                     {"BK_GPU_COUNT", "2"},
                     {"BK_TEST_NOW", "2026-11-29T18:49:00Z"},
                     {"BK_NOT_A_KEY", "1"},
                     {"HOME", "/nowhere"}});
  EXPECT_THAT(c.env_overrides, ElementsAre("BK_DATA_DIR", "BK_GPU_COUNT", "BK_SLOT_MINUTES", "BK_TEST_NOW"));
#ifdef BK_TEST_HOOKS
  EXPECT_EQ(c.test_now, std::optional<std::string>("2026-11-29T18:49:00Z"));
#endif
}

// ---- the data directory's config.json ------------------------------------------

TEST_F(ConfigTest, FileValuesApplyWithSourceFile) {
  WriteConfig(R"({"config_version": 1, "slot_minutes": 10, "max_shared_users": 3, "gpu_count": 4,
                  "host_ram_mb": "64g", "disabled_gpus": [2], "require_shared_memory": true,
                  "gpu_priority": {"3": 5}})");
  Config c = LoadOk();
  EXPECT_TRUE(c.config_file_present);
  EXPECT_EQ(c.policy.slot, 600);
  EXPECT_EQ(c.policy.share_capacity, 3);
  EXPECT_EQ(c.policy.gpu_count, 4);
  EXPECT_FALSE(c.gpu_count_detected);
  EXPECT_EQ(c.policy.host_ram_mb, std::optional<int64_t>(65536));
  EXPECT_THAT(c.policy.disabled_gpus, ElementsAre(2));
  EXPECT_TRUE(c.policy.require_shared_memory);
  EXPECT_THAT(c.policy.gpu_priority, ElementsAre(Pair(3, 5)));
  EXPECT_EQ(c.sources["slot_minutes"], "file");
  EXPECT_EQ(c.sources["gpu_count"], "file");
  EXPECT_EQ(c.sources["timeline_hours"], "default");
  EXPECT_EQ(c.values["slot_minutes"], "10");
  EXPECT_EQ(c.values["host_ram_mb"], "\"64g\"");
  EXPECT_EQ(c.sources.count("config_version"), 0u);
}

TEST_F(ConfigTest, EnvironmentBeatsFile) {
  WriteConfig(R"({"slot_minutes": 10, "max_shared_users": 3})");
  Config c = LoadOk({{"BK_SLOT_MINUTES", "15"}});
  EXPECT_EQ(c.policy.slot, 900);
  EXPECT_EQ(c.sources["slot_minutes"], "environment");
  EXPECT_EQ(c.policy.share_capacity, 3);
  EXPECT_EQ(c.sources["max_shared_users"], "file");
}

TEST_F(ConfigTest, FileUnknownKeySuggestsTheClosest) {
  WriteConfig(R"({"slot_minute": 10})");
  std::string err = LoadError({});
  EXPECT_THAT(err, HasSubstr(Path("config.json")));
  EXPECT_THAT(err, HasSubstr("unknown key slot_minute"));
  EXPECT_THAT(err, HasSubstr("did you mean slot_minutes?"));

  WriteConfig(R"({"completely_unrelated_setting": 1})");
  err = LoadError({});
  EXPECT_THAT(err, HasSubstr("unknown key completely_unrelated_setting"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("did you mean")));
}

TEST_F(ConfigTest, FileRefusesOtherConfigVersions) {
  WriteConfig(R"({"config_version": 2})");
  EXPECT_THAT(LoadError({}), HasSubstr("config_version must be 1"));
  WriteConfig(R"({"config_version": "1"})");
  EXPECT_THAT(LoadError({}), HasSubstr("config_version must be 1"));
}

TEST_F(ConfigTest, FileRefusesInvalidJsonAndNonObjects) {
  WriteConfig(R"({"slot_minutes": 10,)");
  EXPECT_THAT(LoadError({}), AllOf(HasSubstr(Path("config.json")), HasSubstr("not valid JSON")));
  WriteConfig(R"([1, 2])");
  EXPECT_THAT(LoadError({}), HasSubstr("must hold a JSON object"));
}

TEST_F(ConfigTest, FileBadValueNamesTheFileAndKey) {
  WriteConfig(R"({"slot_minutes": 7})");
  EXPECT_THAT(LoadError({}),
              AllOf(HasSubstr(Path("config.json: ")), HasSubstr("slot_minutes must divide one hour")));
  WriteConfig(R"({"host_cpus": null, "gpu_count": 2})");
  Config c = LoadOk();
  EXPECT_FALSE(c.policy.host_cpus.has_value());
}

TEST_F(ConfigTest, GroupWritableFileIsRefused) {
  WriteConfig(R"({"slot_minutes": 10})", 0660);
  auto c = LoadWith({});
  ASSERT_FALSE(c.has_value());
  EXPECT_THAT(c.error().message, HasSubstr(Path("config.json")));
}

// The real file system, but reading `path` fails with EIO and looking at it
// with `lstat_errno` (when set).
class UnreadableFile : public sys::ForwardingFileSystem {
 public:
  explicit UnreadableFile(std::string path, int lstat_errno = 0)
      : path_(std::move(path)), lstat_errno_(lstat_errno) {}
  sys::ErrnoResult<sys::FileInfo> Lstat(const std::string& p) override {
    if (p == path_ && lstat_errno_ != 0) return std::unexpected(lstat_errno_);
    return ForwardingFileSystem::Lstat(p);
  }
  Result<std::string> ReadFile(const std::string& p, size_t max_bytes) override {
    if (p == path_) return Fail(ErrorKind::kIo, fmt::format("cannot read {}: Input/output error", p));
    return ForwardingFileSystem::ReadFile(p, max_bytes);
  }

 private:
  std::string path_;
  int lstat_errno_;
};

TEST_F(ConfigTest, UnreadableFileFailsTheLoadNamingIt) {
  WriteConfig(R"({"slot_minutes": 10})");
  UnreadableFile failing(Path("config.json"));
  auto c = Load(EnvOf(env_), failing);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message, fmt::format("cannot read {}: Input/output error", Path("config.json")));
}

TEST_F(ConfigTest, UnreadableServerConfigSaysWhy) {
  std::string path = Path("server.json");
  std::ofstream(path) << "{}";
  UnreadableFile unreadable(path);
  auto c = LoadServer(path, EnvOf({}), /*trusted=*/false, unreadable);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().message,
            fmt::format("cannot read server config {0}: cannot read {0}: Input/output error", path));
  // A group-only server's directory cannot be searched by others.
  UnreadableFile denied(path, EACCES);
  c = LoadServer(path, EnvOf({}), /*trusted=*/false, denied);
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().kind, ErrorKind::kPermission);
  EXPECT_THAT(c.error().message, HasSubstr("the server is limited to a group"));
}

TEST_F(ConfigTest, ServerConfigIdsBeyond32BitsAreRefusedNotWrapped) {
  // 4294968296 is 2^32 + 1000: read as uint32 it would name UID 1000.
  std::string path = Path("server.json");
  auto load = [&](const std::string& text) {
    std::ofstream(path) << text;
    return LoadServer(path, EnvOf({}), /*trusted=*/false);
  };
  const std::string head =
      R"({"schema_version": "gpubk.server.v1", "socket": "/nonexistent/run/broker.sock", )";
  auto uid = load(head + R"("owner_uid": 4294968296})");
  ASSERT_FALSE(uid.has_value());
  EXPECT_THAT(uid.error().message, HasSubstr("owner_uid must be a UID"));
  EXPECT_FALSE(load(head + R"("owner_uid": 4294967295})").has_value());
  std::filesystem::create_directory(Path("run"));
  std::filesystem::permissions(Path("run"), std::filesystem::perms(0711));
  auto gid = load(fmt::format(R"({{"schema_version": "gpubk.server.v1", "socket": "{}/run/broker.sock", )"
                              R"("owner_uid": {}, "data_dir": "{}/data", "gid": 4294967396}})",
                              root(), getuid(), root()));
  ASSERT_FALSE(gid.has_value());
  EXPECT_THAT(gid.error().message, HasSubstr("must be a GID")) << gid.error().message;
}

// Found by fuzzing: a number where a string belongs made json::value() throw
// out of LoadServer, ending bk and the daemon.
TEST_F(ConfigTest, ServerConfigStringsOfAnotherTypeAreRefused) {
  std::string path = Path("server.json");
  std::filesystem::create_directory(Path("run"));
  std::filesystem::permissions(Path("run"), std::filesystem::perms(0711));
  auto load = [&](const std::string& extra) {
    std::ofstream(path) << fmt::format(
        R"({{"schema_version": "gpubk.server.v1", "socket": "{}/run/broker.sock", "owner_uid": {}, )"
        R"("data_dir": "{}/data"{}}})",
        root(), getuid(), root(), extra);
    return LoadServer(path, EnvOf({{"BK_GPU_SIM_FILE", "/nonexistent.json"}}), /*trusted=*/false);
  };
  ASSERT_TRUE(load("").has_value()) << load("").error().message;
  std::ofstream(path) << R"({"schema_version": 1})";
  auto schema = LoadServer(path, EnvOf({}), false);
  ASSERT_FALSE(schema.has_value());
  EXPECT_THAT(schema.error().message, HasSubstr("is not a GPUBK server config"));
  auto access = load(R"(, "access": 5)");
  ASSERT_FALSE(access.has_value());
  EXPECT_THAT(access.error().message, HasSubstr("access must be world or group"));
  auto group = load(R"(, "access": "group", "group": 5)");
  ASSERT_FALSE(group.has_value());
  EXPECT_THAT(group.error().message, HasSubstr("group must be a group name"));
}

// Each user runs their own worker: on a server their BK_<KEY> fills the worker
// keys the server's file leaves unset, and nothing else.
TEST_F(ConfigTest, ServerWorkerKeysTakeTheUsersEnvironmentWhereTheFileIsSilent) {
  std::string path = Path("server.json");
  std::filesystem::create_directory(Path("run"));
  std::filesystem::permissions(Path("run"), std::filesystem::perms(0711));
  std::ofstream(path) << fmt::format(
      R"({{"schema_version": "gpubk.server.v1", "socket": "{}/run/broker.sock", "owner_uid": {}, )"
      R"("data_dir": "{}/data", "gpu_count": 2, "worker_poll_seconds": 3}})",
      root(), getuid(), root());
  std::map<std::string, std::string> env = {{"BK_CONFIG_FILE", path},
                                            {"XDG_CONFIG_HOME", Path("xdg-config")},
                                            {"BK_WORKER_POLL_SECONDS", "0.5"},
                                            {"BK_WORKER_MAX_PARALLEL", "4"},
                                            {"BK_SLOT_MINUTES", "10"}};
  auto c = Load(EnvOf(env));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->deployment, Deployment::kServer);
  EXPECT_DOUBLE_EQ(c->worker.poll_seconds, 3);
  EXPECT_EQ(c->sources["worker_poll_seconds"], "file");
  EXPECT_EQ(c->worker.max_parallel, 4);
  EXPECT_EQ(c->sources["worker_max_parallel"], "environment");
  EXPECT_EQ(c->values["worker_max_parallel"], "4");
  EXPECT_EQ(c->policy.slot, 300);
  EXPECT_EQ(c->sources["slot_minutes"], "default");
  EXPECT_THAT(c->env_overrides, ElementsAre("BK_CONFIG_FILE", "BK_WORKER_MAX_PARALLEL"));
  env["BK_WORKER_LIVE_GUARD"] = "maybe";
  auto bad = Load(EnvOf(env));
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "worker_live_guard must be a boolean (true/false, 1/0, yes/no, on/off)");
}

// ---- the ledger-bound policy ---------------------------------------------------

TEST(PolicyJsonTest, BoundPolicyJsonHoldsTheLedgerBoundKeys) {
  engine::Policy p;
  p.gpu_count = 4;
  p.slot = 600;
  p.share_capacity = 3;
  p.host_cpus = 16;
  json j = json::parse(BoundPolicyJson(p));
  EXPECT_EQ(j["version"], 1);
  EXPECT_EQ(j["gpu_count"], 4);
  EXPECT_EQ(j["granularity_seconds"], 600);
  EXPECT_EQ(j["max_shared_reservations_per_gpu"], 3);
  EXPECT_EQ(j["require_shared_memory"], false);
  EXPECT_EQ(j["shared_memory_reserve_mb"], 512);
  EXPECT_EQ(j["host_cpus"], 16);
  EXPECT_TRUE(j["host_ram_mb"].is_null());
  // Deterministic text: the same policy gives the same bytes.
  EXPECT_EQ(BoundPolicyJson(p), BoundPolicyJson(p));
  // Settings that are not bound (horizon, priorities) do not change it.
  engine::Policy q = p;
  q.horizon = engine::kDay;
  q.gpu_priority[1] = 5;
  q.disabled_gpus = {2};
  EXPECT_EQ(BoundPolicyJson(p), BoundPolicyJson(q));
}

TEST(PolicyJsonTest, ComparePolicy) {
  engine::Policy p;
  p.gpu_count = 4;
  std::string four = BoundPolicyJson(p);
  EXPECT_EQ(ComparePolicy(four, four), "");
  engine::Policy q = p;
  q.gpu_count = 8;
  std::string diff = ComparePolicy(four, BoundPolicyJson(q));
  EXPECT_EQ(diff, "gpu_count: ledger=4 local=8");

  q.slot = 900;
  diff = ComparePolicy(four, BoundPolicyJson(q));
  EXPECT_THAT(diff, HasSubstr("gpu_count: ledger=4 local=8"));
  EXPECT_THAT(diff, HasSubstr("granularity_seconds: ledger=300 local=900"));
  EXPECT_THAT(diff, HasSubstr("; "));

  // A key the ledger never recorded compares as null.
  EXPECT_EQ(ComparePolicy(R"({"version":1})", R"({"version":1,"host_cpus":8})"),
            "host_cpus: ledger=null local=8");
  EXPECT_THAT(ComparePolicy("not json", four), HasSubstr("ledger=unreadable"));
}

}  // namespace
}  // namespace bk::config
