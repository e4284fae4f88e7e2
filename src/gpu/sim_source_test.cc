#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "base/members_testing.h"
#include "base/temp_dir_testing.h"
#include "gpu/open_source.h"
#include "gpu/snapshot.h"
#include "gpu/source.h"

namespace bk::gpu {
namespace {

const std::string kWhat = "simulation file /x/sim.json";

std::string InvalidMessage(const std::string& problem) {
  return kWhat + " is invalid: " + problem + "; fix the file or unset BK_GPU_SIM_FILE";
}

Snapshot MustParse(const std::string& text, int gpu_count = 1) {
  auto snap = ParseSimulation(text, gpu_count, kWhat);
  EXPECT_TRUE(snap.has_value()) << text << "\n" << (snap ? "" : snap.error().message);
  return snap ? *snap : Snapshot{};
}

// Every member parsing fills in, of a device (its processes aside) and of a process.
void ExpectParsed(const DeviceSample& want, const DeviceSample& got) {
  using D = DeviceSample;
  ExpectSameMembers(want, got, &D::index, &D::uuid, &D::name, &D::memory_used_mb, &D::memory_total_mb,
                    &D::utilization_percent, &D::temperature_c, &D::source, &D::process_telemetry);
}
void ExpectParsed(const ProcessSample& want, const ProcessSample& got) {
  using P = ProcessSample;
  ExpectSameMembers(want, got, &P::pid, &P::uid, &P::host_uid, &P::username, &P::command, &P::gpu_memory_mb,
                    &P::sm_utilization_percent, &P::kind, &P::host_start_id, &P::identity_source,
                    &P::container_runtime, &P::container_id);
}

std::string ManyGpus(int n) {
  std::string text = "[";
  for (int i = 0; i < n; ++i) text += (i ? ",{\"index\":" : "{\"index\":") + std::to_string(i) + "}";
  return text + "]";
}

std::string ManyProcesses(int n) {
  std::string text = "[{\"index\":0,\"processes\":[";
  for (int i = 0; i < n; ++i) text += i ? ",{\"pid\":1}" : "{\"pid\":1}";
  return text + "]}]";
}

// One file, one validation rule it breaks, and the problem named in the message.
struct BadCase {
  std::string text;
  std::string problem;
};

class InvalidSimulation : public ::testing::TestWithParam<BadCase> {};

TEST_P(InvalidSimulation, RefusedWithPathAndFix) {
  auto snap = ParseSimulation(GetParam().text, 4, kWhat);
  ASSERT_FALSE(snap.has_value()) << GetParam().text.substr(0, 200);
  EXPECT_EQ(snap.error().kind, ErrorKind::kInvalid);
  EXPECT_EQ(snap.error().message, InvalidMessage(GetParam().problem)) << GetParam().text.substr(0, 200);
  EXPECT_EQ(snap.error().message.find('\n'), std::string::npos);
}

const std::string kP = R"([{"index":0,"processes":[)";  // prefix for one process
const std::string kE = "]}]";

INSTANTIATE_TEST_SUITE_P(
    Rules, InvalidSimulation,
    ::testing::Values(
        // top level
        BadCase{R"("gpus")", "the top level must be an object with a gpus array, or an array"},
        BadCase{"42", "the top level must be an object with a gpus array, or an array"},
        BadCase{"{}", "gpus is required (an object with a gpus array, or an array)"},
        BadCase{R"({"gpu":[{"index":0}]})", "gpus is required (an object with a gpus array, or an array)"},
        BadCase{R"({"gpus":{"index":0}})", "gpus must be an array"},
        BadCase{R"({"gpus":null})", "gpus must be an array"},
        BadCase{"[]", "gpus must list at least one GPU"},
        BadCase{R"({"gpus":[]})", "gpus must list at least one GPU"},
        BadCase{ManyGpus(1025), "gpus has 1025 entries; at most 1024"},
        BadCase{R"({"error":5,"gpus":[{"index":0}]})", "error must be a string"},
        BadCase{R"({"error":"lost","gpus":[{}]})", "gpus[0].index is required"},
        // per GPU
        BadCase{"[1]", "gpus[0] must be an object"},
        BadCase{R"([{"index":0},[]])", "gpus[1] must be an object"},
        BadCase{"[{}]", "gpus[0].index is required"},
        BadCase{R"([{"index":null}])", "gpus[0].index must be an integer"},
        BadCase{R"([{"index":0},{"index":"1"}])", "gpus[1].index must be an integer"},
        BadCase{R"([{"index":true}])", "gpus[0].index must be an integer"},
        BadCase{R"([{"index":0.5}])", "gpus[0].index must be an integer"},
        BadCase{R"([{"index":-1}])", "gpus[0].index must be between 0 and 1023 (got -1)"},
        BadCase{R"([{"index":1024}])", "gpus[0].index must be between 0 and 1023 (got 1024)"},
        BadCase{R"([{"index":0},{"index":0}])", "gpus[1].index 0 is already used by gpus[0]"},
        BadCase{R"([{"index":1},{"index":0},{"index":1}])", "gpus[2].index 1 is already used by gpus[0]"},
        BadCase{R"([{"index":0},{"index":2}])",
                "gpus indices must run from 0 to 1 without gaps, but index 1 is missing"},
        BadCase{R"([{"index":1}])", "gpus indices must run from 0 to 0 without gaps, but index 0 is missing"},
        BadCase{R"([{"index":0,"uuid":5}])", "gpus[0].uuid must be a string"},
        BadCase{R"([{"index":0,"name":5}])", "gpus[0].name must be a string"},
        BadCase{R"([{"index":0,"memory_used_mb":-1,"memory_total_mb":10}])",
                "gpus[0].memory_used_mb must be at least 0 (got -1)"},
        BadCase{R"([{"index":0,"memory_used_mb":true}])", "gpus[0].memory_used_mb must be an integer"},
        BadCase{R"([{"index":0,"memory_used_mb":null}])", "gpus[0].memory_used_mb must be an integer"},
        BadCase{R"([{"index":0,"memory_total_mb":1.5}])", "gpus[0].memory_total_mb must be an integer"},
        BadCase{R"([{"index":0,"memory_total_mb":"80"}])", "gpus[0].memory_total_mb must be an integer"},
        BadCase{R"([{"index":0,"memory_total_mb":-5}])",
                "gpus[0].memory_total_mb must be at least 0 (got -5)"},
        BadCase{R"([{"index":0,"memory_total_mb":1e30}])",
                "gpus[0].memory_total_mb must be at least 0 (got 1e+30)"},
        BadCase{R"([{"index":0,"memory_total_mb":18446744073709551615}])",
                "gpus[0].memory_total_mb must be at least 0 (got 18446744073709551615)"},
        BadCase{R"([{"index":0,"memory_used_mb":900,"memory_total_mb":800}])",
                "gpus[0].memory_used_mb (900) exceeds memory_total_mb (800)"},
        BadCase{R"([{"index":0,"memory_used_mb":1}])",
                "gpus[0].memory_used_mb (1) exceeds memory_total_mb (0)"},
        BadCase{R"([{"index":0,"utilization_percent":101}])",
                "gpus[0].utilization_percent must be between 0 and 100 (got 101)"},
        BadCase{R"([{"index":0,"utilization_percent":-1}])",
                "gpus[0].utilization_percent must be between 0 and 100 (got -1)"},
        BadCase{R"([{"index":0,"utilization_percent":"50"}])",
                "gpus[0].utilization_percent must be an integer"},
        BadCase{R"([{"index":0,"utilization_percent":false}])",
                "gpus[0].utilization_percent must be an integer"},
        BadCase{R"([{"index":0,"utilization_percent":50.5}])",
                "gpus[0].utilization_percent must be an integer"},
        BadCase{R"([{"index":0,"temperature_c":251}])",
                "gpus[0].temperature_c must be between -100 and 250 (got 251)"},
        BadCase{R"([{"index":0,"temperature_c":-101}])",
                "gpus[0].temperature_c must be between -100 and 250 (got -101)"},
        BadCase{R"([{"index":0,"processes":{}}])", "gpus[0].processes must be an array"},
        BadCase{R"([{"index":0,"processes":"none"}])", "gpus[0].processes must be an array"},
        BadCase{ManyProcesses(100001), "gpus[0].processes has 100001 entries; at most 100000"},
        // per process
        BadCase{kP + "5" + kE, "gpus[0].processes[0] must be an object"},
        BadCase{kP + "{}" + kE, "gpus[0].processes[0].pid is required"},
        BadCase{kP + R"({"pid":1},{"uid":5})" + kE, "gpus[0].processes[1].pid is required"},
        BadCase{kP + R"({"pid":0})" + kE,
                "gpus[0].processes[0].pid must be between 1 and 2147483647 (got 0)"},
        BadCase{kP + R"({"pid":2147483648})" + kE,
                "gpus[0].processes[0].pid must be between 1 and 2147483647 (got 2147483648)"},
        BadCase{kP + R"({"pid":true})" + kE, "gpus[0].processes[0].pid must be an integer"},
        BadCase{kP + R"({"pid":1.5})" + kE, "gpus[0].processes[0].pid must be an integer"},
        BadCase{kP + R"({"pid":null})" + kE, "gpus[0].processes[0].pid must be an integer"},
        BadCase{kP + R"({"pid":1,"uid":-1})" + kE,
                "gpus[0].processes[0].uid must be between 0 and 4294967294 (got -1)"},
        BadCase{kP + R"({"pid":1,"uid":4294967295})" + kE,
                "gpus[0].processes[0].uid must be between 0 and 4294967294 (got 4294967295)"},
        BadCase{kP + R"({"pid":1,"uid":"1000"})" + kE, "gpus[0].processes[0].uid must be an integer"},
        BadCase{kP + R"({"pid":1,"uid":true})" + kE, "gpus[0].processes[0].uid must be an integer"},
        BadCase{kP + R"({"pid":1,"host_uid":-1})" + kE,
                "gpus[0].processes[0].host_uid must be between 0 and 4294967294 (got -1)"},
        BadCase{kP + R"({"pid":1,"username":5})" + kE, "gpus[0].processes[0].username must be a string"},
        BadCase{kP + R"({"pid":1,"command":["python"]})" + kE,
                "gpus[0].processes[0].command must be a string"},
        BadCase{kP + R"({"pid":1,"gpu_memory_mb":-1})" + kE,
                "gpus[0].processes[0].gpu_memory_mb must be at least 0 (got -1)"},
        BadCase{kP + R"({"pid":1,"gpu_memory_mb":1.25})" + kE,
                "gpus[0].processes[0].gpu_memory_mb must be an integer"},
        BadCase{kP + R"({"pid":1,"sm_utilization_percent":101})" + kE,
                "gpus[0].processes[0].sm_utilization_percent must be between 0 and 100 (got 101)"},
        BadCase{kP + R"({"pid":1,"sm_utilization_percent":true})" + kE,
                "gpus[0].processes[0].sm_utilization_percent must be an integer"},
        BadCase{kP + R"({"pid":1,"kind":1})" + kE, "gpus[0].processes[0].kind must be a string"},
        BadCase{kP + R"({"pid":1,"host_start_id":5})" + kE,
                "gpus[0].processes[0].host_start_id must be a string"},
        BadCase{R"([{"index":0},{"index":1,"processes":[{"pid":1},{"pid":-4}]}])",
                "gpus[1].processes[1].pid must be between 1 and 2147483647 (got -4)"}));

TEST(ParseSimulation, SyntaxErrorsAreOneLine) {
  for (std::string text : {"", "{", "[{\"index\":0,}]", "nope", "[{\"index\":0}] trailing",
                           "[{\"index\":1e400}]", "{\"gpus\":[\"\xff\"]}"}) {
    auto snap = ParseSimulation(text, 1, kWhat);
    ASSERT_FALSE(snap.has_value()) << text;
    EXPECT_EQ(snap.error().kind, ErrorKind::kInvalid);
    const std::string& m = snap.error().message;
    EXPECT_EQ(m.rfind(kWhat + " is invalid: not valid JSON: ", 0), 0u) << m;
    EXPECT_NE(m.find("; fix the file or unset BK_GPU_SIM_FILE"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(m.find("[json.exception"), std::string::npos) << m;
    for (char c : m) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << m;  // printable ASCII, even for bad UTF-8
  }
}

TEST(ParseSimulation, DeepNestingIsAnErrorNotACrash) {
  std::string deep(200000, '[');
  deep += std::string(200000, ']');
  auto snap = ParseSimulation(deep, 1, kWhat);
  ASSERT_FALSE(snap.has_value());
  EXPECT_EQ(snap.error().message, InvalidMessage("nests deeper than 64 levels"));
}

TEST(ParseSimulation, LimitsAreInclusive) {
  Snapshot many = MustParse(ManyGpus(1024), 1024);
  EXPECT_EQ(many.devices.size(), 1024u);
  EXPECT_EQ(many.devices[1023].index, 1023);
  Snapshot procs = MustParse(ManyProcesses(100000));
  EXPECT_EQ(procs.devices[0].processes.size(), 100000u);
  Snapshot bounds = MustParse(
      R"([{"index":0,"utilization_percent":100,"temperature_c":-100,"memory_used_mb":5,"memory_total_mb":5,
           "processes":[{"pid":2147483647,"uid":4294967294,"sm_utilization_percent":100},
                        {"pid":1,"uid":0,"sm_utilization_percent":0}]},
          {"index":1,"utilization_percent":0,"temperature_c":250}])",
      2);
  EXPECT_EQ(bounds.devices[0].utilization_percent, 100);
  EXPECT_EQ(bounds.devices[0].temperature_c, -100);
  EXPECT_EQ(bounds.devices[1].temperature_c, 250);
  EXPECT_EQ(bounds.devices[0].processes[0].pid, 2147483647);
  EXPECT_EQ(bounds.devices[0].processes[0].uid, std::optional<uid_t>(4294967294u));
}

TEST(ParseSimulation, FullDevice) {
  Snapshot snap = MustParse(R"({"gpus":[
    {"index":0,"uuid":"GPU-5d9a3c1e-7b2f-4e8a-9c61-0f3b2a7d4e10","name":"NVIDIA A100-SXM4-80GB",
     "memory_used_mb":40960,"memory_total_mb":81920,"utilization_percent":87,"temperature_c":64,
     "processes":[{"pid":4242,"uid":1001,"username":"alice","command":"python train.py --epochs 10",
                   "gpu_memory_mb":40000,"sm_utilization_percent":85,"kind":"C+G","host_start_id":"1234:5678",
                   "host_uid":1001,"identity_source":"container-reservation",
                   "container_runtime":"docker","container_id":"0123456789ab"}]}]})");
  ASSERT_TRUE(snap.ok());
  ASSERT_EQ(snap.devices.size(), 1u);
  const DeviceSample& d = snap.devices[0];
  ExpectParsed({.index = 0,
                .uuid = "GPU-5d9a3c1e-7b2f-4e8a-9c61-0f3b2a7d4e10",
                .name = "NVIDIA A100-SXM4-80GB",
                .memory_used_mb = 40960,
                .memory_total_mb = 81920,
                .utilization_percent = 87,
                .temperature_c = 64,
                .source = Source::kSimulation,
                .process_telemetry = true},
               d);
  ASSERT_EQ(d.processes.size(), 1u);
  ExpectParsed({.pid = 4242,
                .uid = 1001,
                .username = "alice",
                .command = "python train.py --epochs 10",
                .gpu_memory_mb = 40000,
                .sm_utilization_percent = 85,
                .kind = "C+G",
                .host_start_id = "1234:5678",
                .identity_source = "container-reservation",
                .container_runtime = "docker",
                .container_id = "0123456789ab",
                .host_uid = 1001},
               d.processes[0]);
}

