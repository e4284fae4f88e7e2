#pragma once
// The engine's names for the calendar arithmetic and zones of base/civil_time.h.

#include "base/civil_time.h"
#include "engine/types.h"

namespace bk::engine {

using ::bk::CivilTime;
using ::bk::CivilToEpoch;
using ::bk::EpochToCivil;
using ::bk::FixedZone;
using ::bk::ValidDate;
using ::bk::Weekday;
using ::bk::Zone;

}  // namespace bk::engine
