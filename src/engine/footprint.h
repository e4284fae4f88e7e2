#pragma once
// What one reservation occupies, as placement sees it.

#include <cstdint>
#include <optional>
#include <vector>

#include "engine/types.h"

namespace bk::engine {

// memory_mb is the declared VRAM per GPU (absent = share-weighted automatic
// budget). cpus/ram_mb are the host budget declaration (0 when the booking
// declares none).
struct Footprint {
  std::vector<int> gpus;
  Mode mode = Mode::kShared;
  int share_units = 1;  // ignored for exclusive
  std::optional<int64_t> memory_mb;
  int64_t cpus = 0;
  int64_t ram_mb = 0;
  Seconds start = 0;
  Seconds end = 0;
};

}  // namespace bk::engine
