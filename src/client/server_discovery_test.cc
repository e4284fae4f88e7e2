#include "client/server_discovery.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "base/temp_dir_testing.h"

namespace bk::client {
namespace {

class ServerDiscoveryTest : public TempDirTest {
 protected:
  void Process(int pid, const std::vector<std::string>& argv, const std::string& cwd = "") {
    std::string dir = Path("proc/" + std::to_string(pid));
    ASSERT_EQ(mkdir(Path("proc").c_str(), 0755) == 0 || errno == EEXIST, true);
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
    std::ofstream out(dir + "/cmdline", std::ios::binary);
    for (const auto& a : argv) out << a << '\0';
    if (!cwd.empty()) ASSERT_EQ(symlink(cwd.c_str(), (dir + "/cwd").c_str()), 0);
  }
};

TEST_F(ServerDiscoveryTest, FindsServeCommandLinesOnly) {
  Process(40, {"/usr/bin/bk", "server", "serve", "--config", "/srv/b/config.json"});
  Process(7, {"bk", "server", "serve", "--config=rel/config.json"}, "/home/ann");
  Process(9, {"bk", "server", "status"});
  Process(11, {"vim", "server", "serve", "--config"});
  Process(12, {"bk", "serve", "--config", "/x"});
  Process(50, {"/usr/bin/bk", "server", "serve", "--config", "/srv/b/config.json"});
  EXPECT_EQ(RunningServerConfigs(Path("proc")),
            (std::vector<std::string>{"/home/ann/rel/config.json", "/srv/b/config.json"}));
}

TEST_F(ServerDiscoveryTest, NoProcIsNoServer) { EXPECT_TRUE(RunningServerConfigs(Path("none")).empty()); }

TEST(PrivateLedgerHintTest, NamesTheLedgerAndTheServer) {
  EXPECT_EQ(PrivateLedgerHint("/d", {}),
            " (looked in your private ledger /d; for a server's bookings, run "
            "`bk server connect DIR/config.json` first)");
  EXPECT_EQ(
      PrivateLedgerHint("/d", {"/s/config.json", "/t/config.json"}),
      " (looked in your private ledger /d; a server runs here: `bk server connect /s/config.json`, then "
      "retry)");
}

}  // namespace
}  // namespace bk::client
