#include "monitor/classify.h"

#include <algorithm>

namespace bk::monitor {

namespace {
bool OnGpu(const ActiveBooking& b, int gpu) {
  return std::find(b.gpus.begin(), b.gpus.end(), gpu) != b.gpus.end();
}
}  // namespace

Classified Classify(const gpu::ProcessSample& p, int gpu, std::span<const ActiveBooking> bookings) {
  if (gpu::IsSystemProcess(p.command)) return {"system", ""};
  if (!p.uid || p.identity_source == "container-ambiguous") return {"unknown", ""};
  bool any = false;
  for (const ActiveBooking& b : bookings) {
    if (b.uid != *p.uid) continue;
    if (OnGpu(b, gpu)) return {"ok", b.id};
    any = true;
  }
  return {any ? "wrong-gpu" : "unreserved", ""};
}

std::vector<gpu::GpuBooking> BookingsOn(int gpu, std::span<const ActiveBooking> bookings) {
  std::vector<gpu::GpuBooking> out;
  for (const ActiveBooking& b : bookings)
    if (OnGpu(b, gpu)) out.push_back({b.uid, b.username, b.id});
  return out;
}

}  // namespace bk::monitor
