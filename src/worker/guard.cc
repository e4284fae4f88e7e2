#include "worker/guard.h"

#include <fmt/format.h>

#include <algorithm>

namespace bk::worker {
namespace {

using engine::Reservation;

std::vector<Reservation> ActiveAt(const std::vector<Reservation>& all, engine::Seconds now) {
  std::vector<Reservation> out;
  for (const auto& r : all)
    if (r.ActiveAt(now) && r.start <= now) out.push_back(r);
  return out;
}

bool Holds(const Reservation& r, int gpu) {
  return std::find(r.gpus.begin(), r.gpus.end(), gpu) != r.gpus.end();
}

std::string Who(const gpu::ProcessSample& p) {
  if (p.identity_source == "container-ambiguous") return "container?";
  if (!p.uid) return "unknown";
  return p.username.empty() || p.username == "?" ? std::to_string(*p.uid) : p.username;
}

GuardDecision Blocked(const std::string& reason, const std::string& key) {
  return GuardDecision{false, std::move(reason), std::move(key), {}};
}

}  // namespace

std::vector<std::string> CudaTokens(const std::vector<int>& gpus, const gpu::Snapshot& snapshot) {
  std::vector<std::string> uuids, indexes;
  bool all = true;
  for (int g : gpus) {
    indexes.push_back(std::to_string(g));
    const gpu::DeviceSample* d = nullptr;
    for (const auto& dev : snapshot.devices)
      if (dev.index == g) d = &dev;
    if (d && gpu::IsValidDeviceUuid(d->uuid))
      uuids.push_back(d->uuid);
    else
      all = false;
  }
  return all && !gpus.empty() ? uuids : indexes;
}

std::string ClassifyProcess(const gpu::ProcessSample& p, int gpu,
                            const std::vector<Reservation>& active_now) {
  if (gpu::IsSystemProcess(p.command)) return "system";
  if (!p.uid || p.identity_source == "container-ambiguous") return "unknown";
  bool elsewhere = false;
  for (const auto& r : active_now) {
    if (r.uid != *p.uid) continue;
    if (Holds(r, gpu)) return "ok";
    elsewhere = true;
  }
  return elsewhere ? "wrong-gpu" : "unreserved";
}

GuardDecision EvaluateGuard(GuardInput in) {
  const Reservation& r = *in.reservation;
  if (r.gpus.empty()) return Blocked("reservation has no GPU assignment", "invalid-assignment");
  std::vector<Reservation> now_active = ActiveAt(in.active, in.now);
  for (int g : r.gpus) {
    gpu::DeviceSample* d = nullptr;
    for (auto& dev : in.snapshot.devices)
      if (dev.index == g) d = &dev;
    gpu::LiveState live;
    if (d) live = gpu::ClassifyLive(*d);
    if (!d || d->source == gpu::Source::kNone || live.status == gpu::LiveStatus::kUnknown ||
        !in.snapshot.ok())
      return Blocked(fmt::format("GPU {} live telemetry is unavailable", g),
                     fmt::format("gpu:{}:telemetry", g));
    if (!d->process_telemetry)
      return Blocked(fmt::format("GPU {} process telemetry is unavailable", g),
                     fmt::format("gpu:{}:process-telemetry", g));
    if (d->source == gpu::Source::kNvml && !gpu::IsValidDeviceUuid(d->uuid))
      return Blocked(fmt::format("GPU {} stable identifier is unavailable", g),
                     fmt::format("gpu:{}:stable-identifier", g));
    // The same container attribution the monitor applies, for this GPU's holders.
    std::vector<gpu::GpuBooking> holders;
    for (const auto& a : now_active)
      if (Holds(a, g)) holders.push_back({a.uid, a.username, a.id});
    gpu::Attribute(d->processes, holders, in.eligible);
    struct Flag {
      int rank;
      std::string status;
      const gpu::ProcessSample* p;
    };
    std::vector<Flag> flags;
    int others = 0;
    for (const auto& p : d->processes) {
      std::string status = ClassifyProcess(p, g, now_active);
      if (status == "system") continue;
      ++others;
      if (status == "ok") continue;
      flags.push_back({status == "unknown" ? 1 : 0, status, &p});
    }
    if (!flags.empty()) {
      // Violations first, then by user and pid, as the monitor orders rows.
      std::sort(flags.begin(), flags.end(), [](const Flag& a, const Flag& b) {
        return std::tie(a.rank, a.p->username, a.p->pid) < std::tie(b.rank, b.p->username, b.p->pid);
      });
      const Flag& f = flags.front();
      return Blocked(fmt::format("GPU {} has {} process user={} pid={}", g, f.status, Who(*f.p), f.p->pid),
                     fmt::format("gpu:{}:process:{}", g, f.status));
    }
    int64_t total = d->memory_total_mb.value_or(0);
    std::optional<int64_t> required;
    if (r.memory_mb && *r.memory_mb > 0)
      required = *r.memory_mb;
    else if (r.mode == engine::Mode::kShared && total > 0)
      required =
          std::max<int64_t>(1, (total - in.reserve_mb) * r.share_units / std::max(1, in.share_capacity));
    bool needs_capacity = required.has_value() || r.mode == engine::Mode::kShared;
    if (needs_capacity && total <= 0)
      return Blocked(fmt::format("GPU {} memory capacity is unavailable", g),
                     fmt::format("gpu:{}:memory-capacity", g));
    if (required) {
      int64_t headroom = std::max<int64_t>(0, total - d->memory_used_mb.value_or(0) - in.reserve_mb);
      if (headroom < *required)
        return Blocked(
            fmt::format("GPU {} has {}MiB launch headroom; {}MiB is required", g, headroom, *required),
            fmt::format("gpu:{}:vram", g));
    }
    if (live.status == gpu::LiveStatus::kBusy && others == 0)
      return Blocked(
          fmt::format(
              "GPU {} is busy: {}", g,
              live.reason.empty() ? "activity is present but process ownership is unavailable" : live.reason),
          fmt::format("gpu:{}:busy", g));
  }
  GuardDecision ok;
  ok.ready = true;
  ok.tokens = CudaTokens(r.gpus, in.snapshot);
  return ok;
}

}  // namespace bk::worker