TEST(ParseSimulation, Defaults) {
  Snapshot snap = MustParse(R"([{"index":0,"processes":[{"pid":5}]}])");
  const DeviceSample& d = snap.devices[0];
  ExpectParsed({.index = 0,
                .uuid = "",
                .name = "simulated",
                .memory_used_mb = 0,
                .memory_total_mb = 0,
                .utilization_percent = std::nullopt,
                .temperature_c = std::nullopt,
                .source = Source::kSimulation,
                .process_telemetry = true},
               d);
  ASSERT_EQ(d.processes.size(), 1u);
  ExpectParsed({.pid = 5,
                .uid = std::nullopt,
                .username = "?",
                .command = "",
                .gpu_memory_mb = 0,
                .sm_utilization_percent = std::nullopt,
                .kind = "C",
                .host_start_id = "",
                .identity_source = "host",
                .container_runtime = "",
                .container_id = "",
                .host_uid = std::nullopt},
               d.processes[0]);
}

TEST(ParseSimulation, NullMeansDefaultForOptionalFields) {
  Snapshot snap = MustParse(
      R"([{"index":0,"uuid":null,"name":null,"utilization_percent":null,"temperature_c":null,"processes":[
           {"pid":5,"uid":null,"username":null,"command":null,"sm_utilization_percent":null,"kind":null}]}])");
  const DeviceSample& d = snap.devices[0];
  EXPECT_EQ(d.name, "simulated");
  EXPECT_FALSE(d.utilization_percent.has_value());
  EXPECT_EQ(d.processes[0].username, "?");
  EXPECT_EQ(d.processes[0].kind, "C");
  EXPECT_EQ(MustParse(R"([{"index":0,"processes":null}])").devices[0].processes.size(), 0u);
}

