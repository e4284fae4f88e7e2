#include "engine/reservation.h"

namespace bk::engine {

Footprint Reservation::ToFootprint() const {
  return Footprint{gpus, mode, share_units, memory_mb, cpus, ram_mb, start, end};
}

}  // namespace bk::engine
