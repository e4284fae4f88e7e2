#include "worker/leftovers.h"

#include <signal.h>
#include <unistd.h>

#include "worker/procs.h"

namespace bk::worker {

LeftoverSweep::LeftoverSweep(std::string reservation_id, uid_t uid, std::chrono::milliseconds grace)
    : reservation_id_(std::move(reservation_id)), uid_(uid), grace_(grace) {}

bool LeftoverSweep::Step() {
  if (reservation_id_.empty()) return true;
  auto groups = FindMarkedDescendants(reservation_id_, uid_, getpid());
  if (groups.empty()) return true;
  auto now = Clock::now();
  if (!term_at_) term_at_ = now;
  if (!kill_at_ && now - *term_at_ >= grace_) kill_at_ = now;
  if (kill_at_ && now - *kill_at_ >= std::chrono::seconds(1)) {
    stuck_ = true;
    return true;
  }
  for (const auto& [pgid, pid] : groups) {
    // A group that appears during the grace (a fork answering SIGTERM) gets its
    // own SIGTERM; after the grace everything left gets SIGKILL, each step.
    if (kill_at_)
      SignalGroup(pgid, SIGKILL, uid_);
    else if (termed_.insert(pgid).second)
      SignalGroup(pgid, SIGTERM, uid_);
  }
  return false;
}

}  // namespace bk::worker
