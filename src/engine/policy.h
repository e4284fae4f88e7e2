#pragma once
// The scheduling policy an administrator configures (config/ builds it).

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/limits.h"
#include "engine/time_grid.h"
#include "engine/types.h"

namespace bk::engine {

// A window in which no booking may hold the GPUs it names (all of them when
// `gpus` is empty): maintenance an administrator announced.
struct Blackout {
  Seconds start = 0;
  Seconds end = 0;
  std::string reason;
  std::vector<int> gpus;  // ascending; empty: every GPU

  bool Covers(int gpu) const;  // whether it closes `gpu`
  bool operator==(const Blackout&) const = default;
};

struct Policy {
  int gpu_count = 1;
  Seconds slot = 5 * kMinute;
  int share_capacity = 2;  // integer shared slots per GPU (max_shared_users)
  Seconds queue_search = 168 * kHour;
  Seconds horizon = 30 * kDay;
  Seconds max_duration = 720 * kHour;
  std::vector<Blackout> blackouts;  // sorted by start
  std::vector<int> disabled_gpus;
  std::map<int, int> gpu_priority;  // larger = later; absent = 0
  bool require_shared_memory = false;
  int64_t shared_memory_reserve_mb = 512;
  // Host budgets: off when absent. When on, every booking declares CPUs and RAM.
  std::optional<int64_t> host_cpus;
  std::optional<int64_t> host_ram_mb;
  int64_t default_booking_cpus = 1;
  int64_t default_booking_ram_mb = 1024;
  // Fair-share limits: off unless set. Not bound to the ledger: an
  // administrator changes them at any time and they apply to the next request.
  FairShare fair_share;

  SlotGrid grid() const { return SlotGrid(slot); }
  bool GpuEnabled(int gpu) const;
  std::vector<int> EnabledGpus() const;
  int Priority(int gpu) const;
  bool BudgetsOn() const { return host_cpus.has_value() || host_ram_mb.has_value(); }
  // VRAM of a GPU with `total_mb` that shared bookings may declare: all but the reserve.
  int64_t UsableMemoryMb(int64_t total_mb) const {
    return total_mb > shared_memory_reserve_mb ? total_mb - shared_memory_reserve_mb : 0;
  }
  // The budget a shared booking of `units` slots holds without --mem: its slots' part of the usable VRAM.
  int64_t AutomaticMemoryMb(int64_t total_mb, int units) const {
    int64_t part = UsableMemoryMb(total_mb) * units / (share_capacity > 1 ? share_capacity : 1);
    return part > 1 ? part : 1;
  }
};

}  // namespace bk::engine
