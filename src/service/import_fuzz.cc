// libFuzzer target: `bk admin data import LEDGER.json`, the Python original's
// ledger, into an empty temporary ledger. A successful import fills the
// ledger, so the next input starts from an empty one again.

#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/fuzz_support.h"
#include "config/config.h"
#include "service/booking_service.h"
#include "sys/clock.h"

namespace {

using namespace bk;

const service::Actor kRoot{0, "root", true};

struct Fixture : fuzz::LedgerFixture<Fixture> {
  config::Config config;
  sys::FixedClock clock{fuzz::kNow};
  std::unique_ptr<service::BookingService> service;

  Fixture() : LedgerFixture("import-fuzz") {
    config.data_dir = dir + "/data";
    config.ledger_path = config.data_dir + "/ledger.db";
    config.policy.gpu_count = 4;
    config.policy.host_cpus = 64;
    config.policy.host_ram_mb = 512 * 1024;
    Start();
  }
  ~Fixture() { Stop(); }
  void Start() {
    service = std::make_unique<service::BookingService>(
        service::BookingService::Deps{&config, &clock, nullptr, static_cast<uid_t>(getuid()), false});
  }
  void Stop() { service.reset(); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fixture& f = fuzz::Fixture<Fixture>();
  std::string text(reinterpret_cast<const char*>(data), size);
  if (f.service->ImportUpstream(kRoot, text)) f.Renew();
  return 0;
}
