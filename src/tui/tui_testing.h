#pragma once
// Reservations for the TUI's unit tests, built in one line each.

#include <string>
#include <vector>

#include "engine/reservation.h"

namespace bk::tui {

inline engine::Reservation Booking(std::string id, uint32_t uid, std::string user, std::vector<int> gpus,
                                   engine::Seconds start, engine::Seconds end,
                                   engine::Mode mode = engine::Mode::kShared, int units = 1) {
  engine::Reservation r;
  r.id = std::move(id);
  r.uid = uid;
  r.username = std::move(user);
  r.gpus = std::move(gpus);
  r.start = start;
  r.end = end;
  r.mode = mode;
  r.share_units = units;
  return r;
}

}  // namespace bk::tui
