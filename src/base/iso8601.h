#pragma once
// The one ISO 8601 reader: dates, times and offsets as Python's
// datetime.fromisoformat takes them (but week dates). What a time without an
// offset means (local, UTC, refused) is the caller's decision.

#include <cstdint>
#include <expected>
#include <optional>
#include <string_view>

#include "base/civil_time.h"

namespace bk {

enum class IsoError { kShape, kDate, kClock };

struct IsoTime {
  CivilTime civil;
  std::optional<int64_t> offset;  // seconds east of UTC; absent = naive
};

// YYYY-MM-DD or YYYYMMDD, optionally followed by T or a space and
// HH[:MM[:SS[.f+]]] (or HH[MM[SS]]) and Z, ±HH, ±HH:MM or ±HHMM. Case and
// surrounding blanks are ignored; fractional seconds are dropped.
std::expected<IsoTime, IsoError> ScanIso(std::string_view text);

}  // namespace bk
