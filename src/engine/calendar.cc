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

// How many GPUs a request holds, as a start rule counts them.
int RuleGpus(const PlacementRequest& request) {
  return request.pinned.empty() ? request.count : static_cast<int>(SortedUnique(request.pinned).size());
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

std::string BlackoutMessage(const Blackout& b) {
  std::string where = b.gpus.empty() ? "" : fmt::format(" on GPU {}", JoinInts(b.gpus, ","));
  return fmt::format("administrator blackout{} {} -> {}: {}", where, FormatIsoUtc(b.start),
                     FormatIsoUtc(b.end), b.reason);
}

std::optional<std::string> PolicyConflict(const Policy& policy, Seconds now, Seconds start, Seconds end,
                                          const std::vector<int>& gpus) {
  if (end - start > policy.max_duration) {
    return fmt::format("reservation duration exceeds the administrator maximum of {} hours",
                       policy.max_duration / kHour);
  }
  if (end > now + policy.horizon) {
    return fmt::format("reservation ends beyond the {}-day booking horizon ({})", policy.horizon / kDay,
                       FormatIsoUtc(now + policy.horizon));
  }
  for (const Blackout& b : policy.blackouts) {
    if (start >= b.end || end <= b.start) continue;
    if (b.gpus.empty() || std::any_of(gpus.begin(), gpus.end(), [&](int g) { return b.Covers(g); }))
      return BlackoutMessage(b);
  }
  return std::nullopt;
}

Calendar::Calendar(const Policy& policy, const std::vector<Footprint>& active, Seconds now)
    : policy_(policy), now_(now) {
  std::vector<Footprint> counted;
  counted.reserve(active.size());
  for (const Footprint& f : active)
    if (f.end > now) counted.push_back(f);
  owned_ = std::make_shared<const Occupancy>(policy_.gpu_count, policy_.BudgetsOn(), counted);
  occupancy_ = owned_.get();
  IndexBlackouts();
}

Calendar::Calendar(const Policy& policy, const Occupancy& occupancy, Seconds now,
                   const std::optional<Footprint>& except)
    : policy_(policy), now_(now), occupancy_(&occupancy), except_(except) {
  if (except_ && except_->start < except_->end) except_gpus_ = ClaimedGpus(*except_, occupancy.gpu_count());
  IndexBlackouts();
}

void Calendar::IndexBlackouts() {
  auto merged = [](std::vector<Interval> v) {
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
    return UnionOf(v, {});
  };
  std::vector<Interval> all;
  std::vector<std::vector<Interval>> by_gpu(std::max(0, occupancy_->gpu_count()));
  for (const Blackout& b : policy_.blackouts) {
    if (b.start >= b.end) continue;
    if (b.gpus.empty()) all.push_back({b.start, b.end});
    for (int g : b.gpus)
      if (g >= 0 && g < static_cast<int>(by_gpu.size())) by_gpu[g].push_back({b.start, b.end});
  }
  blackouts_ = merged(std::move(all));
  gpu_blackouts_.clear();
  for (auto& v : by_gpu) gpu_blackouts_.push_back(merged(std::move(v)));
}

namespace {

// Walks `steps` over [from, to) as f(a, b, values), less `minus` over `cut`
// (the excepted footprint's share) when there is one.
template <class Steps, class F>
void WalkWithout(const Steps& steps, Seconds from, Seconds to, const Interval* cut,
                 const typename Steps::Values& minus, F f) {
  steps.ForEachSegment(from, to, [&](Seconds a, Seconds b, const typename Steps::Values& v) {
    if (!cut || b <= cut->start || a >= cut->end) return f(a, b, v);
    const Seconds s = std::max(a, cut->start);
    const Seconds e = std::min(b, cut->end);
    if (a < s) f(a, s, v);
    typename Steps::Values w = v;
    for (std::size_t c = 0; c < w.size(); ++c) w[c] -= minus[c];
    f(s, e, w);
    if (e < b) f(e, b, v);
  });
}

}  // namespace

template <class F>
void Calendar::GpuSegments(int gpu, Seconds from, Seconds to, F f) const {
  const bool cut = std::find(except_gpus_.begin(), except_gpus_.end(), gpu) != except_gpus_.end();
  Interval span;
  GpuValues minus{};
  if (cut) {
    const bool exclusive = except_->mode == Mode::kExclusive;
    span = {except_->start, except_->end};
    minus = {exclusive ? 0 : except_->share_units, 1, exclusive ? 1 : 0};
  }
  WalkWithout(occupancy_->Gpu(gpu), from, to, cut ? &span : nullptr, minus, f);
}

template <class F>
void Calendar::HostSegments(Seconds from, Seconds to, F f) const {
  Interval span;
  HostValues minus{};
  if (except_) {
    span = {except_->start, except_->end};
    minus = {except_->cpus, except_->ram_mb};
  }
  WalkWithout(occupancy_->Host(), from, to, except_ ? &span : nullptr, minus, f);
}

int64_t Calendar::UsableMemoryMb(int64_t total_mb) const { return policy_.UsableMemoryMb(total_mb); }

int64_t Calendar::AutomaticMemoryMb(int64_t total_mb, int units) const {
  return policy_.AutomaticMemoryMb(total_mb, units);
}

StepProfile<1> Calendar::CommittedMemory(int gpu, int64_t total_mb, Seconds from, Seconds to) const {
  StepProfile<1> committed;
  if (gpu < 0 || gpu >= occupancy_->gpu_count()) return committed;
  auto add = [&](const Occupancy::MemorySteps& steps, int64_t mb_each) {
    steps.ForEachSegment(from, to, [&](Seconds a, Seconds b, const Occupancy::MemorySteps::Values& v) {
      if (v[0] != 0) committed.Add(a, b, {v[0] * mb_each});
    });
  };
  add(occupancy_->DeclaredMemory(gpu), 1);
  for (const auto& [units, counts] : occupancy_->AutomaticMemory(gpu))
    add(counts, AutomaticMemoryMb(total_mb, units));
  const bool cut = std::find(except_gpus_.begin(), except_gpus_.end(), gpu) != except_gpus_.end();
  if (cut && except_->mode == Mode::kShared) {
    const int64_t declared = DeclaredMemoryMb(*except_);
    const int64_t mb = declared != 0 ? declared : AutomaticMemoryMb(total_mb, except_->share_units);
    committed.Add(std::max(from, except_->start), std::min(to, except_->end), {-mb});
  }
  committed.Build();
  return committed;
}

int64_t Calendar::PeakCommittedMemoryMb(int gpu, Seconds start, Seconds end, int64_t total_mb) const {
  return CommittedMemory(gpu, total_mb, start, end).Peak(start, end)[0];
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
  const std::vector<Interval>& closed = gpu_blackouts_[gpu];
  if (closed.empty()) return GpuBusy(gpu, request, advice, from, to);
  return UnionOf(GpuBusy(gpu, request, advice, from, to), closed);
}

std::vector<Interval> Calendar::GpuBusy(int gpu, const PlacementRequest& request, const GpuAdvice& advice,
                                        Seconds from, Seconds to) const {
  auto walk = [&](auto f) { GpuSegments(gpu, from, to, f); };
  if (request.mode == Mode::kExclusive)
    return BlockedParts(walk, [](const GpuValues& v) { return v[Occupancy::kHolders] > 0; });
  const int64_t units = request.share_units;
  const int64_t capacity = policy_.share_capacity;
  auto blocked = BlockedParts(walk, [&](const GpuValues& v) {
    return v[Occupancy::kExclusive] > 0 || v[Occupancy::kUnits] + units > capacity;
  });
  const std::optional<int64_t> total = MemoryTotal(advice, gpu);
  if (!total) return blocked;
  const int64_t usable = UsableMemoryMb(*total);
  const int64_t requested = HasExplicitMemory(request.memory_mb)
                                ? *request.memory_mb
                                : AutomaticMemoryMb(*total, request.share_units);
  auto full = [&](const StepProfile<1>::Values& v) {
    return requested > usable || v[0] + requested > usable;
  };
  return UnionOf(blocked, CommittedMemory(gpu, *total, from, to).Blocked(full, from, to));
}

std::vector<Interval> Calendar::HostBlocked(const PlacementRequest& request, Seconds from, Seconds to) const {
  const auto& cpus = policy_.host_cpus;
  const auto& ram = policy_.host_ram_mb;
  return BlockedParts([&](auto f) { HostSegments(from, to, f); },
                      [&](const HostValues& v) {
                        return (cpus && v[Occupancy::kCpus] + request.cpus > *cpus) ||
                               (ram && v[Occupancy::kRamMb] + request.ram_mb > *ram);
                      });
}

double Calendar::Pressure(int gpu, Seconds start, Seconds end) const {
  // Unit-seconds already shared out over the window, in percent of full capacity.
  int64_t unit_seconds = 0;
  GpuSegments(gpu, start, end, [&](Seconds a, Seconds b, const GpuValues& v) {
    unit_seconds += v[Occupancy::kUnits] * (b - a);
  });
  const double duration = static_cast<double>(std::max<Seconds>(1, end - start));
  return Round3(100.0 * static_cast<double>(unit_seconds) / duration /
                static_cast<double>(std::max(1, policy_.share_capacity)));
}

std::optional<Seconds> Calendar::EarliestIn(const PlacementRequest& request, const GpuAdvice& advice,
                                            const std::vector<int>& candidates, int need, Seconds lo,
                                            Seconds hi,
                                            std::vector<std::vector<Interval>>& free_starts) const {
  const Seconds d = request.duration;
  const StartGrid grid(lo, hi, policy_.slot);
  if (grid.empty()) return std::nullopt;
  // Everything a start must avoid lies within [lo, hi + d).
  const Seconds to = hi + d;
  std::vector<Interval> legal = grid.FreeStarts(blackouts_, d);
  if (policy_.BudgetsOn()) legal = IntersectionOf(legal, grid.FreeStarts(HostBlocked(request, lo, to), d));
  if (request.rule && !legal.empty())
    legal = IntersectionOf(legal, request.rule->Allowed(RuleGpus(request), d, lo, hi));
  if (legal.empty()) return std::nullopt;
  free_starts.clear();
  free_starts.reserve(candidates.size());
  for (int g : candidates) free_starts.push_back(grid.FreeStarts(GpuBlocked(g, request, advice, lo, to), d));
  legal = IntersectionOf(legal, CoveredAtLeast(free_starts, need));
  if (legal.empty()) return std::nullopt;
  return legal.front().start;
}

std::optional<Placement> Calendar::Search(const PlacementRequest& request, const GpuAdvice& advice,
                                          bool queue) const {
  const Seconds d = request.duration;
  const Seconds lo = request.start;
  Seconds hi = queue ? std::min(lo + policy_.queue_search, now_ + policy_.horizon) : lo;
  hi = std::min(hi, now_ + policy_.horizon - d);  // the end must stay within the horizon
  if (hi < lo) return std::nullopt;
  const std::optional<std::vector<int>> candidates = Candidates(request, advice);
  if (!candidates) return std::nullopt;
  const bool pinned = !request.pinned.empty();
  const int need = pinned ? static_cast<int>(candidates->size()) : request.count;
  if (need > static_cast<int>(candidates->size())) return std::nullopt;

  // Windows of starts that double in length: a request that fits soon reads
  // only the calendar near its start, one pushed far out reads at most about
  // twice what lies in its way. A window's starts depend on nothing after
  // its last start plus the duration, so the first start found is the
  // earliest of the whole search.
  std::vector<std::vector<Interval>> free_starts;
  std::optional<Seconds> start;
  Seconds span = std::max<Seconds>(4 * d, 6 * kHour);
  span -= span % policy_.slot;
  for (Seconds from = lo; !start && from <= hi; span *= 2) {
    const Seconds until = std::min(hi, from + span - policy_.slot);
    start = EarliestIn(request, advice, *candidates, need, from, until, free_starts);
    from = until + policy_.slot;
  }
  if (!start) return std::nullopt;

  Placement placement;
  placement.start = *start;
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
  if (gpu < 0 || gpu >= occupancy_->gpu_count()) return std::nullopt;
  for (const Blackout& b : policy_.blackouts)
    if (!b.gpus.empty() && b.Covers(gpu) && start < b.end && end > b.start) return BlackoutMessage(b);
  GpuValues peak{};
  GpuSegments(gpu, start, end, [&](Seconds, Seconds, const GpuValues& v) {
    for (std::size_t c = 0; c < peak.size(); ++c) peak[c] = std::max(peak[c], v[c]);
  });
  if (peak[Occupancy::kExclusive] > 0) return fmt::format("exclusive conflict on GPU {}", gpu);
  if (request.mode == Mode::kExclusive) {
    if (peak[Occupancy::kHolders] > 0) return fmt::format("GPU {} already has shared reservations", gpu);
    return std::nullopt;
  }
  const int64_t u = request.share_units;
  const int64_t capacity = policy_.share_capacity;
  const int64_t used = peak[Occupancy::kUnits];
  if (used + u > capacity) {
    return fmt::format(
        "shared capacity full on GPU {} (request {} slot(s), currently used {}, projected {}, maximum {})",
        gpu, u, used, used + u, capacity);
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
  HostValues peak{};
  HostSegments(start, end, [&](Seconds, Seconds, const HostValues& v) {
    for (std::size_t c = 0; c < peak.size(); ++c) peak[c] = std::max(peak[c], v[c]);
  });
  const int64_t cpus = peak[Occupancy::kCpus];
  const int64_t ram = peak[Occupancy::kRamMb];
  if (policy_.host_cpus && cpus + request.cpus > *policy_.host_cpus) {
    out.push_back(fmt::format("host CPU budget full (request {} CPUs, already declared {} of {})",
                              request.cpus, cpus, *policy_.host_cpus));
  }
  if (policy_.host_ram_mb && ram + request.ram_mb > *policy_.host_ram_mb) {
    out.push_back(fmt::format("host RAM budget full (request {}, already declared {} of {})",
                              FormatSizeMb(request.ram_mb), FormatSizeMb(ram),
                              FormatSizeMb(*policy_.host_ram_mb)));
  }
  return out;
}

std::vector<std::string> Calendar::Reasons(const PlacementRequest& request, Seconds start,
                                           const GpuAdvice& advice) const {
  const Seconds end = start + request.duration;
  std::vector<std::string> out;
  if (auto conflict = PolicyConflict(policy_, now_, start, end)) out.push_back(*std::move(conflict));
  if (request.rule)
    for (std::string& reason : request.rule->Reasons(RuleGpus(request), start, end))
      out.push_back(std::move(reason));
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
