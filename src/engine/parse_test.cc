#include "engine/parse.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace bk::engine {
namespace {

// The error message of a failed result, or "<ok>" so a wrong success shows
// up in the failure output. Every parse error must be of kind kInvalid.
template <class T>
std::string ErrorOf(const Result<T>& r) {
  if (r) return "<ok>";
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalid) << r.error().message;
  return r.error().message;
}

// A text that parses to `want`, and one refused with `error`.
template <class T>
struct Accepted {
  std::string_view text;
  T want;
};
struct Refused {
  std::string_view text;
  std::string error;
};

// parse(text) gives each case's `want`.
template <class T, size_t N, class Parse>
void ExpectAccepted(Parse parse, const Accepted<T> (&cases)[N]) {
  for (const Accepted<T>& c : cases) {
    const auto r = parse(c.text);
    ASSERT_TRUE(r) << "'" << c.text << "': " << r.error().message;
    EXPECT_EQ(*r, c.want) << "'" << c.text << "'";
  }
}

// parse(text) refuses each case with its `error`.
template <size_t N, class Parse>
void ExpectRefused(Parse parse, const Refused (&cases)[N]) {
  for (const Refused& c : cases) EXPECT_EQ(ErrorOf(parse(c.text)), c.error) << "'" << c.text << "'";
}

Seconds Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return CivilToEpoch({y, mo, d, h, mi, s});
}

// ---------------------------------------------------------------------------
// Durations

TEST(ParseDurationTest, Accepted) {
  const Accepted<Seconds> cases[] = {
      {"30m", 1800},
      {"1h30m", 5400},
      {"1d2h5m", 93900},
      {"30m1h", 5400},
      {"5m1d2h", 93900},
      {"2h1d", 93600},
      {"1H", 3600},
      {"1D", 86400},
      {"1M", 60},
      {"1H30M", 5400},
      {"01h", 3600},
      {"0h30m", 1800},
      {"90m", 5400},
      {"48h", 172800},
      {"1d0h", 86400},
      {"2d", 172800},
      {" 30m ", 1800},
      {"\t1h\n", 3600},
      {"000000000000000000000000000001m", 60},
      {"36500d", 36500 * kDay},
      {"52560000m", 36500 * kDay},
  };
  ExpectAccepted(ParseDuration, cases);
}

TEST(ParseDurationTest, Rejected) {
  const std::string shape = "duration must look like 30m, 1h30m, or 1d";
  const std::string once = "duration units may only appear once";
  const std::string positive = "duration must be positive";
  const std::string too_long = "duration is too long (at most 36500d)";
  const Refused cases[] = {
      {"1h 30m", shape},
      {"30", shape},
      {"1hour", shape},
      {"1.5h", shape},
      {"1w", shape},
      {"+30m", shape},
      {"-5m", shape},
      {"", shape},
      {"   ", shape},
      {"h", shape},
      {"m30", shape},
      {"1h30", shape},
      {"1s", shape},
      {"1 h", shape},
      {"1hh", shape},
      {"1h,30m", shape},
      {"1h30h5x", shape},  // shape is judged before repeats
      {"1h30h", once},
      {"1m1m", once},
      {"1d2h3d", once},
      {"0m0m", once},
      {"1H1h", once},
      {"0m", positive},
      {"00m", positive},
      {"0d0h0m", positive},
      {"36501d", too_long},
      {"36500d1m", too_long},
      {"52560001m", too_long},
      {"876001h", too_long},
      {"99999999999999999999999999999999d", too_long},
      {"9223372036854775807m", too_long},
  };
  ExpectRefused(ParseDuration, cases);
}

TEST(FormatDurationTest, CompactForm) {
  struct Case {
    Seconds seconds;
    std::string_view text;
  };
  const Case cases[] = {
      {0, "0m"},           {59, "0m"},        {60, "1m"},         {1800, "30m"},     {3600, "1h"},
      {3659, "1h"},        {5400, "1h30m"},   {86400, "1d"},      {86460, "1d1m"},   {90000, "1d1h"},
      {447600, "5d4h20m"}, {93900, "1d2h5m"}, {30 * kDay, "30d"}, {-5400, "-1h30m"},
  };
  for (const Case& c : cases) EXPECT_EQ(FormatDuration(c.seconds), c.text) << c.seconds;
}

TEST(FormatDurationTest, RoundTripsThroughParse) {
  for (Seconds s = kMinute; s < 3 * kDay; s += 7 * kMinute) {
    const auto r = ParseDuration(FormatDuration(s));
    ASSERT_TRUE(r) << FormatDuration(s);
    EXPECT_EQ(*r, s);
  }
}

// ---------------------------------------------------------------------------
// Memory sizes

TEST(ParseSizeMbTest, Accepted) {
  const Accepted<int64_t> cases[] = {
      {"12g", 12288},
      {"12GB", 12288},
      {"12GiB", 12288},
      {"12gib", 12288},
      {"12G", 12288},
      {"1.5g", 1536},
      {"4096m", 4096},
      {"4096MB", 4096},
      {"4096mib", 4096},
      {"4096M", 4096},
      {"0.5m", 1},  // half rounds up
      {"1.25m", 1},
      {"2.5m", 3},
      {"1.4999m", 1},
      {"0.00048828125g", 1},  // exactly half a MiB
      {"0.001g", 1},          // 1.024 MiB
      {"1.0009765625g", 1025},
      {"12.34g", 12636},   // 12636.16
      {"12.345g", 12641},  // 12641.28
      {"1g", 1024},
      {"007g", 7168},
      {" 12g ", 12288},
      {"\t4096m\n", 4096},
      {"0.5000000000000000000000001m", 1},  // long fractions are fine
      {"1073741824g", int64_t{1} << 40},
      {"1099511627776m", int64_t{1} << 40},
  };
  ExpectAccepted([](std::string_view t) { return ParseSizeMb(t); }, cases);
}

