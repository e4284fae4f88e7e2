#include "engine/limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

#include "engine/limit_fields.h"
#include "engine/parse.h"
#include "engine/reservation.h"
#include "engine/time_grid.h"

namespace bk::engine {
namespace {

constexpr Seconds kDay24 = 24 * kHour;
constexpr Seconds kWeek = 7 * kDay;

constexpr LimitField kFields[] = {
    {LimitKind::kGpus, "max_gpus", &Limits::max_gpus, 1, 1, kMaxGpus, "GPUs one user holds at once"},
    {LimitKind::kGpuHours24h, "max_gpu_hours_24h", &Limits::max_gpu_hours_24h, 1, 1, 100000000,
     "GPU-hours per user in any 24 hours"},
    {LimitKind::kGpuHours7d, "max_gpu_hours_7d", &Limits::max_gpu_hours_7d, 1, 1, 100000000,
     "GPU-hours per user in any 7 days"},
    {LimitKind::kDuration, "max_booking_hours", &Limits::max_duration, kHour, 1, 87600,
     "a user's longest booking, in hours"},
    {LimitKind::kHorizon, "max_horizon_days", &Limits::max_horizon, kDay, 1, 3650,
     "how many days ahead a user's booking may end"},
    {LimitKind::kQueued, "max_queued", &Limits::max_queued, 1, 0, 100000,
     "bookings one user may have waiting"},
};
static_assert(std::size(kFields) == kLimitKinds);

std::optional<int64_t> Pick(const std::optional<int64_t>& base, const std::optional<int64_t>& over) {
  if (!over) return base;
  return *over == kNoLimit ? std::nullopt : over;
}

bool Has(const Limits& l, LimitKind k) { return (l.*FieldOf(k).member).has_value(); }

const std::string& KeyOf(const LimitScope& s, LimitKind k) { return s.keys[static_cast<std::size_t>(k)]; }

// GPU-seconds as hours for people: "12", "12.5", "0.1".
std::string Hours(int64_t gpu_seconds) {
  std::string s = fmt::format("{:.1f}", static_cast<double>(gpu_seconds) / kHour);
  if (s.ends_with(".0")) s.resize(s.size() - 2);
  return s;
}

std::string WindowName(Seconds window) { return window == kWeek ? "7 days" : "24 hours"; }

// Maximum over index ranges of a fixed array in O(1) per query.
class RangeMax {
 public:
  explicit RangeMax(std::vector<int64_t> v) {
    const std::size_t n = v.size();
    levels_.push_back(std::move(v));
    for (std::size_t len = 2; len <= n; len *= 2) {
      const std::vector<int64_t>& prev = levels_.back();
      std::vector<int64_t> next(n - len + 1);
      for (std::size_t i = 0; i + len <= n; ++i) next[i] = std::max(prev[i], prev[i + len / 2]);
      levels_.push_back(std::move(next));
    }
  }
  // Max over [a, b], both within the array; a > b: nullopt.
  std::optional<int64_t> Max(int64_t a, int64_t b) const {
    if (a > b) return std::nullopt;
    const auto len = static_cast<std::size_t>(b - a + 1);
    const std::size_t k = std::bit_width(len) - 1;
    const std::vector<int64_t>& level = levels_[k];
    return std::max(level[static_cast<std::size_t>(a)],
                    level[static_cast<std::size_t>(b) + 1 - (std::size_t{1} << k)]);
  }

