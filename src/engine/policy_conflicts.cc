#include "engine/policy_conflicts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/strings.h"
#include "engine/calendar.h"
#include "engine/invariants.h"

namespace bk::engine {
namespace {

// What one booking alone breaks.
void OwnConflicts(const Policy& p, const Reservation& r, size_t index, Seconds now,
                  std::vector<BookingConflict>& out) {
  auto add = [&](const char* kind, std::string why) { out.push_back({index, kind, std::move(why)}); };
  for (int g : r.gpus)
    if (!p.GpuEnabled(g)) add("disabled", fmt::format("GPU {} is disabled", g));
  if (r.end - r.start > p.max_duration)
    add("duration", fmt::format("it is longer than the maximum of {} hours", p.max_duration / kHour));
  if (r.end > now + p.horizon)
    add("horizon", fmt::format("it ends beyond the {}-day booking horizon", p.horizon / kDay));
  const Seconds from = std::max(now, r.start);
  for (const Blackout& b : p.blackouts) {
    bool covered = std::any_of(r.gpus.begin(), r.gpus.end(), [&](int g) { return b.Covers(g); });
    if (covered && from < b.end && r.end > b.start) {
      std::string why = BlackoutMessage(b);
      out.push_back({index, "blackout " + why, why});  // each window its own kind: a new one is news
    }
  }
  if (r.mode == Mode::kShared && r.share_units > p.share_capacity)
    add("slots",
        fmt::format("it holds {} shared slots of a GPU; the maximum is {}", r.share_units, p.share_capacity));
  if (r.mode == Mode::kShared && p.require_shared_memory && !(r.memory_mb && *r.memory_mb > 0))
    add("vram", "it declares no VRAM budget, which shared bookings now need");
}

}  // namespace

std::vector<BookingConflict> ConflictsWith(const Policy& p, const std::vector<Reservation>& active,
                                           Seconds now) {
  std::vector<BookingConflict> out;
  std::vector<Footprint> footprints;
  std::vector<std::string> names;
  std::map<std::string, size_t> by_id;
  for (size_t i = 0; i < active.size(); ++i) {
    if (active[i].end <= now) continue;  // over: nothing left to break
    OwnConflicts(p, active[i], i, now, out);
    footprints.push_back(active[i].ToFootprint());
    names.push_back(active[i].id);
    by_id[active[i].id] = i;
  }
  // Over-admitted instants, each naming the bookings that hold it.
  for (const std::string& line : CheckInvariants(p, footprints, &names)) {
    size_t open = line.rfind(" (");
    if (open == std::string::npos || line.back() != ')') continue;
    std::string why = line.substr(0, open);
    for (const std::string& id : Split(line.substr(open + 2, line.size() - open - 3), ','))
      if (auto it = by_id.find(std::string(Trim(id))); it != by_id.end())
        out.push_back({it->second, "capacity", why});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const BookingConflict& a, const BookingConflict& b) { return a.index < b.index; });
  return out;
}

std::vector<BookingConflict> NewConflicts(const Policy& running, const Policy& next,
                                          const std::vector<Reservation>& active, Seconds now) {
  std::set<std::pair<size_t, std::string>> before;
  for (const BookingConflict& c : ConflictsWith(running, active, now)) before.insert({c.index, c.kind});
  std::vector<BookingConflict> out;
  for (BookingConflict& c : ConflictsWith(next, active, now))
    if (!before.contains({c.index, c.kind})) out.push_back(std::move(c));
  return out;
}

}  // namespace bk::engine