TEST(ParseSimulation, IntegralFloatsAccepted) {
  Snapshot snap = MustParse(R"([{"index":0.0,"memory_used_mb":1024.0,"memory_total_mb":2048,
                                 "processes":[{"pid":7.0,"uid":1000.0}]}])");
  EXPECT_EQ(snap.devices[0].memory_used_mb, 1024);
  EXPECT_EQ(snap.devices[0].processes[0].pid, 7);
  EXPECT_EQ(snap.devices[0].processes[0].uid, std::optional<uid_t>(1000));
}

TEST(ParseSimulation, DevicesInIndexOrder) {
  Snapshot snap = MustParse(R"([{"index":2,"name":"c"},{"index":0,"name":"a"},{"index":1,"name":"b"}])", 3);
  ASSERT_EQ(snap.devices.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(snap.devices[i].index, i);
    EXPECT_EQ(snap.devices[i].name, std::string(1, static_cast<char>('a' + i)));
  }
}

TEST(ParseSimulation, InvalidUuidReadsAsUnknown) {
  EXPECT_EQ(MustParse(R"([{"index":0,"uuid":"not-a-uuid"}])").devices[0].uuid, "");
  EXPECT_EQ(MustParse(R"([{"index":0,"uuid":"GPU-has space"}])").devices[0].uuid, "");
  EXPECT_EQ(MustParse(R"([{"index":0,"uuid":"MIG-1/2/3"}])").devices[0].uuid, "MIG-1/2/3");
}

