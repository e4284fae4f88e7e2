#include "engine/parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>

#include "base/cursor.h"
#include "base/iso8601.h"
#include "base/strings.h"

namespace bk::engine {

namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// ---------------------------------------------------------------------------
// Durations

constexpr std::string_view kDurationShape = "duration must look like 30m, 1h30m, or 1d";

enum class DurationError { kShape, kRepeated, kTooLong, kZero };

// Accumulates a run of digits without overflowing: values past `cap` stay at
// cap + 1, which is enough to reject them later.
int64_t ReadNumber(std::string_view s, size_t& i, int64_t cap) {
  int64_t v = 0;
  for (; i < s.size() && IsDigit(s[i]); ++i) v = std::min(v * 10 + (s[i] - '0'), cap + 1);
  return v;
}

Seconds UnitSeconds(char unit) {
  switch (unit) {
    case 'd': return kDay;
    case 'h': return kHour;
    case 'm': return kMinute;
    default: return 0;
  }
}

// The shape is checked over the whole text before repeats, size and zero, so
// "1h30h5x" is a shape error rather than a repeat.
std::expected<Seconds, DurationError> ScanDuration(std::string_view text) {
  const std::string s = ToLower(Trim(text));
  if (s.empty()) return std::unexpected(DurationError::kShape);
  bool seen_d = false, seen_h = false, seen_m = false, repeated = false, too_long = false;
  Seconds total = 0;
  size_t i = 0;
  while (i < s.size()) {
    const size_t digits_at = i;
    const int64_t n = ReadNumber(s, i, kMaxDuration);
    if (i == digits_at || i == s.size()) return std::unexpected(DurationError::kShape);
    const Seconds unit = UnitSeconds(s[i]);
    if (unit == 0) return std::unexpected(DurationError::kShape);
    bool& seen = s[i] == 'd' ? seen_d : s[i] == 'h' ? seen_h : seen_m;
    repeated |= seen;
    seen = true;
    if (n > kMaxDuration / unit) {
      too_long = true;
    } else {
      total += n * unit;  // at most 3 * kMaxDuration: no overflow
    }
    ++i;
  }
  if (repeated) return std::unexpected(DurationError::kRepeated);
  if (too_long || total > kMaxDuration) return std::unexpected(DurationError::kTooLong);
  if (total == 0) return std::unexpected(DurationError::kZero);
  return total;
}

std::string DurationMessage(DurationError e) {
  switch (e) {
    case DurationError::kShape: return std::string(kDurationShape);
    case DurationError::kRepeated: return "duration units may only appear once";
    case DurationError::kTooLong:
      return fmt::format("duration is too long (at most {}d)", kMaxDuration / kDay);
    case DurationError::kZero: return "duration must be positive";
  }
  return std::string(kDurationShape);
}

// ---------------------------------------------------------------------------
// Memory sizes

// Fraction digits beyond this many cannot change a half-up rounding to whole
// MiB: every rounding threshold (n + 1/2) / 1024 GiB has at most 11 decimals.
constexpr int kMaxFractionDigits = 15;
// Integer parts past this are certainly above kMaxSizeMb; keeps __int128 math small.
constexpr int64_t kIntegerCap = 1'000'000'000'000'000;

struct SizeText {
  int64_t integer = 0;
  int64_t fraction = 0;        // the kept fraction digits as an integer
  int64_t fraction_scale = 1;  // 10^(kept fraction digits)
  bool fraction_nonzero = false;
  int64_t multiplier = 0;
};

std::optional<int64_t> SizeMultiplier(std::string_view unit) {
  if (unit == "g" || unit == "gb" || unit == "gib") return 1024;
  if (unit == "m" || unit == "mb" || unit == "mib") return 1;
  return std::nullopt;
}

// <digits>[.<digits>]<unit>, nothing else (no sign, space or exponent).
std::optional<SizeText> ScanSize(std::string_view text) {
  const std::string s = ToLower(Trim(text));
  SizeText out;
  size_t i = 0;
  out.integer = ReadNumber(s, i, kIntegerCap);
  if (i == 0) return std::nullopt;
  if (i < s.size() && s[i] == '.') {
    const size_t frac_at = ++i;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      out.fraction_nonzero |= s[i] != '0';
      if (i - frac_at < kMaxFractionDigits) {
        out.fraction = out.fraction * 10 + (s[i] - '0');
        out.fraction_scale *= 10;
      }
    }
    if (i == frac_at) return std::nullopt;
  }
  const auto multiplier = SizeMultiplier(std::string_view(s).substr(i));
  if (!multiplier) return std::nullopt;
  out.multiplier = *multiplier;
  return out;
}

