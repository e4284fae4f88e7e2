#include "gpu/snapshot.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/enum_names_testing.h"
#include "base/members_testing.h"
#include "gpu/source.h"

namespace bk::gpu {
namespace {

ProcessSample Process(int pid, const std::string& user, const std::string& command, int64_t mem = 0,
                      std::optional<int> sm = std::nullopt) {
  ProcessSample p;
  p.pid = pid;
  p.uid = 1000;
  p.username = user;
  p.command = command;
  p.gpu_memory_mb = mem;
  p.sm_utilization_percent = sm;
  return p;
}

DeviceSample Device(int util, int64_t used, int64_t total, std::vector<ProcessSample> processes = {}) {
  DeviceSample d;
  d.index = 0;
  d.name = "NVIDIA A100-SXM4-80GB";
  d.source = Source::kSimulation;
  d.process_telemetry = true;
  d.utilization_percent = util;
  d.memory_used_mb = used;
  d.memory_total_mb = total;
  d.processes = std::move(processes);
  return d;
}

// ClassifyLive(d) gives every member of `want`.
void ExpectLive(const DeviceSample& d, const LiveState& want) {
  using L = LiveState;
  ExpectSameMembers(want, ClassifyLive(d), &L::status, &L::reason, &L::score, &L::process_count);
}

TEST(LiveStatusNames, EveryStatusRoundTripsAndStrangersAreRefused) {
  EXPECT_EQ(kLiveStatusNames.entries.size(), 3u);
  EXPECT_EQ(LiveStatusName(LiveStatus::kIdle), "idle");
  EXPECT_EQ(LiveStatusName(LiveStatus::kBusy), "busy");
  EXPECT_EQ(LiveStatusName(LiveStatus::kUnknown), "unknown");
  ExpectNamesRoundTrip(kLiveStatusNames, {"Idle", "free", "", "unreserved"});
}

TEST(SourceName, Names) {
  EXPECT_STREQ(SourceName(Source::kNone), "none");
  EXPECT_STREQ(SourceName(Source::kSimulation), "simulation");
  EXPECT_STREQ(SourceName(Source::kNvml), "nvml");
}

TEST(IsSystemProcess, Table) {
  for (const char* cmd : {"/usr/lib/xorg/Xorg -core :0 -seat seat0", "Xorg", "/usr/bin/gnome-shell",
                          "kwin_wayland --xwayland", "kwin_x11", "/usr/bin/nvidia-persistenced --user nvpd",
                          "nvidia-powerd", "Xwayland :0 -rootless", "  XORG  ", "/usr/bin/XWAYLAND"}) {
    EXPECT_TRUE(IsSystemProcess(cmd)) << cmd;
  }
  for (const char* cmd :
       {"", "python train.py", "/usr/bin/python3 -m torch.distributed.run", "xorg-helper", "myxorg",
        "python /usr/bin/Xorg", "gnome-shell-calendar-server", "/opt/xorg/bin/python"}) {
    EXPECT_FALSE(IsSystemProcess(cmd)) << cmd;
  }
}

TEST(IsValidDeviceUuid, Table) {
  EXPECT_TRUE(IsValidDeviceUuid("GPU-5d9a3c1e-7b2f-4e8a-9c61-0f3b2a7d4e10"));
  EXPECT_TRUE(IsValidDeviceUuid("MIG-GPU-5d9a3c1e/1/0"));
  EXPECT_TRUE(IsValidDeviceUuid("GPU-a.b_c:d"));
  EXPECT_TRUE(IsValidDeviceUuid("GPU-" + std::string(252, 'a')));
  EXPECT_FALSE(IsValidDeviceUuid("GPU-" + std::string(253, 'a')));
  EXPECT_FALSE(IsValidDeviceUuid(""));
  EXPECT_FALSE(IsValidDeviceUuid("gpu-1234"));
  EXPECT_FALSE(IsValidDeviceUuid("5d9a3c1e-7b2f"));
  EXPECT_FALSE(IsValidDeviceUuid("GPU-12 34"));
  EXPECT_FALSE(IsValidDeviceUuid("GPU-12,34"));
  EXPECT_FALSE(IsValidDeviceUuid("GPU-\xc3\xa9"));
}

TEST(ClassifyLive, NoTelemetryIsUnknown) {
  DeviceSample d = UnknownSnapshot(1).devices[0];
  LiveState s = ClassifyLive(d);
  EXPECT_EQ(s.status, LiveStatus::kUnknown);
  EXPECT_EQ(s.reason, "live state unavailable");
  EXPECT_DOUBLE_EQ(s.score, 45.0);
  EXPECT_EQ(s.process_count, 0);
  // Even with numbers filled in, source none means unknown.
  d.utilization_percent = 99;
  d.processes.push_back(Process(1, "alice", "python"));
  EXPECT_EQ(ClassifyLive(d).status, LiveStatus::kUnknown);
}

TEST(ClassifyLive, IdleGpu) {
  ExpectLive(Device(0, 0, 81920),
             {.status = LiveStatus::kIdle, .reason = "", .score = 0.0, .process_count = 0});
}

TEST(ClassifyLive, UtilizationThreshold) {
  LiveState nine = ClassifyLive(Device(9, 0, 81920));
  EXPECT_EQ(nine.status, LiveStatus::kIdle);
  EXPECT_DOUBLE_EQ(nine.score, 4.5);
  ExpectLive(Device(10, 0, 81920),
             {.status = LiveStatus::kBusy, .reason = "util=10%", .score = 72.0, .process_count = 0});
}

TEST(ClassifyLive, MemoryFloorOf1024MiB) {
  // 10% of 8000 MiB is 800, so the 1024 MiB floor decides.
  EXPECT_EQ(ClassifyLive(Device(0, 1023, 8000)).status, LiveStatus::kIdle);
  LiveState busy = ClassifyLive(Device(0, 1024, 8000));
  EXPECT_EQ(busy.status, LiveStatus::kBusy);
  EXPECT_EQ(busy.reason, "memory=1024MiB");
  EXPECT_DOUBLE_EQ(busy.score, 70.0 + 0.10 * (100.0 * 1024 / 8000));
}

TEST(ClassifyLive, MemoryTenPercentOfTotal) {
  // 10% of 81920 MiB is 8192: 8191 is idle, 8192 busy.
  LiveState idle = ClassifyLive(Device(0, 8191, 81920));
  EXPECT_EQ(idle.status, LiveStatus::kIdle);
  EXPECT_NEAR(idle.score, 0.10 * (100.0 * 8191 / 81920), 1e-9);
  EXPECT_EQ(ClassifyLive(Device(0, 8192, 81920)).status, LiveStatus::kBusy);
  // A total not divisible by ten: 10% of 81925 is 8192.5, so 8192 is still idle.
  EXPECT_EQ(ClassifyLive(Device(0, 8192, 81925)).status, LiveStatus::kIdle);
  EXPECT_EQ(ClassifyLive(Device(0, 8193, 81925)).status, LiveStatus::kBusy);
}

TEST(ClassifyLive, UnknownMetricsCountAsZero) {
  DeviceSample d = Device(0, 0, 0);
  d.utilization_percent.reset();
  d.memory_used_mb.reset();
  d.memory_total_mb.reset();
  LiveState s = ClassifyLive(d);
  EXPECT_EQ(s.status, LiveStatus::kIdle);
  EXPECT_DOUBLE_EQ(s.score, 0.0);
}

TEST(ClassifyLive, SystemProcessIgnored) {
  LiveState s = ClassifyLive(Device(0, 20, 81920,
                                    {Process(1500, "root", "/usr/lib/xorg/Xorg -core :0", 20),
                                     Process(1600, "gdm", "/usr/bin/gnome-shell", 0)}));
  EXPECT_EQ(s.status, LiveStatus::kIdle);
  EXPECT_EQ(s.process_count, 0);
}

TEST(ClassifyLive, AnyUserProcessIsBusy) {
  ExpectLive(
      Device(0, 0, 81920, {Process(1500, "root", "Xorg", 20), Process(4242, "alice", "python train.py", 0)}),
      {.status = LiveStatus::kBusy, .reason = "user=alice pid=4242", .score = 75.0, .process_count = 1});
}

TEST(ClassifyLive, UnattributedProcessIsBusy) {
  DeviceSample d = Device(0, 0, 81920);
  ProcessSample p;
  p.pid = 77;
  d.processes.push_back(p);  // uid unknown, username "?", no command
  LiveState s = ClassifyLive(d);
  EXPECT_EQ(s.status, LiveStatus::kBusy);
  EXPECT_EQ(s.reason, "user=? pid=77");
}

TEST(ClassifyLive, ReasonNamesTheBusiestProcess) {
  DeviceSample d =
      Device(87, 40960, 81920,
             {Process(300, "carol", "python a.py", 100, 10), Process(200, "bob", "python b.py", 500, 60),
              Process(100, "alice", "python c.py", 400, 60),
              Process(50, "dave", "python d.py", 9000, std::nullopt)});
  LiveState s = ClassifyLive(d);
  EXPECT_EQ(s.reason, "user=bob pid=200");  // highest SM, then most memory
  d.processes[1].gpu_memory_mb = 400;
  EXPECT_EQ(ClassifyLive(d).reason, "user=alice pid=100");  // tie: lowest pid
  EXPECT_EQ(s.process_count, 4);
  // min(100, 70 + 0.2*87 + 0.1*50 + 5*4) = min(100, 112.4)
  EXPECT_DOUBLE_EQ(s.score, 100.0);
}

TEST(ClassifyLive, BusyScoreFormula) {
  LiveState s = ClassifyLive(Device(20, 8192, 81920, {Process(1, "alice", "python")}));
  EXPECT_DOUBLE_EQ(s.score, 70.0 + 0.20 * 20 + 0.10 * 10.0 + 5.0);
}

TEST(ClassifyLive, IdleScoreCappedAt20) {
  // The idle score formula can never reach its cap under the busy thresholds,
  // but utilization 9% and memory just under 10% give the largest idle score.
  LiveState s = ClassifyLive(Device(9, 8191, 81920));
  EXPECT_EQ(s.status, LiveStatus::kIdle);
  EXPECT_LE(s.score, 20.0);
  EXPECT_NEAR(s.score, 4.5 + 0.10 * (100.0 * 8191 / 81920), 1e-9);
}

TEST(CountOnlySource, EveryGpuUnknown) {
  CountOnlySource source;
  Snapshot snap = source.Sample(3);
  EXPECT_TRUE(snap.ok());
  ASSERT_EQ(snap.devices.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const DeviceSample& d = snap.devices[i];
    EXPECT_EQ(d.index, i);
    EXPECT_EQ(d.name, "unknown");
    EXPECT_EQ(d.source, Source::kNone);
    EXPECT_EQ(d.uuid, "");
    EXPECT_FALSE(d.process_telemetry);
    EXPECT_FALSE(d.memory_total_mb.has_value());
    EXPECT_FALSE(d.utilization_percent.has_value());
    EXPECT_TRUE(d.processes.empty());
  }
}

TEST(UnknownSnapshot, CarriesTheError) {
  Snapshot snap = UnknownSnapshot(2, "NVML: driver not loaded");
  EXPECT_FALSE(snap.ok());
  EXPECT_EQ(snap.error, "NVML: driver not loaded");
  EXPECT_EQ(snap.devices.size(), 2u);
  EXPECT_TRUE(UnknownSnapshot(0).devices.empty());
}

}  // namespace
}  // namespace bk::gpu
