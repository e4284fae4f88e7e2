#include "cli/sandbox.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpu/source.h"
#include "sys/fs.h"

namespace bk::cli {
namespace {

using ::testing::Contains, ::testing::Not, ::testing::StartsWith;

class SandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/bk-sandbox-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    parent_ = pattern;
  }
  void TearDown() override { (void)sys::RealFileSystem().RemoveTree(parent_); }

  std::string parent_;
};

TEST_F(SandboxTest, HoldsPrivateDirectoriesAndValidSimulatedGpus) {
  auto box = Sandbox::Create(parent_, 2);
  ASSERT_TRUE(box.has_value()) << box.error().message;
  const std::string dir = (*box)->dir();
  EXPECT_THAT(dir, StartsWith(parent_ + "/bk-tutorial-"));
  struct stat st {};
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  auto text = sys::ReadSmallFile(dir + "/gpus.json", 1 << 16);
  ASSERT_TRUE(text.has_value());
  auto snapshot = gpu::ParseSimulation(*text, 2, "sandbox");
  ASSERT_TRUE(snapshot.has_value()) << snapshot.error().message;
  EXPECT_EQ(snapshot->devices.size(), 2u);
  for (const char* d : {"home", "config", "state", "share", "cache", "run"})
    EXPECT_TRUE(sys::Exists(dir + "/" + d)) << d;
}

TEST_F(SandboxTest, ItsEnvironmentKeepsNothingThatPointsElsewhere) {
  auto box = Sandbox::Create(parent_, 1);
  ASSERT_TRUE(box.has_value());
  const std::string dir = (*box)->dir();
  std::vector<std::string> env =
      (*box)->Environment({"PATH=/usr/bin", "TZ=Europe/Paris", "BK_DATA_DIR=/home/me/.local/share/bk",
                           "BK_CONFIG_FILE=/srv/c.json", "BK_HOST_CPUS=8", "GPUBK_X=1", "HOME=/home/me",
                           "XDG_CONFIG_HOME=/home/me/.config", "XDG_RUNTIME_DIR=/run/user/1000",
                           "CUDA_VISIBLE_DEVICES=3", "NO_COLOR=1"});
  EXPECT_THAT(env, Contains("PATH=/usr/bin"));
  EXPECT_THAT(env, Contains("TZ=Europe/Paris"));
  EXPECT_THAT(env, Contains("NO_COLOR=1"));
  EXPECT_THAT(env, Contains("BK_DATA_DIR=" + dir + "/data"));
  EXPECT_THAT(env, Contains("BK_GPU_SIM_FILE=" + dir + "/gpus.json"));
  EXPECT_THAT(env, Contains("HOME=" + dir + "/home"));
  EXPECT_THAT(env, Contains("XDG_CONFIG_HOME=" + dir + "/config"));
  EXPECT_THAT(env, Contains("XDG_RUNTIME_DIR=" + dir + "/run"));
  for (const char* gone : {"BK_DATA_DIR=/home/me/.local/share/bk", "BK_CONFIG_FILE=/srv/c.json",
                           "BK_HOST_CPUS=8", "GPUBK_X=1", "HOME=/home/me", "XDG_CONFIG_HOME=/home/me/.config",
                           "XDG_RUNTIME_DIR=/run/user/1000", "CUDA_VISIBLE_DEVICES=3"})
    EXPECT_THAT(env, Not(Contains(std::string(gone))));
  EXPECT_EQ(env.size(), 11u);  // three kept, eight of the sandbox's
}

TEST_F(SandboxTest, RemoveTakesEverythingWrittenInIt) {
  auto box = Sandbox::Create(parent_, 1);
  ASSERT_TRUE(box.has_value());
  const std::string dir = (*box)->dir();
  ASSERT_TRUE(sys::EnsurePrivateDir(dir + "/data/deeper", 0700, getuid()).has_value());
  ASSERT_TRUE(sys::WriteFileAtomic(dir + "/data/deeper/ledger.db", "x", 0600).has_value());
  ASSERT_TRUE((*box)->Remove().has_value());
  EXPECT_FALSE(sys::Exists(dir));
}

TEST_F(SandboxTest, GoesWithTheObject) {
  std::string dir;
  {
    auto box = Sandbox::Create(parent_, 1);
    ASSERT_TRUE(box.has_value());
    dir = (*box)->dir();
    EXPECT_TRUE(sys::Exists(dir));
  }
  EXPECT_FALSE(sys::Exists(dir));
}

TEST(RunAttachedTest, ReportsTheExitStatusAndTheSignal) {
  std::vector<std::string> env = {"PATH=/usr/bin:/bin"};
  EXPECT_EQ(RunAttached({"/bin/sh", "-c", "exit 3"}, env), 3);
  EXPECT_EQ(RunAttached({"/bin/sh", "-c", "test \"$PATH\" = /usr/bin:/bin"}, env), 0);
  EXPECT_EQ(RunAttached({"/bin/sh", "-c", "kill -TERM $$"}, env), 128 + 15);
  auto missing = RunAttached({"/nonexistent/bk"}, env);
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message, "cannot start /nonexistent/bk: No such file or directory");
}

}  // namespace
}  // namespace bk::cli
