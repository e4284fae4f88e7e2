#include "gpu/nvml_source.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "gpu/nvml_fake_test.h"
#include "gpu/open_source.h"

namespace bk::gpu {
namespace {

constexpr unsigned long long kMiB = 1ULL << 20;

class NvmlSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake::g = &nvml_;
    nvml_.gpus.resize(2);
    nvml_.gpus[0].uuid = "GPU-11111111-2222-3333-4444-555555555555";
    nvml_.gpus[1].uuid = "GPU-66666666-7777-8888-9999-000000000000";
    nvml_.gpus[1].name = "Fake GPU B";
    proc_.Add(100, 1001, std::string("python\0train.py\0", 16), 5000);
    proc_.Add(200, 1002, std::string("xeyes\0", 6), 6000);
    proc_.Add(300, 0, std::string("python\0serve.py\0", 16), 7000,
              "0::/system.slice/docker-" + std::string(64, 'a') + ".scope\n");
  }
  void TearDown() override { fake::g = nullptr; }

  NvmlOptions Options() {
    NvmlOptions o;
    o.load = fake::Loader(api_);
    o.proc = &proc_;
    o.user_name = [](uid_t u) { return "user" + std::to_string(u); };
    o.monotonic_ns = [this] { return now_ns_; };
    o.wall_us = [this] { return wall_us_; };
    return o;
  }
  std::unique_ptr<NvmlSource> Make() { return std::make_unique<NvmlSource>(Options()); }

  // One sample of GPU 0 from a fresh source into *s: its process list must
  // hold `count` processes, read with version `version` of NVML's call.
  void SampleProcessList(int version, size_t count, Snapshot* s) {
    NvmlReport report;
    *s = Make()->Sample(1, &report);
    EXPECT_EQ(report.devices[0].process_list_version, version);
    ASSERT_EQ(s->devices[0].processes.size(), count);
  }

  fake::Nvml nvml_;
  nvml::Api api_ = fake::Api();
  FakeProcReader proc_;
  int64_t now_ns_ = 1'000'000'000'000;
  int64_t wall_us_ = 1'800'000'000'000'000;
};

