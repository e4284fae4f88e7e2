#include "base/civil_time.h"

#include <fmt/format.h>

namespace bk {

namespace {

// Floor division and modulo: C++ truncates toward zero, but instants before
// 1970 must still fall on the day that contains them.
int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t FloorMod(int64_t a, int64_t b) { return a - FloorDiv(a, b) * b; }

// Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms": days since
// 1970-01-01 of a proleptic Gregorian date. Month must be 1..12, day 1..31.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);             // [0, 399]
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct Date {
  int64_t year;
  unsigned month;
  unsigned day;
};

// The inverse of DaysFromCivil, from the same paper.
Date CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);                // [0, 146096]
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  const unsigned mp = (5 * doy + 2) / 153;                                     // [0, 11]
  const unsigned day = doy - (153 * mp + 2) / 5 + 1;                           // [1, 31]
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;                            // [1, 12]
  return {static_cast<int64_t>(yoe) + era * 400 + (month <= 2), month, day};
}

bool IsLeapYear(int year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

}  // namespace

// Out-of-range fields are carried rather than rejected (month 13 is January of
// the next year, day 0 the last day of the previous month, hour 24 the next
// day), so callers can do day arithmetic by adjusting a field.
Seconds CivilToEpoch(const CivilTime& c) {
  const int64_t months = static_cast<int64_t>(c.year) * 12 + (c.month - 1);
  const int64_t year = FloorDiv(months, 12);
  const auto month = static_cast<unsigned>(FloorMod(months, 12) + 1);
  const int64_t days = DaysFromCivil(year, month, 1) + (c.day - 1);
  return days * kDay + int64_t{c.hour} * kHour + int64_t{c.minute} * kMinute + c.second;
}

CivilTime EpochToCivil(Seconds t) {
  const int64_t days = FloorDiv(t, kDay);
  const int64_t secs = t - days * kDay;  // [0, 86399]
  const Date d = CivilFromDays(days);
  return {static_cast<int>(d.year),
          static_cast<int>(d.month),
          static_cast<int>(d.day),
          static_cast<int>(secs / kHour),
          static_cast<int>(secs % kHour / kMinute),
          static_cast<int>(secs % kMinute)};
}

// Years outside 1..9999 are refused: ISO 8601 text has four year digits and
// nothing the tool stores or prints needs more.
bool ValidDate(int year, int month, int day) {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return false;
  return day <= DaysInMonth(year, month);
}

int Weekday(Seconds t) {
  // 1970-01-01 was a Thursday (4).
  return static_cast<int>(FloorMod(FloorDiv(t, kDay) + 4, 7));
}

std::string FormatIsoUtc(Seconds t) {
  const CivilTime c = EpochToCivil(t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", c.year, c.month, c.day, c.hour, c.minute,
                     c.second);
}

}  // namespace bk
