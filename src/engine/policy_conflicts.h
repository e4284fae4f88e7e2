#pragma once
// Which existing bookings a policy would not have admitted: what an
// administrator is shown before changing the policy of a running server.

#include <string>
#include <vector>

#include "engine/policy.h"
#include "engine/reservation.h"

namespace bk::engine {

struct BookingConflict {
  size_t index = 0;  // into the reservations given
  std::string kind;  // disabled | duration | horizon | slots | vram | capacity | "blackout " + window
  std::string why;   // one phrase, e.g. "GPU 2 is disabled"
};

// The conflicts of `active` (reservations that run on after `now`) with
// `policy`, in the order of `active`; a booking may have several.
std::vector<BookingConflict> ConflictsWith(const Policy& policy, const std::vector<Reservation>& active,
                                           Seconds now);

// Those of `next` that `running` did not have (same booking, same kind):
// what a change from `running` to `next` makes illegal.
std::vector<BookingConflict> NewConflicts(const Policy& running, const Policy& next,
                                          const std::vector<Reservation>& active, Seconds now);

}  // namespace bk::engine
