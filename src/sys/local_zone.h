#pragma once
// The process's local time zone (TZ / /etc/localtime) behind engine::Zone.

#include "engine/civil_time.h"

namespace bk::sys {

class LocalZone : public engine::Zone {
 public:
  int64_t OffsetAt(engine::Seconds utc) const override;
  engine::Seconds FromLocal(const engine::CivilTime& local) const override;
};

}  // namespace bk::sys