TEST(ParseSizeMbTest, Rejected) {
  const std::string shape = "memory must look like 12g or 4096m";
  const std::string positive = "memory must be positive";
  const std::string tiny = "memory must be at least 1 MiB";
  const std::string huge = "memory must be at most 1073741824g";
  const Refused cases[] = {
      {"12", shape},
      {"12 g", shape},
      {".5g", shape},
      {"5.g", shape},
      {"1e3m", shape},
      {"-1g", shape},
      {"+1g", shape},
      {"12t", shape},
      {"12k", shape},
      {"", shape},
      {"g", shape},
      {"1,5g", shape},
      {"12gg", shape},
      {"12gi", shape},
      {"12mi", shape},
      {"1.5.5g", shape},
      {"0x10m", shape},
      {"12g ram", shape},
      {"0g", positive},
      {"0m", positive},
      {"0.0g", positive},
      {"000m", positive},
      {"0.4m", tiny},
      {"0.0001g", tiny},
      {"0.00048828124g", tiny},  // just below half a MiB
      {"0.4999999999999999999999999m", tiny},
      {"1073741825g", huge},
      {"1099511627777m", huge},
      {"1073741824.001g", huge},
      {"99999999999999999999999999999999g", huge},
  };
  ExpectRefused([](std::string_view t) { return ParseSizeMb(t); }, cases);
}

TEST(ParseSizeMbTest, ErrorsNameTheQuantity) {
  EXPECT_EQ(ErrorOf(ParseSizeMb("12", "--ram")), "--ram must look like 12g or 4096m");
  EXPECT_EQ(ErrorOf(ParseSizeMb("0g", "--ram")), "--ram must be positive");
  EXPECT_EQ(ErrorOf(ParseSizeMb("0.1m", "--ram")), "--ram must be at least 1 MiB");
}

TEST(FormatSizeMbTest, GibWithOneDecimalElseMib) {
  EXPECT_EQ(FormatSizeMb(12288), "12.0GiB");
  EXPECT_EQ(FormatSizeMb(40755), "39.8GiB");
  EXPECT_EQ(FormatSizeMb(81920), "80.0GiB");
  EXPECT_EQ(FormatSizeMb(1536), "1.5GiB");
  EXPECT_EQ(FormatSizeMb(1024), "1.0GiB");
  EXPECT_EQ(FormatSizeMb(1023), "1023MiB");
  EXPECT_EQ(FormatSizeMb(512), "512MiB");
  EXPECT_EQ(FormatSizeMb(1), "1MiB");
  EXPECT_EQ(FormatSizeMb(0), "0MiB");
}

// ---------------------------------------------------------------------------
// CPUs and GPU lists

TEST(ParseCpusTest, AcceptsPositiveWholeNumbers) {
  EXPECT_EQ(ParseCpus("4"), 4);
  EXPECT_EQ(ParseCpus("1"), 1);
  EXPECT_EQ(ParseCpus(" 8 "), 8);
  EXPECT_EQ(ParseCpus("04"), 4);
  EXPECT_EQ(ParseCpus("1000000"), 1000000);
}

TEST(ParseCpusTest, RejectsEverythingElse) {
  const std::string error = "--cpus must be a whole number of CPUs such as 4";
  for (std::string_view text : {"0", "00", "-1", "+4", "4.0", "1.5", "1e3", "", " ", "four", "4 cpus", "4,5",
                                "1000001", "99999999999999999999999"}) {
    EXPECT_EQ(ErrorOf(ParseCpus(text)), error) << "'" << text << "'";
  }
}

TEST(ParseGpuListTest, Accepted) {
  const Accepted<std::vector<int>> cases[] = {
      {"0", {0}},
      {"3,1", {3, 1}},  // order kept; the caller sorts
      {"0,1,2,3", {0, 1, 2, 3}},
      {"0, 1 ,2", {0, 1, 2}},
      {" 2 ", {2}},
      {"\t7\t,\t5", {7, 5}},
      {"0,,1", {0, 1}},  // empty items are blanks too
      {"1,", {1}},
      {",4", {4}},
      {"007", {7}},
      {"2147483647", {2147483647}},
  };
  ExpectAccepted([](std::string_view t) { return ParseGpuList(t, "--gpu"); }, cases);
}

TEST(ParseGpuListTest, Rejected) {
  const std::string shape = "--gpu must contain comma-separated GPU indexes";
  const std::string empty = "--gpu must contain at least one GPU index";
  const std::string repeated = "--gpu must not contain repeated GPU indexes";
  const Refused cases[] = {
      {"a", shape},          {"1,a", shape},
      {"-1", shape},         {"+1", shape},
      {"1.5", shape},        {"1 2", shape},
      {"0x1", shape},        {"1;2", shape},
      {"2147483648", shape}, {"99999999999999999999999", shape},
      {"", empty},           {",", empty},
      {" , ", empty},        {",,,", empty},
      {"1,1", repeated},     {"0,1,0", repeated},
      {"2, 2", repeated},    {"03,3", repeated},
  };
  ExpectRefused([](std::string_view t) { return ParseGpuList(t, "--gpu"); }, cases);
}

TEST(ParseGpuListTest, ErrorsNameTheOption) {
  EXPECT_EQ(ErrorOf(ParseGpuList("x", "--exclude-gpu")),
            "--exclude-gpu must contain comma-separated GPU indexes");
  EXPECT_EQ(ErrorOf(ParseGpuList("", "--exclude-gpu")), "--exclude-gpu must contain at least one GPU index");
  EXPECT_EQ(ErrorOf(ParseGpuList("1,1", "--exclude-gpu")),
            "--exclude-gpu must not contain repeated GPU indexes");
}

// ---------------------------------------------------------------------------
// Zones for time tests

const FixedZone kPlus8(8 * kHour);
const FixedZone kUtc(0);
const FixedZone kMinus530(-(5 * kHour + 30 * kMinute));

// A local wall-clock time in +0800.
Seconds Local8(int y, int mo, int d, int h = 0, int mi = 0) { return Utc(y, mo, d, h, mi) - 8 * kHour; }

