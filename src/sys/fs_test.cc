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

class FsTest : public TempDirTest {
 protected:
  void SetUp() override {
    saved_umask_ = umask(022);
    umask(saved_umask_);
  }
  void TearDown() override { umask(saved_umask_); }
  static bool IsRoot() { return geteuid() == 0; }

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
  EXPECT_TRUE(Exists(root()));
  EXPECT_FALSE(Exists(Path("missing")));
  ASSERT_EQ(symlink(Path("missing").c_str(), Path("dangling").c_str()), 0);
  EXPECT_TRUE(Exists(Path("dangling")));
}

// ---- EnsurePrivateDir ----

TEST_F(FsTest, EnsureCreatesMissingParentsWithExactModeDespiteUmask) {
  chmod(root().c_str(), 0755);
  umask(0);
  ASSERT_TRUE(EnsurePrivateDir(Path("a/b/c"), 0700, me_));
  EXPECT_EQ(ModeOf(Path("a")), 0700u);
  EXPECT_EQ(ModeOf(Path("a/b")), 0700u);
  EXPECT_EQ(ModeOf(Path("a/b/c")), 0700u);
  EXPECT_EQ(ModeOf(root()), 0755u);  // an existing parent is left alone

  umask(0077);
  ASSERT_TRUE(EnsurePrivateDir(Path("x/y"), 0750, me_));
  EXPECT_EQ(ModeOf(Path("x")), 0750u);
  EXPECT_EQ(ModeOf(Path("x/y")), 0750u);
}

TEST_F(FsTest, EnsureAcceptsExistingAndTrailingSlash) {
  ASSERT_TRUE(EnsurePrivateDir(Path("d"), 0700, me_));
  EXPECT_TRUE(EnsurePrivateDir(Path("d"), 0700, me_));
  EXPECT_TRUE(EnsurePrivateDir(Path("d/"), 0700, me_));
  chmod(Path("d").c_str(), 0755);  // readable by others, not writable: acceptable
  EXPECT_TRUE(EnsurePrivateDir(Path("d"), 0700, me_));
  EXPECT_EQ(ModeOf(Path("d")), 0755u);  // never repaired silently
}

