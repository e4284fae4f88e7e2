#include "config/presets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/temp_dir_testing.h"
#include "config/config.h"
#include "config/keys.h"

namespace bk::config {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

Preset Train() {
  return Preset{.name = "train",
                .mode = engine::Mode::kShared,
                .count = 2,
                .duration = 4 * engine::kHour,
                .memory_mb = 12288,
                .share_units = 2,
                .exclude = {3},
                .created_at = "2026-11-29T18:52:38Z",
                .updated_at = "2026-11-29T18:52:38Z"};
}

std::string Message(const Result<Preset>& r) { return r ? "" : r.error().message; }

TEST(PresetJsonTest, RoundTripsTheDocumentFields) {
  json j = PresetJson(Train());
  EXPECT_EQ(j["duration_seconds"], 14400);
  EXPECT_TRUE(j["preferred_gpus"].is_null());
  EXPECT_EQ(j["excluded_gpus"], json::array({3}));
  auto back = PresetFromJson(j);
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(*back, Train());
  auto doc = ParsePresets(RenderPresets({Train()}), "/p.json");
  ASSERT_TRUE(doc.has_value()) << doc.error().message;
  EXPECT_EQ(*doc, std::vector<Preset>{Train()});
}

TEST(PresetJsonTest, ErrorsNameThePresetAndTheField) {
  json j = PresetJson(Train());
  j["count"] = 0;
  EXPECT_EQ(Message(PresetFromJson(j)), "preset train: count must be a whole number from 1 to 1024");
  j = PresetJson(Train());
  j["mode"] = "exclusive";
  EXPECT_EQ(Message(PresetFromJson(j)), "preset train: share_units must be null for an exclusive preset");
  j = PresetJson(Train());
  j["preferred_gpus"] = {1};
  EXPECT_EQ(Message(PresetFromJson(j)), "preset train: preferred_gpus must name exactly count (2) GPUs");
  j["preferred_gpus"] = {2, 3};
  EXPECT_EQ(Message(PresetFromJson(j)), "preset train: excluded_gpus names GPU 3, which preferred_gpus pins");
  j["preferred_gpus"] = {3, 2};
  EXPECT_THAT(Message(PresetFromJson(j)), HasSubstr("preset train: preferred_gpus must be a sorted list"));
  j = PresetJson(Train());
  j["start"] = "20:00";
  EXPECT_EQ(Message(PresetFromJson(j)), "preset train: unknown field start");
  j = PresetJson(Train());
  j.erase("duration_seconds");
  EXPECT_EQ(Message(PresetFromJson(j)), "preset train: duration_seconds is missing");
  j = PresetJson(Train());
  j["name"] = "-x";
  EXPECT_THAT(Message(PresetFromJson(j)), HasSubstr("preset name must be 1-32 letters"));
}

TEST(PresetNameTest, RefusesSubcommandWordsAndOddCharacters) {
  EXPECT_TRUE(CheckPresetName("s2x-4h_v1.0").has_value());
  EXPECT_TRUE(CheckPresetName(std::string(32, 'a')).has_value());
  for (const std::string& bad :
       std::vector<std::string>{"", std::string(33, 'a'), "_x", "a b", "a/b", "list", "save", "rm"})
    EXPECT_FALSE(CheckPresetName(bad).has_value()) << bad;
  EXPECT_EQ(CheckPresetName("show").error().message,
            "preset name show is a `bk preset` subcommand; choose another");
}

TEST(PresetDocumentTest, RefusesOtherSchemasDuplicatesAndGarbage) {
  EXPECT_THAT(ParsePresets("{", "/p.json").error().message, HasSubstr("/p.json is not valid JSON"));
  EXPECT_EQ(ParsePresets(R"({"schema_version":"x","presets":[]})", "/p.json").error().message,
            "/p.json: not a gpubk.presets.v1 document (schema_version)");
  json two = json::parse(RenderPresets({Train()}));
  two["presets"].push_back(two["presets"][0]);
  EXPECT_EQ(ParsePresets(two.dump(), "/p.json").error().message, "/p.json: preset train appears twice");
  EXPECT_TRUE(ParsePresets(R"({"schema_version":"gpubk.presets.v1","presets":[]})", "/p.json")->empty());
}

TEST(PresetPolicyTest, ChecksTheDeploymentsPolicy) {
  engine::Policy p;
  p.gpu_count = 4;
  EXPECT_TRUE(CheckPresetPolicy(Train(), p).has_value());
  Preset t = Train();
  t.count = 5;
  EXPECT_EQ(CheckPresetPolicy(t, p).error().message,
            "preset train does not fit this deployment's policy: it books 5 GPUs and 4 are enabled");
  t = Train();
  t.duration = 7 * engine::kMinute;
  EXPECT_THAT(CheckPresetPolicy(t, p).error().message, HasSubstr("is not a multiple of the 5m slot"));
  t = Train();
  t.share_units = 3;
  EXPECT_THAT(CheckPresetPolicy(t, p).error().message, HasSubstr("it takes 3 shared slots and a GPU has 2"));
  t = Train();
  t.exclude.clear();
  t.gpus = {1, 3};
  p.disabled_gpus = {3};
  EXPECT_THAT(CheckPresetPolicy(t, p).error().message, HasSubstr("it pins GPU 3, which is not enabled"));
}

TEST(LabPresetsTest, TheConfigurationKeyNamesThePresetAndTheField) {
  Config c;
  const KeySpec* k = FindKey("presets");
  ASSERT_NE(k, nullptr);
  json lab = {{"debug", {{"mode", "exclusive"}, {"count", 1}, {"duration_seconds", 1800}}}};
  ASSERT_TRUE(ApplyKey(*k, lab, c).has_value());
  ASSERT_EQ(c.presets.size(), 1u);
  EXPECT_EQ(c.presets[0].name, "debug");
  EXPECT_EQ(c.presets[0].mode, engine::Mode::kExclusive);
  lab["debug"]["count"] = "two";
  EXPECT_EQ(ApplyKey(*k, lab, c).error().message,
            "presets: preset debug: count must be a whole number from 1 to 1024");
  EXPECT_EQ(ApplyKey(*k, json::array(), c).error().message,
            "presets must be an object NAME -> {\"mode\", \"count\", \"duration_seconds\", ...}");
  // From the environment: JSON text.
  ASSERT_TRUE(ApplyKey(*k, json(R"({"x": {"mode": "shared", "count": 1, "duration_seconds": 600}})"), c));
  EXPECT_EQ(c.presets[0].name, "x");
}

class PresetsFileTest : public TempDirTest {
 protected:
  std::string dir = Path("gpubk"), file = dir + "/presets.json";
  uid_t me = getuid();

