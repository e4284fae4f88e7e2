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
// With `names` (one per footprint), each line also names the reservations that
// hold the GPU (or the host budget) at that instant: "(a1b2c3d4, 9f8e7d6c)".
std::vector<std::string> CheckInvariants(const Policy& policy, const std::vector<Footprint>& active,
                                         const std::vector<std::string>* names = nullptr);

}  // namespace bk::engine