TEST_F(NvmlSourceTest, ReadsIdentityMemoryUtilizationAndTemperature) {
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(2, &report);
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(report.state, NvmlReport::State::kReady);
  EXPECT_EQ(report.driver_version, "550.54.15");
  EXPECT_EQ(report.device_count, 2);
  ASSERT_EQ(s.devices.size(), 2u);
  const DeviceSample& d = s.devices[0];
  EXPECT_EQ(d.index, 0);
  EXPECT_EQ(d.source, Source::kNvml);
  EXPECT_EQ(d.uuid, "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(d.name, "Fake GPU");
  EXPECT_EQ(d.memory_total_mb, 80 * 1024);
  EXPECT_EQ(d.memory_used_mb, 1024);  // v2: reserved memory not counted
  EXPECT_EQ(d.utilization_percent, 37);
  EXPECT_EQ(d.temperature_c, 51);
  EXPECT_TRUE(d.process_telemetry);
  EXPECT_EQ(report.devices[0].memory_version, 2);
  EXPECT_EQ(report.devices[0].process_list_version, 3);
  EXPECT_TRUE(report.devices[0].notes.empty());
  EXPECT_EQ(s.devices[1].name, "Fake GPU B");
  EXPECT_EQ(nvml_.init_calls, 1);
}

TEST_F(NvmlSourceTest, MemoryV2UsesTheRealStructVersion) {
  auto src = Make();
  src->Sample(1);
  EXPECT_EQ(nvml_.memory_v2_version_seen, 0x02000028u);
  EXPECT_EQ(nvml::kMemoryV2Version, 0x02000028u);
}

TEST_F(NvmlSourceTest, MemoryFallsBackToV1AndStopsAskingV2) {
  nvml_.gpus[0].rc["mem2"] = nvml::kErrorFunctionNotFound;
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  EXPECT_EQ(s.devices[0].memory_used_mb, 1024 + 512);  // v1 counts reserved
  EXPECT_EQ(report.devices[0].memory_version, 1);
  src->Sample(1);
  EXPECT_EQ(nvml_.calls["mem2"], 1);
  EXPECT_EQ(nvml_.calls["mem"], 2);
}

TEST_F(NvmlSourceTest, MemoryV2MissingFromOldDriverUsesV1) {
  api_.DeviceGetMemoryInfoV2 = nullptr;
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  EXPECT_EQ(s.devices[0].memory_used_mb, 1536);
  EXPECT_EQ(report.devices[0].memory_version, 1);
}

TEST_F(NvmlSourceTest, TotalMemoryIsCachedWhenALaterReadFails) {
  auto src = Make();
  src->Sample(1);
  nvml_.gpus[0].rc["mem2"] = nvml::kErrorNoPermission;
  nvml_.gpus[0].rc["mem"] = nvml::kErrorNoPermission;
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  EXPECT_EQ(s.devices[0].memory_total_mb, 80 * 1024);
  EXPECT_FALSE(s.devices[0].memory_used_mb.has_value());
  ASSERT_FALSE(report.devices[0].notes.empty());
  EXPECT_NE(report.devices[0].notes[0].find("Insufficient Permissions"), std::string::npos);
}

TEST_F(NvmlSourceTest, NotSupportedMetricsAreSwitchedOffWithAReason) {
  nvml_.gpus[0].rc["util"] = nvml::kErrorNotSupported;
  nvml_.gpus[0].rc["temp"] = nvml::kErrorNotSupported;
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  EXPECT_FALSE(s.devices[0].utilization_percent.has_value());
  EXPECT_FALSE(s.devices[0].temperature_c.has_value());
  EXPECT_EQ(s.devices[0].memory_used_mb, 1024);  // other metrics unaffected
  s = src->Sample(1, &report);
  EXPECT_EQ(nvml_.calls["util"], 1);
  EXPECT_EQ(nvml_.calls["temp"], 1);
  // The reason is still stated on later samples.
  std::string notes;
  for (const auto& n : report.devices[0].notes) notes += n + "\n";
  EXPECT_NE(notes.find("utilization: Not Supported (NVML_ERROR_NOT_SUPPORTED)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("temperature"), std::string::npos) << notes;
}

TEST_F(NvmlSourceTest, TransientMetricErrorIsRetried) {
  nvml_.gpus[0].rc["util"] = nvml::kErrorTimeout;
  auto src = Make();
  EXPECT_FALSE(src->Sample(1).devices[0].utilization_percent.has_value());
  nvml_.gpus[0].rc.erase("util");
  EXPECT_EQ(src->Sample(1).devices[0].utilization_percent, 37);
}

TEST_F(NvmlSourceTest, InitFailureIsAStatedReasonWithBackoff) {
  nvml_.init_rc = nvml::kErrorDriverNotLoaded;
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(2, &report);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(report.state, NvmlReport::State::kFailed);
  EXPECT_NE(s.error.find("NVML initialisation failed: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)"),
            std::string::npos)
      << s.error;
  ASSERT_EQ(s.devices.size(), 2u);
  EXPECT_EQ(s.devices[1].source, Source::kNone);
  EXPECT_EQ(s.devices[1].name, "unknown");

  nvml_.init_rc = nvml::kSuccess;
  now_ns_ += 29'000'000'000;  // still inside the 30 s backoff
  s = src->Sample(2, &report);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(report.state, NvmlReport::State::kBackoff);
  EXPECT_NE(s.error.find("next NVML attempt in 1 s"), std::string::npos) << s.error;
  EXPECT_EQ(nvml_.init_calls, 1);
  EXPECT_FALSE(src->DeviceCount().has_value());

  now_ns_ += 1'000'000'000;
  s = src->Sample(2, &report);
  EXPECT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(nvml_.init_calls, 2);
  EXPECT_EQ(nvml_.shutdown_calls, 0);  // a failed nvmlInit has nothing to shut down
}

TEST_F(NvmlSourceTest, MissingLibraryIsReportedAsNoLibrary) {
  NvmlOptions o = Options();
  o.load = []() -> std::expected<std::unique_ptr<nvml::Library>, nvml::LoadError> {
    return std::unexpected(nvml::LoadError{nvml::LoadFailure::kNoLibrary, "NVML library not found (x)"});
  };
  NvmlSource src(o);
  NvmlReport report;
  Snapshot s = src.Sample(1, &report);
  EXPECT_EQ(report.state, NvmlReport::State::kNoLibrary);
  EXPECT_EQ(s.error, "NVML library not found (x)");
  src.Sample(1, &report);
  EXPECT_EQ(report.state, NvmlReport::State::kNoLibrary);  // also during the backoff
}

TEST_F(NvmlSourceTest, ImplausibleDeviceCountFailsInit) {
  nvml_.gpus.clear();
  auto src = Make();
  Snapshot s = src->Sample(1);
  EXPECT_NE(s.error.find("NVML reported 0 devices"), std::string::npos) << s.error;
  EXPECT_EQ(nvml_.shutdown_calls, 1);
}

TEST_F(NvmlSourceTest, SessionFatalErrorClosesAndBacksOff) {
  auto src = Make();
  ASSERT_TRUE(src->Sample(2).ok());
  nvml_.gpus[1].rc["util"] = nvml::kErrorDriverNotLoaded;
  NvmlReport report;
  Snapshot s = src->Sample(2, &report);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.error.find("utilization: Driver Not Loaded"), std::string::npos) << s.error;
  EXPECT_EQ(s.devices[0].source, Source::kNone);  // a dead session's data is not trusted
  EXPECT_EQ(nvml_.shutdown_calls, 1);
  nvml_.gpus[1].rc.clear();
  now_ns_ += 30'000'000'000;
  EXPECT_TRUE(src->Sample(2).ok());
  EXPECT_EQ(nvml_.init_calls, 2);
}

TEST_F(NvmlSourceTest, CloseReinitialisesWithoutBackoffAndDestructorShutsDown) {
  auto src = Make();
  src->Sample(1);
  src->Close();
  EXPECT_EQ(nvml_.shutdown_calls, 1);
  EXPECT_TRUE(src->Sample(1).ok());
  EXPECT_EQ(nvml_.init_calls, 2);
  src.reset();
  EXPECT_EQ(nvml_.shutdown_calls, 2);
}

TEST_F(NvmlSourceTest, GpuCountLargerOrSmallerThanNvml) {
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(3, &report);
  ASSERT_EQ(s.devices.size(), 3u);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.devices[2].source, Source::kNone);
  ASSERT_EQ(report.devices[2].notes.size(), 1u);
  EXPECT_NE(report.devices[2].notes[0].find("NVML reports 2 GPU(s)"), std::string::npos);
  EXPECT_EQ(src->Sample(1).devices.size(), 1u);
  EXPECT_EQ(src->DeviceCount().value(), 2);
}

TEST_F(NvmlSourceTest, DeviceWithoutHandleIsAPlaceholder) {
  nvml_.gpus[0].rc["handle"] = nvml::kErrorNoPermission;
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(2, &report);
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.devices[0].source, Source::kNone);
  EXPECT_FALSE(report.devices[0].present);
  EXPECT_NE(report.devices[0].notes.at(0).find("NVML device 0 handle"), std::string::npos);
  EXPECT_EQ(s.devices[1].source, Source::kNvml);
}

