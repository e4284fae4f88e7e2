#pragma once
// Parsing and formatting of the quantities users type: durations, VRAM and RAM
// sizes, CPU counts, GPU lists, start times. Every error message says what was
// wrong and shows a valid example; callers prefix "bk: ".

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "engine/civil_time.h"
#include "engine/time_grid.h"
#include "engine/types.h"

namespace bk::engine {

// Upper bounds that keep arithmetic on parsed values far from overflow while
// staying well above anything a booking can use.
inline constexpr Seconds kMaxDuration = 36500 * kDay;    // 100 years
inline constexpr int64_t kMaxSizeMb = int64_t{1} << 40;  // 1 EiB
inline constexpr int64_t kMaxCpus = 1'000'000;

// "30m", "1h30m", "2d", "1d2h5m": digits+unit (d/h/m), each unit at most once,
// any order, case-insensitive, no spaces, total > 0.
// Errors: "duration must look like 30m, 1h30m, or 1d", "duration units may only
// appear once", "duration must be positive", "duration is too long (at most 36500d)".
Result<Seconds> ParseDuration(std::string_view text);
// Compact form omitting zero parts: 1h, 30m, 5d4h20m, 0m.
std::string FormatDuration(Seconds seconds);

// VRAM/RAM size in MiB: <number>[.<digits>]<unit>, unit g|gb|gib (x1024) or
// m|mb|mib; rounded half up. `what` names the quantity in errors ("memory", "--ram").
// Errors: "<what> must look like 12g or 4096m", "<what> must be positive",
// "<what> must be at least 1 MiB", "<what> must be at most 1073741824g".
Result<int64_t> ParseSizeMb(std::string_view text, std::string_view what = "memory");
// 12.0GiB for >= 1024 MiB (one decimal), else 512MiB.
std::string FormatSizeMb(int64_t mb);

// Positive whole number of CPUs ("4"), at most kMaxCpus.
// Errors: "--cpus must be a whole number of CPUs such as 4".
Result<int64_t> ParseCpus(std::string_view text);

// Comma-separated GPU indexes, blanks around commas and empty items ignored,
// no repeats, returned in the order given. Ranges are the caller's to check.
// `label` is the option name used in errors ("--gpu", "--exclude-gpu").
Result<std::vector<int>> ParseGpuList(std::string_view text, std::string_view label);

// ISO 8601 date-time: "2026-11-30T09:00", "2026-11-30 09:00:00", with "Z" or
// "+08:00"/"+0800" offsets, or date only "2026-11-30" (midnight). Naive values
// are local time in `zone`. Fractional seconds are truncated.
Result<Seconds> ParseIsoTime(std::string_view text, const Zone& zone);

// The friendly start grammar of -t/--at (--start may use it too, or
// ParseExactStart for the original's narrower now-or-ISO grammar):
// now; +DUR (rounded up to the grid); H, HH, H:MM, HH:MM with optional am/pm
// (today, rolling to tomorrow when already past); today|tod / tomorrow|tom|tmr|t
// + clock; M-D HH:MM (this year, next year when past); ISO 8601 (naive = local).
// The result must be on the grid and not before the current slot.
// "now" floors to the current slot. `naive` says what an ISO 8601 time without
// an offset means: local time for what a person types (-t/--at), UTC for the
// machine interface (--start, MCP), as the original and its agents read it.
enum class NaiveIso { kLocal, kUtc };
Result<Seconds> ParseStart(std::string_view text, Seconds now, const SlotGrid& grid, const Zone& zone,
                           NaiveIso naive = NaiveIso::kLocal);

// --start: only "now" (the current slot start) or ISO 8601, naive = local.
// Must be on the grid and not before the current slot ("start time is before
// the current 5-minute interval", "start time must align to a 5-minute boundary").
Result<Seconds> ParseExactStart(std::string_view text, Seconds now, const SlotGrid& grid, const Zone& zone);

// Like ParseStart but past times are allowed and nothing must be aligned
// (for --from in read-only views): "now" is now itself, +DUR is not rounded,
// a bare clock means today even when past, M-D means this year.
Result<Seconds> ParseViewTime(std::string_view text, Seconds now, const Zone& zone);

// 2026-11-29T18:45:00Z
using ::bk::FormatIsoUtc;
// 2026-11-29 18:50 +0800
std::string FormatLocal(Seconds t, const Zone& zone);
// 11-29 18:50
std::string FormatLocalShort(Seconds t, const Zone& zone);
// 18:50
std::string FormatLocalClock(Seconds t, const Zone& zone);

}  // namespace bk::engine
