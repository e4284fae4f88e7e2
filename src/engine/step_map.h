#pragma once
// A step function of time that changes one interval at a time. StepProfile
// (step_profile.h) is built once from all intervals and then only read; a
// StepMap stays sorted as intervals come and go, so a long-lived calendar pays
// for what an interval covers, not for the whole function: adding or removing
// [start, end) costs O(log n + k) for the k breakpoints inside it, and reading
// a window costs O(log n + k) for the k breakpoints inside the window.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "engine/step_profile.h"
#include "engine/types.h"

namespace bk::engine {

template <std::size_t N>
class StepMap {
 public:
  using Values = std::array<int64_t, N>;

  // Adds `v` over [start, end) (subtracts with negative values). Only real
  // changes stay breakpoints, so removing what was added restores the map.
  void Add(Seconds start, Seconds end, const Values& v) {
    if (start >= end || v == kZero) return;
    auto first = Split(start);
    auto last = Split(end);
    for (auto it = first; it != last; ++it)
      for (std::size_t c = 0; c < N; ++c) it->second[c] += v[c];
    // `last` first: erasing it cannot invalidate `first`.
    EraseIfRedundant(last);
    EraseIfRedundant(first);
  }

  // Replaces the whole function by the sum of (start, end, value) intervals:
  // one sort instead of one tree insertion per interval.
  void Assign(std::vector<std::pair<Seconds, Values>> deltas) {
    std::sort(deltas.begin(), deltas.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    steps_.clear();
    Values cur{};
    for (std::size_t i = 0; i < deltas.size();) {
      const Seconds x = deltas[i].first;
      for (; i < deltas.size() && deltas[i].first == x; ++i)
        for (std::size_t c = 0; c < N; ++c) cur[c] += deltas[i].second[c];
      const Values& before = steps_.empty() ? kZero : std::prev(steps_.end())->second;
      if (cur != before) steps_.emplace_hint(steps_.end(), x, cur);
    }
  }

  std::size_t size() const { return steps_.size(); }
  bool empty() const { return steps_.empty(); }

  const Values& ValueAt(Seconds t) const {
    auto it = steps_.upper_bound(t);
    return it == steps_.begin() ? kZero : std::prev(it)->second;
  }

  // Calls f(a, b, value) for each constant piece [a, b) of [from, to), in
  // order, including the zero regions before the first and after the last
  // breakpoint.
  template <class F>
  void ForEachSegment(Seconds from, Seconds to, F f) const {
    if (from >= to) return;
    auto it = steps_.upper_bound(from);
    const Values* cur = it == steps_.begin() ? &kZero : &std::prev(it)->second;
    Seconds a = from;
    while (true) {
      const Seconds b = it == steps_.end() || it->first > to ? to : it->first;
      if (b > a) f(a, b, *cur);
      if (b >= to) return;
      a = b;
      cur = &it->second;
      ++it;
    }
  }

  // The first instant at or after `from` where pred(value) holds; kTimeMax
  // when it never does. Reads only up to that instant.
  template <class Pred>
  Seconds FirstWhere(Seconds from, Pred pred) const {
    auto it = steps_.upper_bound(from);
    const Values& at = it == steps_.begin() ? kZero : std::prev(it)->second;
    if (pred(at)) return from;
    for (; it != steps_.end(); ++it)
      if (pred(it->second)) return it->first;
    return kTimeMax;
  }

  // Breakpoints as (time, value from then on), in time order: for tests.
  std::vector<std::pair<Seconds, Values>> Steps() const { return {steps_.begin(), steps_.end()}; }

 private:
  using Map = std::map<Seconds, Values>;
  static constexpr Values kZero{};

  // The breakpoint at t, made (with the value that held there) if missing.
  typename Map::iterator Split(Seconds t) {
    auto it = steps_.lower_bound(t);
    if (it != steps_.end() && it->first == t) return it;
    const Values& before = it == steps_.begin() ? kZero : std::prev(it)->second;
    return steps_.emplace_hint(it, t, before);
  }

  void EraseIfRedundant(typename Map::iterator it) {
    const Values& before = it == steps_.begin() ? kZero : std::prev(it)->second;
    if (it->second == before) steps_.erase(it);
  }

  Map steps_;  // value from each key until the next key; zero before the first
};

}  // namespace bk::engine