TEST_F(NvmlSourceTest, UuidIsValidatedRetriedAndCached) {
  nvml_.gpus[0].rc["uuid"] = nvml::kErrorUnknown;
  nvml_.gpus[1].uuid = "not a uuid";
  auto src = Make();
  Snapshot s = src->Sample(2);
  EXPECT_EQ(s.devices[0].uuid, "");
  EXPECT_EQ(s.devices[1].uuid, "");
  nvml_.gpus[0].rc.clear();
  s = src->Sample(2);
  EXPECT_EQ(s.devices[0].uuid, "GPU-11111111-2222-3333-4444-555555555555");
  s = src->Sample(2);
  EXPECT_EQ(nvml_.calls["uuid"], 2 + 3);  // gpu 0: fail, ok, then cached; gpu 1: asked every sample
  EXPECT_EQ(nvml_.calls["name"], 2);      // names asked once per device
}

TEST_F(NvmlSourceTest, ProcessesMergedByPidWithHostIdentity) {
  nvml_.gpus[0].compute = {{100, 1024 * kMiB}, {300, 2048 * kMiB}};
  nvml_.gpus[0].graphics = {{100, 512 * kMiB}, {200, 256 * kMiB}};
  auto src = Make();
  Snapshot s = src->Sample(1);
  const auto& ps = s.devices[0].processes;
  ASSERT_EQ(ps.size(), 3u);
  EXPECT_EQ(ps[0].pid, 100);
  EXPECT_EQ(ps[0].kind, "C+G");
  EXPECT_EQ(ps[0].gpu_memory_mb, 1024);
  EXPECT_EQ(ps[0].uid, 1001u);
  EXPECT_EQ(ps[0].host_uid, 1001u);
  EXPECT_EQ(ps[0].username, "user1001");
  EXPECT_EQ(ps[0].command, "python train.py");
  EXPECT_EQ(ps[0].host_start_id, "5000");
  EXPECT_EQ(ps[0].identity_source, "host");
  EXPECT_EQ(ps[1].pid, 200);
  EXPECT_EQ(ps[1].kind, "G");
  EXPECT_EQ(ps[2].pid, 300);
  EXPECT_EQ(ps[2].uid, 0u);
  EXPECT_EQ(ps[2].container_runtime, "docker");
  EXPECT_EQ(ps[2].container_id, std::string(64, 'a'));
}

