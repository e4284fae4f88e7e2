#include "worker/guard.h"

#include <gtest/gtest.h>

namespace bk::worker {
namespace {

using engine::Mode;
using engine::Reservation;

constexpr engine::Seconds kNow = 1795977000;

Reservation Booking(uint32_t uid, std::vector<int> gpus, Mode mode = Mode::kShared, std::string id = "r1") {
  Reservation r;
  r.id = std::move(id);
  r.uid = uid;
  r.username = uid == 1000 ? "me" : "alice";
  r.gpus = std::move(gpus);
  r.mode = mode;
  r.share_units = 1;
  r.start = kNow - 60;
  r.end = kNow + 3600;
  return r;
}

gpu::DeviceSample Device(int index, std::vector<gpu::ProcessSample> procs = {}) {
  gpu::DeviceSample d;
  d.index = index;
  d.uuid = "GPU-0000000" + std::to_string(index) + "-0000-4000-8000-000000000000";
  d.memory_total_mb = 81920;
  d.memory_used_mb = 0;
  d.utilization_percent = 0;
  d.source = gpu::Source::kSimulation;
  d.process_telemetry = true;
  d.processes = std::move(procs);
  return d;
}

gpu::ProcessSample Proc(std::optional<uid_t> uid, int pid, std::string user = "alice") {
  gpu::ProcessSample p;
  p.pid = pid;
  p.uid = uid;
  p.host_uid = uid;
  p.username = std::move(user);
  p.command = "python train.py";
  p.gpu_memory_mb = 1024;
  return p;
}

GuardDecision Guard(const Reservation& mine, std::vector<gpu::DeviceSample> devices,
                    std::vector<Reservation> others = {}) {
  GuardInput in;
  in.reservation = &mine;
  in.snapshot.devices = std::move(devices);
  in.active = std::move(others);
  in.active.push_back(mine);
  in.now = kNow;
  return EvaluateGuard(std::move(in));
}

TEST(CudaTokensTest, UuidsOnlyWhenAllAreKnown) {
  gpu::Snapshot s;
  s.devices = {Device(0), Device(1), Device(2)};
  EXPECT_EQ(CudaTokens({2, 0}, s), (std::vector<std::string>{s.devices[2].uuid, s.devices[0].uuid}));
  s.devices[0].uuid = "";
  EXPECT_EQ(CudaTokens({2, 0}, s), (std::vector<std::string>{"2", "0"}));
  s.devices[0].uuid = "GPU-bad uuid";
  EXPECT_EQ(CudaTokens({0}, s), (std::vector<std::string>{"0"}));
}

TEST(GuardTest, IdleGpuIsReadyWithItsUuid) {
  auto d = Guard(Booking(1000, {1}), {Device(0), Device(1)});
  EXPECT_TRUE(d.ready) << d.reason;
  EXPECT_EQ(d.tokens, (std::vector<std::string>{"GPU-00000001-0000-4000-8000-000000000000"}));
}

TEST(GuardTest, MissingTelemetryWaits) {
  gpu::DeviceSample none = Device(0);
  none.source = gpu::Source::kNone;
  auto d = Guard(Booking(1000, {0}), {none});
  EXPECT_FALSE(d.ready);
  EXPECT_EQ(d.reason, "GPU 0 live telemetry is unavailable");
  EXPECT_EQ(d.key, "gpu:0:telemetry");
  gpu::DeviceSample blind = Device(0);
  blind.process_telemetry = false;
  EXPECT_EQ(Guard(Booking(1000, {0}), {blind}).key, "gpu:0:process-telemetry");
  gpu::DeviceSample nvml = Device(0);
  nvml.source = gpu::Source::kNvml;
  nvml.uuid = "";
  EXPECT_EQ(Guard(Booking(1000, {0}), {nvml}).key, "gpu:0:stable-identifier");
}

TEST(GuardTest, UnreservedProcessWaits) {
  auto d = Guard(Booking(1000, {1}), {Device(0), Device(1, {Proc(1001, 4242)})});
  EXPECT_FALSE(d.ready);
  EXPECT_EQ(d.reason, "GPU 1 has unreserved process user=alice pid=4242");
  EXPECT_EQ(d.key, "gpu:1:process:unreserved");
}

TEST(GuardTest, WrongGpuAndUnknownWait) {
  Reservation theirs = Booking(1001, {0}, Mode::kShared, "r2");
  auto d = Guard(Booking(1000, {1}), {Device(0), Device(1, {Proc(1001, 7)})}, {theirs});
  EXPECT_EQ(d.key, "gpu:1:process:wrong-gpu");
  auto u = Guard(Booking(1000, {1}), {Device(0), Device(1, {Proc(std::nullopt, 9, "?")})});
  EXPECT_EQ(u.reason, "GPU 1 has unknown process user=unknown pid=9");
}

TEST(GuardTest, AcceptsTheOwnerAndOtherHoldersOfTheGpu) {
  // The owner's own process, even on an exclusive booking.
  EXPECT_TRUE(Guard(Booking(1000, {1}, Mode::kExclusive), {Device(1, {Proc(1000, 5, "me")})}).ready);
  // Another user sharing the GPU under their own booking.
  Reservation theirs = Booking(1001, {1}, Mode::kShared, "r2");
  EXPECT_TRUE(Guard(Booking(1000, {1}), {Device(1, {Proc(1001, 6)})}, {theirs}).ready);
  // A booking that has not started yet does not count.
  theirs.start = kNow + 60;
  EXPECT_FALSE(Guard(Booking(1000, {1}), {Device(1, {Proc(1001, 6)})}, {theirs}).ready);
}

TEST(GuardTest, RootContainerProcessFollowsTheMonitorsAttribution) {
  gpu::ProcessSample root = Proc(0, 77, "root");
  root.container_runtime = "docker";
  root.container_id = "abcdef012345";
  EXPECT_TRUE(Guard(Booking(1000, {1}), {Device(1, {root})}).ready);
  // With two holders it is ambiguous: unknown, so it waits.
  Reservation theirs = Booking(1001, {1}, Mode::kShared, "r2");
  auto d = Guard(Booking(1000, {1}), {Device(1, {root})}, {theirs});
  EXPECT_EQ(d.key, "gpu:1:process:unknown");
  // The monitor's eligibility rule is honoured when supplied.
  GuardInput in;
  Reservation mine = Booking(1000, {1});
  in.reservation = &mine;
  in.snapshot.devices = {Device(1, {root})};
  in.active = {mine};
  in.now = kNow;
  in.eligible = [](uid_t, const std::string&) { return false; };
  EXPECT_EQ(EvaluateGuard(in).key, "gpu:1:process:unreserved");
}

TEST(GuardTest, SystemProcessesNeverBlock) {
  gpu::ProcessSample x = Proc(0, 1, "root");
  x.command = "/usr/lib/xorg/Xorg -core";
  EXPECT_TRUE(Guard(Booking(1000, {0}), {Device(0, {x})}).ready);
}

TEST(GuardTest, VramHeadroom) {
  gpu::DeviceSample full = Device(0);
  full.memory_used_mb = 60000;
  Reservation r = Booking(1000, {0});
  auto d = Guard(r, {full});  // shared 1/2: (81920-512)/2 = 40704 needed, 21408 free
  EXPECT_FALSE(d.ready);
  EXPECT_EQ(d.reason, "GPU 0 has 21408MiB launch headroom; 40704MiB is required");
  r.memory_mb = 20000;
  full.processes = {Proc(1000, 5, "me")};  // the used memory is the owner's own
  EXPECT_TRUE(Guard(r, {full}).ready);
  gpu::DeviceSample unknown = Device(0);
  unknown.memory_total_mb.reset();
  EXPECT_EQ(Guard(Booking(1000, {0}), {unknown}).key, "gpu:0:memory-capacity");
}

TEST(GuardTest, BusyWithoutProcessesWaits) {
  gpu::DeviceSample busy = Device(0);
  busy.utilization_percent = 90;
  auto d = Guard(Booking(1000, {0}, Mode::kExclusive), {busy});
  EXPECT_FALSE(d.ready);
  EXPECT_EQ(d.key, "gpu:0:busy");
}

TEST(GuardTest, NoGpusIsInvalid) {
  EXPECT_EQ(Guard(Booking(1000, {}), {Device(0)}).key, "invalid-assignment");
}

}  // namespace
}  // namespace bk::worker
