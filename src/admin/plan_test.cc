#include "admin/plan.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "base/temp_dir_testing.h"
#include "sys/file_system_testing.h"
#include "sys/fs.h"

namespace bk::admin {
namespace {

// The real file system, but every path reports `uid` as its owner.
class OwnedBy : public sys::ForwardingFileSystem {
 public:
  explicit OwnedBy(uid_t uid) : uid_(uid) {}
  sys::ErrnoResult<sys::FileInfo> Lstat(const std::string& p) override {
    auto st = ForwardingFileSystem::Lstat(p);
    if (st) st->uid = uid_;
    return st;
  }

 private:
  uid_t uid_;
};

class PlanTest : public TempDirTest {
 protected:
  Want Dir(const std::string& name, mode_t mode = 0700) {
    return {.path = Path(name),
            .what = "data directory",
            .kind = Kind::kDir,
            .mode = mode,
            .uid = getuid(),
            .gid = getgid()};
  }
  Want Managed(const std::string& name, const std::string& content) {
    return {.path = Path(name),
            .what = "systemd unit",
            .kind = Kind::kManaged,
            .mode = 0644,
            .uid = getuid(),
            .gid = getgid(),
            .content = "# ours\n" + content,
            .marker = "# ours"};
  }
  void Write(const std::string& name, const std::string& text, mode_t mode = 0644) {
    std::ofstream(Path(name)) << text;
    chmod(Path(name).c_str(), mode);
  }
  std::vector<Step> Plan(const std::vector<Want>& wants) {
    auto steps = PlanSteps(sys::RealFileSystem(), wants);
    EXPECT_TRUE(steps.has_value()) << (steps ? "" : steps.error().message);
    return steps ? *steps : std::vector<Step>{};
  }
};

TEST_F(PlanTest, MissingAncestorsComeFirstOutermostFirst) {
  std::vector<Step> steps = Plan({Dir("a/b/data"), Managed("a/unit", "x")});
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0].want.path, Path("a"));
  EXPECT_EQ(steps[0].want.kind, Kind::kParent);
  EXPECT_EQ(steps[1].want.path, Path("a/b"));
  EXPECT_EQ(steps[2].want.path, Path("a/b/data"));
  EXPECT_EQ(steps[3].want.path, Path("a/unit"));  // a is planned once
  for (const auto& s : steps) EXPECT_EQ(s.action, Action::kCreate) << s.want.path;
}

TEST_F(PlanTest, ExistingPathsAreUnchangedAdoptedOrUpdated) {
  mkdir(Path("data").c_str(), 0700);
  mkdir(Path("run").c_str(), 0755);
  Write("same", "# ours\nx");
  Write("old", "# ours\nold text");
  Write("config.json", "{\"gpu_count\": 9}", 0600);
  Want config{.path = Path("config.json"),
              .what = "configuration",
              .kind = Kind::kConfig,
              .mode = 0644,
              .uid = getuid(),
              .content = "{\"gpu_count\": 1}"};
  std::vector<Step> steps =
      Plan({Dir("data"), Dir("run", 0711), Managed("same", "x"), Managed("old", "new"), config});
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_EQ(steps[0].action, Action::kUnchanged);
  EXPECT_EQ(steps[1].action, Action::kAdopt);  // mode 0755 -> 0711
  EXPECT_EQ(steps[2].action, Action::kUnchanged);
  EXPECT_EQ(steps[3].action, Action::kUpdate);
  EXPECT_EQ(steps[3].previous, "# ours\nold text");
  // A configuration is never rewritten: its mode is adopted, its text kept.
  EXPECT_EQ(steps[4].action, Action::kAdopt);
  EXPECT_FALSE(steps[4].previous.has_value());
}

TEST_F(PlanTest, RefusesWhatIsNotOurs) {
  mkdir(Path("data").c_str(), 0700);
  OwnedBy other(getuid() + 1);
  auto taken = PlanSteps(other, {Dir("data")});
  ASSERT_FALSE(taken.has_value());
  EXPECT_NE(taken.error().message.find(Path("data") + " (data directory) belongs to"), std::string::npos)
      << taken.error().message;
  EXPECT_NE(taken.error().message.find("--service-user"), std::string::npos);

  Write("unit", "[Unit]\nDescription=someone else's\n");
  auto foreign = PlanSteps(sys::RealFileSystem(), {Managed("unit", "x")});
  ASSERT_FALSE(foreign.has_value());
  EXPECT_EQ(foreign.error().message,
            Path("unit") + " exists and was not written by bk; move it away, then install again");

  symlink("/etc", Path("link").c_str());
  auto link = PlanSteps(sys::RealFileSystem(), {Dir("link")});
  ASSERT_FALSE(link.has_value());
  EXPECT_NE(link.error().message.find("is a symbolic link"), std::string::npos);
}

TEST_F(PlanTest, ApplyCreatesWithModesAndUndoesOnFailure) {
  std::vector<Step> steps = Plan({Dir("d/data"), Managed("d/unit", "x")});
  ASSERT_TRUE(Apply(steps).has_value());
  struct stat st {};
  ASSERT_EQ(stat(Path("d/data").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(stat(Path("d/unit").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  EXPECT_EQ(*sys::ReadSmallFile(Path("d/unit"), 100), "# ours\nx");

  // A new directory, an update, then a file that cannot be written: all undone.
  std::vector<Step> more = Plan({Dir("e"), Managed("d/unit", "y")});
  Want broken = Managed("missing/dir/file", "z");
  more.push_back({broken, Action::kCreate, {}});
  auto failed = Apply(more);
  ASSERT_FALSE(failed.has_value());
  EXPECT_FALSE(sys::Exists(Path("e")));
  EXPECT_EQ(*sys::ReadSmallFile(Path("d/unit"), 100), "# ours\nx");
}

TEST_F(PlanTest, LinesAndJsonNameEveryStep) {
  std::vector<Step> steps = Plan({Dir("data")});
  std::vector<std::string> lines = PlanLines(steps);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("  create    " + Path("data") + " (data directory: dir 0700 ", 0), 0u) << lines[0];
  auto doc = nlohmann::json::parse(PlanJson(steps));
  ASSERT_EQ(doc.size(), 1u);
  EXPECT_EQ(doc[0]["action"], "create");
  EXPECT_EQ(doc[0]["mode"], "0700");
  EXPECT_EQ(doc[0]["type"], "directory");
}

}  // namespace
}  // namespace bk::admin
