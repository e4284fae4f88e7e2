#include "sys/local_zone.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <vector>

namespace bk::sys {

std::string LocalZone::Name(Seconds utc) const {
  const char* tz = std::getenv("TZ");
  if (tz != nullptr && *tz != '\0') return tz[0] == ':' ? std::string(tz + 1) : std::string(tz);
  char buf[512];
  ssize_t n = readlink("/etc/localtime", buf, sizeof(buf) - 1);
  std::string target(buf, n > 0 ? static_cast<size_t>(n) : 0);
  if (size_t at = target.find("zoneinfo/"); at != std::string::npos) return target.substr(at + 9);
  time_t t = static_cast<time_t>(utc);
  tm local{};
  if (localtime_r(&t, &local) != nullptr && local.tm_zone != nullptr) return local.tm_zone;
  return "UTC";
}

int64_t LocalZone::OffsetAt(Seconds utc) const {
  time_t t = static_cast<time_t>(utc);
  tm local{};
  if (localtime_r(&t, &local) == nullptr) return 0;
  return local.tm_gmtoff;
}

// An instant t names `local` exactly when t + OffsetAt(t) == wall, where wall is
// the civil time read as UTC. Every offset in effect within a day of `wall` is a
// candidate (plus whatever mktime picks, for zones with odd transitions):
//  - one candidate fits: the usual case;
//  - two fit (the hour repeated when clocks go back): the earlier instant, i.e.
//    the first occurrence;
//  - none fits (the hour skipped when clocks go forward): the wall time is read
//    with the offset in effect before the change, which lands after the gap:
//    02:30 on a spring-forward night becomes 03:30, moved forward by the gap.
Seconds LocalZone::FromLocal(const CivilTime& local) const {
  const Seconds wall = CivilToEpoch(local);  // the civil time read as if it were UTC
  std::vector<int64_t> offsets = {OffsetAt(wall - 86400), OffsetAt(wall), OffsetAt(wall + 86400)};
  tm parts{};
  parts.tm_year = local.year - 1900;
  parts.tm_mon = local.month - 1;
  parts.tm_mday = local.day;
  parts.tm_hour = local.hour;
  parts.tm_min = local.minute;
  parts.tm_sec = local.second;
  parts.tm_isdst = -1;
  time_t guess = mktime(&parts);
  if (guess != static_cast<time_t>(-1)) offsets.push_back(wall - static_cast<Seconds>(guess));

  std::optional<Seconds> best;
  for (int64_t off : offsets) {
    Seconds t = wall - off;
    if (OffsetAt(t) == off && (!best || t < *best)) best = t;
  }
  if (best) return *best;
  // In a gap: the offset before the change is the smaller one, so wall - offset
  // is the latest candidate.
  Seconds latest = wall - offsets.front();
  for (int64_t off : offsets) latest = std::max(latest, wall - off);
  return latest;
}

}  // namespace bk::sys
