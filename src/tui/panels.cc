#include "tui/panels.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/parse.h"
#include "surface/text.h"

namespace bk::tui {
namespace {

using engine::Mode;
using engine::Reservation;

std::string Pad(const std::string& text, int width) {
  std::string fitted = surface::FitWords(text, width);
  int w = surface::DisplayWidth(fitted);
  return fitted + std::string(std::max(0, width - w), ' ');
}

std::string EndText(const Reservation& r, const engine::Zone& zone) {
  std::string start = engine::FormatLocalShort(r.start, zone), end = engine::FormatLocalShort(r.end, zone);
  return start.substr(0, 5) == end.substr(0, 5) ? end.substr(6) : end;
}

}  // namespace

std::string GpuMap(const std::vector<int>& gpus, int gpu_count) {
  if (gpu_count > 10) return JoinInts(gpus, ",");
  std::string map(std::max(gpu_count, 0), '.');
  for (int g : gpus)
    if (g >= 0 && g < gpu_count) map[g] = static_cast<char>('0' + g);
  return map;
}

void DrawReservations(const Frame& f, Screen& s, int top, int rows, Layout& layout) {
  if (rows <= 0) return;
  const View& v = f.view;
  const Data& d = f.data;
  bool wide = s.width() >= 100;
  int list_rows = std::max(0, rows - 2);
  int total = static_cast<int>(f.rows.size());
  int first = 0;
  if (v.selected >= list_rows) first = v.selected - list_rows + 1;
  first = std::clamp(first, 0, std::max(0, total - list_rows));
  std::string title =
      fmt::format("{}Reservations  {} active", v.focus == Focus::kReservations ? "> " : "  ", total);
  if (!v.filter.empty()) title += " | user " + v.filter + " (/ to change)";
  if (total > list_rows && list_rows > 0)
    title += fmt::format(" | {}-{}/{}", first + 1, std::min(total, first + list_rows), total);
  s.Put(0, top, title, v.focus == Focus::kReservations ? Role::kSelected : Role::kMuted, kBold);
  if (rows < 2) return;
  int gw = std::max(4, std::min(12, d.policy.gpu_count > 10 ? 12 : d.policy.gpu_count));
  std::string header = wide ? fmt::format("  {:>3} {:<8} {:<16} {:<4} {:<{}} {:>5} {:<11} {:<11} {:>7}", "#",
                                          "ID", "User", "Mode", "GPU", gw, "Slots", "Start", "End", "Dur")
                            : fmt::format("  {:>3} {:<6} {:<8} {} {:<{}} {:>5} {:<11} {:<11} {:>6}", "#",
                                          "ID", "User", "M", "GPU", gw, "Slots", "Start", "End", "Dur");
  s.Put(0, top + 1, header, Role::kMuted, kDim);
  if (total == 0) {
    s.Put(2, top + 2, v.filter.empty() ? "none" : "none for user " + v.filter, Role::kMuted, kDim);
    return;
  }
  for (int i = 0; i < list_rows && first + i < total; ++i) {
    int index = f.rows[first + i];
    const Reservation& r = d.reservations[index];
    bool mine = r.uid == d.me;
    bool selected = v.focus == Focus::kReservations && first + i == v.selected;
    std::string slots = r.mode == Mode::kShared ? surface::SlotsText(r, d.policy) : "-";
    std::string gpus = GpuMap(r.gpus, d.policy.gpu_count);
    std::string line = wide ? fmt::format("{}{:>3} {:<8} {} {:<4} {:<{}} {:>5} {:<11} {:<11} {:>7}",
                                          selected ? ">" : " ", first + i + 1, r.id.substr(0, 8),
                                          Pad(r.username, 16), r.mode == Mode::kShared ? "shar" : "excl",
                                          gpus, gw, slots, engine::FormatLocalShort(r.start, f.zone),
                                          EndText(r, f.zone), surface::ListDuration(r.end - r.start))
                            : fmt::format("{}{:>3} {:<6} {} {} {:<{}} {:>5} {:<11} {:<11} {:>6}",
                                          selected ? ">" : " ", first + i + 1, r.id.substr(0, 6),
                                          Pad(r.username, 8), r.mode == Mode::kShared ? "S" : "X", gpus, gw,
                                          slots, engine::FormatLocalShort(r.start, f.zone),
                                          EndText(r, f.zone), surface::ListDuration(r.end - r.start));
    s.Put(0, top + 2 + i, line, mine ? Role::kMine : Role::kNormal, selected ? kBold | kReverse : kPlain);
    layout.panel_at_row[top + 2 + i] = first + i;
  }
}

int GpuPanelRows(const Frame& f) {
  const Data& d = f.data;
  int g = f.view.gpu, n = 2;
  if (g < static_cast<int>(d.by_gpu.size()))
    for (int i : d.by_gpu[g]) n += d.reservations[i].end > d.live.now;
  if (g < static_cast<int>(d.live.snapshot.devices.size())) n += d.live.snapshot.devices[g].processes.size();
  return n + 1;  // a blank row before the reservations
}

void DrawGpuPanel(const Frame& f, Screen& s, int top, int rows) {
  if (rows <= 0) return;
  const Data& d = f.data;
  int g = f.view.gpu;
  std::string title = fmt::format("GPU {}", g);
  if (g < static_cast<int>(d.live.snapshot.devices.size())) {
    const auto& dev = d.live.snapshot.devices[g];
    title += " " + dev.name;
    if (dev.utilization_percent) title += fmt::format(" | util {}%", *dev.utilization_percent);
    if (dev.memory_used_mb && dev.memory_total_mb)
      title += fmt::format(" | mem {:.1f}/{:.1f} GiB", *dev.memory_used_mb / 1024.0,
                           *dev.memory_total_mb / 1024.0);
    if (dev.temperature_c) title += fmt::format(" | {}C", *dev.temperature_c);
    title += fmt::format(" | {} processes", dev.processes.size());
  }
  if (!d.policy.GpuEnabled(g)) title += " | disabled by the administrator";
  s.Put(0, top, title, Role::kSelected, kBold);
  int y = top + 1, end = top + rows - 1;
  std::vector<int> on;
  if (g < static_cast<int>(d.by_gpu.size()))
    for (int i : d.by_gpu[g])
      if (d.reservations[i].end > d.live.now) on.push_back(i);
  if (y < end)
    s.Put(0, y++,
          on.empty() ? "  no bookings ahead on this GPU" : fmt::format("  {} bookings ahead:", on.size()),
          Role::kMuted, kDim);
  int shown = 0;
  for (int i : on) {
    if (y >= end - 1 && shown < static_cast<int>(on.size()) - 1) {
      s.Put(2, y++, fmt::format("+{} more (Tab lists every reservation)", on.size() - shown), Role::kMuted,
            kDim);
      break;
    }
    if (y >= end) break;
    const Reservation& r = d.reservations[i];
    s.Put(2, y++,
          fmt::format("{} {} {} {} {} -> {} ({})", r.id.substr(0, 8), Pad(r.username, 10),
                      r.mode == Mode::kShared ? "shared " + surface::SlotsText(r, d.policy) : "exclusive",
                      r.memory_mb ? engine::FormatSizeMb(*r.memory_mb) : "",
                      engine::FormatLocalShort(r.start, f.zone), EndText(r, f.zone),
                      surface::ListDuration(r.end - r.start)),
          r.uid == d.me ? Role::kMine : Role::kNormal);
    ++shown;
  }
  if (g < static_cast<int>(d.live.snapshot.devices.size()))
    for (const auto& p : d.live.snapshot.devices[g].processes) {
      if (y >= end) break;
      s.Put(2, y++,
            fmt::format("pid {} {} {} {}", p.pid, Pad(p.username, 10), engine::FormatSizeMb(p.gpu_memory_mb),
                        p.command),
            Role::kMuted);
    }
}

void DrawEditor(const Frame& f, Screen& s, int top, int rows) {
  if (rows <= 0 || !f.view.editor) return;
  const Editor& e = *f.view.editor;
  std::string what = e.kind == Editor::Kind::kAdd ? "BOOK"
                     : e.end_only                 ? "RENEW/END " + e.original.ShortId()
                                                  : "EDIT " + e.original.ShortId();
  std::string fields = fmt::format(
      " {} | {} GPU | {} | {} | GPU {} | VRAM {} | start {}", what, e.count,
      engine::FormatDuration(e.duration), e.mode == Mode::kShared ? "shared" : "exclusive",
      e.gpus.empty() ? "auto" : JoinInts(e.gpus, ","),
      e.memory_mb ? engine::FormatSizeMb(*e.memory_mb) : "auto", engine::FormatLocalShort(e.start, f.zone));
  s.Put(0, top, fields, Role::kPreview, kBold);
  std::string verdict;
  if (!e.checked)
    verdict = " checking...";
  else if (e.ready)
    verdict = fmt::format(" READY: GPU {}, {} -> {} {}", JoinInts(e.placed, ","),
                          engine::FormatLocalShort(e.placed_start, f.zone),
                          engine::FormatLocalShort(e.placed_end, f.zone), e.verdict);
  else
    verdict = " BLOCKED: " + e.verdict;
  int y = top + 1, end = top + rows;
  bool first = true;
  for (const auto& line : surface::WrapWords(verdict, s.width() - 4)) {
    if (y >= end) break;
    s.Put(0, y++, (first ? "" : "   ") + line, e.ready ? Role::kPreview : Role::kError, kBold);
    first = false;
  }
  if (y < end && e.kind == Editor::Kind::kAdd)
    s.Put(0, y++, " same as: " + EquivalentCommand(e, f.zone), Role::kMuted);
  static const char* kAddKeys[] = {
      " Left/Right start   [ ] duration   Up/Down GPU   Space pin/auto GPU   1-9 count",
      " s shared  x exclusive   m VRAM   t start   D duration   Enter book   Esc cancel",
  };
  static const char* kEditKeys[] = {
      " Left/Right move   [ ] end   Up/Down GPU   Space pin/auto GPU   s/x mode   m VRAM",
      " Enter save   Esc cancel   (a started booking: only [ ] move its end)",
  };
  for (const char* line : e.kind == Editor::Kind::kAdd ? kAddKeys : kEditKeys) {
    if (y >= end) break;
    s.Put(0, y++, line, Role::kMuted, kDim);
  }
}

void DrawDialog(const Frame& f, Screen& s) {
  if (!f.view.dialog) return;
  const Dialog& d = *f.view.dialog;
  int inner = 0;
  for (const auto& l : d.lines) inner = std::max(inner, surface::DisplayWidth(l));
  inner = std::clamp(std::max(inner, surface::DisplayWidth(d.title) + 2), 20, s.width() - 6);
  int body = std::min(static_cast<int>(d.lines.size()), s.height() - 6);
  int w = inner + 4, h = body + 3;
  int x0 = (s.width() - w) / 2, y0 = std::max(1, (s.height() - h) / 2);
  const Glyphs& g = f.glyphs;
  char32_t hz = g.unicode ? U'\u2500' : U'-', vt = g.unicode ? U'\u2502' : U'|';
  for (int y = y0; y < y0 + h; ++y)
    for (int x = x0; x < x0 + w; ++x) {
      bool edge_y = y == y0 || y == y0 + h - 1, edge_x = x == x0 || x == x0 + w - 1;
      char32_t c = edge_y && edge_x ? (g.unicode ? U'\u253c' : U'+') : edge_y ? hz : edge_x ? vt : U' ';
      if (g.unicode && edge_y && edge_x)
        c = y == y0 ? (x == x0 ? U'\u250c' : U'\u2510') : (x == x0 ? U'\u2514' : U'\u2518');
      s.Set(x, y, c, Role::kNormal, kPlain);
    }
  s.Put(x0 + 2, y0, " " + d.title + " ", Role::kHeader, kBold);
  int first = std::clamp(d.scroll, 0, std::max(0, static_cast<int>(d.lines.size()) - body));
  for (int i = 0; i < body; ++i) {
    const std::string& line = d.lines[first + i];
    bool section = line.size() > 2 && line.front() != ' ' &&
                   std::none_of(line.begin(), line.end(), [](char c) { return c >= 'a' && c <= 'z'; });
    s.Put(x0 + 2, y0 + 1 + i, surface::FitWords(line, inner), section ? Role::kSelected : Role::kNormal,
          section ? kBold : kPlain);
  }
  std::string foot = d.kind == Dialog::Kind::kConfirmCancel    ? " y cancels it, any other key keeps it "
                     : static_cast<int>(d.lines.size()) > body ? " Up/Down scroll  q/Esc close "
                                                               : " q/Esc/Enter close ";
  s.Put(x0 + 2, y0 + h - 1, foot, Role::kMuted, kPlain);
}

std::string FooterText(const View& v, int width) {
  std::vector<std::string> variants;
  if (v.prompt) {
    variants = {" Enter accept | Esc cancel | Backspace erase", " Enter | Esc"};
  } else if (v.dialog) {
    variants = {" Up/Down scroll | q/Esc close", " q close"};
  } else if (v.editor) {
    variants = {
        " EDITOR | arrows start/GPU | [ ] duration | Space GPU | s/x mode | m VRAM | Enter confirm | Esc "
        "cancel | ? help",
        " EDITOR | arrows | [ ] dur | Space GPU | s/x | Enter | Esc | ?"};
  } else if (v.focus == Focus::kReservations) {
    variants = {
        " RESERVATIONS | up/down select | Enter details | Tab timeline | a book | e edit | d cancel | / "
        "user | u usage | +/- zoom | n NOW | ? help | q quit",
        " RSV | arrows | Enter details | Tab | a/e/d | / user | u | n NOW | ? | q quit",
        " RSV | Enter | Tab | a/e/d | ? | q"};
  } else {
    variants = {
        " TIMELINE | arrows/hjkl move | PgUp/PgDn page | Enter details | Tab reservations | a book here | e "
        "edit | d cancel | +/- zoom | n NOW | ? help | q quit",
        " TIMELINE | arrows | Enter | Tab RSV | a book | e/d | +/- zoom | n NOW | ? | q quit",
        " TL | arrows | Tab | a/e/d | ? | q"};
  }
  for (const auto& text : variants)
    if (surface::DisplayWidth(text) <= width - 1) return text;
  return variants.back();
}

}  // namespace bk::tui
