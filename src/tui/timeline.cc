#include "tui/timeline.h"

#include <fmt/format.h>

#include <algorithm>

#include "surface/text.h"

namespace bk::tui {
namespace {

using engine::Mode;
using engine::Reservation;

bool BlackedOut(const engine::Policy& p, int gpu, Seconds cs, Seconds ce) {
  for (const auto& b : p.blackouts)
    if (b.Covers(gpu) && b.start < ce && b.end > cs) return true;
  return false;
}

// Labels placed left to right where they fit: one that would touch the
// previous label is left out.
class LabelRow {
 public:
  LabelRow(Screen& s, int y, int x0, int columns) : s_(s), y_(y), x0_(x0), end_(x0 + columns) {}
  void Place(int column, const std::string& text, Role role = Role::kMuted, uint8_t attrs = kDim) {
    int x = x0_ + column;
    int w = surface::DisplayWidth(text);
    if (x < next_ || x + w > end_) return;
    s_.Put(x, y_, text, role, attrs);
    next_ = x + w + 1;
  }

 private:
  Screen& s_;
  int y_, x0_, end_;
  int next_ = 0;
};

std::string_view DayName(int weekday) {
  static constexpr std::string_view kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  return kDays[weekday % 7];
}

std::string LabelText(const Frame& f, int gpu) {
  const engine::Policy& p = f.data.policy;
  std::string cap = "-", util = "-", free = "-";
  if (!p.GpuEnabled(gpu)) {
    cap = "OFF";
  } else if (gpu < static_cast<int>(f.data.live.usage.size())) {
    const auto& u = f.data.live.usage[gpu];
    cap = u.exclusive ? fmt::format("X/{}", p.share_capacity)
                      : fmt::format("{}/{}", u.used_units, p.share_capacity);
  }
  if (gpu < static_cast<int>(f.data.live.gpus.size())) {
    const auto& v = f.data.live.gpus[gpu];
    if (v.utilization_percent) util = fmt::format("{}%", *v.utilization_percent);
    if (v.memory_free_mb) {
      double gib = static_cast<double>(*v.memory_free_mb) / 1024.0;
      free = gib >= 99.95 ? fmt::format("{:.0f}", gib) : fmt::format("{:.1f}", gib);
    }
  }
  return fmt::format("{}{:>2} {:>5} {:>4}|{:>5}", gpu == f.view.gpu ? ">" : " ", gpu, cap, util, free);
}

}  // namespace

std::vector<CellState> GpuCells(const Data& d, int gpu, Seconds origin, Seconds step, int columns,
                                const std::string& filter, int selected) {
  std::vector<CellState> cells(std::max(columns, 0));
  const engine::Policy& p = d.policy;
  if (!p.GpuEnabled(gpu)) {
    for (auto& c : cells) c.kind = CellKind::kDisabled;
    return cells;
  }
  static const std::vector<int> kNone;
  const std::vector<int>& on = gpu < static_cast<int>(d.by_gpu.size()) ? d.by_gpu[gpu] : kNone;
  // One sweep: bookings join the active set as the columns reach their start
  // and leave it once the columns pass their end.
  size_t next = 0;
  std::vector<const Reservation*> active;
  std::vector<int> active_index;
  for (int c = 0; c < columns; ++c) {
    Seconds cs = origin + c * step, ce = cs + step;
    while (next < on.size() && d.reservations[on[next]].start < ce) {
      active.push_back(&d.reservations[on[next]]);
      active_index.push_back(on[next]);
      ++next;
    }
    for (size_t i = 0; i < active.size();) {
      if (active[i]->end <= cs) {
        active[i] = active.back(), active.pop_back();
        active_index[i] = active_index.back(), active_index.pop_back();
      } else {
        ++i;
      }
    }
    CellState& cell = cells[c];
    bool exclusive = false, mine = false;
    std::vector<const Reservation*> shared;
    for (size_t i = 0; i < active.size(); ++i) {
      const Reservation* r = active[i];
      if (r->mode == Mode::kExclusive)
        exclusive = true;
      else
        shared.push_back(r);
      if (r->uid == d.me) mine = true;
      if (!filter.empty() && r->username == filter) cell.filtered = true;
      if (active_index[i] == selected) cell.selected = true;
    }
    if (active.size() == 1)
      cell.edge =
          (active[0]->start > cs && active[0]->start < ce) || (active[0]->end > cs && active[0]->end < ce);
    cell.slots = exclusive ? p.share_capacity : engine::PeakShareUnits(shared, cs);
    if (mine)
      cell.kind = CellKind::kMine;
    else if (exclusive)
      cell.kind = CellKind::kExclusive;
    else if (cell.slots >= p.share_capacity)
      cell.kind = CellKind::kFull;
    else if (cell.slots > 0)
      cell.kind = CellKind::kPartly;
    else if (BlackedOut(p, gpu, cs, ce))
      cell.kind = CellKind::kBlackout;
  }
  return cells;
}

void DrawAxis(const Frame& f, Screen& s, int y, int x0, int columns) {
  const View& v = f.view;
  const Glyphs& g = f.glyphs;
  s.Put(0, y, "Date", Role::kMuted, kDim);
  s.Put(0, y + 1, "Hour", Role::kMuted, kDim);
  s.Put(0, y + 2, "Minute", Role::kMuted, kDim);
  s.Put(0, y + 3, " GPU  Cap Util| Free", Role::kMuted, kBold);
  LabelRow dates(s, y, x0, columns), hours(s, y + 1, x0, columns), minutes(s, y + 2, x0, columns);
  int now_column = v.now >= v.origin ? static_cast<int>((v.now - v.origin) / v.step) : -1;
  if (now_column >= 0 && now_column < columns) {
    s.Put(x0 + std::max(0, now_column - 1), y + 2, "NOW", Role::kNow, kBold);
  }
  engine::CivilTime prev{};
  for (int c = 0; c < columns; ++c) {
    Seconds cs = v.origin + c * v.step;
    engine::CivilTime t = f.zone.ToLocal(cs);
    bool new_day = c == 0 || t.day != prev.day || t.month != prev.month;
    bool new_hour = new_day || t.hour != prev.hour;
    if (new_day)
      dates.Place(c, fmt::format("{:02}-{:02} {}", t.month, t.day,
                                 DayName(engine::Weekday(engine::CivilToEpoch(t)))));
    // The first column names its hour only when the next whole hour is not
    // about to take the room (a window starting at 01:50 labels 2h, not 1h).
    bool whole = t.minute == 0 || v.step >= 3600;
    bool next_hour_near = (60 - t.minute) * 60 < 4 * v.step;
    if (new_hour && v.step < 86400 && (whole || c > 0 || !next_hour_near))
      hours.Place(c, fmt::format("{}h", t.hour));
    bool minor = v.step < 3600 && t.minute % 15 == 0 && t.minute != 0;
    if (minor && std::abs(c - now_column) > 3) minutes.Place(c, fmt::format("{:02}", t.minute));
    char32_t rule = g.rule;
    if (t.hour == 0 && t.minute == 0 && v.step < 86400)
      rule = g.day_tick;
    else if (t.minute == 0 && v.step < 3600)
      rule = g.hour_tick;
    else if (minor)
      rule = g.tick;
    s.Set(x0 + c, y + 3, rule, Role::kMuted, kDim);
    prev = t;
  }
  if (now_column >= 0 && now_column < columns) s.Set(x0 + now_column, y + 3, g.now, Role::kNow, kBold);
}

void DrawGpuRow(const Frame& f, Screen& s, int y, int x0, int columns, int gpu, int selected) {
  const View& v = f.view;
  const Glyphs& g = f.glyphs;
  bool focused = gpu == v.gpu;
  Role label_role = !f.data.policy.GpuEnabled(gpu) ? Role::kError : focused ? Role::kSelected : Role::kMuted;
  s.Put(0, y, LabelText(f, gpu), label_role, focused ? kBold : kPlain);
  std::vector<CellState> cells = GpuCells(f.data, gpu, v.origin, v.step, columns, v.filter, selected);
  for (int c = 0; c < columns; ++c) {
    Seconds cs = v.origin + c * v.step, ce = cs + v.step;
    const CellState& cell = cells[c];
    char32_t glyph = g.free;
    Role role = Role::kFree;
    uint8_t attrs = kPlain;
    switch (cell.kind) {
      case CellKind::kFree: attrs = kDim; break;
      case CellKind::kPartly: glyph = g.partly, role = Role::kShared; break;
      case CellKind::kFull: glyph = g.full, role = Role::kFull; break;
      case CellKind::kExclusive: glyph = g.exclusive, role = Role::kExclusive, attrs = kBold; break;
      case CellKind::kMine: glyph = g.mine, role = Role::kMine, attrs = kBold; break;
      case CellKind::kBlackout: glyph = g.blackout, role = Role::kBlackout; break;
      case CellKind::kDisabled: glyph = g.blackout, role = Role::kMuted, attrs = kDim; break;
    }
    if (cell.kind == CellKind::kFree && cs <= v.now && v.now < ce)
      glyph = g.now, role = Role::kNow, attrs = kBold;
    if (ce <= v.now) attrs = (attrs & ~kBold) | kDim;  // the past is read-only
    if (cell.filtered) attrs |= kUnderline | kBold;
    if (cell.selected) attrs |= kReverse;
    s.Set(x0 + c, y, glyph, role, attrs);
  }
  if (v.editor) {
    const Editor& e = *v.editor;
    const std::vector<int>& shown = e.ready ? e.placed : e.gpus.empty() ? std::vector<int>{v.gpu} : e.gpus;
    if (std::find(shown.begin(), shown.end(), gpu) != shown.end()) {
      Seconds from = e.ready ? e.placed_start : e.start, to = e.ready ? e.placed_end : e.end();
      for (int c = 0; c < columns; ++c) {
        Seconds cs = v.origin + c * v.step, ce = cs + v.step;
        if (cs < to && ce > from)
          s.Set(x0 + c, y, e.ready ? g.preview : g.blocked, e.ready ? Role::kPreview : Role::kError, kBold);
      }
    }
  } else if (v.focus == Focus::kTimeline && focused) {
    int c = static_cast<int>((v.cursor - v.origin) / v.step);
    if (c >= 0 && c < columns) s.AddAttrs(x0 + c, y, 1, kReverse);
  }
}

std::vector<int> LaneReservations(const Frame& f, int gpu, int columns, int max) {
  std::vector<int> lanes;
  if (gpu < 0 || gpu >= static_cast<int>(f.data.by_gpu.size())) return lanes;
  Seconds from = f.view.origin, to = from + columns * f.view.step;
  for (int i : f.data.by_gpu[gpu]) {
    const Reservation& r = f.data.reservations[i];
    if (r.start >= to) break;
    if (r.end > from && r.mode == Mode::kShared) lanes.push_back(i);
  }
  if (static_cast<int>(lanes.size()) > max) lanes.resize(std::max(max, 0));
  return lanes;
}

void DrawLane(const Frame& f, Screen& s, int y, int x0, int columns, int gpu, int reservation, int hidden) {
  const Reservation& r = f.data.reservations[reservation];
  bool mine = r.uid == f.data.me;
  std::string label = fmt::format(" G{} {}/{} {} {}", gpu, r.share_units, f.data.policy.share_capacity,
                                  r.id.substr(0, 6), r.username);
  if (hidden > 0) label += fmt::format(" +{}", hidden);
  s.Put(0, y, surface::FitWords(label, kLabelWidth - 1), Role::kMuted, kDim);
  const View& v = f.view;
  for (int c = 0; c < columns; ++c) {
    Seconds cs = v.origin + c * v.step, ce = cs + v.step;
    if (cs < r.end && ce > r.start) s.Set(x0 + c, y, f.glyphs.lane, mine ? Role::kMine : Role::kShared);
  }
}

}  // namespace bk::tui
