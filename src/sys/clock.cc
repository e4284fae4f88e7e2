#include "sys/clock.h"

#include <ctime>
#include <optional>
#include <string_view>

#include "base/iso8601.h"
#include "base/strings.h"

namespace bk::sys {

Seconds RealClock::Now() const { return static_cast<Seconds>(time(nullptr)); }

int64_t RealClock::NowMs() const {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

namespace {

constexpr const char* kTestNowError =
    "BK_TEST_NOW must be Unix seconds or an ISO time with offset such as 2026-11-29T18:49:00Z";

// An ISO time with an offset: a naive one would depend on the zone.
std::optional<Seconds> ParseIsoWithOffset(std::string_view s) {
  auto iso = ScanIso(s);
  if (!iso || !iso->offset) return std::nullopt;
  return CivilToEpoch(iso->civil) - *iso->offset;
}

}  // namespace

Result<std::unique_ptr<Clock>> ClockFromTestNow(const std::string& value) {
  std::string_view v = Trim(value);
  if (AllDigits(v)) {
    auto secs = ParseUint(v);
    if (!secs) return Invalid(kTestNowError);
    return std::make_unique<FixedClock>(*secs);
  }
  auto t = ParseIsoWithOffset(v);
  if (!t) return Invalid(kTestNowError);
  return std::make_unique<FixedClock>(*t);
}

}  // namespace bk::sys