// One DST-style change at `change` (UTC): `before` seconds east of UTC until
// then, `after` from then on. FromLocal follows the Zone contract: a skipped
// wall time moves forward by the gap, a repeated one takes its first occurrence.
class TransitionZone : public Zone {
 public:
  TransitionZone(Seconds change, int64_t before, int64_t after)
      : change_(change), before_(before), after_(after) {}
  int64_t OffsetAt(Seconds utc) const override { return utc < change_ ? before_ : after_; }
  Seconds FromLocal(const CivilTime& local) const override {
    const Seconds wall = CivilToEpoch(local);
    const Seconds read_before = wall - before_, read_after = wall - after_;
    const bool before_ok = read_before < change_, after_ok = read_after >= change_;
    if (before_ok && after_ok) return std::min(read_before, read_after);
    if (after_ok) return read_after;
    return read_before;  // valid before the change, or skipped (moves forward)
  }

 private:
  Seconds change_;
  int64_t before_;
  int64_t after_;
};

// Central European: CET (+1) becomes CEST (+2) at 2030-03-31 01:00 UTC
// (02:00 local jumps to 03:00) and back at 2030-10-27 01:00 UTC (03:00 -> 02:00).
const TransitionZone kSpring(Utc(2030, 3, 31, 1), kHour, 2 * kHour);
const TransitionZone kAutumn(Utc(2030, 10, 27, 1), 2 * kHour, kHour);

TEST(TransitionZoneTest, BehavesLikeARealZone) {
  EXPECT_EQ(kSpring.FromLocal({2030, 3, 31, 1, 30}), Utc(2030, 3, 31, 0, 30));
  EXPECT_EQ(kSpring.FromLocal({2030, 3, 31, 2, 30}), Utc(2030, 3, 31, 1, 30));  // skipped: 03:30 CEST
  EXPECT_EQ(kSpring.FromLocal({2030, 3, 31, 3, 0}), Utc(2030, 3, 31, 1, 0));
  EXPECT_EQ(kAutumn.FromLocal({2030, 10, 27, 2, 30}), Utc(2030, 10, 27, 0, 30));  // first of two
  EXPECT_EQ(kAutumn.FromLocal({2030, 10, 27, 3, 0}), Utc(2030, 10, 27, 2, 0));
  EXPECT_EQ(kAutumn.FromLocal({2030, 10, 27, 1, 59}), Utc(2030, 10, 26, 23, 59));
}

// ---------------------------------------------------------------------------
// ISO 8601

TEST(ParseIsoTimeTest, Accepted) {
  const Accepted<Seconds> cases[] = {
      {"2026-11-30T09:00", Local8(2026, 11, 30, 9)},
      {"2026-11-30T09:00:00", Local8(2026, 11, 30, 9)},
      {"2026-11-30 09:00", Local8(2026, 11, 30, 9)},
      {"2026-11-30t09:00", Local8(2026, 11, 30, 9)},
      {" 2026-11-30T09:00 ", Local8(2026, 11, 30, 9)},
      {"2026-11-30T09", Local8(2026, 11, 30, 9)},
      {"2026-11-30T0900", Local8(2026, 11, 30, 9)},
      {"2026-11-30T09:15:42", Local8(2026, 11, 30, 9, 15) + 42},
      {"2026-11-30T09:00:00.123Z", Utc(2026, 11, 30, 9)},
      {"2026-11-30T09:00:59.999Z", Utc(2026, 11, 30, 9, 0, 59)},  // truncated, not rounded
      {"2026-11-30T09:00:00,5Z", Utc(2026, 11, 30, 9)},
      {"2026-11-30T09:00:00.123456789+08:00", Utc(2026, 11, 30, 1)},
      {"2026-11-30T09:00Z", Utc(2026, 11, 30, 9)},
      {"2026-11-30T09:00z", Utc(2026, 11, 30, 9)},
      {"2026-11-30T09:00+08:00", Utc(2026, 11, 30, 1)},
      {"2026-11-30T09:00:00+08:00", Utc(2026, 11, 30, 1)},
      {"2026-11-30T09:00+0800", Utc(2026, 11, 30, 1)},
      {"2026-11-30T09:00+08", Utc(2026, 11, 30, 1)},
      {"2026-11-30T09:00-05:30", Utc(2026, 11, 30, 14, 30)},
      {"2026-11-30T09:00+00:00", Utc(2026, 11, 30, 9)},
      {"2026-11-30T09:00-00:00", Utc(2026, 11, 30, 9)},
      {"2026-11-30", Local8(2026, 11, 30)},
      {"20261130", Local8(2026, 11, 30)},
      {"20261130T1000", Local8(2026, 11, 30, 10)},
      {"20261130T100030Z", Utc(2026, 11, 30, 10, 0, 30)},
      {"2028-02-29T12:00Z", Utc(2028, 2, 29, 12)},
      {"0001-01-01T00:00Z", Utc(1, 1, 1)},
      {"9999-12-31T23:59:59Z", Utc(9999, 12, 31, 23, 59, 59)},
  };
  ExpectAccepted([](std::string_view t) { return ParseIsoTime(t, kPlus8); }, cases);
}

TEST(ParseIsoTimeTest, Rejected) {
  const std::string shape = "time must be ISO 8601 such as 2026-11-30T09:00 or 2026-11-30T09:00:00+08:00";
  const std::string date = "invalid calendar date";
  const std::string clock = "clock time is out of range";
  const Refused cases[] = {
      {"2026-02-30", date},
      {"2026-02-30T10:00", date},
      {"2025-02-29T10:00", date},
      {"2026-13-01", date},
      {"2026-00-10", date},
      {"2026-04-31", date},
      {"0000-01-01", date},
      {"2026-11-30T24:00", clock},
      {"2026-11-30T09:60", clock},
      {"2026-11-30T23:59:60", clock},
      {"", shape},
      {"now", shape},
      {"20:00", shape},
      {"tomorrow", shape},
      {"2026-11-30T", shape},
      {"2026-11-30T9:00", shape},
      {"2026-1-30", shape},
      {"26-11-30", shape},
      {"2026-1130", shape},
      {"202611-30", shape},
      {"2026-W48-1", shape},
      {"2026-11-30X09:00", shape},
      {"2026-11-30  09:00", shape},
      {"2026-11-30T09:00:00.", shape},
      {"2026-11-30T09:00:00.123.4Z", shape},
      {"2026-11-30T09:0030", shape},
      {"2026-11-30T09:00+8", shape},
      {"2026-11-30T09:00+08:0", shape},
      {"2026-11-30T09:00+08:", shape},
      {"2026-11-30T09:00+24:00", shape},
      {"2026-11-30T09:00+08:60", shape},
      {"2026-11-30T09:00 +08:00", shape},
      {"2026-11-30T09:00Zjunk", shape},
      {"2026-11-30T09:00Z+08:00", shape},
      {"2026-11-30T09:00+08:00:00", shape},
  };
  ExpectRefused([](std::string_view t) { return ParseIsoTime(t, kPlus8); }, cases);
}

