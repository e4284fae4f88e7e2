#include "engine/live_calendar.h"

#include <utility>

namespace bk::engine {
namespace {

std::vector<Footprint> FootprintsOf(const std::vector<LiveCalendar::Entry>& entries) {
  std::vector<Footprint> out;
  out.reserve(entries.size());
  for (const auto& e : entries) out.push_back(e.footprint);
  return out;
}

}  // namespace

LiveCalendar::LiveCalendar(const Policy& policy) : occupancy_(policy.gpu_count, policy.BudgetsOn()) {}

LiveCalendar::LiveCalendar(const Policy& policy, std::vector<Entry> entries)
    : occupancy_(policy.gpu_count, policy.BudgetsOn(), FootprintsOf(entries)) {
  entries_.reserve(entries.size());
  for (Entry& e : entries) {
    Held held{e.owner, std::move(e.footprint)};
    // The occupancy already holds every footprint; an ID given twice (never
    // from a ledger, whose IDs are unique) keeps the first.
    if (entries_.count(e.id)) {
      occupancy_.Remove(held.footprint);
      continue;
    }
    Index(e.id, held);
    entries_.emplace(std::move(e.id), std::move(held));
  }
}

void LiveCalendar::Index(const std::string& id, const Held& held) {
  by_end_.emplace(held.footprint.end, id);
  by_start_.emplace(std::pair{held.footprint.start, id}, held.footprint.end);
  ++per_owner_[held.owner];
  if (held.footprint.mode == Mode::kExclusive)
    exclusive_.emplace(std::pair{held.footprint.start, id}, held.footprint.end);
}

void LiveCalendar::Unindex(const std::string& id, const Held& held) {
  auto [lo, hi] = by_end_.equal_range(held.footprint.end);
  for (auto it = lo; it != hi; ++it) {
    if (it->second == id) {
      by_end_.erase(it);
      break;
    }
  }
  by_start_.erase(std::pair{held.footprint.start, id});
  if (auto it = per_owner_.find(held.owner); it != per_owner_.end() && --it->second == 0)
    per_owner_.erase(it);
  exclusive_.erase(std::pair{held.footprint.start, id});
}

void LiveCalendar::Put(const std::string& id, uint32_t owner, const Footprint& footprint) {
  Erase(id);
  Held held{owner, footprint};
  occupancy_.Add(held.footprint);
  Index(id, held);
  entries_.emplace(id, std::move(held));
}

void LiveCalendar::Erase(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  occupancy_.Remove(it->second.footprint);
  Unindex(id, it->second);
  entries_.erase(it);
}

void LiveCalendar::Expire(Seconds now) {
  while (!by_end_.empty() && by_end_.begin()->first <= now) {
    std::string id = by_end_.begin()->second;  // a copy: Erase removes the node
    Erase(id);
  }
}

const Footprint* LiveCalendar::Find(const std::string& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second.footprint;
}

int64_t LiveCalendar::CountOwnedBy(uint32_t owner) const {
  auto it = per_owner_.find(owner);
  return it == per_owner_.end() ? 0 : it->second;
}

std::vector<std::string> LiveCalendar::Overlapping(Seconds from, Seconds to) const {
  std::vector<std::string> out;
  for (auto it = by_start_.begin(); it != by_start_.end() && it->first.first < to; ++it)
    if (it->second > from) out.push_back(it->first.second);
  return out;
}

std::vector<Interval> LiveCalendar::ExclusiveIntervals() const {
  std::vector<Interval> out;
  out.reserve(exclusive_.size());
  for (const auto& [key, end] : exclusive_) out.push_back({key.first, end});
  return out;
}

}  // namespace bk::engine