TEST_F(NvmlSourceTest, UnavailableProcessMemoryCountsAsZero) {
  nvml_.gpus[0].compute = {{100, nvml::kValueNotAvailable}};
  auto src = Make();
  Snapshot s = src->Sample(1);
  ASSERT_EQ(s.devices[0].processes.size(), 1u);
  EXPECT_EQ(s.devices[0].processes[0].gpu_memory_mb, 0);
}

TEST_F(NvmlSourceTest, UnattributablePidIsKeptAsUnknown) {
  nvml_.gpus[0].compute = {{4242, 10 * kMiB}};  // not in /proc: exited, or hidden
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  ASSERT_EQ(s.devices[0].processes.size(), 1u);
  EXPECT_FALSE(s.devices[0].processes[0].uid.has_value());
  EXPECT_EQ(s.devices[0].processes[0].username, "?");
  EXPECT_EQ(report.devices[0].process_list_version, 3);  // every version agreed; the newest is kept
}

TEST_F(NvmlSourceTest, V3WithThe32ByteRecordsFallsBackToV2) {
  nvml_.gpus[0].compute = {{100, 1024 * kMiB}, {200, 512 * kMiB}};
  nvml_.gpus[0].v3_record = 32;  // R535: second record read at 24 bytes has pid 0
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  ASSERT_EQ(s.devices[0].processes.size(), 2u);
  EXPECT_EQ(s.devices[0].processes[1].pid, 200);
  EXPECT_EQ(s.devices[0].processes[1].gpu_memory_mb, 512);
  EXPECT_EQ(report.devices[0].process_list_version, 2);
  EXPECT_NE(report.devices[0].notes.at(0).find("v3 returned implausible records"), std::string::npos);
  src->Sample(1);
  EXPECT_EQ(nvml_.calls["compute3"], 1);  // never asked again
  EXPECT_EQ(nvml_.calls["compute2"], 2);
}

TEST_F(NvmlSourceTest, V3With16ByteRecordsIsRejected) {
  nvml_.gpus[0].compute = {{100, 1024 * kMiB}, {200, 512 * kMiB}};
  nvml_.gpus[0].v3_record = 16;  // instance ids would be the next record's pid
  Snapshot s;
  ASSERT_NO_FATAL_FAILURE(SampleProcessList(2, 2, &s));
  EXPECT_EQ(s.devices[0].processes[0].gpu_memory_mb, 1024);
}