// round_half_up((integer + fraction / scale) * multiplier), saturated just
// above kMaxSizeMb.
int64_t RoundToMb(const SizeText& t) {
  using Wide = __int128;
  const Wide scaled = Wide{t.integer} * t.fraction_scale + t.fraction;
  const Wide num = scaled * t.multiplier;
  const Wide mb = (2 * num + t.fraction_scale) / (2 * Wide{t.fraction_scale});
  return mb > kMaxSizeMb ? kMaxSizeMb + 1 : static_cast<int64_t>(mb);
}

// ---------------------------------------------------------------------------
// ISO 8601

constexpr std::string_view kIsoShape =
    "time must be ISO 8601 such as 2026-11-30T09:00 or 2026-11-30T09:00:00+08:00";
constexpr std::string_view kBadDate = "invalid calendar date";
constexpr std::string_view kClockRange = "clock time is out of range";

// A forward-only reader over the text being parsed.

std::string IsoMessage(IsoError e) {
  switch (e) {
    case IsoError::kShape: return std::string(kIsoShape);
    case IsoError::kDate: return std::string(kBadDate);
    case IsoError::kClock: return std::string(kClockRange);
  }
  return std::string(kIsoShape);
}

// A wall-clock time the local zone skips (the hour the clocks jump over for
// daylight saving time) names no instant: refused, rather than moved by the
// gap without a word. A repeated wall time (clocks going back) is the first
// of the two, as the Zone contract says.
Result<Seconds> LocalInstant(const Zone& zone, const CivilTime& local) {
  const Seconds t = zone.FromLocal(local);
  if (zone.ToLocal(t) == local) return t;
  return Invalid(fmt::format(
      "{:04}-{:02}-{:02} {:02}:{:02} does not exist in the local time zone (the clocks skip it for daylight "
      "saving time); give a time outside the gap, such as {}",
      local.year, local.month, local.day, local.hour, local.minute, FormatLocal(t, zone)));
}

Result<Seconds> IsoInstant(const IsoTime& t, const Zone& zone) {
  if (t.offset) return CivilToEpoch(t.civil) - *t.offset;
  return LocalInstant(zone, t.civil);
}

// ---------------------------------------------------------------------------
// Friendly times

// An empty option value is a mistake (an unset shell variable, say), never "now".
constexpr std::string_view kEmptyTime =
    "the time is empty; give now, +30m, 21:00, tomorrow 09:00 or an ISO 8601 time";
constexpr std::string_view kFriendlyShape =
    "start must be now, +30m, 9, 21, 9am, t 9, tomorrow 09:00, 07-13 20:00, or ISO 8601";
constexpr std::string_view kClockShape = "clock time must look like 9, 21, 9am, or 20:30";
constexpr std::string_view kRelativeShape = "relative start must look like +30m or +1h30m";

// How a friendly time is judged: a booking start refuses the past and rolls
// bare clocks forward; a view shows whatever instant was named.
enum class Purpose { kBooking, kView };

struct FriendlyContext {
  Seconds now;
  const Zone& zone;
  Purpose purpose;
  Seconds slot_start;  // grid.Floor(now) for bookings, now for views
  Seconds slot;        // slot length for bookings, 0 for views
  NaiveIso naive = NaiveIso::kLocal;
};

// "5-minute"; grids in tests may use seconds.
std::string SlotLabel(Seconds slot) {
  return slot % kMinute == 0 ? fmt::format("{}-minute", slot / kMinute) : fmt::format("{}-second", slot);
}

std::string PastMessage(Seconds slot) {
  return fmt::format("start time is before the current {} interval", SlotLabel(slot));
}

struct ClockText {
  int hour = 0;
  int minute = 0;
  char meridiem = 0;  // 'a', 'p' or 0
};