TEST(ParseSimulation, UnknownKeysIgnored) {
  Snapshot snap =
      MustParse(R"({"comment":"x","gpus":[{"index":0,"vendor":"nvidia","processes":[{"pid":1,"x":2}]}]})");
  EXPECT_EQ(snap.devices.size(), 1u);
}

struct IdentityCase {
  std::string json_value;
  std::string want;
};

TEST(ParseSimulation, IdentitySource) {
  for (const IdentityCase& c :
       std::vector<IdentityCase>{{R"("host")", "host"},
                                 {R"("container-reservation")", "container-reservation"},
                                 {R"("container-ambiguous")", "container-ambiguous"},
                                 {R"("verified")", "host"},
                                 {R"("HOST")", "host"},
                                 {"5", "host"},
                                 {"null", "host"}}) {
    Snapshot snap =
        MustParse(R"([{"index":0,"processes":[{"pid":1,"identity_source":)" + c.json_value + "}]}]");
    EXPECT_EQ(snap.devices[0].processes[0].identity_source, c.want) << c.json_value;
  }
}

struct ContainerCase {
  std::string fields;
  std::string runtime;
  std::string id;
};

TEST(ParseSimulation, ContainerFieldsKeptOnlyAsAValidPair) {
  const std::string hex64(64, 'f');
  for (const ContainerCase& c : std::vector<ContainerCase>{
           {R"("container_runtime":"docker","container_id":"0123456789ab")", "docker", "0123456789ab"},
           {R"("container_runtime":"containerd","container_id":")" + hex64 + "\"", "containerd", hex64},
           {R"("container_runtime":"podman","container_id":"abcdef0123456")", "podman", "abcdef0123456"},
           {R"("container_runtime":"docker","container_id":")" + hex64 + "0\"", "", ""},  // 65 chars
           {R"("container_runtime":"docker","container_id":"0123456789a")", "", ""},      // 11 chars
           {R"("container_runtime":"docker","container_id":"0123456789AB")", "", ""},     // uppercase
           {R"("container_runtime":"docker","container_id":"0123456789ag")", "", ""},     // not hex
           {R"("container_runtime":"lxc","container_id":"0123456789ab")", "", ""},
           {R"("container_runtime":"Docker","container_id":"0123456789ab")", "", ""},
           {R"("container_runtime":"docker")", "", ""},
           {R"("container_id":"0123456789ab")", "", ""},
           {R"("container_runtime":"docker","container_id":123456789012)", "", ""},
           {R"("container_runtime":null,"container_id":"0123456789ab")", "", ""}}) {
    Snapshot snap = MustParse(R"([{"index":0,"processes":[{"pid":1,)" + c.fields + "}]}]");
    const ProcessSample& p = snap.devices[0].processes[0];
    EXPECT_EQ(p.container_runtime, c.runtime) << c.fields;
    EXPECT_EQ(p.container_id, c.id) << c.fields;
  }
}

