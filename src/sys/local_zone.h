#pragma once
// The process's local time zone (TZ / /etc/localtime) behind bk::Zone.

#include <string>

#include "base/civil_time.h"

namespace bk::sys {

class LocalZone : public Zone {
 public:
  int64_t OffsetAt(Seconds utc) const override;
  Seconds FromLocal(const CivilTime& local) const override;
  // The zone's IANA name ("Asia/Shanghai") from TZ or /etc/localtime, else
  // its abbreviation at `utc` ("CST"), so that an agent can say "local".
  std::string Name(Seconds utc) const;
};

}  // namespace bk::sys
