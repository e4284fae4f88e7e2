#include "agent/skill_install.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent/skill_bundle.h"
#include "base/temp_dir_testing.h"
#include "sys/file_system_testing.h"

namespace bk::agent {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void Spit(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

mode_t ModeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(lstat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

// The real file system, but for one step of the install that fails with EIO.
enum class Step { kWrite, kSync, kMoveAside, kSwapIn, kRollback };
class FailingFileSystem : public sys::ForwardingFileSystem {
 public:
  explicit FailingFileSystem(std::initializer_list<Step> steps) : steps_(steps) {}
  explicit FailingFileSystem(Step step) : steps_{step} {}
  int failed = 0;

  sys::ErrnoResult<void> WriteNewFile(const std::string& p, std::string_view c, mode_t m) override {
    if (Fails(Step::kWrite)) return std::unexpected(EIO);
    return ForwardingFileSystem::WriteNewFile(p, c, m);
  }
  sys::ErrnoResult<void> Rename(const std::string& from, const std::string& to) override {
    Step step = from.ends_with(".tmp")      ? Step::kSwapIn
                : from.ends_with(".backup") ? Step::kRollback
                                            : Step::kMoveAside;
    if (Fails(step)) return std::unexpected(EIO);
    return ForwardingFileSystem::Rename(from, to);
  }
  sys::ErrnoResult<void> Sync(const std::string& p) override {
    if (Fails(Step::kSync)) return std::unexpected(EIO);
    return ForwardingFileSystem::Sync(p);
  }

 private:
  // Each chosen step fails once.
  bool Fails(Step step) {
    if (std::erase(steps_, step) == 0) return false;
    ++failed;
    return true;
  }
  std::vector<Step> steps_;
};

class SkillInstallTest : public TempDirTest {
 protected:
  SkillEnv Env() const { return SkillEnv{home_, std::nullopt}; }
  std::string Dest(SkillAgent a) const { return *SkillDir(a, Env()); }
  Result<std::string> Install(const std::string& dest, bool force = false, sys::FileSystem* fs = nullptr) {
    return InstallSkill({dest, home_, force, fs});
  }
  // Names in the skills directory other than gpubk: staging or backup leftovers.
  std::vector<std::string> Leftovers(const std::string& dest) const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(fs::path(dest).parent_path()))
      if (e.path().filename() != "gpubk") names.push_back(e.path().filename());
    return names;
  }

  const std::string home_ = root();
};

TEST(SkillBundleTest, FrontMatterIsValid) {
  auto files = BundledSkill();
  ASSERT_GE(files.size(), 2u);
  EXPECT_EQ(files[0].path, "SKILL.md");
  std::string_view md = files[0].content;
  ASSERT_TRUE(md.starts_with("---\n"));
  EXPECT_TRUE(IsGpubkSkillMd(md));
  size_t end = md.find("\n---\n", 3);
  ASSERT_NE(end, std::string_view::npos);
  std::string_view front = md.substr(4, end - 4);
  size_t d = front.find("description: ");
  ASSERT_NE(d, std::string_view::npos);
  std::string_view desc = front.substr(d + 13);
  desc = desc.substr(0, desc.find('\n'));
  EXPECT_GT(desc.size(), 20u);
  EXPECT_LE(desc.size(), 1024u);
  bool has_protocol = false;
  for (const auto& f : files) has_protocol = has_protocol || f.path == "references/protocol.md";
  EXPECT_TRUE(has_protocol);
}

TEST(SkillBundleTest, RecognisesOnlyOurFrontMatter) {
  EXPECT_TRUE(IsGpubkSkillMd("---\nname: gpubk\ndescription: x\n---\n"));
  EXPECT_FALSE(IsGpubkSkillMd("---\nname: other\n---\nname: gpubk\n"));
  EXPECT_FALSE(IsGpubkSkillMd("# name: gpubk\n"));
}

TEST_F(SkillInstallTest, DestinationsPerAgent) {
  EXPECT_EQ(Dest(SkillAgent::kCodex), home_ + "/.agents/skills/gpubk");
  EXPECT_EQ(Dest(SkillAgent::kClaude), home_ + "/.claude/skills/gpubk");
  EXPECT_EQ(*LegacyCodexSkillDir(Env()), home_ + "/.codex/skills/gpubk");
  EXPECT_EQ(*LegacyCodexSkillDir({home_, "/opt/codex"}), "/opt/codex/skills/gpubk");
  EXPECT_FALSE(SkillDir(SkillAgent::kCodex, {"", std::nullopt}).has_value());
  EXPECT_FALSE(SkillDir(SkillAgent::kCodex, {"relative/home", std::nullopt}).has_value());
  EXPECT_EQ(*ParseSkillAgent("Claude"), SkillAgent::kClaude);
  EXPECT_FALSE(ParseSkillAgent("cursor").has_value());
}

TEST_F(SkillInstallTest, FreshInstallWritesTheBundleWithTightModes) {
  for (SkillAgent agent : {SkillAgent::kCodex, SkillAgent::kClaude}) {
    std::string dest = Dest(agent);
    auto r = Install(dest);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(*r, dest);
    EXPECT_EQ(ModeOf(dest), 0755u);
    EXPECT_EQ(ModeOf(fs::path(dest).parent_path()), 0755u);
    for (const auto& f : BundledSkill()) {
      fs::path p = fs::path(dest) / f.path;
      EXPECT_EQ(Slurp(p), f.content) << p;
      EXPECT_EQ(ModeOf(p), 0644u) << p;
      EXPECT_EQ(ModeOf(p.parent_path()), 0755u) << p;
    }
    EXPECT_THAT(Leftovers(dest), IsEmpty());
    EXPECT_EQ(InspectSkill(dest).state, SkillState::kCurrent);
  }
  // Nothing else under the home directory.
  std::vector<std::string> top;
  for (const auto& e : fs::directory_iterator(home_)) top.push_back(e.path().filename());
  std::sort(top.begin(), top.end());
  EXPECT_EQ(top, (std::vector<std::string>{".agents", ".claude"}));
}

TEST_F(SkillInstallTest, ExistingSkillNeedsForceAndForceReplacesTheWholeTree) {
  std::string dest = Dest(SkillAgent::kClaude);
  ASSERT_TRUE(Install(dest).has_value());
  auto again = Install(dest);
  ASSERT_FALSE(again.has_value());
  EXPECT_THAT(again.error().message, HasSubstr("already exists"));
  EXPECT_THAT(again.error().message, HasSubstr("--force"));

  Spit(fs::path(dest) / "stale.md", "old");
  Spit(fs::path(dest) / "SKILL.md", "---\nname: gpubk\ndescription: an older copy\n---\nold body\n");
  EXPECT_EQ(InspectSkill(dest).state, SkillState::kDiffers);
  auto forced = Install(dest, true);
  ASSERT_TRUE(forced.has_value()) << forced.error().message;
  EXPECT_FALSE(fs::exists(fs::path(dest) / "stale.md"));
  EXPECT_EQ(Slurp(fs::path(dest) / "SKILL.md"), BundledSkill()[0].content);
  EXPECT_THAT(Leftovers(dest), IsEmpty());
  EXPECT_EQ(InspectSkill(dest).state, SkillState::kCurrent);
}

TEST_F(SkillInstallTest, RefusesForeignDirectoriesEvenWithForce) {
  std::string dest = Dest(SkillAgent::kCodex);
  Spit(fs::path(dest) / "SKILL.md", "---\nname: someone-else\n---\n");
  auto r = Install(dest, true);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("unrecognized"));
  EXPECT_EQ(Slurp(fs::path(dest) / "SKILL.md"), "---\nname: someone-else\n---\n");
  EXPECT_EQ(InspectSkill(dest).state, SkillState::kForeign);