TEST(ParseSimulation, HostUidDefaultsToUid) {
  Snapshot snap =
      MustParse(R"([{"index":0,"processes":[{"pid":1,"uid":1001},{"pid":2,"uid":1001,"host_uid":0},
                                                          {"pid":3,"host_uid":7}]}])");
  const auto& ps = snap.devices[0].processes;
  EXPECT_EQ(ps[0].host_uid, std::optional<uid_t>(1001));
  EXPECT_EQ(ps[1].host_uid, std::optional<uid_t>(0));
  EXPECT_EQ(ps[1].uid, std::optional<uid_t>(1001));
  EXPECT_EQ(ps[2].host_uid, std::optional<uid_t>(7));
  EXPECT_FALSE(ps[2].uid.has_value());
}

TEST(ParseSimulation, DevicesBeyondGpuCountAreCut) {
  Snapshot snap = MustParse(ManyGpus(4), 2);
  ASSERT_EQ(snap.devices.size(), 2u);
  EXPECT_EQ(snap.devices[1].index, 1);
  EXPECT_EQ(snap.devices[1].source, Source::kSimulation);
}

TEST(ParseSimulation, MissingDevicesAreUnknownPlaceholders) {
  Snapshot snap = MustParse(ManyGpus(2), 4);
  EXPECT_TRUE(snap.ok());
  ASSERT_EQ(snap.devices.size(), 4u);
  EXPECT_EQ(snap.devices[1].source, Source::kSimulation);
  for (int i = 2; i < 4; ++i) {
    EXPECT_EQ(snap.devices[i].index, i);
    EXPECT_EQ(snap.devices[i].name, "unknown");
    EXPECT_EQ(snap.devices[i].source, Source::kNone);
    EXPECT_FALSE(snap.devices[i].process_telemetry);
    EXPECT_EQ(ClassifyLive(snap.devices[i]).status, LiveStatus::kUnknown);
  }
}

