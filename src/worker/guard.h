#pragma once
// The live launch guard: just before a managed job
// starts, one fresh sample of its GPUs must show nothing that the monitor would
// flag. It accepts exactly what the monitor's attribution accepts: a process
// of a user who holds a booking on that GPU now, including a root container
// process attributed to that booking holder. Unlike the original, the
// owner's own processes never block an exclusive booking, and the container
// rule is the monitor's own (gpu::Attribute with its eligibility).

#include <string>
#include <vector>

#include "engine/reservation.h"
#include "gpu/procfs.h"
#include "gpu/snapshot.h"

namespace bk::worker {

// CUDA_VISIBLE_DEVICES tokens for `gpus` (reservation order): the UUIDs when
// every GPU has a valid one, else all the indexes; never a mix (1.6).
std::vector<std::string> CudaTokens(const std::vector<int>& gpus, const gpu::Snapshot& snapshot);

// The monitor's verdict on one process of `gpu` (1.8): system | unknown | ok |
// wrong-gpu | unreserved. `active_now` are the reservations active at this
// instant; the process must already be attributed (gpu::Attribute).
std::string ClassifyProcess(const gpu::ProcessSample& p, int gpu,
                            const std::vector<engine::Reservation>& active_now);

struct GuardInput {
  const engine::Reservation* reservation = nullptr;
  gpu::Snapshot snapshot;                   // fresh; attributed in place
  std::vector<engine::Reservation> active;  // every user's reservations (any status)
  engine::Seconds now = 0;
  int64_t reserve_mb = 512;            // shared_memory_reserve_mb
  int share_capacity = 2;              // max_shared_users
  gpu::ContainerEligibility eligible;  // empty: every booking holder
};

struct GuardDecision {
  bool ready = false;
  std::string reason;               // "GPU 1 has unreserved process user=alice pid=4242"
  std::string key;                  // "gpu:1:process:unreserved"
  std::vector<std::string> tokens;  // when ready
};

GuardDecision EvaluateGuard(GuardInput input);

}  // namespace bk::worker
