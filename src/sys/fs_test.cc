#include "sys/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/temp_dir_testing.h"

namespace bk::sys {
namespace {

constexpr uid_t kNobody = 65534;

mode_t ModeOf(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Spit(const std::string& path, const std::string& text, mode_t mode = 0600) {
  std::ofstream(path, std::ios::binary) << text;
  chmod(path.c_str(), mode);
}

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

class FsTest : public ::testing::Test {
 protected:
  TempDir tmp_{"bk-fs-test"};
  void SetUp() override {
    root_ = tmp_.path();
    saved_umask_ = umask(022);
    umask(saved_umask_);
  }
  void TearDown() override { umask(saved_umask_); }
  std::string P(const std::string& name) const { return root_ + "/" + name; }
  static bool IsRoot() { return geteuid() == 0; }

  std::string root_;
  mode_t saved_umask_ = 022;
  const uid_t me_ = geteuid();
};

// ---- path helpers ----

TEST(Paths, Dirname) {
  EXPECT_EQ(Dirname("/a/b"), "/a");
  EXPECT_EQ(Dirname("/a/b/"), "/a");
  EXPECT_EQ(Dirname("/a"), "/");
  EXPECT_EQ(Dirname("/"), "/");
  EXPECT_EQ(Dirname("a"), ".");
  EXPECT_EQ(Dirname("a/b"), "a");
  EXPECT_EQ(Dirname("a//b"), "a");
  EXPECT_EQ(Dirname(""), ".");
}

TEST(Paths, Basename) {
  EXPECT_EQ(Basename("/a/b"), "b");
  EXPECT_EQ(Basename("/a/b/"), "b");
  EXPECT_EQ(Basename("b"), "b");
  EXPECT_EQ(Basename("/"), "/");
}

TEST(Paths, JoinPath) {
  EXPECT_EQ(JoinPath("/a", "b"), "/a/b");
  EXPECT_EQ(JoinPath("/a/", "b"), "/a/b");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath("/a", ""), "/a");
}

TEST_F(FsTest, ExistsDoesNotFollowSymlinks) {
  EXPECT_TRUE(Exists(root_));
  EXPECT_FALSE(Exists(P("missing")));
  ASSERT_EQ(symlink(P("missing").c_str(), P("dangling").c_str()), 0);
  EXPECT_TRUE(Exists(P("dangling")));
}

// ---- EnsurePrivateDir ----

TEST_F(FsTest, EnsureCreatesMissingParentsWithExactModeDespiteUmask) {
  chmod(root_.c_str(), 0755);
  umask(0);
  ASSERT_TRUE(EnsurePrivateDir(P("a/b/c"), 0700, me_));
  EXPECT_EQ(ModeOf(P("a")), 0700u);
  EXPECT_EQ(ModeOf(P("a/b")), 0700u);
  EXPECT_EQ(ModeOf(P("a/b/c")), 0700u);
  EXPECT_EQ(ModeOf(root_), 0755u);  // an existing parent is left alone

  umask(0077);
  ASSERT_TRUE(EnsurePrivateDir(P("x/y"), 0750, me_));
  EXPECT_EQ(ModeOf(P("x")), 0750u);
  EXPECT_EQ(ModeOf(P("x/y")), 0750u);
}

TEST_F(FsTest, EnsureAcceptsExistingAndTrailingSlash) {
  ASSERT_TRUE(EnsurePrivateDir(P("d"), 0700, me_));
  EXPECT_TRUE(EnsurePrivateDir(P("d"), 0700, me_));
  EXPECT_TRUE(EnsurePrivateDir(P("d/"), 0700, me_));
  chmod(P("d").c_str(), 0755);  // readable by others, not writable: acceptable
  EXPECT_TRUE(EnsurePrivateDir(P("d"), 0700, me_));
  EXPECT_EQ(ModeOf(P("d")), 0755u);  // never repaired silently
}

TEST_F(FsTest, EnsureRefusesSymlinkedDirectory) {
  mkdir(P("real").c_str(), 0700);
  ASSERT_EQ(symlink(P("real").c_str(), P("link").c_str()), 0);
  auto st = EnsurePrivateDir(P("link"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, ErrorKind::kPermission);
  EXPECT_EQ(st.error().message, "data directory " + P("link") + " is a symbolic link; use the real path");
}

TEST_F(FsTest, EnsureRefusesToCreateBelowASymlink) {
  mkdir(P("real").c_str(), 0700);
  ASSERT_EQ(symlink(P("real").c_str(), P("link").c_str()), 0);
  auto st = EnsurePrivateDir(P("link/sub/deeper"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find(P("link") + " is a symbolic link; use the real path"), std::string::npos)
      << st.error().message;
  EXPECT_FALSE(Exists(P("real/sub")));
}

TEST_F(FsTest, EnsureRefusesDanglingSymlink) {
  ASSERT_EQ(symlink(P("nowhere").c_str(), P("link").c_str()), 0);
  EXPECT_FALSE(EnsurePrivateDir(P("link"), 0700, me_));
  EXPECT_FALSE(Exists(P("nowhere")));
}

TEST_F(FsTest, EnsureRefusesAFile) {
  Spit(P("file"), "x");
  auto st = EnsurePrivateDir(P("file"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("is not a directory"), std::string::npos) << st.error().message;
  EXPECT_FALSE(EnsurePrivateDir(P("file/sub"), 0700, me_));
}

TEST_F(FsTest, EnsureRefusesForeignOwner) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to chown";
  mkdir(P("foreign").c_str(), 0700);
  ASSERT_EQ(chown(P("foreign").c_str(), kNobody, kNobody), 0);
  auto st = EnsurePrivateDir(P("foreign"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, ErrorKind::kPermission);
  EXPECT_EQ(st.error().message,
            P("foreign") + " is owned by UID 65534, not you (UID 0); use your own data directory");
}

TEST_F(FsTest, EnsureRefusesGroupOrOtherWritable) {
  mkdir(P("open").c_str(), 0700);
  chmod(P("open").c_str(), 0777);
  auto st = EnsurePrivateDir(P("open"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            P("open") + " is writable by other users (mode 0777); run chmod 700 " + P("open"));
  chmod(P("open").c_str(), 0770);
  EXPECT_FALSE(EnsurePrivateDir(P("open"), 0700, me_));
  chmod(P("open").c_str(), 0702);
  EXPECT_FALSE(EnsurePrivateDir(P("open"), 0700, me_));
}

TEST_F(FsTest, EnsureAllowsWriteBitsTheModeGrants) {
  mkdir(P("shared").c_str(), 0700);
  chmod(P("shared").c_str(), 0770);
  EXPECT_TRUE(EnsurePrivateDir(P("shared"), 0770, me_));
  chmod(P("shared").c_str(), 0777);
  auto st = EnsurePrivateDir(P("shared"), 0770, me_);  // others still not allowed
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("run chmod 770"), std::string::npos) << st.error().message;
}

// ---- CheckPrivateDir ----

TEST_F(FsTest, CheckPrivateDir) {
  mkdir(P("d").c_str(), 0700);
  EXPECT_TRUE(CheckPrivateDir(P("d"), me_));
  chmod(P("d").c_str(), 0755);
  EXPECT_TRUE(CheckPrivateDir(P("d"), me_));

  auto missing = CheckPrivateDir(P("missing"), me_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(missing.error().message.find(P("missing")), std::string::npos);
  EXPECT_FALSE(Exists(P("missing")));  // never creates

  symlink(P("d").c_str(), P("link").c_str());
  auto sym = CheckPrivateDir(P("link"), me_);
  ASSERT_FALSE(sym);
  EXPECT_EQ(sym.error().message, "data directory " + P("link") + " is a symbolic link; use the real path");

  chmod(P("d").c_str(), 0757);
  auto open = CheckPrivateDir(P("d"), me_);
  ASSERT_FALSE(open);
  EXPECT_EQ(open.error().message,
            P("d") + " is writable by other users (mode 0757); run chmod 700 " + P("d"));
  chmod(P("d").c_str(), 0720);
  EXPECT_FALSE(CheckPrivateDir(P("d"), me_));

  Spit(P("f"), "");
  EXPECT_FALSE(CheckPrivateDir(P("f"), me_));
}

TEST_F(FsTest, CheckPrivateDirForeignOwner) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to chown";
  mkdir(P("d").c_str(), 0700);
  chown(P("d").c_str(), kNobody, kNobody);
  auto st = CheckPrivateDir(P("d"), me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            P("d") + " is owned by UID 65534, not you (UID 0); use your own data directory");
  EXPECT_TRUE(CheckPrivateDir(P("d"), kNobody));
}

// ---- CheckDataFile ----

TEST_F(FsTest, CheckDataFileAcceptsPrivateAndReadableFiles) {
  Spit(P("ledger.db"), "x", 0600);
  EXPECT_TRUE(CheckDataFile(P("ledger.db"), me_));
  chmod(P("ledger.db").c_str(), 0644);
  EXPECT_TRUE(CheckDataFile(P("ledger.db"), me_));
}

TEST_F(FsTest, CheckDataFileRefusals) {
  Spit(P("ledger.db"), "x", 0600);

  auto missing = CheckDataFile(P("none.db"), me_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);

  symlink(P("ledger.db").c_str(), P("link.db").c_str());
  auto sym = CheckDataFile(P("link.db"), me_);
  ASSERT_FALSE(sym);
  EXPECT_NE(sym.error().message.find(P("link.db") + " is a symbolic link"), std::string::npos);

  link(P("ledger.db").c_str(), P("hard.db").c_str());
  auto hard = CheckDataFile(P("ledger.db"), me_);
  ASSERT_FALSE(hard);
  EXPECT_NE(hard.error().message.find("has 2 hard links"), std::string::npos) << hard.error().message;
  unlink(P("hard.db").c_str());
  EXPECT_TRUE(CheckDataFile(P("ledger.db"), me_));

  mkdir(P("dir.db").c_str(), 0700);
  auto dir = CheckDataFile(P("dir.db"), me_);
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("is not a regular file"), std::string::npos);

  mkfifo(P("fifo.db").c_str(), 0600);
  EXPECT_FALSE(CheckDataFile(P("fifo.db"), me_));

  chmod(P("ledger.db").c_str(), 0620);
  auto group = CheckDataFile(P("ledger.db"), me_);
  ASSERT_FALSE(group);
  EXPECT_EQ(group.error().message,
            P("ledger.db") + " is writable by other users (mode 0620); run chmod 600 " + P("ledger.db"));
  chmod(P("ledger.db").c_str(), 0602);
  EXPECT_FALSE(CheckDataFile(P("ledger.db"), me_));
}

TEST_F(FsTest, CheckDataFileForeignOwner) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to chown";
  Spit(P("ledger.db"), "x", 0600);
  chown(P("ledger.db").c_str(), 1001, 1001);
  auto st = CheckDataFile(P("ledger.db"), me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            P("ledger.db") + " is owned by UID 1001, not you (UID 0); use your own data directory");
}

// ---- CreateDataFile ----

TEST_F(FsTest, CreateDataFileExactModeDespiteUmask) {
  umask(0077);
  ASSERT_TRUE(CreateDataFile(P("a.db"), 0640, me_));
  EXPECT_EQ(ModeOf(P("a.db")), 0640u);
  umask(0);
  ASSERT_TRUE(CreateDataFile(P("b.db"), 0600, me_));
  EXPECT_EQ(ModeOf(P("b.db")), 0600u);
  EXPECT_EQ(Slurp(P("b.db")), "");
}

TEST_F(FsTest, CreateDataFileKeepsExistingFile) {
  Spit(P("a.db"), "keep", 0600);
  EXPECT_TRUE(CreateDataFile(P("a.db"), 0600, me_));
  EXPECT_EQ(Slurp(P("a.db")), "keep");
  chmod(P("a.db").c_str(), 0666);
  EXPECT_FALSE(CreateDataFile(P("a.db"), 0600, me_));
}

TEST_F(FsTest, CreateDataFileNeverFollowsASymlink) {
  ASSERT_EQ(symlink(P("target.db").c_str(), P("a.db").c_str()), 0);
  auto st = CreateDataFile(P("a.db"), 0600, me_);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("symbolic link"), std::string::npos);
  EXPECT_FALSE(Exists(P("target.db")));
}

// ---- ReadSmallFile ----

TEST_F(FsTest, ReadSmallFile) {
  Spit(P("f"), "hello");
  auto text = ReadSmallFile(P("f"), 5);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "hello");
  Spit(P("empty"), "");
  EXPECT_EQ(ReadSmallFile(P("empty"), 0).value_or("x"), "");

