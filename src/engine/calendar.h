#pragma once
// The calendar: the earliest legal start for a request, answered from what
// active reservations occupy (occupancy.h: per-GPU step functions of used
// shared units, shared VRAM and exclusive holds, and the host budgets). A
// search reads only the part of those functions its window covers: each GPU's
// feasible start intervals within the window, then one sweep over interval
// endpoints, the window growing only while nothing fits. So a placement costs
// what the requested window and GPUs touch, not the whole calendar.
// A slot-by-slot brute force (calendar_test.cc) is the oracle.

#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/footprint.h"
#include "engine/occupancy.h"
#include "engine/policy.h"
#include "engine/start_rule.h"
#include "engine/step_profile.h"
#include "engine/types.h"

namespace bk::engine {

struct PlacementRequest {
  int count = 1;
  Seconds duration = 0;
  Mode mode = Mode::kShared;
  int share_units = 1;  // 1..share_capacity for shared; ignored for exclusive
  std::optional<int64_t> memory_mb;
  int64_t cpus = 0;  // host budget declaration; 0 when budgets are off
  int64_t ram_mb = 0;
  Seconds start = 0;          // already normalised: on the grid
  bool allow_queue = true;    // false: exactly at start or not at all
  std::vector<int> pinned;    // empty: automatic choice of `count` GPUs
  std::vector<int> excluded;  // never chosen
  // A further rule on the start (the requester's fair-share limits), kept
  // to in the same search; nullptr: none. Must outlive the search.
  const StartRule* rule = nullptr;
};

// Placement preferences from live telemetry and history (service/ computes them).
// All vectors are indexed by GPU; missing entries mean "no preference / unknown".
struct GpuAdvice {
  std::vector<int> order;                               // preference permutation
  std::vector<double> scores;                           // lower is better
  std::vector<std::optional<int64_t>> memory_total_mb;  // enables the VRAM check
};

struct Placement {
  Seconds start = 0;
  Seconds end = 0;
  std::vector<int> gpus;         // pinned: ascending; automatic: preference order
  bool queued = false;           // start later than requested
  std::vector<double> pressure;  // per chosen GPU, percent of capacity already shared out
};

struct NoPlacement {
  std::vector<std::string> reasons;  // up to 3 distinct, at the requested start
  std::optional<Placement> nearest;  // queued search from the requested start
  Seconds search_hours = 0;          // for "no available slot within next N hours"
  // "<reasons joined by '; '>; nearest available: GPU=2,0 <iso> -> <iso>"
  // or "...; no available slot within next 168 hours".
  std::string Message() const;
};

class Calendar {
 public:
  // `active` holds the reservations that count: status active and end > now.
  // Footprints ending at or before `now` are ignored.
  Calendar(const Policy& policy, const std::vector<Footprint>& active, Seconds now);
  // Answers from an occupancy kept elsewhere (the daemon's), which must hold
  // only footprints ending after `now` and outlive this calendar. `except`,
  // when given, is one of them that does not count (the reservation being
  // edited or renewed).
  Calendar(const Policy& policy, const Occupancy& occupancy, Seconds now,
           const std::optional<Footprint>& except = std::nullopt);

  // Earliest legal placement at or after request.start (exactly at it when
  // !allow_queue), within min(start + queue_search, now + horizon), honouring
  // GPU admission (exclusive, shared units, VRAM when capacity is known), host
  // budgets, blackouts, horizon and maximum duration. Among GPUs free at that
  // start, automatic choice sorts by (priority, score + pressure, rank in
  // advice order, index).
  std::expected<Placement, NoPlacement> FindEarliest(const PlacementRequest& request,
                                                     const GpuAdvice& advice) const;

  // Why the request cannot be placed exactly at `start` (empty when it can):
  // the policy conflict, host budget reasons, then GPU reasons (each pinned
  // GPU; automatic: eligible GPUs in preference order, listed only when too
  // few are free), else a generic "GPU(s) unavailable for this time range"
  // (pinned) or "not enough GPUs available for this request".
  std::vector<std::string> Reasons(const PlacementRequest& request, Seconds start,
                                   const GpuAdvice& advice) const;

