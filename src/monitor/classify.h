#pragma once
// Which booking, if any, covers a GPU process (after
// gpu::Attribute has resolved container processes):
//   system      display servers and NVIDIA daemons (gpu::IsSystemProcess)
//   unknown     no UID, or a container process of ambiguous owner
//   ok          its user holds a booking active now on this GPU
//   wrong-gpu   its user holds bookings active now, none on this GPU
//   unreserved  its user holds no booking active now

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "engine/types.h"
#include "gpu/procfs.h"
#include "gpu/snapshot.h"

namespace bk::monitor {

// A booking active at the sample time (started, not ended, not cancelled).
struct ActiveBooking {
  std::string id;
  uint32_t uid = 0;
  std::string username;
  std::vector<int> gpus;
  bool exclusive = false;
  int64_t start = 0;  // epoch seconds
  int64_t end = 0;
};

struct Classified {
  std::string status;          // system | unknown | ok | wrong-gpu | unreserved
  std::string reservation_id;  // the covering booking when ok
};

Classified Classify(const gpu::ProcessSample& p, int gpu, std::span<const ActiveBooking> bookings);

// "ok"/"wrong-gpu"/"unreserved" are attributable to a user; the last two are
// use of a GPU without a booking by that user.
inline bool Unbooked(const std::string& status) { return status == "unreserved" || status == "wrong-gpu"; }

// The bookings on `gpu`, as gpu::Attribute wants them.
std::vector<gpu::GpuBooking> BookingsOn(int gpu, std::span<const ActiveBooking> bookings);

}  // namespace bk::monitor