TEST_F(NvmlSourceTest, GarbagePidsAndMemoryAreRejectedDownToV1) {
  // Instance ids that look like pids in v2 and v3: only v1 (no ids) is plausible.
  nvml_.gpus[0].compute = {{100, 1024 * kMiB, 31337, 31337}};
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  EXPECT_EQ(report.devices[0].process_list_version, 1);
  ASSERT_EQ(s.devices[0].processes.size(), 1u);
  // Memory beyond the GPU's total, or a pid beyond PID_MAX_LIMIT, in every version.
  nvml_.gpus[0].compute = {{100, 100ULL << 40}};
  s = src->Sample(1, &report);
  EXPECT_FALSE(s.devices[0].process_telemetry);
  EXPECT_TRUE(s.devices[0].processes.empty());
  fake::Nvml fresh;
  fresh.gpus.resize(1);
  fresh.gpus[0].compute = {{0x7FFFFFFFu, kMiB}};
  fake::g = &fresh;
  auto src2 = Make();
  s = src2->Sample(1);
  EXPECT_FALSE(s.devices[0].process_telemetry);
  fake::g = &nvml_;
}

TEST_F(NvmlSourceTest, V3PidsMissingFromProcPreferAnOlderVersionThatAgreesWithProc) {
  // A v3 whose only record is plausible but names a pid /proc does not know,
  // while v2 names a real one: v2 wins for this sample.
  nvml_.gpus[0].compute = {{100, 1024 * kMiB}};
  api_.compute[nvml::kV3] = [](nvml::Device, unsigned int* n, void* p) -> nvml::Return {
    nvml::ProcessInfoV2 info{9999, 1024 * kMiB, 0xFFFFFFFFu, 0xFFFFFFFFu};
    std::memcpy(p, &info, sizeof info);
    *n = 1;
    return nvml::kSuccess;
  };
  Snapshot s;
  ASSERT_NO_FATAL_FAILURE(SampleProcessList(2, 1, &s));
  EXPECT_EQ(s.devices[0].processes[0].pid, 100);
}

TEST_F(NvmlSourceTest, UnsupportedV3AndMissingV2UseV1) {
  nvml_.gpus[0].compute = {{100, 1024 * kMiB}};
  nvml_.gpus[0].rc["compute3"] = nvml::kErrorFunctionNotFound;
  api_.compute[nvml::kV2] = nullptr;
  Snapshot s;
  ASSERT_NO_FATAL_FAILURE(SampleProcessList(1, 1, &s));
  EXPECT_TRUE(s.devices[0].process_telemetry);
  EXPECT_EQ(s.devices[0].processes[0].gpu_memory_mb, 1024);
}

TEST_F(NvmlSourceTest, ManyProcessesGrowTheBuffer) {
  for (unsigned pid = 1000; pid < 1300; ++pid) {
    nvml_.gpus[0].compute.push_back({pid, kMiB});
    proc_.Add(static_cast<int>(pid), 1001, "worker", pid);
  }
  auto src = Make();
  Snapshot s = src->Sample(1);
  EXPECT_EQ(s.devices[0].processes.size(), 300u);
  EXPECT_EQ(s.devices[0].processes.back().pid, 1299);
}

TEST_F(NvmlSourceTest, ComputeFailureMeansNoProcessTelemetryGraphicsFailureDoesNot) {
  nvml_.gpus[0].compute = {{100, kMiB}};
  nvml_.gpus[0].graphics = {{200, kMiB}};
  for (const char* f : {"graphics1", "graphics2", "graphics3"})
    nvml_.gpus[0].rc[f] = nvml::kErrorNoPermission;
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  EXPECT_TRUE(s.devices[0].process_telemetry);
  ASSERT_EQ(s.devices[0].processes.size(), 1u);
  nvml_.gpus[0].rc.clear();
  for (const char* f : {"compute1", "compute2", "compute3"}) nvml_.gpus[0].rc[f] = nvml::kErrorNoPermission;
  s = src->Sample(1, &report);
  EXPECT_FALSE(s.devices[0].process_telemetry);
  EXPECT_FALSE(report.devices[0].process_utilization);
  EXPECT_NE(report.devices[0].notes.back().find("compute processes (v3): Insufficient Permissions"),
            std::string::npos);
}

TEST_F(NvmlSourceTest, ProcessUtilizationNotFoundMeansSupportedWithoutSamples) {
  nvml_.gpus[0].compute = {{100, kMiB}};
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  EXPECT_TRUE(report.devices[0].process_utilization);
  EXPECT_FALSE(s.devices[0].processes[0].sm_utilization_percent.has_value());
  // The first cursor is two seconds before the first sample.
  EXPECT_EQ(nvml_.last_seen_asked, static_cast<unsigned long long>(wall_us_ - 2'000'000));
}