TEST(ParseIsoTimeTest, NaiveTimesUseTheZoneOfThatDate) {
  // Before and after the spring change the same wall clock names different UTC hours.
  EXPECT_EQ(ParseIsoTime("2030-03-30T09:00", kSpring), Utc(2030, 3, 30, 8));
  EXPECT_EQ(ParseIsoTime("2030-03-31T09:00", kSpring), Utc(2030, 3, 31, 7));
  EXPECT_EQ(ErrorOf(ParseIsoTime("2030-03-31T02:30", kSpring)),
            "2030-03-31 02:30 does not exist in the local time zone (the clocks skip it for daylight saving "
            "time); give a time outside the gap, such as 2030-03-31 03:30 +0200");  // skipped hour
  EXPECT_EQ(ParseIsoTime("2030-03-31T02:30+01:00", kSpring),
            Utc(2030, 3, 31, 1, 30));                                              // an offset says which
  EXPECT_EQ(ParseIsoTime("2030-10-27T02:30", kAutumn), Utc(2030, 10, 27, 0, 30));  // first occurrence
  EXPECT_EQ(ParseIsoTime("2030-03-31T09:00Z", kSpring), Utc(2030, 3, 31, 9));      // explicit offset wins
}

// ---------------------------------------------------------------------------
// Formatting