// H, HH, H:MM, HH:MM with an optional am/pm, blanks allowed before it. Only
// the shape is checked here; ranges are checked by ResolveClock.
std::optional<ClockText> MatchClock(std::string_view s) {
  Cursor in(s);
  ClockText out;
  const auto h2 = in.Fixed(2);
  if (h2) {
    out.hour = *h2;
  } else if (const auto h1 = in.Fixed(1)) {
    out.hour = *h1;
  } else {
    return std::nullopt;
  }
  if (in.Eat(':')) {
    const auto mm = in.Fixed(2);
    if (!mm) return std::nullopt;
    out.minute = *mm;
  }
  const size_t blanks_at = in.Pos();
  while (IsBlank(in.Peek())) in.Eat(in.Peek());
  if (in.Eat('a')) {
    out.meridiem = 'a';
  } else if (in.Eat('p')) {
    out.meridiem = 'p';
  }
  if (out.meridiem ? !in.Eat('m') : in.Pos() != blanks_at) return std::nullopt;  // blanks only before am/pm
  if (!in.Done()) return std::nullopt;
  return out;
}

struct Clock {
  int hour;
  int minute;
};

Result<Clock> ResolveClock(const ClockText& c) {
  int hour = c.hour;
  if (c.meridiem) {
    if (hour < 1 || hour > 12) return Invalid("12-hour clock must use an hour between 1 and 12");
    hour = hour % 12 + (c.meridiem == 'p' ? 12 : 0);  // 12am = 00, 12pm = 12
  } else if (hour > 23) {
    return Invalid("24-hour clock must use an hour between 0 and 23");
  }
  if (c.minute > 59) return Invalid(std::string(kClockRange));
  return Clock{hour, c.minute};
}

// The local calendar day `days` after the one containing `now`, at a clock
// time. Day arithmetic happens on the civil date, so a DST change between now
// and then does not shift the wall-clock time.
CivilTime LocalDay(const FriendlyContext& ctx, int days, Clock clock) {
  CivilTime day = ctx.zone.ToLocal(ctx.now);
  day = EpochToCivil(CivilToEpoch({day.year, day.month, day.day}) + days * kDay);
  return {day.year, day.month, day.day, clock.hour, clock.minute, 0};
}

Result<Seconds> LocalDayAt(const FriendlyContext& ctx, int days, Clock clock) {
  return LocalInstant(ctx.zone, LocalDay(ctx, days, clock));
}

Result<Seconds> Relative(std::string_view rest, const FriendlyContext& ctx) {
  const auto d = ScanDuration(Trim(rest));
  if (!d) {
    if (d.error() == DurationError::kTooLong) return Invalid(DurationMessage(d.error()));
    return Invalid(std::string(kRelativeShape));
  }
  const Seconds t = ctx.now + *d;
  return ctx.purpose == Purpose::kBooking ? SlotGrid(ctx.slot).Ceil(t) : t;
}

// "today|tod|tomorrow|tom|tmr|t" + blanks + clock; nullopt when there is no
// such prefix, so the text may still be something else.
std::optional<Result<Seconds>> DayPrefixed(std::string_view s, const FriendlyContext& ctx) {
  const size_t blank = s.find_first_of(" \t");
  if (blank == std::string_view::npos) return std::nullopt;
  const std::string_view word = s.substr(0, blank);
  int days;
  if (word == "today" || word == "tod") {
    days = 0;
  } else if (word == "tomorrow" || word == "tom" || word == "tmr" || word == "t") {
    days = 1;
  } else {
    return std::nullopt;
  }
  const auto text = MatchClock(Trim(s.substr(blank)));
  if (!text) return Invalid(std::string(kClockShape));
  const auto clock = ResolveClock(*text);
  if (!clock) return std::unexpected(clock.error());
  BK_ASSIGN_OR_RETURN(const Seconds t, LocalDayAt(ctx, days, *clock));
  if (ctx.purpose == Purpose::kBooking && t < ctx.slot_start) return Invalid(PastMessage(ctx.slot));
  return t;
}

// A bare clock: today, or tomorrow for a booking when today's is already past.
Result<Seconds> BareClock(const ClockText& text, const FriendlyContext& ctx) {
  BK_ASSIGN_OR_RETURN(const Clock clock, ResolveClock(text));
  // Whether today's is past is judged even when the clocks skip it today:
  // only the day actually meant must exist.
  const CivilTime today = LocalDay(ctx, 0, clock);
  if (ctx.purpose == Purpose::kBooking && ctx.zone.FromLocal(today) < ctx.slot_start)
    return LocalDayAt(ctx, 1, clock);
  return LocalInstant(ctx.zone, today);
}

