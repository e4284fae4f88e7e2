#pragma once
// Calendar arithmetic and time zones without touching the system: the one
// place that turns Unix seconds into dates and back. The process's real zone
// is sys::LocalZone; tests pass a FixedZone.

#include <cstdint>
#include <string>

namespace bk {

// Unix time or a duration, in whole seconds (UTC).
using Seconds = int64_t;
inline constexpr Seconds kMinute = 60;
inline constexpr Seconds kHour = 3600;
inline constexpr Seconds kDay = 86400;

struct CivilTime {
  int year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int hour = 0;
  int minute = 0;
  int second = 0;
  friend bool operator==(const CivilTime&, const CivilTime&) = default;
};

// Proleptic Gregorian conversions treating the civil time as UTC.
Seconds CivilToEpoch(const CivilTime& c);
CivilTime EpochToCivil(Seconds t);
bool ValidDate(int year, int month, int day);
int Weekday(Seconds t);  // 0 = Sunday, of the civil date of t (already offset)

// 2026-11-29T18:49:00Z
std::string FormatIsoUtc(Seconds t);

class Zone {
 public:
  virtual ~Zone() = default;
  // Seconds east of UTC in effect at the given instant.
  virtual int64_t OffsetAt(Seconds utc) const = 0;
  // The instant a local wall-clock time names. Times skipped by a DST change
  // move forward; repeated times take the first occurrence.
  virtual Seconds FromLocal(const CivilTime& local) const = 0;
  CivilTime ToLocal(Seconds utc) const { return EpochToCivil(utc + OffsetAt(utc)); }
};

class FixedZone : public Zone {
 public:
  explicit FixedZone(int64_t offset_seconds) : offset_(offset_seconds) {}
  int64_t OffsetAt(Seconds) const override { return offset_; }
  Seconds FromLocal(const CivilTime& local) const override { return CivilToEpoch(local) - offset_; }

 private:
  int64_t offset_;
};

}  // namespace bk
