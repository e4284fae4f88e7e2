// libFuzzer target: one JSON-RPC line from a socket peer through decode,
// validation and dispatch against a real BookingService on a temporary
// ledger, as the daemon runs it. The first byte picks the peer (a user, another
// user, the owner). One service serves many inputs, so bookings made by one
// input meet the next; the ledger is started afresh every few thousand inputs
// to keep it small.

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/fuzz_support.h"
#include "config/config.h"
#include "server/dispatcher.h"
#include "service/booking_service.h"
#include "sys/clock.h"

namespace {

using namespace bk;

struct Fixture : fuzz::LedgerFixture<Fixture> {
  config::Config config;
  sys::FixedClock clock{fuzz::kNow};
  std::unique_ptr<service::BookingService> service;
  std::unique_ptr<server::Dispatcher> dispatcher;

  Fixture() : LedgerFixture("dispatcher-fuzz") {
    config.deployment = config::Deployment::kServer;
    config.data_dir = dir + "/data";
    config.ledger_path = config.data_dir + "/ledger.db";
    config.config_file = dir + "/config.json";
    config.policy.gpu_count = 4;
    config.policy.host_cpus = 64;
    config.policy.host_ram_mb = 512 * 1024;
    config.owner_uid = static_cast<uint32_t>(getuid());
    config.owner = "owner";
    Start();
  }
  ~Fixture() { Stop(); }
  void Start() {
    service = std::make_unique<service::BookingService>(service::BookingService::Deps{
        &config, &clock, nullptr, static_cast<uid_t>(getuid()), /*exclusive_store=*/true});
    dispatcher = std::make_unique<server::Dispatcher>(*service, config);
  }
  void Stop() {
    dispatcher.reset();
    service.reset();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Fixture& f = fuzz::Fixture<Fixture>();
  f.CountInput();
  const uint32_t uid = static_cast<uint32_t>(getuid());
  static const service::Actor kActors[] = {
      {uid, "alice", false}, {uid + 1, "bob", false}, {uid + 2, "owner", true}};
  const service::Actor& actor = kActors[data[0] % 3];
  std::string line(reinterpret_cast<const char*>(data + 1), size - 1);
  (void)f.dispatcher->Handle(actor, line);
  return 0;
}