  fs::remove_all(dest);
  fs::create_directories(dest);  // an empty directory is not ours either
  EXPECT_FALSE(Install(dest, true).has_value());

  fs::remove_all(dest);
  Spit(dest, "a file");
  EXPECT_FALSE(Install(dest, true).has_value());
  EXPECT_FALSE(InstallSkill({home_ + "/x/not-gpubk", home_, false}).has_value()) << "wrong basename";
}

TEST_F(SkillInstallTest, RefusesSymlinksAnywhereOnThePath) {
  fs::create_directories(home_ + "/elsewhere/skills");
  // The skill directory itself.
  std::string dest = Dest(SkillAgent::kClaude);
  fs::create_directories(fs::path(dest).parent_path());
  fs::create_directory_symlink(home_ + "/elsewhere", dest);
  auto r = Install(dest, true);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("symlink"));
  EXPECT_EQ(InspectSkill(dest).state, SkillState::kSymlink);
  // A parent (~/.agents -> elsewhere).
  fs::create_directory_symlink(home_ + "/elsewhere", home_ + "/.agents");
  auto p = Install(Dest(SkillAgent::kCodex));
  ASSERT_FALSE(p.has_value());
  EXPECT_THAT(p.error().message, HasSubstr("symlink"));
  EXPECT_FALSE(fs::exists(home_ + "/elsewhere/skills/gpubk"));
}

