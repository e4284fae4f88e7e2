#pragma once
// Vocabulary of the booking domain. The engine is pure: no I/O, no clock;
// "now" is always an argument.

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/civil_time.h"

namespace bk::engine {

// Unix time or a duration, in whole seconds (UTC; the slot grid is epoch-aligned).
using ::bk::kDay;
using ::bk::kHour;
using ::bk::kMinute;
using ::bk::Seconds;

// The most GPUs one host may have: gpu_count, a booking's count, GPU indexes
// in files and imports are all bounded by it.
inline constexpr int kMaxGpus = 1024;

enum class Mode { kShared, kExclusive };
std::string_view ModeName(Mode mode);  // "shared" | "exclusive"
// Accepts s, shared, auto, x, exclusive (case-insensitive).
std::optional<Mode> ParseMode(std::string_view text);

// Half-open [start, end).
struct Interval {
  Seconds start = 0;
  Seconds end = 0;
  bool Overlaps(Seconds s, Seconds e) const { return start < e && end > s; }
  friend bool operator==(const Interval&, const Interval&) = default;
};

}  // namespace bk::engine
