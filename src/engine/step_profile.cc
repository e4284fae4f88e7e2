#include "engine/step_profile.h"

#include <utility>

namespace bk::engine {
namespace {

// Appends [a, b), merging with the last interval when they touch or overlap.
void Push(std::vector<Interval>& out, Seconds a, Seconds b) {
  if (a >= b) return;
  if (!out.empty() && out.back().end >= a) {
    out.back().end = std::max(out.back().end, b);
  } else {
    out.push_back({a, b});
  }
}

// Floor division for a possibly negative numerator and a positive divisor.
Seconds FloorDiv(Seconds a, Seconds b) {
  Seconds q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace

std::vector<Interval> UnionOf(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    const bool take_a = j >= b.size() || (i < a.size() && a[i].start <= b[j].start);
    const Interval& next = take_a ? a[i++] : b[j++];
    Push(out, next.start, next.end);
  }
  return out;
}

std::vector<Interval> IntersectionOf(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    Seconds s = std::max(a[i].start, b[j].start);
    Seconds e = std::min(a[i].end, b[j].end);
    if (s < e) out.push_back({s, e});
    // Drop whichever ends first: it cannot meet anything later in the other set.
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

bool SetContains(const std::vector<Interval>& set, Seconds t) {
  auto it =
      std::upper_bound(set.begin(), set.end(), t, [](Seconds x, const Interval& iv) { return x < iv.start; });
  return it != set.begin() && std::prev(it)->end > t;
}

std::vector<Interval> StartGrid::All() const {
  std::vector<Interval> out;
  if (!empty()) Append(lo_, hi_, out);
  return out;
}

void StartGrid::Append(Seconds first, Seconds last, std::vector<Interval>& out) const {
  first = std::max(first, lo_);
  last = std::min(last, hi_);
  if (first > last) return;
  // Grid points are lo + k*slot: round first up and last down onto them.
  Seconds a = lo_ + FloorDiv(first - lo_ + slot_ - 1, slot_) * slot_;
  Seconds b = lo_ + FloorDiv(last - lo_, slot_) * slot_;
  if (a <= b) Push(out, a, b + slot_);
}

std::vector<Interval> StartGrid::FreeStarts(const std::vector<Interval>& blocked, Seconds duration) const {
  std::vector<Interval> out;
  if (empty()) return out;
  // Each gap between blocked intervals admits the starts [gap start, gap end - duration].
  Seconds gap_start = kTimeMin;
  for (const Interval& b : blocked) {
    if (gap_start > hi_) break;
    Append(gap_start, b.start - duration, out);
    gap_start = b.end;
  }
  Append(gap_start, kTimeMax, out);
  return out;
}

std::vector<Interval> CoveredAtLeast(const std::vector<std::vector<Interval>>& sets, int need) {
  std::vector<Interval> out;
  if (need <= 0) {
    out.push_back({kTimeMin, kTimeMax});
    return out;
  }
  std::vector<std::pair<Seconds, int>> events;
  for (const auto& set : sets) {
    for (const Interval& iv : set) {
      events.emplace_back(iv.start, +1);
      events.emplace_back(iv.end, -1);
    }
  }
  std::sort(events.begin(), events.end());
  int covered = 0;
  Seconds open_at = 0;
  bool open = false;
  for (std::size_t i = 0; i < events.size();) {
    Seconds x = events[i].first;
    for (; i < events.size() && events[i].first == x; ++i) covered += events[i].second;
    if (!open && covered >= need) {
      open = true;
      open_at = x;
    } else if (open && covered < need) {
      open = false;
      Push(out, open_at, x);
    }
  }
  return out;
}

}  // namespace bk::engine