TEST(FormatTimeTest, IsoUtc) {
  EXPECT_EQ(FormatIsoUtc(Utc(2026, 11, 29, 18, 45)), "2026-11-29T18:45:00Z");
  EXPECT_EQ(FormatIsoUtc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(FormatIsoUtc(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(FormatIsoUtc(Utc(1, 1, 1)), "0001-01-01T00:00:00Z");
  for (Seconds t : {Seconds{0}, Seconds{-1}, Utc(2026, 11, 29, 18, 45, 7), Utc(9999, 12, 31, 23, 59, 59)})
    EXPECT_EQ(ParseIsoTime(FormatIsoUtc(t), kPlus8), t);
}

TEST(FormatTimeTest, Local) {
  const Seconds t = Utc(2026, 11, 29, 10, 50, 30);
  EXPECT_EQ(FormatLocal(t, kPlus8), "2026-11-29 18:50 +0800");
  EXPECT_EQ(FormatLocal(t, kUtc), "2026-11-29 10:50 +0000");
  EXPECT_EQ(FormatLocal(t, kMinus530), "2026-11-29 05:20 -0530");
  EXPECT_EQ(FormatLocal(Utc(2026, 11, 29, 20), kPlus8), "2026-11-30 04:00 +0800");  // next local day
  EXPECT_EQ(FormatLocalShort(t, kPlus8), "11-29 18:50");
  EXPECT_EQ(FormatLocalShort(Utc(2026, 1, 2, 1, 5), kUtc), "01-02 01:05");
  EXPECT_EQ(FormatLocalClock(t, kPlus8), "18:50");
  EXPECT_EQ(FormatLocalClock(Utc(2026, 1, 2, 1, 5), kUtc), "01:05");
}

TEST(FormatTimeTest, LocalShowsTheOffsetOfThatInstant) {
  EXPECT_EQ(FormatLocal(Utc(2030, 3, 30, 12), kSpring), "2030-03-30 13:00 +0100");
  EXPECT_EQ(FormatLocal(Utc(2030, 3, 31, 7), kSpring), "2030-03-31 09:00 +0200");
  EXPECT_EQ(FormatLocal(Utc(2030, 10, 27, 0, 30), kAutumn), "2030-10-27 02:30 +0200");
  EXPECT_EQ(FormatLocal(Utc(2030, 10, 27, 1, 30), kAutumn), "2030-10-27 02:30 +0100");
}

// ---------------------------------------------------------------------------
// ParseStart

const SlotGrid kFive(5 * kMinute);
// Upstream's verified table: now = 2030-01-01 12:41:23 UTC, local +0800 (20:41:23).
const Seconds kNow = Utc(2030, 1, 1, 12, 41, 23);

struct TimeCase {
  std::string_view text;
  Seconds t;
};
struct ErrorCase {
  std::string_view text;
  std::string error;
};

void ExpectStarts(const std::vector<TimeCase>& cases, Seconds now, const SlotGrid& grid, const Zone& zone) {
  for (const TimeCase& c : cases) {
    const auto r = ParseStart(c.text, now, grid, zone);
    ASSERT_TRUE(r) << "'" << c.text << "': " << r.error().message;
    EXPECT_EQ(*r, c.t) << "'" << c.text << "' gave " << FormatLocal(*r, zone);
  }
}

void ExpectStartErrors(const std::vector<ErrorCase>& cases, Seconds now, const SlotGrid& grid,
                       const Zone& zone) {
  for (const ErrorCase& c : cases)
    EXPECT_EQ(ErrorOf(ParseStart(c.text, now, grid, zone)), c.error) << "'" << c.text << "'";
}

const std::string kFriendly =
    "start must be now, +30m, 9, 21, 9am, t 9, tomorrow 09:00, 07-13 20:00, or ISO 8601";
const std::string kClockShape = "clock time must look like 9, 21, 9am, or 20:30";
const std::string kHour24 = "24-hour clock must use an hour between 0 and 23";
const std::string kHour12 = "12-hour clock must use an hour between 1 and 12";
const std::string kClockRange = "clock time is out of range";
const std::string kPast5 = "start time is before the current 5-minute interval";
const std::string kAlign5 = "start time must align to a 5-minute boundary";
const std::string kRelative = "relative start must look like +30m or +1h30m";
const std::string kBadDate = "invalid calendar date";

TEST(ParseStartTest, UpstreamVerifiedTable) {
  ExpectStarts(
      {
          {"now", Local8(2030, 1, 1, 20, 40)},
          {"+30m", Local8(2030, 1, 1, 21, 15)},
          {"+1h30m", Local8(2030, 1, 1, 22, 15)},
          {"20:45", Local8(2030, 1, 1, 20, 45)},
          {"20:00", Local8(2030, 1, 2, 20, 0)},  // past today: rolls
          {"21", Local8(2030, 1, 1, 21)},
          {"9pm", Local8(2030, 1, 1, 21)},
          {"9", Local8(2030, 1, 2, 9)},
          {"9am", Local8(2030, 1, 2, 9)},
          {"t 9", Local8(2030, 1, 2, 9)},
          {"tmr 9am", Local8(2030, 1, 2, 9)},
          {"tom 09:00", Local8(2030, 1, 2, 9)},
          {"tomorrow 9", Local8(2030, 1, 2, 9)},
          {"T 9", Local8(2030, 1, 2, 9)},
          {"today 21", Local8(2030, 1, 1, 21)},
          {"12-31 23:00", Local8(2030, 12, 31, 23)},
          {"1-2 9", Local8(2030, 1, 2, 9)},
          {"01-02T09:00", Local8(2030, 1, 2, 9)},
          {"2030-01-02T09:00", Local8(2030, 1, 2, 9)},
          {"2030-01-02T01:00:00Z", Local8(2030, 1, 2, 9)},
      },
      kNow, kFive, kPlus8);
  ExpectStartErrors(
      {
          {"today 9", kPast5},
          {"tod 9", kPast5},
          {"today", kFriendly},
          {"tomorrow", kFriendly},
          {"noon", kFriendly},
          {"9.30", kFriendly},
          {"09h30", kFriendly},
          {"hwo", kFriendly},
          {"20:03", kAlign5},
          {"23:59", kAlign5},
          {"02-30 10:00", kBadDate},
          {"13-01 10:00", kBadDate},
          {"2030-01-01T12:35:00Z", kPast5},
      },
      kNow, kFive, kPlus8);
}

// --start and MCP read a naive ISO time as UTC (the machine interface, as in
// the original); -t reads it as local. An offset wins in both; friendly forms
// stay local in both.
TEST(ParseStartTest, NaiveIsoIsUtcForTheMachineInterface) {
  EXPECT_EQ(ParseStart("2030-01-02T09:00", kNow, kFive, kPlus8, NaiveIso::kUtc), Utc(2030, 1, 2, 9));
  EXPECT_EQ(ParseStart("2030-01-02 09:00", kNow, kFive, kPlus8, NaiveIso::kUtc), Utc(2030, 1, 2, 9));
  EXPECT_EQ(ParseStart("2030-01-02T09:00", kNow, kFive, kPlus8), Local8(2030, 1, 2, 9));
  EXPECT_EQ(ParseStart("2030-01-02T09:00+08:00", kNow, kFive, kPlus8, NaiveIso::kUtc), Local8(2030, 1, 2, 9));
  EXPECT_EQ(ParseStart("tomorrow 9", kNow, kFive, kPlus8, NaiveIso::kUtc), Local8(2030, 1, 2, 9));
  EXPECT_EQ(ParseStart("21:00", kNow, kFive, kPlus8, NaiveIso::kUtc), Local8(2030, 1, 1, 21));
}

TEST(ParseStartTest, NowAndRelative) {
  ExpectStarts(
      {
          {"NOW", Local8(2030, 1, 1, 20, 40)},
          {" now ", Local8(2030, 1, 1, 20, 40)},
          {"+ 30m", Local8(2030, 1, 1, 21, 15)},
          {"+30M", Local8(2030, 1, 1, 21, 15)},
          {"+1m", Local8(2030, 1, 1, 20, 45)},
          {"+3m", Local8(2030, 1, 1, 20, 45)},
          {"+4m", Local8(2030, 1, 1, 20, 50)},
          {"+2d", Local8(2030, 1, 3, 20, 45)},
          {"+30m1h", Local8(2030, 1, 1, 22, 15)},
      },
      kNow, kFive, kPlus8);
  // "+7m at 18:49 -> 19:00" from the spec.
  ExpectStarts({{"+7m", Local8(2030, 1, 1, 19)}}, Local8(2030, 1, 1, 18, 49), kFive, kPlus8);
  // An aligned now stays put.
  ExpectStarts({{"now", Local8(2030, 1, 1, 18, 50)}, {"+5m", Local8(2030, 1, 1, 18, 55)}},
               Local8(2030, 1, 1, 18, 50), kFive, kPlus8);
  ExpectStartErrors(
      {
          {"+0m", kRelative},
          {"+", kRelative},
          {"+ ", kRelative},
          {"+30", kRelative},
          {"+1h 30m", kRelative},
          {"+-5m", kRelative},
          {"++5m", kRelative},
          {"+1h1h", kRelative},
          {"+36501d", "duration is too long (at most 36500d)"},
          {"-5m", kFriendly},
      },
      kNow, kFive, kPlus8);
}

TEST(ParseStartTest, BareClocks) {
  ExpectStarts(
      {
          {"20:40", Local8(2030, 1, 1, 20, 40)},  // the current slot itself does not roll
          {"20:35", Local8(2030, 1, 2, 20, 35)},
          {"9 pm", Local8(2030, 1, 1, 21)},
          {"9  PM", Local8(2030, 1, 1, 21)},
          {"9:30pm", Local8(2030, 1, 1, 21, 30)},
          {"9:30 pm", Local8(2030, 1, 1, 21, 30)},
          {"09:00PM", Local8(2030, 1, 1, 21)},
          {"11:55pm", Local8(2030, 1, 1, 23, 55)},
          {"23:55", Local8(2030, 1, 1, 23, 55)},
          {"0", Local8(2030, 1, 2, 0)},
          {"00", Local8(2030, 1, 2, 0)},
          {"00:00", Local8(2030, 1, 2, 0)},
          {"12am", Local8(2030, 1, 2, 0)},
          {"12pm", Local8(2030, 1, 2, 12)},
          {"12:30am", Local8(2030, 1, 2, 0, 30)},
          {"12:30pm", Local8(2030, 1, 2, 12, 30)},
          {"1am", Local8(2030, 1, 2, 1)},
          {"\t21\n", Local8(2030, 1, 1, 21)},
      },
      kNow, kFive, kPlus8);
  ExpectStartErrors(
      {
          {"24", kHour24},       {"25:00", kHour24},   {"99", kHour24},         {"13pm", kHour12},
          {"0am", kHour12},      {"00pm", kHour12},    {"9:60", kClockRange},   {"9:99pm", kClockRange},
          {"9:3", kFriendly},    {"123", kFriendly},   {"9:300", kFriendly},    {"9a", kFriendly},
          {"9 a.m.", kFriendly}, {"9ampm", kFriendly}, {"21:00:00", kFriendly}, {"9:", kFriendly},
          {":30", kFriendly},    {"-9", kFriendly},    {"20:02", kAlign5},  // rolls to tomorrow, still
                                                                            // unaligned
      },
      kNow, kFive, kPlus8);
}

TEST(ParseStartTest, DayPrefixes) {
  ExpectStarts(
      {
          {"tod 21:30", Local8(2030, 1, 1, 21, 30)},
          {"TODAY 9pm", Local8(2030, 1, 1, 21)},
          {"today 20:40", Local8(2030, 1, 1, 20, 40)},  // the current slot is not past
          {"t\t9", Local8(2030, 1, 2, 9)},
          {"t   9", Local8(2030, 1, 2, 9)},
          {"t 12am", Local8(2030, 1, 2, 0)},
          {"t 12pm", Local8(2030, 1, 2, 12)},
          {"tomorrow 9:30 pm", Local8(2030, 1, 2, 21, 30)},
          {"Tomorrow 20:00", Local8(2030, 1, 2, 20)},
          {"t 0", Local8(2030, 1, 2, 0)},
      },
      kNow, kFive, kPlus8);
  ExpectStartErrors(
      {
          {"today 20:35", kPast5},
          {"today 12pm", kPast5},
          {"today 0", kPast5},
          {"t 9.30", kClockShape},
          {"t noon", kClockShape},
          {"tomorrow x", kClockShape},
          {"t 09h30", kClockShape},
          {"t 2030-01-02T09:00", kClockShape},
          {"t 9 9", kClockShape},
          {"t 25", kHour24},
          {"t 0am", kHour12},
          {"t 13pm", kHour12},
          {"t 9:75", kClockRange},
          {"t 9:03", kAlign5},
          {"yesterday 9", kFriendly},
          {"tomo 9", kFriendly},
          {"t", kFriendly},
          {"t9", kFriendly},
      },
      kNow, kFive, kPlus8);
}

TEST(ParseStartTest, MonthDay) {
  ExpectStarts(
      {
          {"1-2t9", Local8(2030, 1, 2, 9)},
          {"1-2 9am", Local8(2030, 1, 2, 9)},
          {"1-2   21:30", Local8(2030, 1, 2, 21, 30)},
          {"01-01 20:40", Local8(2030, 1, 1, 20, 40)},  // the current slot: this year
          {"1-1 20:00", Local8(2031, 1, 1, 20)},        // past: next year
          {"12-31 11pm", Local8(2030, 12, 31, 23)},
          {"7-13 20:00", Local8(2030, 7, 13, 20)},
      },
      kNow, kFive, kPlus8);
  ExpectStartErrors(
      {
          {"02-30 10:00", kBadDate},
          {"2-29 10:00", kBadDate},  // 2030 is not a leap year
          {"0-1 10:00", kBadDate},
          {"1-0 10:00", kBadDate},
          {"4-31 10:00", kBadDate},
          {"1-2 25:00", kHour24},
          {"1-2 13pm", kHour12},
          {"1-2 9:61", kClockRange},
          {"1-2 9.30", kClockShape},
          {"1-2T 9", kClockShape},
          {"1-2 9:03", kAlign5},
          {"1-2", kFriendly},
          {"123-4 9", kFriendly},
          {"1-234 9", kFriendly},
          {"1/2 9", kFriendly},
      },
      kNow, kFive, kPlus8);
}

TEST(ParseStartTest, MonthDayLeapYears) {
  const Seconds early_2028 = Local8(2028, 1, 10, 12);
  ExpectStarts({{"2-29 10:00", Local8(2028, 2, 29, 10)}}, early_2028, kFive, kPlus8);
  // Already past in 2028, and 2029 has no February 29.
  ExpectStartErrors({{"2-29 10:00", kBadDate}}, Local8(2028, 3, 10, 12), kFive, kPlus8);
}

TEST(ParseStartTest, YearEnd) {
  const Seconds now = Local8(2030, 12, 31, 23, 58) + 30;
  ExpectStarts(
      {
          {"now", Local8(2030, 12, 31, 23, 55)},
          {"9", Local8(2031, 1, 1, 9)},
          {"t 9", Local8(2031, 1, 1, 9)},
          {"12-31 23:00", Local8(2031, 12, 31, 23)},
          {"1-1 0", Local8(2031, 1, 1, 0)},
          {"+5m", Local8(2031, 1, 1, 0, 5)},
      },
      now, kFive, kPlus8);
}

TEST(ParseStartTest, Iso) {
  ExpectStarts(
      {
          {"2030-01-01T12:40:00Z", Local8(2030, 1, 1, 20, 40)},  // the current slot
          {"2030-01-01T20:40", Local8(2030, 1, 1, 20, 40)},
          {"2030-01-02", Local8(2030, 1, 2)},
          {"2030-01-02 09:00", Local8(2030, 1, 2, 9)},
          {"20300102T0900", Local8(2030, 1, 2, 9)},
          {"2030-01-02T09:00:00.999+08:00", Local8(2030, 1, 2, 9)},
          {"2030-01-02T09:00+0800", Local8(2030, 1, 2, 9)},
          {"2030-01-02T09:00-05:30", Utc(2030, 1, 2, 14, 30)},
      },
      kNow, kFive, kPlus8);
  ExpectStartErrors(
      {
          {"2030-01-01T12:39:59Z", kPast5},
          {"2030-01-01", kPast5},  // local midnight today
          {"2029-12-31T23:00", kPast5},
          {"2030-01-01T12:41:00Z", kAlign5},
          {"2030-01-01T12:40:30Z", kAlign5},
          {"2030-01-02T09:00:01", kAlign5},
          {"2030-02-30T10:00", kBadDate},
          {"2030-01-02T25:00", kClockRange},
          {"2030-01-02T09:00+9", kFriendly},
          {"2030-01-02T9:00", kFriendly},
      },
      kNow, kFive, kPlus8);
}

TEST(ParseStartTest, MessagesUseTheSlotLength) {
  const SlotGrid fifteen(15 * kMinute);
  ExpectStarts({{"now", Local8(2030, 1, 1, 20, 30)},
                {"+1m", Local8(2030, 1, 1, 20, 45)},
                {"20:30", Local8(2030, 1, 1, 20, 30)}},
               kNow, fifteen, kPlus8);
  ExpectStartErrors(
      {
          {"20:50", "start time must align to a 15-minute boundary"},
          {"today 9", "start time is before the current 15-minute interval"},
          {"2030-01-01T12:25:00Z", "start time is before the current 15-minute interval"},
      },
      kNow, fifteen, kPlus8);
  const SlotGrid hour(kHour);
  ExpectStartErrors({{"21:30", "start time must align to a 60-minute boundary"}}, kNow, hour, kPlus8);
}

// "today" and "tomorrow" are the local calendar days, not UTC ones.
TEST(ParseStartTest, DaysAreLocal) {
  // 2030-01-01 20:00 UTC is already 2030-01-02 04:00 in +0800.
  const Seconds now = Utc(2030, 1, 1, 20);
  ExpectStarts(
      {{"today 9", Local8(2030, 1, 2, 9)}, {"t 9", Local8(2030, 1, 3, 9)}, {"9", Local8(2030, 1, 2, 9)}}, now,
      kFive, kPlus8);
  // 2030-01-02 02:00 UTC is still 2030-01-01 20:30 in -0530.
  const Seconds now_west = Utc(2030, 1, 2, 2);
  ExpectStarts({{"t 9", Utc(2030, 1, 2, 14, 30)}, {"today 23:00", Utc(2030, 1, 2, 4, 30)}}, now_west, kFive,
               kMinus530);
}

// Day offsets move the civil date, so "tomorrow 9" is 09:00 on the wall
// clock even when the offset changes overnight (upstream added 24h to the
// offset of now and was an hour off).
TEST(ParseStartTest, DaylightSavingSpring) {
  const Seconds noon_before = Utc(2030, 3, 30, 12);  // 13:00 CET
  ExpectStarts(
      {
          {"tomorrow 9", Utc(2030, 3, 31, 7)},  // 09:00 CEST
          {"t 12pm", Utc(2030, 3, 31, 10)},
          {"t 01:30", Utc(2030, 3, 31, 0, 30)},  // still CET
          {"today 21", Utc(2030, 3, 30, 20)},
          {"3-31 9", Utc(2030, 3, 31, 7)},
          {"2030-03-31T09:00", Utc(2030, 3, 31, 7)},
          {"+1d", Utc(2030, 3, 31, 12)},  // relative means elapsed time: 14:00 CEST
      },
      noon_before, kFive, kSpring);
  // A wall time the clocks skip is refused, in every notation.
  for (std::string_view text : {"t 02:30", "tomorrow 2:30am", "3-31 02:30", "2030-03-31 02:30"})
    EXPECT_NE(ErrorOf(ParseStart(text, noon_before, kFive, kSpring)).find("does not exist"),
              std::string::npos)
        << text;
  // A bare clock whose time today is past and skipped tomorrow is refused too;
  // one whose skipped time today is past moves to tomorrow, which exists.
  EXPECT_NE(ErrorOf(ParseStart("02:30", noon_before, kFive, kSpring)).find("does not exist"),
            std::string::npos);
  ExpectStarts({{"02:30", Utc(2030, 4, 1, 0, 30)}}, Utc(2030, 3, 31, 8), kFive, kSpring);
  // A bare clock that rolls over the change also lands on the wall clock.
  ExpectStarts({{"9", Utc(2030, 3, 31, 7)}, {"23", Utc(2030, 3, 30, 22)}}, Utc(2030, 3, 30, 21), kFive,
               kSpring);
  // Just after midnight local, "today" is the day of the change.
  ExpectStarts({{"today 9", Utc(2030, 3, 31, 7)}, {"9", Utc(2030, 3, 31, 7)}}, Utc(2030, 3, 30, 23, 30),
               kFive, kSpring);
}

TEST(ParseStartTest, DaylightSavingAutumn) {
  const Seconds noon_before = Utc(2030, 10, 26, 12);  // 14:00 CEST
  ExpectStarts(
      {
          {"t 9", Utc(2030, 10, 27, 8)},          // 09:00 CET
          {"t 02:30", Utc(2030, 10, 27, 0, 30)},  // first of the two 02:30s
          {"t 01:30", Utc(2030, 10, 26, 23, 30)},
          {"10-27 9", Utc(2030, 10, 27, 8)},
      },
      noon_before, kFive, kAutumn);
  // After the change, "today 2:30" is the first 02:30, already past.
  ExpectStartErrors({{"today 2:30", kPast5}}, Utc(2030, 10, 27, 1, 45), kFive, kAutumn);
}

// Whatever the input and the moment, a successful start is on the grid and not
// before the current slot.
TEST(ParseStartTest, ResultsAreAlignedAndNotPast) {
  const std::vector<std::string_view> inputs = {
      "now",  "+7m", "+1h",         "9",           "9pm",   "21:30",           "0",
      "12am", "t 9", "today 23:55", "12-31 23:00", "1-1 0", "2031-06-01T10:00"};
  const FixedZone zones[] = {FixedZone(8 * kHour), FixedZone(-(5 * kHour + 30 * kMinute)), FixedZone(0)};
  for (const Zone& zone : zones) {
    for (Seconds now = Utc(2030, 12, 31); now < Utc(2031, 1, 2); now += 617) {
      for (std::string_view text : inputs) {
        const auto r = ParseStart(text, now, kFive, zone);
        if (!r) continue;
        ASSERT_TRUE(kFive.Aligned(*r)) << text << " at " << now;
        ASSERT_GE(*r, kFive.Floor(now)) << text << " at " << now;
        ASSERT_LT(*r, now + 366 * kDay) << text << " at " << now;
      }
    }
  }
}

// ---------------------------------------------------------------------------
// ParseExactStart (--start)

TEST(ParseExactStartTest, NowOrIso) {
  EXPECT_EQ(ParseExactStart("now", kNow, kFive, kPlus8), Local8(2030, 1, 1, 20, 40));
  const std::string empty = "the time is empty; give now, +30m, 21:00, tomorrow 09:00 or an ISO 8601 time";
  EXPECT_EQ(ErrorOf(ParseExactStart("", kNow, kFive, kPlus8)), empty);
  EXPECT_EQ(ErrorOf(ParseExactStart("  ", kNow, kFive, kPlus8)), empty);
  EXPECT_EQ(ErrorOf(ParseStart("", kNow, kFive, kPlus8)), empty);
  EXPECT_EQ(ErrorOf(ParseStart(" ", kNow, kFive, kPlus8)), empty);
  EXPECT_EQ(ErrorOf(ParseViewTime("", kNow, kPlus8)), empty);
  EXPECT_EQ(ParseExactStart(" NOW ", kNow, kFive, kPlus8), Local8(2030, 1, 1, 20, 40));
  EXPECT_EQ(ParseExactStart("2030-01-02T09:00", kNow, kFive, kPlus8),
            Local8(2030, 1, 2, 9));  // naive = local
  EXPECT_EQ(ParseExactStart("2030-01-02T01:00:00Z", kNow, kFive, kPlus8), Local8(2030, 1, 2, 9));
  EXPECT_EQ(ParseExactStart("2030-01-01T12:40:00Z", kNow, kFive, kPlus8), Local8(2030, 1, 1, 20, 40));
  const std::string iso = "time must be ISO 8601 such as 2026-11-30T09:00 or 2026-11-30T09:00:00+08:00";
  EXPECT_EQ(ErrorOf(ParseExactStart("20:00", kNow, kFive, kPlus8)), iso);
  EXPECT_EQ(ErrorOf(ParseExactStart("tomorrow 9", kNow, kFive, kPlus8)), iso);
  EXPECT_EQ(ErrorOf(ParseExactStart("+30m", kNow, kFive, kPlus8)), iso);
  EXPECT_EQ(ErrorOf(ParseExactStart("2030-01-01T12:35:00Z", kNow, kFive, kPlus8)), kPast5);
  EXPECT_EQ(ErrorOf(ParseExactStart("2030-01-02T09:01", kNow, kFive, kPlus8)), kAlign5);
  EXPECT_EQ(ErrorOf(ParseExactStart("2030-02-30T09:00", kNow, kFive, kPlus8)), kBadDate);
}

// ---------------------------------------------------------------------------
// ParseViewTime (--from)

TEST(ParseViewTimeTest, PastAllowedNothingRounded) {
  const std::vector<TimeCase> cases = {
      {"now", kNow},
      {"+30m", kNow + 30 * kMinute},
      {"+ 1h", kNow + kHour},
      {"20:00", Local8(2030, 1, 1, 20)},  // today even though past
      {"9", Local8(2030, 1, 1, 9)},
      {"9am", Local8(2030, 1, 1, 9)},
      {"20:03", Local8(2030, 1, 1, 20, 3)},  // no alignment
      {"23:59", Local8(2030, 1, 1, 23, 59)},
      {"21", Local8(2030, 1, 1, 21)},
      {"today 9", Local8(2030, 1, 1, 9)},
      {"t 9", Local8(2030, 1, 2, 9)},
      {"1-1 9", Local8(2030, 1, 1, 9)},  // past: still this year
      {"12-31 23:00", Local8(2030, 12, 31, 23)},
      {"2029-06-01T00:00Z", Utc(2029, 6, 1)},
      {"2030-01-01T12:41:07Z", Utc(2030, 1, 1, 12, 41, 7)},
      {"2029-06-01", Local8(2029, 6, 1)},
  };
  for (const TimeCase& c : cases) {
    const auto r = ParseViewTime(c.text, kNow, kPlus8);
    ASSERT_TRUE(r) << "'" << c.text << "': " << r.error().message;
    EXPECT_EQ(*r, c.t) << "'" << c.text << "' gave " << FormatLocal(*r, kPlus8);
  }
}

TEST(ParseViewTimeTest, SameErrorsAsStart) {
  const std::vector<ErrorCase> cases = {
      {"noon", kFriendly},      {"today", kFriendly},
      {"t 9.30", kClockShape},  {"24", kHour24},
      {"13pm", kHour12},        {"9:60", kClockRange},
      {"+0m", kRelative},       {"02-30 10:00", kBadDate},
      {"2030-02-30", kBadDate}, {"2030-01-02T9:00", kFriendly},
  };
  for (const ErrorCase& c : cases)
    EXPECT_EQ(ErrorOf(ParseViewTime(c.text, kNow, kPlus8)), c.error) << "'" << c.text << "'";
}

TEST(ParseViewTimeTest, DaylightSaving) {
  const Seconds noon_before = Utc(2030, 3, 30, 12);
  EXPECT_EQ(ParseViewTime("t 9", noon_before, kSpring), Utc(2030, 3, 31, 7));
  EXPECT_EQ(ParseViewTime("9", noon_before, kSpring), Utc(2030, 3, 30, 8));
}

}  // namespace
}  // namespace bk::engine