TEST_F(NvmlSourceTest, ProcessUtilizationTakesNewestSampleAndAdvancesCursor) {
  nvml_.gpus[0].compute = {{100, kMiB}, {200, kMiB}};
  const auto t0 = static_cast<unsigned long long>(wall_us_);
  nvml_.gpus[0].samples = {{100, t0 - 500'000, 10, 0, 0, 0},
                           {100, t0 - 100'000, 55, 0, 0, 0},
                           {200, t0 - 200'000, 101, 0, 0, 0}};  // > 100 %: dropped
  auto src = Make();
  NvmlReport report;
  Snapshot s = src->Sample(1, &report);
  EXPECT_TRUE(report.devices[0].process_utilization);
  EXPECT_EQ(s.devices[0].processes[0].sm_utilization_percent, 55);
  EXPECT_FALSE(s.devices[0].processes[1].sm_utilization_percent.has_value());
  s = src->Sample(1, &report);
  EXPECT_EQ(nvml_.last_seen_asked, t0 - 100'000);
  EXPECT_TRUE(report.devices[0].process_utilization);  // nothing newer: NOT_FOUND, still supported
}

TEST_F(NvmlSourceTest, ProcessUtilizationNotSupportedIsSwitchedOff) {
  nvml_.gpus[0].rc["procutil"] = nvml::kErrorNotSupported;  // e.g. MIG mode
  auto src = Make();
  NvmlReport report;
  src->Sample(1, &report);
  EXPECT_FALSE(report.devices[0].process_utilization);
  src->Sample(1, &report);
  EXPECT_FALSE(report.devices[0].process_utilization);
  EXPECT_EQ(nvml_.calls["procutil"], 1);
  api_.DeviceGetProcessUtilization = nullptr;  // an old driver without the symbol
  auto old = Make();
  old->Sample(1, &report);
  EXPECT_FALSE(report.devices[0].process_utilization);
}

TEST_F(NvmlSourceTest, LazyNothingLoadsBeforeTheFirstSample) {
  int loads = 0;
  NvmlOptions o = Options();
  o.load = [&loads, api = api_]() -> std::expected<std::unique_ptr<nvml::Library>, nvml::LoadError> {
    ++loads;
    return std::make_unique<nvml::Library>(nullptr, api, "fake");
  };
  NvmlSource src(o);
  EXPECT_EQ(loads, 0);
  EXPECT_EQ(nvml_.init_calls, 0);
  EXPECT_EQ(src.DeviceCount().value(), 2);
  src.Sample(2);
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(nvml_.init_calls, 1);  // DeviceCount's session is reused
}

// On this machine there is no libnvidia-ml: the default source must behave
// exactly like the count-only one (no error), and the loader must say why.
TEST(NvmlLoadTest, WithoutTheLibraryDefaultSourceIsCountOnly) {
  if (void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(h);
    GTEST_SKIP() << "libnvidia-ml is installed here";
  }
  auto loaded = nvml::Load();
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().failure, nvml::LoadFailure::kNoLibrary);
  EXPECT_NE(loaded.error().message.find("libnvidia-ml.so.1"), std::string::npos) << loaded.error().message;
  OpenedSource opened = OpenSource("");
  Snapshot s = opened.source->Sample(3);
  EXPECT_TRUE(s.ok());
  ASSERT_EQ(s.devices.size(), 3u);
  EXPECT_EQ(s.devices[0].source, Source::kNone);
  EXPECT_FALSE(SharedNvml().DeviceCount().has_value());
  EXPECT_EQ(opened.source->Describe(), "none (GPU count only)");
}

TEST(NvmlLoadTest, ReturnNames) {
  EXPECT_STREQ(nvml::ReturnName(nvml::kErrorInsufficientSize), "NVML_ERROR_INSUFFICIENT_SIZE");
  EXPECT_STREQ(nvml::ReturnName(nvml::kErrorLibRmVersionMismatch), "NVML_ERROR_LIB_RM_VERSION_MISMATCH");
  EXPECT_STREQ(nvml::ReturnName(12345), "NVML_ERROR_UNRECOGNISED");
}

}  // namespace
}  // namespace bk::gpu
