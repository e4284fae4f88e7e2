#pragma once
// The live process state and the events its changes make: process-start,
// process-stop, authorization-change (the same process's status changed, e.g.
// its booking ended) and unbooked-use (a user starts using a GPU they hold no
// booking on). A process is keyed by (GPU, PID, PID-reuse token), so a reused
// PID is a stop and a start. GPUs without trustworthy process telemetry keep
// their previous state: an outage never invents stops.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/snapshot.h"
#include "monitor/classify.h"
#include "store/usage_store.h"

namespace bk::monitor {

class ProcessTracker {
 public:
  void Load(std::vector<store::TrackedProcess> state);

  struct Changes {
    std::vector<store::UsageEvent> events;
    std::vector<store::TrackedProcess> upserts;  // new or changed rows
    std::vector<store::TrackedProcess> removed;
  };
  // `classified[i][j]` is the status of snapshot.devices[i].processes[j].
  Changes Update(int64_t at_ms, const gpu::Snapshot& snapshot,
                 const std::vector<std::vector<Classified>>& classified);

  size_t size() const { return state_.size(); }

 private:
  using Key = std::tuple<int, int64_t, std::string>;  // gpu, pid, token
  std::map<Key, store::TrackedProcess> state_;
};

}  // namespace bk::monitor
