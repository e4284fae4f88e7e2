#pragma once
// A rule on where a booking may start, beside the calendar's own (GPUs, host
// budgets, blackouts): the requester's fair-share limits. The calendar
// intersects the starts a rule allows with the ones its GPUs leave, so a
// placement keeps to both at once.

#include <string>
#include <vector>

#include "engine/types.h"

namespace bk::engine {

class StartRule {
 public:
  virtual ~StartRule() = default;
  // The grid starts in [lo, hi] at which `gpus` GPUs held for `duration` keep
  // the rule, as half-open intervals whose ends lie on the grid (as the
  // calendar's start sets are).
  virtual std::vector<Interval> Allowed(int gpus, Seconds duration, Seconds lo, Seconds hi) const = 0;
  // Why `gpus` GPUs over [start, end) break the rule; empty when they do not.
  virtual std::vector<std::string> Reasons(int gpus, Seconds start, Seconds end) const = 0;
};

}  // namespace bk::engine