TEST(ParseSimulation, ErrorExtensionSimulatesAFailedSample) {
  Snapshot snap =
      MustParse(R"({"error":"NVML_ERROR_GPU_IS_LOST","gpus":[{"index":0,"utilization_percent":90}]})", 3);
  EXPECT_FALSE(snap.ok());
  EXPECT_EQ(snap.error, "NVML_ERROR_GPU_IS_LOST");
  ASSERT_EQ(snap.devices.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(snap.devices[i].index, i);
    EXPECT_EQ(snap.devices[i].source, Source::kNone);
  }
  Snapshot alone = MustParse(R"({"error":"driver/library version mismatch"})", 2);
  EXPECT_EQ(alone.error, "driver/library version mismatch");
  EXPECT_EQ(alone.devices.size(), 2u);
  // Control characters cannot break the one-line error.
  EXPECT_EQ(MustParse("{\"error\":\"a\\nb\"}").error, "a?b");
}

TEST(ParseSimulation, EmptyOrNullErrorMeansNoError) {
  for (const char* text : {R"({"error":"","gpus":[{"index":0}]})", R"({"error":null,"gpus":[{"index":0}]})",
                           R"({"error":"  ","gpus":[{"index":0}]})"}) {
    Snapshot snap = MustParse(text);
    EXPECT_TRUE(snap.ok()) << text;
    EXPECT_EQ(snap.devices[0].source, Source::kSimulation) << text;
  }
  auto none = ParseSimulation(R"({"error":""})", 1, kWhat);
  EXPECT_FALSE(none.has_value());
}

