#pragma once
// A stored reservation: the calendar footprint plus ownership, lifecycle and
// the operation that created it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/enum_names.h"
#include "engine/calendar.h"
#include "engine/types.h"

namespace bk::engine {

enum class Status { kActive, kCancelled, kExpired };
// The names stored in the ledger and sent on the socket.
inline constexpr auto kStatusNames =
    MakeEnumNames<Status>(std::pair{Status::kActive, std::string_view("active")},
                          std::pair{Status::kCancelled, std::string_view("cancelled")},
                          std::pair{Status::kExpired, std::string_view("expired")});
inline std::string_view StatusName(Status s) { return kStatusNames.Name(s); }
inline std::optional<Status> ParseStatus(std::string_view s) { return kStatusNames.Parse(s); }

// Who ended a reservation early: its owner, an administrator, the monitor
// reclaiming a no-show, or the end of the job it was booked for (released).
enum class CancelKind { kOwner, kAdministrator, kReclaimed, kReleased };
// The names stored in the ledger and shown in documents.
inline constexpr auto kCancelKindNames =
    MakeEnumNames<CancelKind>(std::pair{CancelKind::kOwner, std::string_view("owner")},
                              std::pair{CancelKind::kAdministrator, std::string_view("administrator")},
                              std::pair{CancelKind::kReclaimed, std::string_view("reclaimed")},
                              std::pair{CancelKind::kReleased, std::string_view("released")});
constexpr const auto& EnumNamesOf(CancelKind) { return kCancelKindNames; }

struct Cancellation {
  Seconds at = 0;
  CancelKind kind = CancelKind::kOwner;
  std::string reason;
  uint32_t actor_uid = 0;
  std::string actor_username;
  std::string op_id;
};

struct Reservation {
  std::string id;  // UUID
  uint32_t uid = 0;
  std::string username;
  std::vector<int> gpus;  // placement order
  Mode mode = Mode::kShared;
  int share_units = 1;               // shared only
  std::optional<int64_t> memory_mb;  // declared VRAM per GPU
  int64_t cpus = 0;                  // host budget declaration, 0 when none
  int64_t ram_mb = 0;
  Seconds start = 0;
  Seconds end = 0;
  Status status = Status::kActive;  // as stored; see StatusAt
  Seconds created_at = 0;
  Seconds updated_at = 0;
  std::string op_id;         // create operation
  std::string op_signature;  // fingerprint of the create request when the client named the op-id
  int edit_count = 0;
  std::optional<Cancellation> cancellation;

  std::string ShortId() const { return id.substr(0, 8); }
  // Expiry is derived: an active reservation whose end has passed is expired.
  Status StatusAt(Seconds now) const {
    return status == Status::kActive && end <= now ? Status::kExpired : status;
  }
  bool ActiveAt(Seconds now) const { return StatusAt(now) == Status::kActive; }
  bool Started(Seconds now) const { return start <= now; }
  Footprint ToFootprint() const;
};

// The most shared slots the bookings in `overlapping` (each overlapping one
// cell of a timeline that starts at `from`) hold at any instant of it. Use
// only rises where a booking starts, so the cell's start and the starts
// inside it are the instants to look at. `bk tl` and `bk t` draw it.
int PeakShareUnits(const std::vector<const Reservation*>& overlapping, Seconds from);

}  // namespace bk::engine
