#pragma once
// The calendar's invariants, checked independently of placement: no instant
// where a GPU or the host budget is over-admitted. `bk admin data verify` runs
// them over a ledger; a correct engine never produces a violation.

#include <string>
#include <vector>

#include "engine/calendar.h"
#include "engine/policy.h"

namespace bk::engine {

// One line per violation, e.g. "GPU 1 over capacity 3/2 at 2026-11-29T19:00:00Z".
std::vector<std::string> CheckInvariants(const Policy& policy, const std::vector<Footprint>& active);

}  // namespace bk::engine
