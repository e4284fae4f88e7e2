#pragma once
// Step functions of time and the interval arithmetic the calendar derives from
// them. Every interval is half-open [start, end) in whole seconds, so touching
// intervals never overlap.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/types.h"

namespace bk::engine {

// Far enough from the int64 limits that adding a duration cannot overflow.
inline constexpr Seconds kTimeMin = std::numeric_limits<Seconds>::min() / 4;
inline constexpr Seconds kTimeMax = std::numeric_limits<Seconds>::max() / 4;

// The merged parts, in order, of the pieces walk(f) visits as f(a, b, value)
// where blocked(value) holds.
template <class Walk, class Pred>
std::vector<Interval> BlockedParts(Walk walk, Pred blocked) {
  std::vector<Interval> out;
  walk([&](Seconds a, Seconds b, const auto& v) {
    if (!blocked(v)) return;
    if (!out.empty() && out.back().end >= a) {
      out.back().end = std::max(out.back().end, b);
    } else {
      out.push_back({a, b});
    }
  });
  return out;
}

// A sum of interval contributions over N integer channels, as a step function:
// value(i) holds on [at(i), at(i+1)); the function is zero before at(0) and
// from the last breakpoint on (every added interval is closed again).
// Channel 0 also gets a prefix integral, so that "unit-seconds over a window"
// costs two binary searches.
template <std::size_t N>
class StepProfile {
 public:
  using Values = std::array<int64_t, N>;

  // Adds `v` over [start, end); empty intervals add nothing. Call Build() after.
  void Add(Seconds start, Seconds end, const Values& v) {
    if (start >= end) return;
    Values neg;
    for (std::size_t c = 0; c < N; ++c) neg[c] = -v[c];
    events_.push_back({start, v});
    events_.push_back({end, neg});
  }
  // A raw change of value at `at`; the caller keeps the sum of deltas zero.
  void AddDelta(Seconds at, const Values& delta) { events_.push_back({at, delta}); }

  // Turns the added changes into breakpoints. `sorted`: the changes were added
  // in time order, so the O(n log n) sort can be skipped.
  void Build(bool sorted = false) {
    if (!sorted) {
      std::sort(events_.begin(), events_.end(), [](const Event& a, const Event& b) { return a.at < b.at; });
    }
    at_.clear();
    values_.clear();
    Values cur{};
    for (std::size_t i = 0; i < events_.size();) {
      Seconds x = events_[i].at;
      for (; i < events_.size() && events_[i].at == x; ++i)
        for (std::size_t c = 0; c < N; ++c) cur[c] += events_[i].delta[c];
      // Only real changes become breakpoints: fewer segments to scan later.
      const Values& before = values_.empty() ? kZero : values_.back();
      if (cur == before) continue;
      at_.push_back(x);
      values_.push_back(cur);
    }
    integral_.assign(at_.size(), 0);
    for (std::size_t i = 1; i < at_.size(); ++i)
      integral_[i] = integral_[i - 1] + values_[i - 1][0] * (at_[i] - at_[i - 1]);
    events_.clear();
    events_.shrink_to_fit();
  }

  std::size_t size() const { return at_.size(); }
  bool empty() const { return at_.empty(); }

  // The value at instant t.
  const Values& ValueAt(Seconds t) const {
    std::ptrdiff_t i = SegmentAt(t);
    return i < 0 ? kZero : values_[static_cast<std::size_t>(i)];
  }

  // Channel-wise maximum over [start, end) (zero for an empty window).
  Values Peak(Seconds start, Seconds end) const {
    Values peak{};
    if (start >= end) return peak;
    ForEachSegment(start, end, [&](Seconds, Seconds, const Values& v) {
      for (std::size_t c = 0; c < N; ++c) peak[c] = std::max(peak[c], v[c]);
    });
    return peak;
  }

  // Integral of channel 0 over [start, end).
  int64_t Integral(Seconds start, Seconds end) const {
    return start >= end ? 0 : Primitive(end) - Primitive(start);
  }

  // The parts of [from, to) where blocked(value) holds, merged, in order.
  template <class Pred>
  std::vector<Interval> Blocked(Pred blocked, Seconds from, Seconds to) const {
    return BlockedParts([&](auto f) { ForEachSegment(from, to, f); }, blocked);
  }

 private:
  struct Event {
    Seconds at;
    Values delta;
  };
  static constexpr Values kZero{};

  // Index of the segment holding t, or -1 before the first breakpoint.
  std::ptrdiff_t SegmentAt(Seconds t) const {
    return std::upper_bound(at_.begin(), at_.end(), t) - at_.begin() - 1;
  }

  int64_t Primitive(Seconds t) const {
    std::ptrdiff_t i = SegmentAt(t);
    if (i < 0) return 0;
    auto k = static_cast<std::size_t>(i);
    return integral_[k] + values_[k][0] * (t - at_[k]);
  }

  // Calls f(a, b, value) for each segment piece [a, b) of [from, to), in order,
  // including the zero regions before the first and after the last breakpoint.
  template <class F>
  void ForEachSegment(Seconds from, Seconds to, F f) const {
    if (from >= to) return;
    std::ptrdiff_t i = SegmentAt(from);
    const auto n = static_cast<std::ptrdiff_t>(at_.size());
    while (true) {
      Seconds a = i < 0 ? kTimeMin : at_[static_cast<std::size_t>(i)];
      Seconds b = i + 1 < n ? at_[static_cast<std::size_t>(i + 1)] : kTimeMax;
      const Values& v = i < 0 ? kZero : values_[static_cast<std::size_t>(i)];
      f(std::max(a, from), std::min(b, to), v);
      if (b >= to || i + 1 >= n) break;
      ++i;
    }
  }

  std::vector<Event> events_;  // only until Build()
  std::vector<Seconds> at_;
  std::vector<Values> values_;
  std::vector<int64_t> integral_;  // of channel 0, from at_[0] to at_[i]
};

// Interval sets below are sorted, disjoint, non-touching half-open intervals.

// Union of two interval sets.
std::vector<Interval> UnionOf(const std::vector<Interval>& a, const std::vector<Interval>& b);
// Intersection of two interval sets.
std::vector<Interval> IntersectionOf(const std::vector<Interval>& a, const std::vector<Interval>& b);
// Whether t lies in the set.
bool SetContains(const std::vector<Interval>& set, Seconds t);

// The slot grid of one search: lo, lo + slot, ... up to hi (inclusive). Start
// sets are expressed as half-open intervals whose ends lie on this grid, so
// "[a, b)" means the grid starts a, a + slot, ..., b - slot.
class StartGrid {
 public:
  StartGrid(Seconds lo, Seconds hi, Seconds slot) : lo_(lo), hi_(hi), slot_(slot) {}
  bool empty() const { return hi_ < lo_; }
  Seconds lo() const { return lo_; }
  Seconds hi() const { return hi_; }

  // Every grid start.
  std::vector<Interval> All() const;
  // Grid starts t with [t, t + duration) disjoint from every `blocked`
  // interval: t >= end of the previous blocked interval and t + duration <=
  // start of the next one. `blocked` must be merged (sorted, non-touching).
  std::vector<Interval> FreeStarts(const std::vector<Interval>& blocked, Seconds duration) const;

 private:
  // The grid starts within the closed range [first, last], as a half-open interval.
  void Append(Seconds first, Seconds last, std::vector<Interval>& out) const;

  Seconds lo_, hi_, slot_;
};

// The parts of the line covered by at least `need` of the given sets.
std::vector<Interval> CoveredAtLeast(const std::vector<std::vector<Interval>>& sets, int need);

}  // namespace bk::engine
