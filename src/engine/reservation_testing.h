#pragma once
// For tests: two reservations compared member by member.

#include <gtest/gtest.h>

#include "base/members_testing.h"
#include "engine/reservation.h"

namespace bk::engine {

// Every member of a and b, the cancellation's too, is equal.
inline void ExpectSameReservation(const Reservation& a, const Reservation& b) {
  using R = Reservation;
  ExpectSameMembers(a, b, &R::id, &R::uid, &R::username, &R::gpus, &R::mode, &R::share_units, &R::memory_mb,
                    &R::cpus, &R::ram_mb, &R::start, &R::end, &R::status, &R::created_at, &R::updated_at,
                    &R::op_id, &R::op_signature, &R::edit_count);
  ASSERT_EQ(a.cancellation.has_value(), b.cancellation.has_value());
  using K = Cancellation;
  if (a.cancellation)
    ExpectSameMembers(*a.cancellation, *b.cancellation, &K::at, &K::kind, &K::reason, &K::actor_uid,
                      &K::actor_username, &K::op_id);
}

}  // namespace bk::engine