  // Per-GPU shared VRAM already committed over [start, end) at its peak, and the
  // share-weighted automatic budget for `units` slots on a GPU of `total_mb`.
  int64_t PeakCommittedMemoryMb(int gpu, Seconds start, Seconds end, int64_t total_mb) const;
  int64_t AutomaticMemoryMb(int64_t total_mb, int units) const;

  const Policy& policy() const { return policy_; }
  Seconds now() const { return now_; }

 private:
  using GpuValues = Occupancy::GpuSteps::Values;
  using HostValues = Occupancy::HostSteps::Values;

  void IndexBlackouts();
  int64_t UsableMemoryMb(int64_t total_mb) const;
  // The pieces of [from, to) with what `gpu` / the host holds there, without
  // the excepted footprint: f(a, b, values).
  template <class F>
  void GpuSegments(int gpu, Seconds from, Seconds to, F f) const;
  template <class F>
  void HostSegments(Seconds from, Seconds to, F f) const;
  // Shared VRAM committed on `gpu` over [from, to), for a GPU of `total_mb`.
  StepProfile<1> CommittedMemory(int gpu, int64_t total_mb, Seconds from, Seconds to) const;
  bool Eligible(const PlacementRequest& request, int gpu) const;
  // The GPUs a placement may use: the pinned set ascending, or every eligible
  // GPU in preference order. nullopt when a pinned GPU is not eligible.
  std::optional<std::vector<int>> Candidates(const PlacementRequest& request, const GpuAdvice& advice) const;
  // Where within [from, to) the request cannot hold `gpu` / the host budget.
  std::vector<Interval> GpuBlocked(int gpu, const PlacementRequest& request, const GpuAdvice& advice,
                                   Seconds from, Seconds to) const;
  // GpuBlocked less the GPU's own blackouts: what the bookings on it leave.
  std::vector<Interval> GpuBusy(int gpu, const PlacementRequest& request, const GpuAdvice& advice,
                                Seconds from, Seconds to) const;
  std::vector<Interval> HostBlocked(const PlacementRequest& request, Seconds from, Seconds to) const;
  std::optional<std::string> GpuReason(int gpu, const PlacementRequest& request, Seconds start, Seconds end,
                                       const GpuAdvice& advice) const;
  std::vector<std::string> HostReasons(const PlacementRequest& request, Seconds start, Seconds end) const;
  double Pressure(int gpu, Seconds start, Seconds end) const;
  // The earliest legal placement; `queue` searches the whole window.
  std::optional<Placement> Search(const PlacementRequest& request, const GpuAdvice& advice, bool queue) const;
  // The earliest legal start in [lo, hi] (grid starts), with each candidate's
  // free starts there; nullopt when none.
  std::optional<Seconds> EarliestIn(const PlacementRequest& request, const GpuAdvice& advice,
                                    const std::vector<int>& candidates, int need, Seconds lo, Seconds hi,
                                    std::vector<std::vector<Interval>>& free_starts) const;

  Policy policy_;
  Seconds now_;
  std::shared_ptr<const Occupancy> owned_;  // when built from footprints
  const Occupancy* occupancy_;
  std::optional<Footprint> except_;
  std::vector<int> except_gpus_;                      // the GPUs `except_` claims
  std::vector<Interval> blackouts_;                   // of every GPU, merged
  std::vector<std::vector<Interval>> gpu_blackouts_;  // of one GPU only, merged, by GPU
};

// Message for a conflict of [start, end) with the policy alone (maximum
// duration, horizon, blackouts), or nullopt. Checked in that order. A
// blackout of some GPUs only counts when it closes one of `gpus`.
std::optional<std::string> PolicyConflict(const Policy& policy, Seconds now, Seconds start, Seconds end,
                                          const std::vector<int>& gpus = {});
// The refusal a blackout gives: its window (end included) and reason.
std::string BlackoutMessage(const Blackout& b);

}  // namespace bk::engine