// ---- the file source ----

class SimFileTest : public TempDirTest {
 protected:
  void Write(const std::string& text, const std::string& path = "") {
    std::ofstream(path.empty() ? path_ : path, std::ios::binary | std::ios::trunc) << text;
  }
  // Load refuses the file with `want`, and Sample reports it as the error of
  // a snapshot of two GPUs that nothing is known about.
  static void ExpectRefused(SimFileSource& source, const std::string& want) {
    auto loaded = source.Load(2);
    ASSERT_FALSE(loaded.has_value());
    EXPECT_EQ(loaded.error().kind, ErrorKind::kInvalid);
    EXPECT_EQ(loaded.error().message, want);
    Snapshot sampled = source.Sample(2);
    EXPECT_EQ(sampled.error, want);
    ASSERT_EQ(sampled.devices.size(), 2u);
    EXPECT_EQ(sampled.devices[0].source, Source::kNone);
    EXPECT_EQ(sampled.devices[1].source, Source::kNone);
  }

  std::string path_ = Path("sim.json");
};

TEST_F(SimFileTest, ReReadOnEverySample) {
  SimFileSource source(path_);
  Write(
      R"([{"index":0,"memory_total_mb":81920,"processes":[{"pid":4242,"username":"alice","command":"python"}]}])");
  Snapshot busy = source.Sample(1);
  EXPECT_TRUE(busy.ok());
  EXPECT_EQ(ClassifyLive(busy.devices[0]).reason, "user=alice pid=4242");
  Write(R"([{"index":0,"memory_total_mb":81920}])");
  EXPECT_EQ(ClassifyLive(source.Sample(1).devices[0]).status, LiveStatus::kIdle);
}

TEST_F(SimFileTest, MissingFile) {
  SimFileSource source(path_);
  const std::string want = "cannot read simulation file " + path_ +
                           ": No such file or directory; fix the file or unset BK_GPU_SIM_FILE";
  ExpectRefused(source, want);
  EXPECT_EQ(source.Describe(), "simulation " + path_ + " unavailable: " + want);
}

TEST_F(SimFileTest, InvalidFileNamesPathInLoadAndSample) {
  Write(R"([{"index":0},{"index":"1"}])");
  SimFileSource source(path_);
  const std::string want =
      "simulation file " + path_ +
      " is invalid: gpus[1].index must be an integer; fix the file or unset BK_GPU_SIM_FILE";
  ExpectRefused(source, want);
}

TEST_F(SimFileTest, ErrorExtensionFromFile) {
  Write(R"({"error":"NVML_ERROR_UNKNOWN","gpus":[{"index":0}]})");
  SimFileSource source(path_);
  auto loaded = source.Load(1);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->error, "NVML_ERROR_UNKNOWN");
  EXPECT_EQ(source.Sample(1).error, "NVML_ERROR_UNKNOWN");
  EXPECT_EQ(source.Describe(), "simulation " + path_ + " unavailable: NVML_ERROR_UNKNOWN");
}

TEST_F(SimFileTest, SizeLimitIsFourMiB) {
  std::string body = R"([{"index":0}])";
  Write(body + std::string(4 * 1024 * 1024 - body.size(), ' '));
  EXPECT_TRUE(SimFileSource(path_).Load(1).has_value());
  Write(body + std::string(4 * 1024 * 1024 - body.size() + 1, ' '));
  auto big = SimFileSource(path_).Load(1);
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().message,
            "simulation file " + path_ + " is larger than 4 MiB; fix the file or unset BK_GPU_SIM_FILE");
}

TEST_F(SimFileTest, NotARegularFile) {
  auto dir = SimFileSource(root()).Load(1);
  ASSERT_FALSE(dir.has_value());
  EXPECT_NE(dir.error().message.find("cannot read simulation file " + root() + ": "), std::string::npos);
  mkfifo(path_.c_str(), 0600);  // must not hang
  auto fifo = SimFileSource(path_).Load(1);
  ASSERT_FALSE(fifo.has_value());
  EXPECT_NE(fifo.error().message.find("not a regular file"), std::string::npos) << fifo.error().message;
}

