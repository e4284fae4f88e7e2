#include "surface/doctor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace bk::surface {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;

Finding Probe(const char* name, const char* status) {
  return {.name = name, .status = status, .message = "m"};
}

TEST(DoctorReport, IssuesDecideHealthAndProbesDecideReadiness) {
  DoctorReport r;
  EXPECT_TRUE(r.Healthy());
  EXPECT_EQ(r.Ready(), std::nullopt);
  EXPECT_EQ(r.ExitCode(true), 0);
  r.probed = true;
  r.probes = {Probe("data-directory", "pass"), Probe("disk-space", "warn")};
  EXPECT_EQ(r.Ready(), false);
  EXPECT_EQ(r.ExitCode(false), 0);
  EXPECT_EQ(r.ExitCode(true), 2);
  r.probes[1].status = "pass";
  EXPECT_EQ(r.Ready(), true);
  EXPECT_EQ(r.ExitCode(true), 0);
  r.privacy_issues.push_back({.name = "x"});
  EXPECT_FALSE(r.Healthy());
  EXPECT_EQ(r.Ready(), false);
  EXPECT_EQ(r.ExitCode(true), 2);
  EXPECT_EQ(r.ExitCode(false), 0);
}

TEST(MonitorIssue, NotSeenOnlyWhenRequiredOtherStatesAlways) {
  json not_seen = {{"state", "not-seen"}};
  EXPECT_EQ(MonitorIssue(not_seen, false), std::nullopt);
  EXPECT_EQ(MonitorIssue(not_seen, true)->message,
            "collector heartbeat has not been recorded; start the monitor and retry");
  for (const char* fine : {"running", "paused"}) {
    EXPECT_EQ(MonitorIssue({{"state", fine}}, true), std::nullopt) << fine;
  }
  EXPECT_EQ(MonitorIssue({{"state", "stale"}, {"age_seconds", 95.0}, {"stale_after_seconds", 30.0}}, false)
                ->message,
            "collector heartbeat is stale (95s old; limit 30s)");
  EXPECT_EQ(MonitorIssue({{"state", "stopped"}, {"stopped_at", "2026-11-29T18:49:00Z"}}, false)->message,
            "collector stopped at 2026-11-29T18:49:00Z");
  EXPECT_EQ(MonitorIssue({{"state", "clock-skew"}, {"age_seconds", -400.5}}, false)->message,
            "collector clock is ahead by 400.5s");
  EXPECT_EQ(
      MonitorIssue({{"state", "degraded"}, {"detail", "GPU 1 has no process telemetry"}}, false)->message,
      "collector is running with incomplete GPU telemetry; GPU 1 has no process telemetry");
  EXPECT_EQ(MonitorIssue({{"state", "not-recording"}, {"not_recording", "disk full"}}, false)->name,
            "monitor-health");
  EXPECT_EQ(MonitorIssue({{"state", "unavailable"}, {"error", "down"}}, false), std::nullopt);
  EXPECT_EQ(MonitorIssue({{"state", "unavailable"}, {"error", "down"}}, true)->message,
            "collector state is unavailable; down");
}

TEST(WorkerIssue, OnlyWhenRequiredAndNotRunning) {
  json stopped = {{"state", "stopped"}, {"running", false}, {"warning", nullptr}};
  EXPECT_EQ(WorkerIssue(stopped, false), std::nullopt);
  EXPECT_EQ(WorkerIssue({{"state", "running"}, {"running", true}}, true), std::nullopt);
  EXPECT_EQ(
      WorkerIssue(stopped, true)->message,
      "current-user worker is not ready for this data directory (state=stopped); start bk-worker.service "
      "and retry");
  stopped["warning"] = "lease file unreadable";
  EXPECT_EQ(
      WorkerIssue(stopped, true)->message,
      "current-user worker is not ready for this data directory (state=stopped); start bk-worker.service "
      "and retry; lease file unreadable");
  EXPECT_EQ(WorkerIssue(nullptr, true)->name, "worker-health");
}

TEST(DoctorText, ChecksThenPreflightThenIssues) {
  DoctorReport r;
  r.checks = {{.name = "configuration", .status = "pass", .message = "private"}};
  r.probed = true;
  r.probes = {{.name = "disk-space", .status = "warn", .message = "low", .details = {{"free_bytes", 5}}}};
  r.storage_issues = {{.name = "directory-type", .details = {{"path", "/d"}, {"actual", "symlink"}}}};
  r.policy_issues = {{.name = "monitor-health", .message = "collector stopped at X"}};
  EXPECT_THAT(DoctorText(r),
              ElementsAre("pass configuration: private", "Deployment preflight: not ready",
                          "warn disk-space: low free_bytes=5",
                          "Found 1 storage issue(s), 1 policy issue(s), 0 privacy issue(s):",
                          "directory-type actual=symlink path=/d", "monitor-health collector stopped at X"));
}

TEST(DoctorText, AllClearNamesWhatWasRequired) {
  DoctorReport r;
  EXPECT_THAT(DoctorText(r), ElementsAre("No policy issues found."));
  r.monitor_required = r.worker_required = true;
  EXPECT_THAT(DoctorText(r), ElementsAre("Monitor is running with fresh, complete telemetry.",
                                         "Current-user worker is running for this data directory."));
}

TEST(DoctorDoc, TheOriginalKeysBesideTheChecks) {
  config::Config c;
  c.data_dir = "/d";
  c.policy.gpu_count = 2;
  c.policy.slot = 600;
  DoctorReport r;
  r.transport = "direct";
  r.probes = {{.name = "p", .status = "pass", .message = "ok", .details = {{"k", 1}}}};
  json d = json::parse(DoctorDoc(c, r));
  EXPECT_EQ(d["booking_slot_minutes"], 10);
  EXPECT_EQ(d["configured_gpu_count"], 2);
  EXPECT_EQ(d["access_mode"], "private");
  EXPECT_FALSE(d.contains("broker_gid"));
  EXPECT_EQ(d["ready"], nullptr);
  EXPECT_EQ(d["probes"], json::parse(R"([{"name":"p","status":"pass","message":"ok","k":1}])"));
  EXPECT_EQ(d["checks"], json::array());
}

}  // namespace
}  // namespace bk::surface
