#include "admin/manifest.h"

#include <gtest/gtest.h>

namespace bk::admin {
namespace {

Step Made(const std::string& path, Kind kind, Action action, std::optional<std::string> previous = {}) {
  return {Want{.path = path, .what = "w", .kind = kind}, action, std::move(previous)};
}

TEST(ManifestTest, MergeKeepsTheFirstRecordOfEachPath) {
  Manifest first = Merge({}, {Made("/etc/gpubk", Kind::kDir, Action::kCreate),
                              Made("/etc/gpubk/config.json", Kind::kConfig, Action::kAdopt),
                              Made("/etc/unit", Kind::kManaged, Action::kUpdate, "old unit")});
  ASSERT_EQ(first.entries.size(), 3u);
  EXPECT_FALSE(first.entries[0].existed);
  EXPECT_TRUE(first.entries[0].dir);
  EXPECT_TRUE(first.entries[1].existed);
  EXPECT_EQ(first.entries[2].previous, "old unit");
  // A re-install finds everything present: the first install's records stay.
  Manifest again = Merge(first, {Made("/etc/gpubk", Kind::kDir, Action::kUnchanged),
                                 Made("/etc/hook", Kind::kManaged, Action::kCreate)});
  ASSERT_EQ(again.entries.size(), 4u);
  EXPECT_FALSE(again.entries[0].existed);
  EXPECT_EQ(again.entries[3].path, "/etc/hook");
}

TEST(ManifestTest, RoundTripsAndRefusesOtherDocuments) {
  Manifest m = Merge(
      {}, {Made("/a", Kind::kDir, Action::kCreate), Made("/a/f", Kind::kManaged, Action::kUpdate, "t\n")});
  std::string text = RenderManifest(m);
  auto back = ParseManifest(text, "/a/install.json");
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(RenderManifest(*back), text);
  for (const char* bad :
       {"", "[]", "{\"schema_version\": \"gpubk.install.v1\"}",
        "{\"schema_version\": \"gpubk.install.v1\", \"entries\": [{\"path\": \"rel\", \"existed\": true}]}",
        "{\"schema_version\": \"x\", \"entries\": []}"}) {
    auto parsed = ParseManifest(bad, "/a/install.json");
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_EQ(parsed.error().message.rfind("/a/install.json is not a GPUBK install manifest", 0), 0u);
  }
}

TEST(ManifestTest, UndoRemovesWhatWasMadeAndKeepsDataAndWhatHoldsIt) {
  Manifest m =
      Merge({}, {Made("/r", Kind::kParent, Action::kCreate), Made("/r/var", Kind::kParent, Action::kCreate),
                 Made("/r/var/lib/gpubk", Kind::kDir, Action::kCreate),
                 Made("/r/etc", Kind::kDir, Action::kUnchanged),
                 Made("/r/etc/unit", Kind::kManaged, Action::kUpdate, "before")});
  std::vector<Undo> keep = UndoAll(m, "/r/var/lib/gpubk", false);
  EXPECT_EQ(keep, (std::vector<Undo>{Undo::kKeepAbove, Undo::kKeepAbove, Undo::kKeepData, Undo::kKeep,
                                     Undo::kRestore}));
  std::vector<Undo> purge = UndoAll(m, "/r/var/lib/gpubk", true);
  EXPECT_EQ(purge,
            (std::vector<Undo>{Undo::kRemove, Undo::kRemove, Undo::kRemove, Undo::kKeep, Undo::kRestore}));
  // A data directory that was there before the install is never purged.
  m.entries[2].existed = true;
  EXPECT_EQ(UndoAll(m, "/r/var/lib/gpubk", true)[2], Undo::kKeepData);
}

}  // namespace
}  // namespace bk::admin
