#include "cli/server_dir.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "base/temp_dir_testing.h"
#include "sys/file_system_testing.h"

namespace bk::cli {
namespace {

namespace fs = std::filesystem;

// The real file system, but writing a file whose name holds `fail_in` fails with EIO.
class FailingWrite : public sys::ForwardingFileSystem {
 public:
  explicit FailingWrite(std::string fail_in) : fail_in_(std::move(fail_in)) {}
  sys::ErrnoResult<void> WriteNewFile(const std::string& p, std::string_view c, mode_t m) override {
    if (p.find(fail_in_) != std::string::npos) return std::unexpected(EIO);
    return ForwardingFileSystem::WriteNewFile(p, c, m);
  }

 private:
  std::string fail_in_;
};

// Also refuses every removal, so the rollback cannot finish.
class FailingWriteAndRemove : public FailingWrite {
 public:
  using FailingWrite::FailingWrite;
  sys::ErrnoResult<void> RemoveTree(const std::string&) override { return std::unexpected(EACCES); }
};

class ServerDirTest : public TempDirTest {
 protected:
  ServerDirTest() {
    spec_.directory = Path("srv");
    spec_.owner_uid = getuid();
    spec_.owner = "me";
  }
  std::vector<std::string> Entries(const std::string& dir) const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  static Status NoLedger() { return Ok(); }

  config::ServerSpec spec_;
};

TEST_F(ServerDirTest, CreatesTheTreeWithItsModes) {
  mode_t saved = umask(0077);  // the modes are exact whatever the umask
  auto st = CreateServerDirectory(sys::RealFileSystem(), spec_, NoLedger);
  umask(saved);
  ASSERT_TRUE(st);
  EXPECT_EQ(Entries(spec_.directory), (std::vector<std::string>{"config.json", "data", "run"}));
  auto mode = [](const std::string& p) { return fs::status(p).permissions(); };
  EXPECT_EQ(static_cast<int>(mode(spec_.directory)), 0711);
  EXPECT_EQ(static_cast<int>(mode(Path("srv/run"))), 0711);
  EXPECT_EQ(static_cast<int>(mode(Path("srv/data"))), 0700);
  EXPECT_EQ(static_cast<int>(mode(Path("srv/config.json"))), 0644);
}

TEST_F(ServerDirTest, FailedConfigWriteLeavesNoNewDirectory) {
  FailingWrite failing("config.json");
  auto st = CreateServerDirectory(failing, spec_, NoLedger);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            fmt::format("cannot write {}/config.json: Input/output error", spec_.directory));
  EXPECT_FALSE(fs::exists(spec_.directory));
}

TEST_F(ServerDirTest, FailedConfigWriteEmptiesAnExistingDirectoryAgain) {
  fs::create_directory(spec_.directory);
  FailingWrite failing("config.json");
  ASSERT_FALSE(CreateServerDirectory(failing, spec_, NoLedger));
  ASSERT_TRUE(fs::is_directory(spec_.directory));
  EXPECT_TRUE(Entries(spec_.directory).empty());
}

TEST_F(ServerDirTest, FailedLedgerRemovesTheTree) {
  auto st = CreateServerDirectory(sys::RealFileSystem(), spec_, [&]() -> Status {
    EXPECT_TRUE(fs::exists(Path("srv/config.json")));
    return Fail(ErrorKind::kIo, "no ledger");
  });
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "no ledger");
  EXPECT_FALSE(fs::exists(spec_.directory));
}

TEST_F(ServerDirTest, SaysWhatTheRollbackLeft) {
  fs::create_directory(spec_.directory);
  FailingWriteAndRemove failing("config.json");
  auto st = CreateServerDirectory(failing, spec_, NoLedger);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            fmt::format("cannot write {0}/config.json: Input/output error; could not remove what it created: "
                        "{0}/data, {0}/run",
                        spec_.directory));
}

TEST_F(ServerDirTest, RefusesAnythingButANewOrEmptyDirectoryOfOurs) {
  sys::FileSystem& real = sys::RealFileSystem();
  EXPECT_TRUE(CheckServerDirectory(real, spec_.directory, getuid()));
  fs::create_directory(spec_.directory);
  EXPECT_TRUE(CheckServerDirectory(real, spec_.directory, getuid()));
  fs::create_directory(Path("srv/x"));
  auto st = CheckServerDirectory(real, spec_.directory, getuid());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message,
            fmt::format("{} is not empty; choose a new or empty directory", spec_.directory));
  fs::create_directory_symlink(spec_.directory, Path("link"));
  st = CheckServerDirectory(real, Path("link"), getuid());
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, fmt::format("{} is a symbolic link; use the real path", Path("link")));
}

}  // namespace
}  // namespace bk::cli
