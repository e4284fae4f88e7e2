// libFuzzer target: one MCP message (or batch) line as `bk mcp` reads it from
// its client, through the tools against a real private ledger in a temporary
// directory. One server and ledger serve many inputs (an initialize in one
// input holds for the next, as in a session); both start afresh every few
// thousand inputs to keep the ledger small.

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "agent/mcp_server.h"
#include "base/fuzz_support.h"
#include "client/ledger.h"
#include "config/config.h"
#include "engine/civil_time.h"
#include "sys/clock.h"

namespace {

using namespace bk;

struct Fixture : fuzz::LedgerFixture<Fixture> {
  config::Config config;
  sys::FixedClock clock{fuzz::kNow};
  engine::FixedZone zone{0};
  std::unique_ptr<client::Ledger> ledger;
  std::unique_ptr<agent::McpServer> server;

  Fixture() : LedgerFixture("mcp-fuzz") {
    std::map<std::string, std::string> env = {
        {"BK_DATA_DIR", dir}, {"BK_GPU_COUNT", "8"}, {"BK_HOST_CPUS", "64"}, {"BK_HOST_RAM_MB", "512g"}};
    auto cfg = config::Load([&](const std::string& k) -> std::optional<std::string> {
      auto it = env.find(k);
      if (it == env.end()) return std::nullopt;
      return it->second;
    });
    if (!cfg) abort();
    config = *cfg;
    Start();
  }
  ~Fixture() { Stop(); }
  void Start() {
    auto opened = client::OpenDirect(config, clock);
    if (!opened) abort();
    ledger = std::move(*opened);
    agent::ToolEnv env;
    env.ledger = [this]() -> Result<client::Ledger*> { return ledger.get(); };
    env.config = &config;
    env.zone = &zone;
    // Commands a booking attaches write private specs: keep them in the scratch directory.
    env.env = [this](const std::string& k) -> std::optional<std::string> {
      if (k == "BK_JOB_DIR") return dir + "/jobs";
      return std::nullopt;
    };
    // No cluster tools: a call would run this fuzzer as a `bk c` child.
    setenv("BK_CLUSTER_DISABLE", "1", 1);
    server = std::make_unique<agent::McpServer>(std::move(env));
  }
  void Stop() {
    server.reset();
    ledger.reset();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& f = fuzz::Fixture<Fixture>();
  f.CountInput();
  (void)f.server->HandleLine(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
