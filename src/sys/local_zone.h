#pragma once
// The process's local time zone (TZ / /etc/localtime) behind bk::Zone.

#include "base/civil_time.h"

namespace bk::sys {

class LocalZone : public Zone {
 public:
  int64_t OffsetAt(Seconds utc) const override;
  Seconds FromLocal(const CivilTime& local) const override;
};

}  // namespace bk::sys
