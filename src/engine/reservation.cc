#include "engine/reservation.h"

namespace bk::engine {

std::string_view StatusName(Status s) {
  switch (s) {
    case Status::kActive: return "active";
    case Status::kCancelled: return "cancelled";
    case Status::kExpired: return "expired";
  }
  return "active";
}

std::optional<Status> ParseStatus(std::string_view s) {
  if (s == "active") return Status::kActive;
  if (s == "cancelled") return Status::kCancelled;
  if (s == "expired") return Status::kExpired;
  return std::nullopt;
}

Footprint Reservation::ToFootprint() const {
  return Footprint{gpus, mode, share_units, memory_mb, cpus, ram_mb, start, end};
}

}  // namespace bk::engine
