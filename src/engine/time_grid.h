#pragma once
// The booking slot grid: UTC-epoch aligned slots of slot_seconds (a divisor of one hour).

#include "engine/types.h"

namespace bk::engine {

class SlotGrid {
 public:
  explicit SlotGrid(Seconds slot_seconds) : slot_(slot_seconds) {}
  Seconds slot() const { return slot_; }
  Seconds Floor(Seconds t) const {
    Seconds r = t % slot_;
    if (r < 0) r += slot_;
    return t - r;
  }
  Seconds Ceil(Seconds t) const {
    Seconds f = Floor(t);
    return f == t ? t : f + slot_;
  }
  bool Aligned(Seconds t) const { return Floor(t) == t; }

 private:
  Seconds slot_;
};

}  // namespace bk::engine
