#pragma once
// Fair-share limits: how much one user, or the members of one Unix group
// together, may hold. Pure, like the rest of the engine: the service gathers
// what each scope holds and passes `now`.
//
// Use is counted in whole slots of the booking grid (a booking released at
// 10:03 on a 5-minute grid holds its GPUs until 10:05), so every figure below
// is exact on the grid and a rolling window's worst case lies on a grid start.

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/start_rule.h"
#include "engine/step_profile.h"
#include "engine/types.h"

namespace bk::engine {

struct Reservation;

// One set of limits; an unset limit does not apply. In a user's own entry,
// kNoLimit lifts a limit that applies to everyone else.
inline constexpr int64_t kNoLimit = int64_t{1} << 60;
struct Limits {
  std::optional<int64_t> max_gpus;           // GPUs held at any instant
  std::optional<int64_t> max_gpu_hours_24h;  // GPU-hours within any 24 hours
  std::optional<int64_t> max_gpu_hours_7d;   // GPU-hours within any 7 days
  std::optional<Seconds> max_duration;       // one booking's length
  std::optional<Seconds> max_horizon;        // a booking ends within now + this
  std::optional<int64_t> max_queued;         // bookings waiting to start

  bool Any() const;
  // These limits with every one that `over` sets in its place (kNoLimit: none).
  Limits With(const Limits& over) const;
  bool operator==(const Limits&) const = default;
};

// The limits of a policy.
struct FairShare {
  Limits user;                           // every user, each alone (the user_* keys)
  std::map<std::string, Limits> users;   // user_limits: by login name, over `user`
  std::map<std::string, Limits> groups;  // group_limits: a group's members together

  bool Any() const;
  // What applies to `username` alone: `user` with their own entry over it.
  Limits ForUser(const std::string& username) const;
  bool operator==(const FairShare&) const = default;
};

enum class LimitKind { kGpus, kGpuHours24h, kGpuHours7d, kDuration, kHorizon, kQueued };
inline constexpr std::size_t kLimitKinds = 6;

// A booking as the limits count it: `gpus` GPUs held over [start, end), on the grid.
struct Holding {
  Seconds start = 0;
  Seconds end = 0;
  int gpus = 0;
  bool operator==(const Holding&) const = default;
};
// What `r` holds: until its end, or until its cancellation when it was
// cancelled after it started; nullopt when it never held anything.
std::optional<Holding> HoldingOf(const Reservation& r, Seconds slot);

// One scope a request counts in: its owner alone, or a group of theirs.
struct LimitScope {
  std::string name;   // in messages: "alice", "group vision"
  std::string group;  // the group whose members count; empty: the user alone
  Limits limits;
  std::array<std::string, kLimitKinds> keys;  // the configuration key each limit came from
  std::vector<Holding> held;                  // without the booking being changed

  // The owner alone under `fs`: user_max_gpus, or user_limits.NAME.max_gpus where set there.
  static LimitScope ForUser(const FairShare& fs, const std::string& username);
  // The members of `group` together under group_limits.GROUP.
  static LimitScope ForGroup(const FairShare& fs, const std::string& group);
};

// One scope's use at `now`, for `bk u` and the metrics.
struct LimitUse {
  int64_t gpus_now = 0;      // GPUs held at `now`
  int64_t peak_gpus = 0;     // the most held at once from `now` on
  double gpu_hours_24h = 0;  // GPU-hours held in the 24 hours before `now`
  double gpu_hours_7d = 0;   // and in the 7 days before it
  int64_t queued = 0;        // bookings waiting to start
};
LimitUse UseOf(const std::vector<Holding>& held, Seconds now);

// The limits of every scope a booking counts in, as a rule on its start (the
// calendar keeps to it) and as the reasons a given booking breaks them.
class LimitRule final : public StartRule {
 public:
  LimitRule(std::vector<LimitScope> scopes, Seconds now, Seconds slot);

  // Grid starts in [lo, hi] at which `gpus` GPUs for `duration` keep every limit.
  std::vector<Interval> Allowed(int gpus, Seconds duration, Seconds lo, Seconds hi) const override;
  std::vector<std::string> Reasons(int gpus, Seconds start, Seconds end) const override;
  // For a booking that already held [start, changed_from) and now asks to
  // run until `end` (a renewal): only what the change adds is checked.
  std::vector<std::string> Reasons(int gpus, Seconds start, Seconds end, Seconds changed_from) const;

  bool empty() const { return scopes_.empty(); }

 private:
  struct Scope {
    LimitScope def;
    StepProfile<1> use;  // GPUs held
    int64_t queued = 0;  // held bookings that start after now
  };
  std::vector<Interval> AllowedIn(const Scope& s, int gpus, Seconds d, Seconds lo, Seconds hi) const;
  // The worst window of `window` seconds touching [from, end), with the booking [start, end) added.
  void WorstWindow(const Scope& s, int gpus, Seconds start, Seconds end, Seconds from, Seconds window,
                   int64_t& used, Seconds& at) const;
  std::vector<std::string> ScopeReasons(const Scope& s, int gpus, Seconds start, Seconds end, Seconds from,
                                        bool is_new) const;

  std::vector<Scope> scopes_;
  Seconds now_;
  Seconds slot_;
};

}  // namespace bk::engine