TEST_F(FsTest, EnsureRefusesSymlinkedDirectory) {
  mkdir(Path("real").c_str(), 0700);
  ASSERT_EQ(symlink(Path("real").c_str(), Path("link").c_str()), 0);
  auto st = EnsurePrivateDir(Path("link"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, ErrorKind::kPermission);
  EXPECT_EQ(st.error().message, "data directory " + Path("link") + " is a symbolic link; use the real path");
}

TEST_F(FsTest, EnsureRefusesToCreateBelowASymlink) {
  mkdir(Path("real").c_str(), 0700);
  ASSERT_EQ(symlink(Path("real").c_str(), Path("link").c_str()), 0);
  auto st = EnsurePrivateDir(Path("link/sub/deeper"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find(Path("link") + " is a symbolic link; use the real path"),
            std::string::npos)
      << st.error().message;
  EXPECT_FALSE(Exists(Path("real/sub")));
}

TEST_F(FsTest, EnsureRefusesDanglingSymlink) {
  ASSERT_EQ(symlink(Path("nowhere").c_str(), Path("link").c_str()), 0);
  EXPECT_FALSE(EnsurePrivateDir(Path("link"), 0700, me_));
  EXPECT_FALSE(Exists(Path("nowhere")));
}

TEST_F(FsTest, EnsureRefusesAFile) {
  Spit(Path("file"), "x");
  auto st = EnsurePrivateDir(Path("file"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("is not a directory"), std::string::npos) << st.error().message;
  EXPECT_FALSE(EnsurePrivateDir(Path("file/sub"), 0700, me_));
}

TEST_F(FsTest, EnsureRefusesForeignOwner) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to chown";
  mkdir(Path("foreign").c_str(), 0700);
  ASSERT_EQ(chown(Path("foreign").c_str(), kNobody, kNobody), 0);
  auto st = EnsurePrivateDir(Path("foreign"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().kind, ErrorKind::kPermission);
  EXPECT_EQ(st.error().message,
            Path("foreign") + " is owned by UID 65534, not you (UID 0); use your own data directory");
}

TEST_F(FsTest, EnsureRefusesGroupOrOtherWritable) {
  mkdir(Path("open").c_str(), 0700);
  chmod(Path("open").c_str(), 0777);
  auto st = EnsurePrivateDir(Path("open"), 0700, me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            Path("open") + " is writable by other users (mode 0777); run chmod 700 " + Path("open"));
  chmod(Path("open").c_str(), 0770);
  EXPECT_FALSE(EnsurePrivateDir(Path("open"), 0700, me_));
  chmod(Path("open").c_str(), 0702);
  EXPECT_FALSE(EnsurePrivateDir(Path("open"), 0700, me_));
}

TEST_F(FsTest, EnsureAllowsWriteBitsTheModeGrants) {
  mkdir(Path("shared").c_str(), 0700);
  chmod(Path("shared").c_str(), 0770);
  EXPECT_TRUE(EnsurePrivateDir(Path("shared"), 0770, me_));
  chmod(Path("shared").c_str(), 0777);
  auto st = EnsurePrivateDir(Path("shared"), 0770, me_);  // others still not allowed
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("run chmod 770"), std::string::npos) << st.error().message;
}

// ---- CheckPrivateDir ----

TEST_F(FsTest, CheckPrivateDir) {
  mkdir(Path("d").c_str(), 0700);
  EXPECT_TRUE(CheckPrivateDir(Path("d"), me_));
  chmod(Path("d").c_str(), 0755);
  EXPECT_TRUE(CheckPrivateDir(Path("d"), me_));

  auto missing = CheckPrivateDir(Path("missing"), me_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_NE(missing.error().message.find(Path("missing")), std::string::npos);
  EXPECT_FALSE(Exists(Path("missing")));  // never creates

  symlink(Path("d").c_str(), Path("link").c_str());
  auto sym = CheckPrivateDir(Path("link"), me_);
  ASSERT_FALSE(sym);
  EXPECT_EQ(sym.error().message, "data directory " + Path("link") + " is a symbolic link; use the real path");

  chmod(Path("d").c_str(), 0757);
  auto open = CheckPrivateDir(Path("d"), me_);
  ASSERT_FALSE(open);
  EXPECT_EQ(open.error().message,
            Path("d") + " is writable by other users (mode 0757); run chmod 700 " + Path("d"));
  chmod(Path("d").c_str(), 0720);
  EXPECT_FALSE(CheckPrivateDir(Path("d"), me_));

  Spit(Path("f"), "");
  EXPECT_FALSE(CheckPrivateDir(Path("f"), me_));
}

TEST_F(FsTest, CheckPrivateDirForeignOwner) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to chown";
  mkdir(Path("d").c_str(), 0700);
  chown(Path("d").c_str(), kNobody, kNobody);
  auto st = CheckPrivateDir(Path("d"), me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            Path("d") + " is owned by UID 65534, not you (UID 0); use your own data directory");
  EXPECT_TRUE(CheckPrivateDir(Path("d"), kNobody));
}

// ---- CheckDataFile ----

TEST_F(FsTest, CheckDataFileAcceptsPrivateAndReadableFiles) {
  Spit(Path("ledger.db"), "x", 0600);
  EXPECT_TRUE(CheckDataFile(Path("ledger.db"), me_));
  chmod(Path("ledger.db").c_str(), 0644);
  EXPECT_TRUE(CheckDataFile(Path("ledger.db"), me_));
}

TEST_F(FsTest, CheckDataFileRefusals) {
  Spit(Path("ledger.db"), "x", 0600);

  auto missing = CheckDataFile(Path("none.db"), me_);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);

  symlink(Path("ledger.db").c_str(), Path("link.db").c_str());
  auto sym = CheckDataFile(Path("link.db"), me_);
  ASSERT_FALSE(sym);
  EXPECT_NE(sym.error().message.find(Path("link.db") + " is a symbolic link"), std::string::npos);

  link(Path("ledger.db").c_str(), Path("hard.db").c_str());
  auto hard = CheckDataFile(Path("ledger.db"), me_);
  ASSERT_FALSE(hard);
  EXPECT_NE(hard.error().message.find("has 2 hard links"), std::string::npos) << hard.error().message;
  unlink(Path("hard.db").c_str());
  EXPECT_TRUE(CheckDataFile(Path("ledger.db"), me_));

  mkdir(Path("dir.db").c_str(), 0700);
  auto dir = CheckDataFile(Path("dir.db"), me_);
  ASSERT_FALSE(dir);
  EXPECT_NE(dir.error().message.find("is not a regular file"), std::string::npos);

  mkfifo(Path("fifo.db").c_str(), 0600);
  EXPECT_FALSE(CheckDataFile(Path("fifo.db"), me_));

  chmod(Path("ledger.db").c_str(), 0620);
  auto group = CheckDataFile(Path("ledger.db"), me_);
  ASSERT_FALSE(group);
  EXPECT_EQ(
      group.error().message,
      Path("ledger.db") + " is writable by other users (mode 0620); run chmod 600 " + Path("ledger.db"));
  chmod(Path("ledger.db").c_str(), 0602);
  EXPECT_FALSE(CheckDataFile(Path("ledger.db"), me_));
}

TEST_F(FsTest, CheckDataFileForeignOwner) {
  if (!IsRoot()) GTEST_SKIP() << "needs root to chown";
  Spit(Path("ledger.db"), "x", 0600);
  chown(Path("ledger.db").c_str(), 1001, 1001);
  auto st = CheckDataFile(Path("ledger.db"), me_);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            Path("ledger.db") + " is owned by UID 1001, not you (UID 0); use your own data directory");
}

