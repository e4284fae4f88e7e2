#pragma once
// The daemon's calendar: the active reservations' footprints by ID and owner,
// and the occupancy they make, kept current one commit at a time. A booking
// that ends is dropped when time passes it (Expire), so the occupancy holds
// only what still counts, as Calendar requires.

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/footprint.h"
#include "engine/occupancy.h"
#include "engine/policy.h"

namespace bk::engine {

class LiveCalendar {
 public:
  struct Entry {
    std::string id;
    uint32_t owner = 0;
    Footprint footprint;
  };

  explicit LiveCalendar(const Policy& policy);
  // Starts from many entries at once (the daemon's start): one sort per GPU.
  LiveCalendar(const Policy& policy, std::vector<Entry> entries);

  // Inserts or replaces the reservation `id`.
  void Put(const std::string& id, uint32_t owner, const Footprint& footprint);
  void Erase(const std::string& id);
  // Drops every reservation that ends at or before `now`.
  void Expire(Seconds now);

  const Occupancy& occupancy() const { return occupancy_; }
  const Footprint* Find(const std::string& id) const;
  std::size_t size() const { return entries_.size(); }
  int64_t CountOwnedBy(uint32_t owner) const;
  // [start, end) of every exclusive reservation, in start order.
  std::vector<Interval> ExclusiveIntervals() const;
  // The IDs of the reservations overlapping [from, to), in start order. Reads
  // those that start before `to`: near now, what runs and what the window holds.
  std::vector<std::string> Overlapping(Seconds from, Seconds to) const;

 private:
  struct Held {
    uint32_t owner = 0;
    Footprint footprint;
  };
  void Index(const std::string& id, const Held& held);
  void Unindex(const std::string& id, const Held& held);

  Occupancy occupancy_;
  std::unordered_map<std::string, Held> entries_;
  std::multimap<Seconds, std::string> by_end_;                   // what Expire drops next
  std::map<std::pair<Seconds, std::string>, Seconds> by_start_;  // (start, id) -> end
  std::unordered_map<uint32_t, int64_t> per_owner_;
  std::map<std::pair<Seconds, std::string>, Seconds> exclusive_;  // (start, id) -> end
};

}  // namespace bk::engine
