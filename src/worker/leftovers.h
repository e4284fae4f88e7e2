#pragma once
// What a job leaves behind once its own process group is gone: processes that
// left the group (setsid, a double fork) but still carry the booking's exact
// BK_RESERVATION_ID, belong to the same user and descend from this supervisor
// (FindMarkedDescendants, the scan crash recovery uses). They would otherwise
// run on unsupervised, past the booking. They are stopped like the job itself:
// SIGTERM, then SIGKILL after the grace, one non-blocking step at a time so the
// supervisor's loop keeps following its other work.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <set>
#include <string>

namespace bk::worker {

class LeftoverSweep {
 public:
  // An empty `reservation_id` (a run on several bookings has no single marker)
  // finds nothing.
  LeftoverSweep(std::string reservation_id, uid_t uid, std::chrono::milliseconds grace);

  // Looks once and signals what is due. True once nothing is left, or when
  // what is left outlived SIGKILL by a second (`stuck()` then says so).
  bool Step();
  bool stuck() const { return stuck_; }

 private:
  using Clock = std::chrono::steady_clock;

  std::string reservation_id_;
  uid_t uid_;
  std::chrono::milliseconds grace_;
  std::optional<Clock::time_point> term_at_, kill_at_;
  std::set<int> termed_;  // groups already sent SIGTERM
  bool stuck_ = false;
};

}  // namespace bk::worker