// ---- CreateDataFile ----

TEST_F(FsTest, CreateDataFileExactModeDespiteUmask) {
  umask(0077);
  ASSERT_TRUE(CreateDataFile(Path("a.db"), 0640, me_));
  EXPECT_EQ(ModeOf(Path("a.db")), 0640u);
  umask(0);
  ASSERT_TRUE(CreateDataFile(Path("b.db"), 0600, me_));
  EXPECT_EQ(ModeOf(Path("b.db")), 0600u);
  EXPECT_EQ(Slurp(Path("b.db")), "");
}

TEST_F(FsTest, CreateDataFileKeepsExistingFile) {
  Spit(Path("a.db"), "keep", 0600);
  EXPECT_TRUE(CreateDataFile(Path("a.db"), 0600, me_));
  EXPECT_EQ(Slurp(Path("a.db")), "keep");
  chmod(Path("a.db").c_str(), 0666);
  EXPECT_FALSE(CreateDataFile(Path("a.db"), 0600, me_));
}

TEST_F(FsTest, CreateDataFileNeverFollowsASymlink) {
  ASSERT_EQ(symlink(Path("target.db").c_str(), Path("a.db").c_str()), 0);
  auto st = CreateDataFile(Path("a.db"), 0600, me_);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("symbolic link"), std::string::npos);
  EXPECT_FALSE(Exists(Path("target.db")));
}

// ---- ReadSmallFile ----

TEST_F(FsTest, ReadSmallFile) {
  Spit(Path("f"), "hello");
  auto text = ReadSmallFile(Path("f"), 5);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(*text, "hello");
  Spit(Path("empty"), "");
  EXPECT_EQ(ReadSmallFile(Path("empty"), 0).value_or("x"), "");

  auto big = ReadSmallFile(Path("f"), 4);
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().message, Path("f") + " is larger than 4 bytes");
}

