#include "engine/reservation.h"

#include <algorithm>

namespace bk::engine {

Footprint Reservation::ToFootprint() const {
  return Footprint{gpus, mode, share_units, memory_mb, cpus, ram_mb, start, end};
}

int PeakShareUnits(const std::vector<const Reservation*>& overlapping, Seconds from) {
  int peak = 0;
  for (const Reservation* at : overlapping) {
    Seconds t = std::max(from, at->start);
    int in_use = 0;
    for (const Reservation* r : overlapping)
      if (r->start <= t && r->end > t) in_use += r->share_units;
    peak = std::max(peak, in_use);
  }
  return peak;
}

}  // namespace bk::engine