// "M-D clock" or "M-DTclock" (1-2 digit month and day); nullopt when the text
// does not start that way.
std::optional<Result<Seconds>> MonthDay(std::string_view s, const FriendlyContext& ctx) {
  Cursor in(s);
  auto one_or_two = [&]() -> std::optional<int> {
    if (auto v = in.Fixed(2)) return v;
    return in.Fixed(1);
  };
  const auto month = one_or_two();
  if (!month || !in.Eat('-')) return std::nullopt;
  const auto day = one_or_two();
  if (!day) return std::nullopt;
  std::string_view rest = s.substr(in.Pos());
  if (rest.empty()) return std::nullopt;
  if (rest[0] == 't') {
    rest.remove_prefix(1);
  } else if (IsBlank(rest[0])) {
    rest = Trim(rest);
  } else {
    return std::nullopt;
  }
  const auto text = MatchClock(rest);
  if (!text) return Invalid(std::string(kClockShape));
  const auto clock = ResolveClock(*text);
  if (!clock) return std::unexpected(clock.error());
  const int year = ctx.zone.ToLocal(ctx.now).year;
  auto at = [&](int y) -> Result<Seconds> {
    if (!ValidDate(y, *month, *day)) return Invalid(std::string(kBadDate));
    return LocalInstant(ctx.zone, {y, *month, *day, clock->hour, clock->minute, 0});
  };
  BK_ASSIGN_OR_RETURN(Seconds t, at(year));
  if (ctx.purpose == Purpose::kBooking && t < ctx.slot_start) {
    BK_ASSIGN_OR_RETURN(t, at(year + 1));
  }
  return t;
}

Result<Seconds> FriendlyIso(std::string_view s, const FriendlyContext& ctx) {
  const auto iso = ScanIso(s);
  if (!iso) {
    if (iso.error() == IsoError::kShape) return Invalid(std::string(kFriendlyShape));
    return Invalid(IsoMessage(iso.error()));
  }
  static const FixedZone kUtcZone(0);
  BK_ASSIGN_OR_RETURN(const Seconds t, IsoInstant(*iso, ctx.naive == NaiveIso::kUtc ? kUtcZone : ctx.zone));
  if (ctx.purpose == Purpose::kBooking && t < ctx.slot_start) return Invalid(PastMessage(ctx.slot));
  return t;
}

// The grammar shared by ParseStart and ParseViewTime, tried in upstream's order.
Result<Seconds> ParseFriendly(std::string_view text, const FriendlyContext& ctx) {
  const std::string s = ToLower(Trim(text));
  if (s.empty()) return Invalid(std::string(kEmptyTime));
  if (s == "now") return ctx.slot_start;
  if (s[0] == '+') return Relative(std::string_view(s).substr(1), ctx);
  if (auto t = DayPrefixed(s, ctx)) return *t;
  if (const auto clock = MatchClock(s)) return BareClock(*clock, ctx);
  if (auto t = MonthDay(s, ctx)) return *t;
  return FriendlyIso(s, ctx);
}

Result<Seconds> RequireAligned(Seconds t, const SlotGrid& grid) {
  if (!grid.Aligned(t))
    return Invalid(fmt::format("start time must align to a {} boundary", SlotLabel(grid.slot())));
  return t;
}

}  // namespace

// ---------------------------------------------------------------------------

Result<Seconds> ParseDuration(std::string_view text) {
  const auto d = ScanDuration(text);
  if (!d) return Invalid(DurationMessage(d.error()));
  return *d;
}

std::string FormatDuration(Seconds seconds) {
  if (seconds < 0) return "-" + FormatDuration(seconds == INT64_MIN ? INT64_MAX : -seconds);
  const Seconds days = seconds / kDay, hours = seconds % kDay / kHour, minutes = seconds % kHour / kMinute;
  std::string out;
  if (days) out += fmt::format("{}d", days);
  if (hours) out += fmt::format("{}h", hours);
  if (minutes || out.empty()) out += fmt::format("{}m", minutes);
  return out;
}