TEST_F(FsTest, ReadSmallFileRefusals) {
  auto missing = ReadSmallFile(Path("missing"), 100);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(missing.error().message, "cannot read " + Path("missing") + ": No such file or directory");

  Spit(Path("f"), "secret");
  symlink(Path("f").c_str(), Path("link").c_str());
  auto sym = ReadSmallFile(Path("link"), 100);
  ASSERT_FALSE(sym);
  EXPECT_NE(sym.error().message.find("symbolic link"), std::string::npos);

  mkfifo(Path("fifo").c_str(), 0600);  // must not block waiting for a writer
  auto fifo = ReadSmallFile(Path("fifo"), 100);
  ASSERT_FALSE(fifo);
  EXPECT_NE(fifo.error().message.find("not a regular file"), std::string::npos);

  EXPECT_FALSE(ReadSmallFile(root(), 100));
}

// ---- WriteFileAtomic ----

TEST_F(FsTest, WriteFileAtomicCreatesWithExactMode) {
  umask(0);
  ASSERT_TRUE(WriteFileAtomic(Path("state.json"), "{}\n", 0600));
  EXPECT_EQ(Slurp(Path("state.json")), "{}\n");
  EXPECT_EQ(ModeOf(Path("state.json")), 0600u);
  umask(0077);
  ASSERT_TRUE(WriteFileAtomic(Path("shared.json"), "x", 0644));
  EXPECT_EQ(ModeOf(Path("shared.json")), 0644u);
  EXPECT_EQ(Entries(root()), (std::vector<std::string>{"shared.json", "state.json"}));  // no temp left
}

TEST_F(FsTest, WriteFileAtomicReplaces) {
  Spit(Path("state.json"), "old", 0644);
  ASSERT_TRUE(WriteFileAtomic(Path("state.json"), "new contents", 0600));
  EXPECT_EQ(Slurp(Path("state.json")), "new contents");
  EXPECT_EQ(ModeOf(Path("state.json")), 0600u);
  ASSERT_TRUE(WriteFileAtomic(Path("state.json"), "", 0600));
  EXPECT_EQ(Slurp(Path("state.json")), "");
  EXPECT_EQ(Entries(root()), std::vector<std::string>{"state.json"});
}

TEST_F(FsTest, WriteFileAtomicRefusesSymlinkTarget) {
  Spit(Path("victim"), "precious");
  symlink(Path("victim").c_str(), Path("state.json").c_str());
  auto st = WriteFileAtomic(Path("state.json"), "evil", 0600);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("symbolic link"), std::string::npos);
  EXPECT_EQ(Slurp(Path("victim")), "precious");
  EXPECT_EQ(Entries(root()), (std::vector<std::string>{"state.json", "victim"}));
}

TEST_F(FsTest, WriteFileAtomicRefusesHardLinkedAndNonRegularTargets) {
  Spit(Path("a"), "a");
  link(Path("a").c_str(), Path("b").c_str());
  EXPECT_FALSE(WriteFileAtomic(Path("a"), "x", 0600));
  EXPECT_EQ(Slurp(Path("b")), "a");
  mkdir(Path("dir").c_str(), 0700);
  EXPECT_FALSE(WriteFileAtomic(Path("dir"), "x", 0600));
}

TEST_F(FsTest, WriteFileAtomicMissingDirectory) {
  auto st = WriteFileAtomic(Path("nodir/state.json"), "x", 0600);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find(Path("nodir/state.json")), std::string::npos) << st.error().message;
}

// A write that fails half-way (file size limit) leaves the old file and no temp.
TEST_F(FsTest, WriteFileAtomicFailureRemovesTempAndKeepsOld) {
  Spit(Path("state.json"), "old");
  struct rlimit saved;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 16;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  auto st = WriteFileAtomic(Path("state.json"), std::string(4096, 'x'), 0600);
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("File too large"), std::string::npos) << st.error().message;
  EXPECT_EQ(Slurp(Path("state.json")), "old");
  EXPECT_EQ(Entries(root()), std::vector<std::string>{"state.json"});
}

}  // namespace
}  // namespace bk::sys
