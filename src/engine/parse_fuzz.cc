// libFuzzer target: the quantities users type on the booking command line
// (durations, sizes, CPUs, GPU lists and the three start-time grammars). The
// first byte picks the parser and the zone; the rest is the text. Every
// parser must answer with a value or an error, never crash or hit UB.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/civil_time.h"
#include "engine/parse.h"
#include "engine/time_grid.h"

namespace {

using namespace bk::engine;

// 2026-11-18T11:12:00Z: two minutes into a 5-minute slot.
constexpr Seconds kNow = 1'795'000'320;

// A value that parsed must format back without trouble.
void Touch(const bk::Result<Seconds>& t, const Zone& zone) {
  if (!t) return;
  (void)FormatIsoUtc(*t);
  (void)FormatLocal(*t, zone);
  (void)FormatLocalShort(*t, zone);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  // The zones a server may sit in: UTC, a negative half-hour and the extremes.
  static const FixedZone kZones[] = {FixedZone(0), FixedZone(-(9 * 3600 + 1800)), FixedZone(14 * 3600),
                                     FixedZone(-12 * 3600)};
  const Zone& zone = kZones[(selector >> 4) % 4];
  const SlotGrid grid((selector & 0x80) ? 3600 : 300);
  switch (selector % 8) {
    case 0:
      if (auto d = ParseDuration(text)) (void)FormatDuration(*d);
      break;
    case 1:
      if (auto mb = ParseSizeMb(text, "--ram")) (void)FormatSizeMb(*mb);
      break;
    case 2: (void)ParseCpus(text); break;
    case 3: (void)ParseGpuList(text, "--gpu"); break;
    case 4: Touch(ParseStart(text, kNow, grid, zone), zone); break;
    case 5: Touch(ParseExactStart(text, kNow, grid, zone), zone); break;
    case 6: Touch(ParseViewTime(text, kNow, zone), zone); break;
    case 7: Touch(ParseIsoTime(text, zone), zone); break;
  }
  return 0;
}
