#pragma once
// Per-minute usage aggregates per (GPU, user, status), built in memory from
// each sample and flushed to usage.db when the minute is over (and, partial,
// when the monitor stops: usage.db adds into existing rows, so partial
// minutes from several runs merge).
//
// Per sample, every booking active now yields its (gpu, owner, "ok") group
// even with no process ("reserved but idle"), and each attributed non-system
// process joins (gpu, its uid, its status). Observed time is samples x
// interval, never wall time: a missing sample is missing history, not zero.

#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "base/result.h"
#include "gpu/snapshot.h"
#include "monitor/classify.h"
#include "store/usage_store.h"

namespace bk::monitor {

// The rollup period a monitor run may use (`bk m --rollup`, seconds), given
// its sample interval. usage.db's minute tier holds 60-second windows: it is
// what `bk u samples -r 1m` reads, what 5m and 10m are merged from and what
// the partial hours at either end of a summary are summed from, so a wider
// window stored there would be counted as a minute, and one stored beside it
// would be read by no view. So 60 is the one accepted period; and, as in the
// original, it must be a whole number of sample intervals, so that no sample
// is split between windows.
Status CheckRollup(double rollup_s, int64_t interval_ms);

class RollupAggregator {
 public:
  static constexpr int64_t kWindowSeconds = 60;

  // One trustworthy sample: `classified[i][j]` is the status of
  // snapshot.devices[i].processes[j]. Devices without process telemetry are skipped.
  void Add(int64_t at_ms, int64_t interval_ms, const gpu::Snapshot& snapshot,
           const std::vector<std::vector<Classified>>& classified, std::span<const ActiveBooking> bookings);
  // Rows of windows that ended at or before `at_ms`.
  std::vector<store::RollupRow> TakeClosed(int64_t at_ms);
  // Everything, finished or not (at stop).
  std::vector<store::RollupRow> TakeAll();
  size_t open_groups() const { return groups_.size(); }

 private:
  using Key = std::tuple<int64_t, int, uint32_t, std::string>;  // window, gpu, uid, status
  std::map<Key, store::RollupRow> groups_;
};

}  // namespace bk::monitor