Result<int64_t> ParseSizeMb(std::string_view text, std::string_view what) {
  const auto size = ScanSize(text);
  if (!size) return Invalid(fmt::format("{} must look like 12g or 4096m", what));
  if (size->integer == 0 && !size->fraction_nonzero) return Invalid(fmt::format("{} must be positive", what));
  const int64_t mb = RoundToMb(*size);
  if (mb == 0) return Invalid(fmt::format("{} must be at least 1 MiB", what));
  if (mb > kMaxSizeMb) return Invalid(fmt::format("{} must be at most {}g", what, kMaxSizeMb / 1024));
  return mb;
}

std::string FormatSizeMb(int64_t mb) {
  if (mb >= 1024) return fmt::format("{:.1f}GiB", static_cast<double>(mb) / 1024.0);
  return fmt::format("{}MiB", mb);
}

Result<int64_t> ParseCpus(std::string_view text) {
  const auto n = ParseUint(Trim(text));
  if (!n || *n < 1 || *n > kMaxCpus) return Invalid("--cpus must be a whole number of CPUs such as 4");
  return *n;
}

// Empty items ("0,,1", a trailing comma) are skipped like blanks, as upstream
// does; only digits count as an index (no sign: "-1" is not an index).
Result<std::vector<int>> ParseGpuList(std::string_view text, std::string_view label) {
  std::vector<int> out;
  for (const std::string& item : Split(text, ',')) {
    const std::string_view token = Trim(item);
    if (token.empty()) continue;
    const auto n = ParseUint(token);
    if (!n || *n > INT_MAX) return Invalid(fmt::format("{} must contain comma-separated GPU indexes", label));
    out.push_back(static_cast<int>(*n));
  }
  if (out.empty()) return Invalid(fmt::format("{} must contain at least one GPU index", label));
  std::vector<int> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    return Invalid(fmt::format("{} must not contain repeated GPU indexes", label));
  return out;
}

Result<Seconds> ParseIsoTime(std::string_view text, const Zone& zone) {
  const auto iso = ScanIso(text);
  if (!iso) return Invalid(IsoMessage(iso.error()));
  return IsoInstant(*iso, zone);
}

Result<Seconds> ParseStart(std::string_view text, Seconds now, const SlotGrid& grid, const Zone& zone,
                           NaiveIso naive) {
  const FriendlyContext ctx{now, zone, Purpose::kBooking, grid.Floor(now), grid.slot(), naive};
  BK_ASSIGN_OR_RETURN(const Seconds t, ParseFriendly(text, ctx));
  return RequireAligned(t, grid);
}

Result<Seconds> ParseExactStart(std::string_view text, Seconds now, const SlotGrid& grid, const Zone& zone) {
  const std::string_view s = Trim(text);
  if (s.empty()) return Invalid(std::string(kEmptyTime));
  if (ToLower(s) == "now") return grid.Floor(now);
  BK_ASSIGN_OR_RETURN(const Seconds t, ParseIsoTime(s, zone));
  if (t < grid.Floor(now)) return Invalid(PastMessage(grid.slot()));
  return RequireAligned(t, grid);
}

Result<Seconds> ParseViewTime(std::string_view text, Seconds now, const Zone& zone) {
  return ParseFriendly(text, FriendlyContext{now, zone, Purpose::kView, now, 0});
}

std::string FormatLocal(Seconds t, const Zone& zone) {
  const CivilTime c = zone.ToLocal(t);
  const int64_t offset = zone.OffsetAt(t);
  const int64_t magnitude = std::llabs(offset);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02} {}{:02}{:02}", c.year, c.month, c.day, c.hour, c.minute,
                     offset < 0 ? '-' : '+', magnitude / kHour, magnitude % kHour / kMinute);
}

std::string FormatLocalShort(Seconds t, const Zone& zone) {
  const CivilTime c = zone.ToLocal(t);
  return fmt::format("{:02}-{:02} {:02}:{:02}", c.month, c.day, c.hour, c.minute);
}

std::string FormatLocalClock(Seconds t, const Zone& zone) {
  const CivilTime c = zone.ToLocal(t);
  return fmt::format("{:02}:{:02}", c.hour, c.minute);
}

}  // namespace bk::engine
