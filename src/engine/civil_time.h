#pragma once
// Calendar arithmetic and time zones without touching the system. The CLI passes
// the process's real zone (sys/local_zone.h); tests pass a FixedZone.

#include <memory>
#include <string>

#include "base/result.h"
#include "engine/types.h"

namespace bk::engine {

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

}  // namespace bk::engine