  void Write(const std::string& text, mode_t mode) {
    ::mkdir(dir.c_str(), 0700);
    std::ofstream(file) << text;
    ::chmod(file.c_str(), mode);
  }
};

TEST_F(PresetsFileTest, AbsentIsEmptyAndUpdatesCreateTightModes) {
  EXPECT_TRUE(ReadPresets(file, me)->empty());
  ASSERT_TRUE(UpdatePresets(file, me, [](std::vector<Preset>& v) -> Status {
                v.push_back(Train());
                return Ok();
              }).has_value());
  struct stat st {};
  ASSERT_EQ(::stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(*ReadPresets(file, me), std::vector<Preset>{Train()});
  // A failing change writes nothing.
  EXPECT_FALSE(UpdatePresets(file, me, [](std::vector<Preset>& v) -> Status {
                 v.clear();
                 return Invalid("no");
               }).has_value());
  EXPECT_EQ(ReadPresets(file, me)->size(), 1u);
}

TEST_F(PresetsFileTest, RefusesLinksOpenModesOtherOwnersAndBigFiles) {
  Write(RenderPresets({Train()}), 0644);
  EXPECT_THAT(ReadPresets(file, me).error().message, HasSubstr("(mode 0644); run chmod 600"));
  ::chmod(file.c_str(), 0600);
  EXPECT_THAT(ReadPresets(file, me + 1).error().message, HasSubstr("not to you"));
  std::string link = dir + "/link.json";
  ASSERT_EQ(::symlink(file.c_str(), link.c_str()), 0);
  EXPECT_THAT(ReadPresets(link, me).error().message, HasSubstr("is a symbolic link"));
  Write(std::string(kMaxPresetsFileBytes + 1, ' '), 0600);
  EXPECT_THAT(ReadPresets(file, me).error().message, HasSubstr("larger than 1 MiB"));
  Write("not json", 0600);
  EXPECT_THAT(ReadPresets(file, me).error().message, HasSubstr("is not valid JSON"));
}

}  // namespace
}  // namespace bk::config