  auto big = ReadSmallFile(P("f"), 4);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message, P("f") + " is larger than 4 bytes");
}

TEST_F(FsTest, ReadSmallFileRefusals) {
  auto missing = ReadSmallFile(P("missing"), 100);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "cannot read " + P("missing") + ": No such file or directory");

  Spit(P("f"), "secret");
  symlink(P("f").c_str(), P("link").c_str());
  auto sym = ReadSmallFile(P("link"), 100);
  ASSERT_FALSE(sym);
  EXPECT_NE(sym.error().message.find("symbolic link"), std::string::npos);

  mkfifo(P("fifo").c_str(), 0600);  // must not block waiting for a writer
  auto fifo = ReadSmallFile(P("fifo"), 100);
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("not a regular file"), std::string::npos);

  EXPECT_FALSE(ReadSmallFile(root_, 100));
}

// ---- WriteFileAtomic ----

TEST_F(FsTest, WriteFileAtomicCreatesWithExactMode) {
  umask(0);
  ASSERT_TRUE(WriteFileAtomic(P("state.json"), "{}\n", 0600));
  EXPECT_EQ(Slurp(P("state.json")), "{}\n");
  EXPECT_EQ(ModeOf(P("state.json")), 0600u);
  umask(0077);
  ASSERT_TRUE(WriteFileAtomic(P("shared.json"), "x", 0644));
  EXPECT_EQ(ModeOf(P("shared.json")), 0644u);
  EXPECT_EQ(Entries(root_), (std::vector<std::string>{"shared.json", "state.json"}));  // no temp left
}

