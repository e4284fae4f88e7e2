#include "base/iso8601.h"

#include "base/cursor.h"
#include "base/strings.h"

namespace bk {

namespace {

// YYYY-MM-DD or YYYYMMDD (Python 3.11 fromisoformat also takes week dates; we
// do not: nobody types them and they need their own error story).
std::expected<CivilTime, IsoError> ScanIsoDate(Cursor& in) {
  const auto year = in.Fixed(4);
  if (!year) return std::unexpected(IsoError::kShape);
  const bool extended = in.Eat('-');
  const auto month = in.Fixed(2);
  if (!month || (extended && !in.Eat('-'))) return std::unexpected(IsoError::kShape);
  const auto day = in.Fixed(2);
  if (!day) return std::unexpected(IsoError::kShape);
  if (!ValidDate(*year, *month, *day)) return std::unexpected(IsoError::kDate);
  return CivilTime{*year, *month, *day};
}

// HH[:MM[:SS[.f+]]] or HH[MM[SS[.f+]]]; fractional seconds are dropped.
std::expected<void, IsoError> ScanIsoClock(Cursor& in, CivilTime& c) {
  const auto hour = in.Fixed(2);
  if (!hour) return std::unexpected(IsoError::kShape);
  c.hour = *hour;
  const bool extended = in.Peek() == ':';
  auto next_field = [&](int& field) -> std::optional<bool> {
    if (extended ? !in.Eat(':') : !in.PeekDigit()) return false;  // field absent
    const auto v = in.Fixed(2);
    if (!v) return std::nullopt;
    field = *v;
    return true;
  };
  const auto has_minute = next_field(c.minute);
  if (!has_minute) return std::unexpected(IsoError::kShape);
  if (*has_minute) {
    const auto has_second = next_field(c.second);
    if (!has_second) return std::unexpected(IsoError::kShape);
    if (*has_second && (in.Eat('.') || in.Eat(','))) {
      if (!in.PeekDigit()) return std::unexpected(IsoError::kShape);
      in.SkipDigits();
    }
  }
  if (c.hour > 23 || c.minute > 59 || c.second > 59) return std::unexpected(IsoError::kClock);
  return {};
}

// Z, ±HH, ±HH:MM or ±HHMM, strictly inside ±24h.
std::expected<std::optional<int64_t>, IsoError> ScanIsoOffset(Cursor& in) {
  if (in.Done()) return std::nullopt;
  if (in.Eat('z')) return int64_t{0};
  const int sign = in.Eat('+') ? 1 : in.Eat('-') ? -1 : 0;
  if (sign == 0) return std::unexpected(IsoError::kShape);
  const auto hours = in.Fixed(2);
  if (!hours) return std::unexpected(IsoError::kShape);
  int minutes = 0;
  if (!in.Done()) {
    in.Eat(':');  // +08:00 and +0800 alike
    const auto mm = in.Fixed(2);
    if (!mm) return std::unexpected(IsoError::kShape);
    minutes = *mm;
  }
  if (*hours > 23 || minutes > 59) return std::unexpected(IsoError::kShape);
  return int64_t{sign} * (*hours * kHour + minutes * kMinute);
}

}  // namespace

std::expected<IsoTime, IsoError> ScanIso(std::string_view text) {
  const std::string s = ToLower(Trim(text));
  Cursor in(s);
  IsoTime out;
  auto date = ScanIsoDate(in);
  if (!date) return std::unexpected(date.error());
  out.civil = *date;
  if (in.Done()) return out;  // date only: midnight
  if (!in.Eat('t') && !in.Eat(' ')) return std::unexpected(IsoError::kShape);
  if (auto clock = ScanIsoClock(in, out.civil); !clock) return std::unexpected(clock.error());
  auto offset = ScanIsoOffset(in);
  if (!offset) return std::unexpected(offset.error());
  if (!in.Done()) return std::unexpected(IsoError::kShape);
  out.offset = *offset;
  return out;
}

}  // namespace bk