TEST_F(SkillInstallTest, AHomeReachedThroughASymlinkIsTheAccountsBusiness) {
  // /home -> /data/home style layouts: only what lies below the home directory is judged.
  fs::create_directories(home_ + "/real/home");
  fs::create_directory_symlink(home_ + "/real", home_ + "/link");
  std::string home = home_ + "/link/home";
  std::string dest = *SkillDir(SkillAgent::kClaude, {home, std::nullopt});
  auto r = InstallSkill({dest, home, false});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(fs::exists(home_ + "/real/home/.claude/skills/gpubk/SKILL.md"));
}

TEST_F(SkillInstallTest, RollsBackWhenTheStagedCopyCannotBeSwappedIn) {
  std::string dest = Dest(SkillAgent::kCodex);
  ASSERT_TRUE(Install(dest).has_value());
  std::string previous = "---\nname: gpubk\ndescription: previous\n---\nkeep me\n";
  Spit(fs::path(dest) / "SKILL.md", previous);

  FailingFileSystem rename_fails(Step::kSwapIn);
  auto r = Install(dest, true, &rename_fails);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(rename_fails.failed, 1);
  EXPECT_THAT(r.error().message, HasSubstr("previous copy was restored"));
  EXPECT_EQ(Slurp(fs::path(dest) / "SKILL.md"), previous);
  EXPECT_THAT(Leftovers(dest), IsEmpty());

  for (Step step : {Step::kWrite, Step::kMoveAside, Step::kSync}) {
    FailingFileSystem failing(step);
    EXPECT_FALSE(Install(dest, true, &failing).has_value());
    EXPECT_EQ(failing.failed, 1);
    EXPECT_EQ(Slurp(fs::path(dest) / "SKILL.md"), previous);
    EXPECT_THAT(Leftovers(dest), IsEmpty());
  }

  ASSERT_TRUE(Install(dest, true).has_value());
  EXPECT_EQ(InspectSkill(dest).state, SkillState::kCurrent);
}

TEST_F(SkillInstallTest, SaysWhereThePreviousCopyIsWhenTheRollbackFailsToo) {
  std::string dest = Dest(SkillAgent::kCodex);
  ASSERT_TRUE(Install(dest).has_value());
  std::string previous = "---\nname: gpubk\ndescription: previous\n---\nkeep me\n";
  Spit(fs::path(dest) / "SKILL.md", previous);
  FailingFileSystem failing({Step::kSwapIn, Step::kRollback});
  auto r = Install(dest, true, &failing);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(failing.failed, 2);
  EXPECT_THAT(r.error().message, HasSubstr("rollback failed"));
  auto left = Leftovers(dest);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_THAT(r.error().message, HasSubstr(left[0]));
  EXPECT_EQ(Slurp(fs::path(dest).parent_path() / left[0] / "SKILL.md"), previous);
}

TEST_F(SkillInstallTest, FailedFreshInstallLeavesNothing) {
  std::string dest = Dest(SkillAgent::kClaude);
  FailingFileSystem failing(Step::kWrite);
  EXPECT_FALSE(Install(dest, false, &failing).has_value());
  EXPECT_EQ(failing.failed, 1);
  EXPECT_FALSE(fs::exists(dest));
  EXPECT_THAT(Leftovers(dest), IsEmpty());
}

TEST_F(SkillInstallTest, RefusesToReplaceTheWorkingDirectory) {
  std::string dest = Dest(SkillAgent::kClaude);
  ASSERT_TRUE(Install(dest).has_value());
  char old[4096];
  ASSERT_NE(getcwd(old, sizeof old), nullptr);
  ASSERT_EQ(chdir((dest + "/references").c_str()), 0);
  auto r = Install(dest, true);
  ASSERT_EQ(chdir(old), 0);
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("working directory"));
}

TEST_F(SkillInstallTest, RefusesGroupWritableDirectoriesOnTheWay) {
  fs::create_directories(home_ + "/.claude");
  chmod((home_ + "/.claude").c_str(), 0777);
  auto r = Install(Dest(SkillAgent::kClaude));
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().message, HasSubstr("writable by other users"));
}

}  // namespace
}  // namespace bk::agent