TEST_F(FsTest, WriteFileAtomicReplaces) {
  Spit(P("state.json"), "old", 0644);
  ASSERT_TRUE(WriteFileAtomic(P("state.json"), "new contents", 0600));
  EXPECT_EQ(Slurp(P("state.json")), "new contents");
  EXPECT_EQ(ModeOf(P("state.json")), 0600u);
  ASSERT_TRUE(WriteFileAtomic(P("state.json"), "", 0600));
  EXPECT_EQ(Slurp(P("state.json")), "");
  EXPECT_EQ(Entries(root_), std::vector<std::string>{"state.json"});
}

TEST_F(FsTest, WriteFileAtomicRefusesSymlinkTarget) {
  Spit(P("victim"), "precious");
  symlink(P("victim").c_str(), P("state.json").c_str());
  auto st = WriteFileAtomic(P("state.json"), "evil", 0600);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("symbolic link"), std::string::npos);
  EXPECT_EQ(Slurp(P("victim")), "precious");
  EXPECT_EQ(Entries(root_), (std::vector<std::string>{"state.json", "victim"}));
}

TEST_F(FsTest, WriteFileAtomicRefusesHardLinkedAndNonRegularTargets) {
  Spit(P("a"), "a");
  link(P("a").c_str(), P("b").c_str());
  EXPECT_FALSE(WriteFileAtomic(P("a"), "x", 0600));
  EXPECT_EQ(Slurp(P("b")), "a");
  mkdir(P("dir").c_str(), 0700);
  EXPECT_FALSE(WriteFileAtomic(P("dir"), "x", 0600));
}

TEST_F(FsTest, WriteFileAtomicMissingDirectory) {
  auto st = WriteFileAtomic(P("nodir/state.json"), "x", 0600);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find(P("nodir/state.json")), std::string::npos) << st.error().message;
}

// A write that fails half-way (file size limit) leaves the old file and no temp.
TEST_F(FsTest, WriteFileAtomicFailureRemovesTempAndKeepsOld) {
  Spit(P("state.json"), "old");
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 16;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  auto st = WriteFileAtomic(P("state.json"), std::string(4096, 'x'), 0600);
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("File too large"), std::string::npos) << st.error().message;
  EXPECT_EQ(Slurp(P("state.json")), "old");
  EXPECT_EQ(Entries(root_), std::vector<std::string>{"state.json"});
}

}  // namespace
}  // namespace bk::sys
