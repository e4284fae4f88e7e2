#include "engine/calendar.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "base/strings.h"
#include "engine/parse.h"

namespace bk::engine {
namespace {

std::optional<int64_t> MemoryTotal(const GpuAdvice& advice, int gpu) {
  if (gpu < 0 || static_cast<std::size_t>(gpu) >= advice.memory_total_mb.size()) return std::nullopt;
  const auto& total = advice.memory_total_mb[static_cast<std::size_t>(gpu)];
  if (!total || *total <= 0) return std::nullopt;  // unknown: the VRAM check is off
  return total;
}

double Score(const GpuAdvice& advice, int gpu) {
  if (gpu < 0 || static_cast<std::size_t>(gpu) >= advice.scores.size()) return 0.0;
  return advice.scores[static_cast<std::size_t>(gpu)];
}

// Round to 3 decimals, as the upstream pressure figure is.
double Round3(double x) { return std::round(x * 1000.0) / 1000.0; }

template <class T>
bool Contains(const std::vector<T>& v, const T& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

std::vector<int> SortedUnique(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// An explicit declaration of 0 means "none" upstream (`expected or inferred`).
bool HasExplicitMemory(const std::optional<int64_t>& mb) { return mb.has_value() && *mb != 0; }

}  // namespace

std::string NoPlacement::Message() const {
  std::string out = Join(reasons, "; ");
  if (!out.empty()) out += "; ";
  if (nearest) {
    out += fmt::format("nearest available: GPU={} {} -> {}", JoinInts(nearest->gpus, ","),
                       FormatIsoUtc(nearest->start), FormatIsoUtc(nearest->end));
  } else {
    out += fmt::format("no available slot within next {} hours", search_hours);
  }
  return out;
}

std::optional<std::string> PolicyConflict(const Policy& policy, Seconds now, Seconds start, Seconds end) {
  if (end - start > policy.max_duration) {
    return fmt::format("reservation duration exceeds the administrator maximum of {} hours",
                       policy.max_duration / kHour);
  }
  if (end > now + policy.horizon) {
    return fmt::format("reservation ends beyond the {}-day booking horizon ({})", policy.horizon / kDay,
                       FormatIsoUtc(now + policy.horizon));
  }
  for (const Blackout& b : policy.blackouts) {
    if (start < b.end && end > b.start) {
      return fmt::format("administrator blackout {} -> {}: {}", FormatIsoUtc(b.start), FormatIsoUtc(b.end),
                         b.reason);
    }
  }
  return std::nullopt;
}

Calendar::Calendar(const Policy& policy, std::vector<Footprint> active, Seconds now)
    : policy_(policy), now_(now), active_(std::move(active)) {
  std::erase_if(active_, [now](const Footprint& f) { return f.end <= now; });
  Index();
}

void Calendar::Index() {
  const auto gpu_count = static_cast<std::size_t>(std::max(0, policy_.gpu_count));
  gpu_steps_.assign(gpu_count, {});
  gpu_memory_.assign(gpu_count, {});
  const bool budgets = policy_.BudgetsOn();
  for (const Footprint& f : active_) {
    if (f.start >= f.end) continue;
    if (budgets) host_steps_.Add(f.start, f.end, {f.cpus, f.ram_mb});
    const bool exclusive = f.mode == Mode::kExclusive;
    for (std::size_t i = 0; i < f.gpus.size(); ++i) {
      const int g = f.gpus[i];
      if (g < 0 || static_cast<std::size_t>(g) >= gpu_count) continue;  // GPU no longer configured
      // A GPU listed twice is still one claim (lists are tiny: quadratic is fine).
      if (std::find(f.gpus.begin(), f.gpus.begin() + static_cast<std::ptrdiff_t>(i), g) !=
          f.gpus.begin() + static_cast<std::ptrdiff_t>(i)) {
        continue;
      }
      const auto gi = static_cast<std::size_t>(g);
      gpu_steps_[gi].Add(f.start, f.end, {exclusive ? 0 : f.share_units, 1, exclusive ? 1 : 0});
      if (!exclusive) {
        const int64_t mb = HasExplicitMemory(f.memory_mb) ? *f.memory_mb : 0;
        gpu_memory_[gi].push_back({f.start, +1, f.share_units, mb});
        gpu_memory_[gi].push_back({f.end, -1, f.share_units, mb});
      }
    }
  }
  for (auto& steps : gpu_steps_) steps.Build();
  for (auto& deltas : gpu_memory_) {
    std::sort(deltas.begin(), deltas.end(),
              [](const MemoryDelta& a, const MemoryDelta& b) { return a.at < b.at; });
  }
  if (budgets) host_steps_.Build();

  std::vector<Interval> blackouts;
  for (const Blackout& b : policy_.blackouts)
    if (b.start < b.end) blackouts.push_back({b.start, b.end});
  std::sort(blackouts.begin(), blackouts.end(),
            [](const Interval& a, const Interval& b) { return a.start < b.start; });
  blackouts_ = UnionOf(blackouts, {});
}

int64_t Calendar::UsableMemoryMb(int64_t total_mb) const { return policy_.UsableMemoryMb(total_mb); }

int64_t Calendar::AutomaticMemoryMb(int64_t total_mb, int units) const {
  return policy_.AutomaticMemoryMb(total_mb, units);
}

StepProfile<1> Calendar::CommittedMemory(int gpu, int64_t total_mb) const {
  StepProfile<1> committed;
  if (gpu < 0 || static_cast<std::size_t>(gpu) >= gpu_memory_.size()) return committed;
  for (const MemoryDelta& d : gpu_memory_[static_cast<std::size_t>(gpu)]) {
    const int64_t mb =
        d.explicit_mb != 0 ? std::max<int64_t>(1, d.explicit_mb) : AutomaticMemoryMb(total_mb, d.units);
    committed.AddDelta(d.at, {d.sign * mb});
  }
  committed.Build(/*sorted=*/true);
  return committed;
}

int64_t Calendar::PeakCommittedMemoryMb(int gpu, Seconds start, Seconds end, int64_t total_mb) const {
  return CommittedMemory(gpu, total_mb).Peak(start, end)[0];
}

bool Calendar::Eligible(const PlacementRequest& request, int gpu) const {
  return policy_.GpuEnabled(gpu) && !Contains(request.excluded, gpu);
}

std::optional<std::vector<int>> Calendar::Candidates(const PlacementRequest& request,
                                                     const GpuAdvice& advice) const {
  if (!request.pinned.empty()) {
    std::vector<int> pinned = SortedUnique(request.pinned);
    for (int g : pinned)
      if (!Eligible(request, g)) return std::nullopt;  // never substituted
    return pinned;
  }
  // The advice order (valid, first occurrence) then the rest by index.
  std::vector<int> order;
  std::vector<bool> listed(static_cast<std::size_t>(std::max(0, policy_.gpu_count)), false);
  auto take = [&](int g) {
    if (!Eligible(request, g) || listed[static_cast<std::size_t>(g)]) return;
    listed[static_cast<std::size_t>(g)] = true;
    order.push_back(g);
  };
  for (int g : advice.order) take(g);
  for (int g = 0; g < policy_.gpu_count; ++g) take(g);
  return order;
}

std::vector<Interval> Calendar::GpuBlocked(int gpu, const PlacementRequest& request, const GpuAdvice& advice,
                                           Seconds from, Seconds to) const {
  const StepProfile<3>& steps = gpu_steps_[static_cast<std::size_t>(gpu)];
  if (request.mode == Mode::kExclusive) {
    return steps.Blocked([](const StepProfile<3>::Values& v) { return v[kHolders] > 0; }, from, to);
  }
  const int64_t units = request.share_units;
  const int64_t capacity = policy_.share_capacity;
  auto blocked = steps.Blocked(
      [&](const StepProfile<3>::Values& v) { return v[kExclusive] > 0 || v[kUnits] + units > capacity; },
      from, to);
  const std::optional<int64_t> total = MemoryTotal(advice, gpu);
  if (!total) return blocked;
  const int64_t usable = UsableMemoryMb(*total);
  const int64_t requested = HasExplicitMemory(request.memory_mb)
                                ? *request.memory_mb
                                : AutomaticMemoryMb(*total, request.share_units);
  auto full = [&](const StepProfile<1>::Values& v) {
    return requested > usable || v[0] + requested > usable;
  };
  return UnionOf(blocked, CommittedMemory(gpu, *total).Blocked(full, from, to));
}

std::vector<Interval> Calendar::HostBlocked(const PlacementRequest& request, Seconds from, Seconds to) const {
  const auto& cpus = policy_.host_cpus;
  const auto& ram = policy_.host_ram_mb;
  return host_steps_.Blocked(
      [&](const StepProfile<2>::Values& v) {
        return (cpus && v[kCpus] + request.cpus > *cpus) || (ram && v[kRamMb] + request.ram_mb > *ram);
      },
      from, to);
}

double Calendar::Pressure(int gpu, Seconds start, Seconds end) const {
  // Unit-seconds already shared out over the window, in percent of full capacity.
  const int64_t unit_seconds = gpu_steps_[static_cast<std::size_t>(gpu)].Integral(start, end);
  const double duration = static_cast<double>(std::max<Seconds>(1, end - start));
  return Round3(100.0 * static_cast<double>(unit_seconds) / duration /
                static_cast<double>(std::max(1, policy_.share_capacity)));
}

std::optional<Placement> Calendar::Search(const PlacementRequest& request, const GpuAdvice& advice,
                                          bool queue) const {
  const Seconds d = request.duration;
  const Seconds lo = request.start;
  Seconds hi = queue ? std::min(lo + policy_.queue_search, now_ + policy_.horizon) : lo;
  hi = std::min(hi, now_ + policy_.horizon - d);  // the end must stay within the horizon
  const StartGrid grid(lo, hi, policy_.slot);
  if (grid.empty()) return std::nullopt;
  const std::optional<std::vector<int>> candidates = Candidates(request, advice);
  if (!candidates) return std::nullopt;
  const bool pinned = !request.pinned.empty();
  const int need = pinned ? static_cast<int>(candidates->size()) : request.count;
  if (need > static_cast<int>(candidates->size())) return std::nullopt;

  // Everything a start must avoid lies within [lo, hi + d).
  const Seconds to = hi + d;
  std::vector<Interval> legal = grid.FreeStarts(blackouts_, d);
  if (policy_.BudgetsOn()) legal = IntersectionOf(legal, grid.FreeStarts(HostBlocked(request, lo, to), d));
  if (legal.empty()) return std::nullopt;

  std::vector<std::vector<Interval>> free_starts;
  free_starts.reserve(candidates->size());
  for (int g : *candidates) free_starts.push_back(grid.FreeStarts(GpuBlocked(g, request, advice, lo, to), d));
  legal = IntersectionOf(legal, CoveredAtLeast(free_starts, need));
  if (legal.empty()) return std::nullopt;

  Placement placement;
  placement.start = legal.front().start;
  placement.end = placement.start + d;
  placement.queued = placement.start > request.start;
  if (pinned) {
    placement.gpus = *candidates;
  } else {
    // Time came first; among GPUs free at that start, prefer by
    // (priority, score + pressure, rank in order, index).
    using Key = std::tuple<int, double, std::size_t, int>;
    std::vector<Key> keys;
    for (std::size_t rank = 0; rank < candidates->size(); ++rank) {
      if (!SetContains(free_starts[rank], placement.start)) continue;
      const int g = (*candidates)[rank];
      keys.emplace_back(policy_.Priority(g), Score(advice, g) + Pressure(g, placement.start, placement.end),
                        rank, g);
    }
    std::sort(keys.begin(), keys.end());
    for (int i = 0; i < need; ++i) placement.gpus.push_back(std::get<3>(keys[static_cast<std::size_t>(i)]));
  }
  for (int g : placement.gpus) placement.pressure.push_back(Pressure(g, placement.start, placement.end));
  return placement;
}

std::expected<Placement, NoPlacement> Calendar::FindEarliest(const PlacementRequest& request,
                                                             const GpuAdvice& advice) const {
  NoPlacement failure;
  failure.search_hours = policy_.queue_search / kHour;
  if (request.duration > policy_.max_duration) {
    failure.reasons.push_back(fmt::format(
        "reservation duration exceeds the administrator maximum of {} hours", policy_.max_duration / kHour));
    return std::unexpected(std::move(failure));
  }
  if (request.duration <= 0) {
    failure.reasons.push_back("duration must be positive");
    return std::unexpected(std::move(failure));
  }
  if (auto placement = Search(request, advice, request.allow_queue)) return *std::move(placement);

  for (std::string& reason : Reasons(request, request.start, advice)) {
    if (failure.reasons.size() == 3) break;
    if (!Contains(failure.reasons, reason)) failure.reasons.push_back(std::move(reason));
  }
  if (failure.reasons.empty()) failure.reasons.push_back("not enough GPUs available for this request");
  // The hint costs a second, queued search; a queued failure has none to offer.
  if (!request.allow_queue) failure.nearest = Search(request, advice, /*queue=*/true);
  return std::unexpected(std::move(failure));
}

std::optional<std::string> Calendar::GpuReason(int gpu, const PlacementRequest& request, Seconds start,
                                               Seconds end, const GpuAdvice& advice) const {
  if (gpu < 0 || static_cast<std::size_t>(gpu) >= gpu_steps_.size()) return std::nullopt;
  const auto peak = gpu_steps_[static_cast<std::size_t>(gpu)].Peak(start, end);
  if (peak[kExclusive] > 0) return fmt::format("exclusive conflict on GPU {}", gpu);
  if (request.mode == Mode::kExclusive) {
    if (peak[kHolders] > 0) return fmt::format("GPU {} already has shared reservations", gpu);
    return std::nullopt;
  }
  const int64_t u = request.share_units;
  const int64_t capacity = policy_.share_capacity;
  if (peak[kUnits] + u > capacity) {
    return fmt::format(
        "shared capacity full on GPU {} (request {} slot(s), currently used {}, projected {}, maximum {})",
        gpu, u, peak[kUnits], peak[kUnits] + u, capacity);
  }
  const std::optional<int64_t> total = MemoryTotal(advice, gpu);
  if (!total) return std::nullopt;
  const int64_t usable = UsableMemoryMb(*total);
  const int64_t requested = HasExplicitMemory(request.memory_mb)
                                ? *request.memory_mb
                                : AutomaticMemoryMb(*total, request.share_units);
  const int64_t projected = PeakCommittedMemoryMb(gpu, start, end, *total) + requested;
  if (requested > usable || projected > usable) {
    return fmt::format("shared memory full on GPU {} (need {} MiB, projected {}/{} MiB)", gpu, requested,
                       projected, usable);
  }
  return std::nullopt;
}

std::vector<std::string> Calendar::HostReasons(const PlacementRequest& request, Seconds start,
                                               Seconds end) const {
  std::vector<std::string> out;
  if (!policy_.BudgetsOn()) return out;
  const auto peak = host_steps_.Peak(start, end);
  if (policy_.host_cpus && peak[kCpus] + request.cpus > *policy_.host_cpus) {
    out.push_back(fmt::format("host CPU budget full (request {} CPUs, already declared {} of {})",
                              request.cpus, peak[kCpus], *policy_.host_cpus));
  }
  if (policy_.host_ram_mb && peak[kRamMb] + request.ram_mb > *policy_.host_ram_mb) {
    out.push_back(fmt::format("host RAM budget full (request {}, already declared {} of {})",
                              FormatSizeMb(request.ram_mb), FormatSizeMb(peak[kRamMb]),
                              FormatSizeMb(*policy_.host_ram_mb)));
  }
  return out;
}

std::vector<std::string> Calendar::Reasons(const PlacementRequest& request, Seconds start,
                                           const GpuAdvice& advice) const {
  const Seconds end = start + request.duration;
  std::vector<std::string> out;
  if (auto conflict = PolicyConflict(policy_, now_, start, end)) out.push_back(*std::move(conflict));
  for (std::string& reason : HostReasons(request, start, end)) out.push_back(std::move(reason));

  const std::optional<std::vector<int>> candidates = Candidates(request, advice);
  std::vector<std::string> gpu_reasons;
  bool gpus_fit = candidates.has_value();
  if (!request.pinned.empty()) {
    for (int g : SortedUnique(request.pinned)) {
      if (auto reason = GpuReason(g, request, start, end, advice)) {
        gpu_reasons.push_back(*std::move(reason));
        gpus_fit = false;
      }
    }
  } else {
    int free = 0;
    for (int g : *candidates) {
      if (auto reason = GpuReason(g, request, start, end, advice)) {
        gpu_reasons.push_back(*std::move(reason));
      } else {
        ++free;
      }
    }
    gpus_fit = free >= request.count;
  }
  if (out.empty() && gpus_fit) return {};
  // Busy GPUs are no reason when enough others are free.
  if (!gpus_fit) {
    for (std::string& reason : gpu_reasons) out.push_back(std::move(reason));
  }
  // Nothing specific to say: a pinned GPU is disabled or excluded, or too few GPUs are eligible.
  if (out.empty()) {
    out.push_back(request.pinned.empty() ? "not enough GPUs available for this request"
                                         : "GPU(s) unavailable for this time range");
  }
  return out;
}

}  // namespace bk::engine