TEST_F(SimFileTest, SymlinkToAFixtureIsFollowed) {
  Write(ManyGpus(3), Path("three.json"));
  ASSERT_EQ(symlink(Path("three.json").c_str(), path_.c_str()), 0);
  auto snap = SimFileSource(path_).Load(3);
  ASSERT_TRUE(snap.has_value());
  EXPECT_EQ(snap->devices[2].source, Source::kSimulation);
}

TEST_F(SimFileTest, CountSimulatedGpus) {
  Write(ManyGpus(3));
  EXPECT_EQ(CountSimulatedGpus(path_).value_or(-1), 3);
  Write(R"({"error":"lost"})");
  EXPECT_EQ(CountSimulatedGpus(path_).value_or(-1), 1);
  Write(R"({"error":"lost","gpus":[{"index":0},{"index":1}]})");
  EXPECT_EQ(CountSimulatedGpus(path_).value_or(-1), 2);
  Write("[]");
  auto empty = CountSimulatedGpus(path_);
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.error().message.find("gpus must list at least one GPU"), std::string::npos);
  EXPECT_FALSE(CountSimulatedGpus(Path("missing.json")).has_value());
}

// The factory: a configured simulation file is the source, with nothing to
// close during a pause, and gpu_count detection counts the same file.
TEST_F(SimFileTest, OpenSourceReadsTheConfiguredFile) {
  Write(ManyGpus(2));
  OpenedSource opened = OpenSource(path_);
  EXPECT_FALSE(opened.on_pause);
  EXPECT_EQ(opened.source->Describe(), "simulation " + path_);
  Snapshot s = opened.source->Sample(2);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.devices[1].source, Source::kSimulation);
  EXPECT_EQ(DetectGpuCount(path_), 2);
  Write("{bad");
  // A broken file is a failed sample, not an error: it says why where the source is described.
  Snapshot broken = opened.source->Sample(2);
  EXPECT_FALSE(broken.ok());
  EXPECT_EQ(opened.source->Describe(), "simulation " + path_ + " unavailable: " + broken.error);
  EXPECT_EQ(DetectGpuCount(path_), 1);
}

// ---- the shipped example and documentation ----

std::string RepoFile(const std::string& relative) {
  std::filesystem::path here(__FILE__);
  return (here.parent_path().parent_path().parent_path() / relative).string();
}

// Skips only when the test binary runs away from its source tree.
bool SourceTreeAvailable() { return std::filesystem::exists(__FILE__); }

TEST(ShippedFiles, ExampleHasFourA100sWithGpu1Busy) {
  const std::string path = RepoFile("examples/sim-4gpu.json");
  if (!SourceTreeAvailable()) GTEST_SKIP() << "source tree not available";
  auto snap = SimFileSource(path).Load(4);
  ASSERT_TRUE(snap.has_value()) << snap.error().message;
  ASSERT_EQ(snap->devices.size(), 4u);
  EXPECT_EQ(CountSimulatedGpus(path).value_or(0), 4);
  for (int i = 0; i < 4; ++i) {
    const DeviceSample& d = snap->devices[i];
    EXPECT_EQ(d.name, "NVIDIA A100-SXM4-80GB");
    EXPECT_TRUE(IsValidDeviceUuid(d.uuid)) << d.uuid;
    EXPECT_EQ(d.memory_total_mb, 81920);
    EXPECT_EQ(ClassifyLive(d).status, i == 1 ? LiveStatus::kBusy : LiveStatus::kIdle) << "GPU " << i;
  }
  EXPECT_EQ(ClassifyLive(snap->devices[1]).reason.rfind("user=", 0), 0u);
}

TEST(ShippedFiles, EveryJsonExampleInTheDocsParses) {
  const std::string path = RepoFile("docs/simulation.md");
  if (!SourceTreeAvailable()) GTEST_SKIP() << "source tree not available";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::string doc((std::istreambuf_iterator<char>(in)), {});
  std::regex block("```json\\n([\\s\\S]*?)```");
  int count = 0;
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), block); it != std::sregex_iterator(); ++it) {
    ++count;
    auto snap = ParseSimulation((*it)[1].str(), 4, "docs example");
    EXPECT_TRUE(snap.has_value()) << (*it)[1].str() << "\n" << (snap ? "" : snap.error().message);
  }
  EXPECT_GE(count, 2);
}

}  // namespace
}  // namespace bk::gpu
