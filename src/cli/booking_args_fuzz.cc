// libFuzzer target: the booking grammar as `bk N DUR [MEM] [options]`, `bk x`
// and `bk e` see it, from argv to a service request, without a process or a
// ledger. The first byte picks the command; the rest is argv, one argument per
// line.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/booking_args.h"
#include "cli/context.h"
#include "engine/civil_time.h"
#include "sys/clock.h"

namespace {

using namespace bk;

// 2026-11-18T11:12:00Z: two minutes into a 5-minute slot.
constexpr engine::Seconds kNow = 1'795'000'320;

cli::Context& Ctx() {
  static cli::Context* ctx = [] {
    auto* c = new cli::Context;
    c->config.policy.gpu_count = 4;
    c->config.policy.host_cpus = 64;
    c->config.policy.host_ram_mb = 512 * 1024;
    c->clock = std::make_unique<sys::FixedClock>(kNow);
    c->zone = std::make_unique<engine::FixedZone>(3600);
    return c;
  }();
  return *ctx;
}

std::vector<std::string> SplitLines(const uint8_t* data, size_t size) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(data[i]));
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  std::vector<std::string> argv = SplitLines(data + 1, size - 1);
  std::vector<std::string> command;
  argv = cli::BeforeCommand(argv, &command);
  cli::Context& ctx = Ctx();
  if (selector & 1) {
    cli::ArgSpec spec("bk e", "edit a booking");
    cli::EditArgs a;
    cli::AddEditOptions(spec, a);
    if (spec.Parse(argv) && !spec.help_requested()) (void)cli::ToEditRequest(ctx, a);
  } else {
    cli::ArgSpec spec("bk book", "book GPUs");
    cli::BookingArgs a;
    cli::AddBookingOptions(spec, a, /*with_start=*/(selector & 2) == 0, /*with_op_id=*/(selector & 4) == 0);
    if (spec.Parse(argv) && !spec.help_requested()) (void)cli::ToRequest(ctx, a, /*exclusive=*/selector & 8);
  }
  return 0;
}