 private:
  std::vector<std::vector<int64_t>> levels_;
};

// Grid starts of [lo, hi] (indexes 0..) where ok(k) holds, as start intervals.
template <class Ok>
std::vector<Interval> StartsWhere(Seconds lo, Seconds hi, Seconds slot, Ok ok) {
  std::vector<Interval> out;
  for (Seconds s = lo; s <= hi; s += slot) {
    if (!ok(s)) continue;
    if (!out.empty() && out.back().end == s)
      out.back().end = s + slot;
    else
      out.push_back({s, s + slot});
  }
  return out;
}

// The starts in [lo, hi] at which `gpus` GPUs for `d` keep the use of `use`
// in every window of `window` seconds within `limit` GPU-seconds. A window
// starting at t holds A(t) already and gains gpus * overlap(t); the overlap
// rises, stays flat and falls as t passes the booking, so the worst window
// is the largest of three range maxima (of A + gpus*t, A, A - gpus*t).
std::vector<Interval> WindowAllowed(const StepProfile<1>& use, int64_t gpus, Seconds d, Seconds window,
                                    int64_t limit, Seconds lo, Seconds hi, Seconds slot) {
  if (gpus * std::min(d, window) > limit) return {};
  const int64_t w = window / slot, m = d / slot;
  const Seconds base = lo - window + slot;
  const int64_t n = (hi + d - slot - base) / slot + 1;
  std::vector<int64_t> a(static_cast<std::size_t>(n)), up(a.size()), down(a.size());
  for (int64_t t = 0; t < n; ++t) {
    const Seconds from = base + t * slot;
    const int64_t used = use.Integral(from, from + window) / slot;
    a[static_cast<std::size_t>(t)] = used;
    up[static_cast<std::size_t>(t)] = used + gpus * t;
    down[static_cast<std::size_t>(t)] = used - gpus * t;
  }
  const RangeMax flat(std::move(a)), rising(std::move(up)), falling(std::move(down));
  const int64_t cap = limit / slot;
  return StartsWhere(lo, hi, slot, [&](Seconds s) {
    const int64_t i = (s - lo) / slot + w - 1;  // the window that starts with the booking
    int64_t worst = 0;
    if (auto r = rising.Max(i - w + 1, std::min(i, i + m - w))) worst = std::max(worst, *r + gpus * (w - i));
    if (m < w) {
      if (auto f = flat.Max(i + m - w, i)) worst = std::max(worst, *f + gpus * m);
    } else if (auto f = flat.Max(i, i + m - w)) {
      worst = std::max(worst, *f + gpus * w);
    }
    if (auto f = falling.Max(std::max(i, i + m - w), i + m - 1)) worst = std::max(worst, *f + gpus * (i + m));
    return worst <= cap;
  });
}

}  // namespace

std::span<const LimitField> LimitFields() { return kFields; }
const LimitField& FieldOf(LimitKind kind) { return kFields[static_cast<std::size_t>(kind)]; }

bool Limits::Any() const {
  return std::any_of(std::begin(kFields), std::end(kFields),
                     [&](const LimitField& f) { return Has(*this, f.kind); });
}

Limits Limits::With(const Limits& over) const {
  Limits out;
  for (const LimitField& f : kFields) out.*f.member = Pick(this->*f.member, over.*f.member);
  return out;
}

bool FairShare::Any() const {
  auto any = [](const auto& m) {
    return std::any_of(m.begin(), m.end(), [](const auto& e) { return e.second.Any(); });
  };
  return user.Any() || any(users) || any(groups);
}

Limits FairShare::ForUser(const std::string& username) const {
  auto it = users.find(username);
  return it == users.end() ? user : user.With(it->second);
}

std::optional<Holding> HoldingOf(const Reservation& r, Seconds slot) {
  if (r.gpus.empty()) return std::nullopt;
  Seconds end = r.end;
  if (r.status == Status::kCancelled) {
    if (!r.cancellation) return std::nullopt;
    end = std::min(end, r.cancellation->at);
  }
  const SlotGrid grid(slot);
  Holding h{grid.Floor(r.start), grid.Ceil(end), static_cast<int>(r.gpus.size())};
  if (h.end <= h.start) return std::nullopt;
  return h;
}

LimitScope LimitScope::ForUser(const FairShare& fs, const std::string& username) {
  LimitScope s;
  s.name = username;
  s.limits = fs.ForUser(username);
  auto own = fs.users.find(username);
  for (std::size_t k = 0; k < kLimitKinds; ++k) {
    const bool overridden = own != fs.users.end() && Has(own->second, static_cast<LimitKind>(k));
    s.keys[k] = overridden ? fmt::format("user_limits.{}.{}", username, kFields[k].name)
                           : fmt::format("user_{}", kFields[k].name);
  }
  return s;
}

LimitScope LimitScope::ForGroup(const FairShare& fs, const std::string& group) {
  LimitScope s;
  s.name = "group " + group;
  s.group = group;
  auto it = fs.groups.find(group);
  if (it != fs.groups.end()) s.limits = it->second;
  for (std::size_t k = 0; k < kLimitKinds; ++k)
    s.keys[k] = fmt::format("group_limits.{}.{}", group, kFields[k].name);
  return s;
}

LimitUse UseOf(const std::vector<Holding>& held, Seconds now) {
  LimitUse u;
  StepProfile<1> use;
  for (const Holding& h : held) {
    use.Add(h.start, h.end, {h.gpus});
    if (h.start > now) ++u.queued;
  }
  use.Build();
  u.gpus_now = use.ValueAt(now)[0];
  Seconds last = now;
  for (const Holding& h : held) last = std::max(last, h.end);
  u.peak_gpus = use.Peak(now, last + 1)[0];
  u.gpu_hours_24h = static_cast<double>(use.Integral(now - kDay24, now)) / kHour;
  u.gpu_hours_7d = static_cast<double>(use.Integral(now - kWeek, now)) / kHour;
  return u;
}

LimitRule::LimitRule(std::vector<LimitScope> scopes, Seconds now, Seconds slot) : now_(now), slot_(slot) {
  for (LimitScope& def : scopes) {
    if (!def.limits.Any()) continue;
    Scope s{.def = std::move(def)};
    for (const Holding& h : s.def.held) {
      s.use.Add(h.start, h.end, {h.gpus});
      if (h.start > now) ++s.queued;
    }
    s.use.Build();
    scopes_.push_back(std::move(s));
  }
}

std::vector<Interval> LimitRule::AllowedIn(const Scope& s, int gpus, Seconds d, Seconds lo,
                                           Seconds hi) const {
  const Limits& l = s.def.limits;
  if (l.max_duration && d > *l.max_duration) return {};
  if (l.max_gpus && gpus > *l.max_gpus) return {};
  if (l.max_horizon) hi = std::min(hi, now_ + *l.max_horizon - d);
  // A booking that would wait to start needs a free place in the queue.
  if (l.max_queued && s.queued + 1 > *l.max_queued) hi = std::min(hi, SlotGrid(slot_).Floor(now_));
  const StartGrid grid(lo, hi, slot_);
  if (grid.empty()) return {};
  std::vector<Interval> ok = grid.All();
  if (l.max_gpus) {
    const int64_t room = *l.max_gpus - gpus;
    ok = IntersectionOf(
        ok, grid.FreeStarts(s.use.Blocked([&](const auto& v) { return v[0] > room; }, lo, hi + d), d));
  }
  const std::pair<const std::optional<int64_t>*, Seconds> windows[] = {{&l.max_gpu_hours_24h, kDay24},
                                                                       {&l.max_gpu_hours_7d, kWeek}};
  for (const auto& [hours, window] : windows) {
    if (!*hours || ok.empty()) continue;
    ok = IntersectionOf(ok, WindowAllowed(s.use, gpus, d, window, **hours * kHour, lo, hi, slot_));
  }
  return ok;
}

std::vector<Interval> LimitRule::Allowed(int gpus, Seconds duration, Seconds lo, Seconds hi) const {
  std::vector<Interval> ok = StartGrid(lo, hi, slot_).All();
  for (const Scope& s : scopes_) {
    if (ok.empty()) break;
    ok = IntersectionOf(ok, AllowedIn(s, gpus, duration, lo, hi));
  }
  return ok;
}

void LimitRule::WorstWindow(const Scope& s, int gpus, Seconds start, Seconds end, Seconds from,
                            Seconds window, int64_t& used, Seconds& at) const {
  used = -1;
  const SlotGrid grid(slot_);
  for (Seconds t = grid.Floor(from) - window + slot_; t < end; t += slot_) {
    const Seconds overlap = std::max<Seconds>(0, std::min(t + window, end) - std::max(t, start));
    const int64_t total = s.use.Integral(t, t + window) + gpus * overlap;
    if (total > used) used = total, at = t;
  }
}

std::vector<std::string> LimitRule::ScopeReasons(const Scope& s, int gpus, Seconds start, Seconds end,
                                                 Seconds from, bool is_new) const {
  const Limits& l = s.def.limits;
  const std::string& who = s.def.name;
  std::vector<std::string> out;
  if (l.max_duration && end - start > *l.max_duration) {
    out.push_back(fmt::format("fair-share limit {}: bookings of {} last at most {}; this one lasts {}",
                              KeyOf(s.def, LimitKind::kDuration), who, FormatDuration(*l.max_duration),
                              FormatDuration(end - start)));
  }
  if (l.max_horizon && end > now_ + *l.max_horizon) {
    out.push_back(
        fmt::format("fair-share limit {}: bookings of {} must end within {} days (by {}); this one ends {}",
                    KeyOf(s.def, LimitKind::kHorizon), who, *l.max_horizon / kDay,
                    FormatIsoUtc(now_ + *l.max_horizon), FormatIsoUtc(end)));
  }
  if (is_new && l.max_queued && start > now_ && s.queued + 1 > *l.max_queued) {
    out.push_back(
        fmt::format("fair-share limit {}: {} may have at most {} booking(s) waiting to start and has {}",
                    KeyOf(s.def, LimitKind::kQueued), who, *l.max_queued, s.queued));
  }
  if (l.max_gpus) {
    const int64_t room = *l.max_gpus - gpus;
    auto over = s.use.Blocked([&](const auto& v) { return v[0] > room; }, from, end);
    if (gpus > *l.max_gpus || !over.empty()) {
      const Seconds at = over.empty() ? from : over.front().start;
      out.push_back(fmt::format(
          "fair-share limit {}: {} may hold at most {} GPU(s) at once; holds {} at {} and this adds {}",
          KeyOf(s.def, LimitKind::kGpus), who, *l.max_gpus, s.use.ValueAt(at)[0], FormatIsoUtc(at), gpus));
    }
  }
  const std::tuple<const std::optional<int64_t>*, Seconds, LimitKind> windows[] = {
      {&l.max_gpu_hours_24h, kDay24, LimitKind::kGpuHours24h},
      {&l.max_gpu_hours_7d, kWeek, LimitKind::kGpuHours7d}};
  for (const auto& [hours, window, kind] : windows) {
    if (!*hours) continue;
    int64_t used = 0;
    Seconds at = 0;
    WorstWindow(s, gpus, start, end, from, window, used, at);
    if (used <= **hours * kHour) continue;
    const Seconds added =
        std::max<Seconds>(0, std::min(at + window, end) - std::max(at, std::max(start, from)));
    out.push_back(fmt::format(
        "fair-share limit {}: {} may use at most {} GPU-hours in any {}; from {} to {} that would be {} "
        "(this adds {})",
        KeyOf(s.def, kind), who, **hours, WindowName(window), FormatIsoUtc(at), FormatIsoUtc(at + window),
        Hours(used), Hours(gpus * added)));
  }
  return out;
}

std::vector<std::string> LimitRule::Reasons(int gpus, Seconds start, Seconds end) const {
  std::vector<std::string> out;
  for (const Scope& s : scopes_)
    for (std::string& r : ScopeReasons(s, gpus, start, end, start, true)) out.push_back(std::move(r));
  return out;
}

std::vector<std::string> LimitRule::Reasons(int gpus, Seconds start, Seconds end,
                                            Seconds changed_from) const {
  std::vector<std::string> out;
  for (const Scope& s : scopes_)
    for (std::string& r : ScopeReasons(s, gpus, start, end, changed_from, false)) out.push_back(std::move(r));
  return out;
}

}  // namespace bk::engine
