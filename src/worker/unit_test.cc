#include "worker/unit.h"

#include <gtest/gtest.h>

#include "worker/settings.h"

namespace bk::worker {
namespace {

TEST(UnitTest, RestartsOnlyWhenItHelps) {
  std::string u = RenderWorkerUnit({"/opt/bk dir/bk", {{"BK_DATA_DIR", "/d/100%"}, {"BK_JOB_DIR", "/j"}}});
  EXPECT_NE(u.find("ExecStart=\"/opt/bk dir/bk\" worker\n"), std::string::npos);
  EXPECT_NE(u.find("RestartPreventExitStatus=75 78\n"), std::string::npos);
  EXPECT_NE(u.find("Restart=on-failure\n"), std::string::npos);
  EXPECT_NE(u.find("KillMode=control-group\n"), std::string::npos);
  EXPECT_NE(u.find("Environment=\"BK_DATA_DIR=/d/100%%\"\n"), std::string::npos);
  EXPECT_NE(u.find("WantedBy=default.target"), std::string::npos);
  EXPECT_EQ(QuoteUnitValue("a\"b\\c"), "\"a\\\"b\\\\c\"");
}

TEST(UnitTest, MonitorUnitRunsBkM) {
  std::string u = RenderMonitorUnit({"/usr/bin/bk", {{"BK_DATA_DIR", "/d"}}});
  EXPECT_NE(u.find("# Written by `bk service install monitor`"), std::string::npos);
  EXPECT_NE(u.find("enable --now bk-monitor.service\n"), std::string::npos);
  EXPECT_NE(u.find("ExecStart=\"/usr/bin/bk\" m\n"), std::string::npos);
  EXPECT_NE(u.find("RestartPreventExitStatus=75 77 78\n"), std::string::npos);
  EXPECT_EQ(u.find("KillMode"), std::string::npos);
  EXPECT_NE(u.find("Environment=\"BK_DATA_DIR=/d\"\n"), std::string::npos);
}

// The keys come through config::Load, as in every command.
TEST(SettingsTest, EnvironmentOverridesAndJobDir) {
  std::map<std::string, std::string> env = {{"BK_WORKER_TERMINATION_GRACE_SECONDS", "0.5"},
                                            {"BK_WORKER_LIVE_GUARD", "off"},
                                            {"XDG_STATE_HOME", "/state"},
                                            {"BK_DATA_DIR", "/nonexistent/bk-settings-test"},
                                            {"BK_GPU_COUNT", "1"}};
  auto fn = [&](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional(it->second);
  };
  auto load = [&]() -> Result<Settings> {
    BK_ASSIGN_OR_RETURN(config::Config c, config::Load(fn));
    return LoadSettings(c, fn);
  };
  auto s = load();
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_DOUBLE_EQ(s->grace_seconds, 0.5);
  EXPECT_FALSE(s->live_guard);
  EXPECT_EQ(s->job_dir, "/state/gpubk/jobs");
  env["BK_JOB_DIR"] = "/private/jobs/";
  EXPECT_EQ(load()->job_dir, "/private/jobs");
  env["BK_JOB_DIR"] = "relative";
  EXPECT_FALSE(load().has_value());
  env.erase("BK_JOB_DIR");
  env["BK_WORKER_TERMINATION_GRACE_SECONDS"] = "61";
  auto bad = load();
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().message, "worker_termination_grace_seconds must be between 0.1 and 60");
}

}  // namespace
}  // namespace bk::worker
