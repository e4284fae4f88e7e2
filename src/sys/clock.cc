#include "sys/clock.h"

#include <ctime>
#include <optional>
#include <string_view>

#include "base/strings.h"

namespace bk::sys {

engine::Seconds RealClock::Now() const { return static_cast<engine::Seconds>(time(nullptr)); }

int64_t RealClock::NowMs() const {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

namespace {

constexpr const char* kTestNowError =
    "BK_TEST_NOW must be Unix seconds or an ISO time with offset such as 2026-11-29T18:49:00Z";

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool LeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && LeapYear(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at `pos`.
std::optional<int> Digits(std::string_view s, size_t& pos, size_t n) {
  if (pos + n > s.size()) return std::nullopt;
  int v = 0;
  for (size_t i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  pos += n;
  return v;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos >= s.size() || s[pos] != c) return false;
  ++pos;
  return true;
}

// YYYY-MM-DDTHH:MM[:SS[.fraction]](Z|+HH:MM|-HH:MM|+HHMM|+HH). The fraction is dropped.
std::optional<engine::Seconds> ParseIsoWithOffset(std::string_view s) {
  size_t pos = 0;
  auto year = Digits(s, pos, 4);
  if (!year || !Expect(s, pos, '-')) return std::nullopt;
  auto month = Digits(s, pos, 2);
  if (!month || !Expect(s, pos, '-')) return std::nullopt;
  auto day = Digits(s, pos, 2);
  if (!day) return std::nullopt;
  if (pos >= s.size() || (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ')) return std::nullopt;
  ++pos;
  auto hour = Digits(s, pos, 2);
  if (!hour || !Expect(s, pos, ':')) return std::nullopt;
  auto minute = Digits(s, pos, 2);
  if (!minute) return std::nullopt;
  int second = 0;
  if (pos < s.size() && s[pos] == ':') {
    ++pos;
    auto sec = Digits(s, pos, 2);
    if (!sec) return std::nullopt;
    second = *sec;
    if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
      ++pos;
      size_t start = pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
      if (pos == start) return std::nullopt;
    }
  }
  if (pos >= s.size()) return std::nullopt;  // naive times are refused: the offset is required
  int64_t offset = 0;
  if (s[pos] == 'Z' || s[pos] == 'z') {
    ++pos;
  } else if (s[pos] == '+' || s[pos] == '-') {
    int sign = s[pos] == '-' ? -1 : 1;
    ++pos;
    auto oh = Digits(s, pos, 2);
    if (!oh) return std::nullopt;
    int om = 0;
    if (pos < s.size()) {
      if (s[pos] == ':') ++pos;
      auto m = Digits(s, pos, 2);
      if (!m) return std::nullopt;
      om = *m;
    }
    if (*oh > 23 || om > 59) return std::nullopt;
    offset = sign * (*oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > DaysInMonth(*year, *month)) return std::nullopt;
  if (*hour > 23 || *minute > 59 || second > 59) return std::nullopt;
  return DaysFromCivil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 + second - offset;
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
