#pragma once
// The monitor: turns GPU samples
// into usage history, events, a heartbeat and no-show reclamation.
//
// Sampling and ingesting are separate steps so the daemon can sample on its
// own thread (NVML can block) while everything that touches the ledger runs
// on the event loop, the ledger's single writer (monitor/runner.h); `bk m`
// does both in one thread. Per sample, Ingest:
//   1. reads the bookings active now (every user's) from the ledger;
//   2. attributes container processes to booking holders (gpu::Attribute);
//   3. classifies processes (classify.h), diffs the process state into events
//      (tracker.h), folds usage into per-minute rollups (rollup.h);
//   4. advances each started booking's no-show streak (reclaim.h) and
//      reclaims through BookingService::Reclaim when the rule says so;
//   5. writes devices, events, rollups, streaks and the heartbeat to usage.db
//      in one transaction.
// The monitor never signals or kills a process.
//
// Exclusive-window pause (pause_sampling_during_exclusive): while any
// exclusive booking is active the source is not queried at all (for NVML the
// session is also closed, so nothing of ours touches the driver); the sample
// is recorded as paused, the last known device identities (UUID, name, total
// memory) are kept for the views, and a paused sample is never evidence.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "gpu/snapshot.h"
#include "monitor/classify.h"
#include "monitor/reclaim.h"
#include "monitor/rollup.h"
#include "monitor/tracker.h"
#include "service/booking_service.h"
#include "store/usage_store.h"

namespace bk::monitor {

struct Options {
  const config::Config* config = nullptr;
  service::BookingService* service = nullptr;  // ledger reads and Reclaim
  service::Actor actor;                        // reads every user's bookings (an administrator)
  store::UsageStore* usage = nullptr;
  int64_t interval_ms = 2000;
  int64_t reclaim_after_ms = int64_t{3600} * 1000;  // 0: off
  bool pause_during_exclusive = false;
  std::string monitor_id;  // random per run
  int64_t pid = 0;
  uint32_t uid = 0;
  store::UsageRetention retention;
};

// One sample as taken (by the sampler thread or `bk m`).
struct RawSample {
  int64_t at_ms = 0;
  bool paused = false;  // the source was not queried
  gpu::Snapshot snapshot;
};

// An exclusive booking's [start, end) in epoch seconds: no sampling inside.
struct Window {
  int64_t start = 0;
  int64_t end = 0;
};
bool Inside(const std::vector<Window>& windows, int64_t at_ms);

struct ReclaimDecision {
  std::string reservation_id;
  uint32_t uid = 0;
  std::string username;
  std::vector<int> gpus;
  std::string verdict;  // use | no-use | untrusted
  std::string why;
  bool gap = false;
  std::optional<int64_t> since_ms;
  int64_t streak_ms = 0;  // how long the current no-use streak lasts
  int64_t threshold_ms = 0;
  bool used = false;  // the owner was seen using it: never reclaimed
  bool reclaimed = false;
  std::string reason;  // the recorded reason, when reclaimed
  std::string error;   // why the reclaim could not be committed
};

struct TickReport {
  int64_t at_ms = 0;
  bool paused = false;
  bool failed = false;
  gpu::Snapshot snapshot;                           // attributed; identities only when paused
  std::vector<std::vector<Classified>> classified;  // [device][process]
  std::vector<store::UsageEvent> events;
  std::vector<ReclaimDecision> decisions;
  store::HeartbeatRow heartbeat;
  std::vector<std::string> warnings;
};

class Monitor {
 public:
  explicit Monitor(Options options);

  // Loads the persisted process state and streaks; records monitor-start.
  Status Start(int64_t now_ms);
  // Exclusive bookings active now or later (only when pausing is configured;
  // empty otherwise). Reads the ledger.
  Result<std::vector<Window>> ExclusiveWindows();
  Result<TickReport> Ingest(RawSample sample);
  // Flushes partial rollups and writes the stopped heartbeat.
  Status Stop(int64_t now_ms);

  // The last attributed snapshot (cached identities while paused); what the
  // daemon's BookingService shows in `bk st`. Unknown devices before the first sample.
  const gpu::Snapshot& latest() const { return latest_; }
  int64_t samples() const { return samples_; }
  const Options& options() const { return opt_; }

 private:
  Result<std::vector<ActiveBooking>> ActiveAt(int64_t now_s);
  gpu::Snapshot PausedSnapshot() const;
  void Remember(const gpu::Snapshot& snapshot);
  std::vector<ReclaimDecision> Reclaims(const RawSample& s, const gpu::Snapshot& attributed,
                                        const std::vector<ActiveBooking>& bookings,
                                        std::vector<store::UsageEvent>& events,
                                        std::vector<std::string>& warnings);
  store::HeartbeatRow Heartbeat(const TickReport& r, const std::string& state) const;
  Status Write(TickReport& report, const ProcessTracker::Changes& changes,
               const std::vector<store::RollupRow>& rollups);

  Options opt_;
  ProcessTracker tracker_;
  RollupAggregator rollups_;
  std::map<std::string, Streak> streaks_;
  std::map<std::string, Streak> stored_streaks_;  // as last written, to write only changes
  gpu::Snapshot latest_;
  std::vector<gpu::DeviceSample> identities_;  // last known identity per GPU (also in usage.db)
  std::vector<int> changed_identities_;        // to write with this sample
  std::string last_state_;                     // ok | failed | paused | "" (none yet)
  int64_t started_ms_ = 0;
  int64_t last_ms_ = 0;
  int64_t samples_ = 0;
  int64_t next_prune_ms_ = 0;
};

}  // namespace bk::monitor
