#include "tui/model.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/parse.h"

namespace bk::tui {

Glyphs UnicodeGlyphs() {
  return Glyphs{.unicode = true,
                .free = U'\u00b7',       // ·
                .partly = U'\u2584',     // ▄
                .full = U'\u2593',       // ▓
                .exclusive = U'\u2588',  // █
                .mine = U'\u25c6',       // ◆
                .blackout = U'\u2592',   // ▒
                .now = U'\u2502',        // │
                .preview = U'\u25a0',    // ■
                .blocked = U'\u00d7',    // ×
                .lane = U'\u2501',       // ━
                .rule = U'\u2500',       // ─
                .tick = U'\u252c',       // ┬
                .hour_tick = U'\u253c',  // ┼
                .day_tick = U'\u254b'};  // ╋
}

Glyphs AsciiGlyphs() {
  return Glyphs{.unicode = false,
                .free = U'.',
                .partly = U'-',
                .full = U'=',
                .exclusive = U'X',
                .mine = U'@',
                .blackout = U'#',
                .now = U'|',
                .preview = U'+',
                .blocked = U'x',
                .lane = U'=',
                .rule = U'-',
                .tick = U'+',
                .hour_tick = U'|',
                .day_tick = U'#'};
}

void Data::Index() {
  by_gpu.assign(std::max(policy.gpu_count, 0), {});
  for (size_t i = 0; i < reservations.size(); ++i)
    for (int g : reservations[i].gpus)
      if (g >= 0 && g < policy.gpu_count) by_gpu[g].push_back(static_cast<int>(i));
}

int TimelineColumns(int width) { return std::max(1, width - kLabelWidth - 1); }

std::vector<Seconds> ZoomLevels(Seconds slot) {
  std::vector<Seconds> levels = {slot};
  for (Seconds s : {5 * 60, 15 * 60, 3600, 6 * 3600, 86400})
    if (s > slot && s % slot == 0) levels.push_back(s);
  return levels;
}

Seconds AlignDown(Seconds t, Seconds step, int64_t utc_offset) {
  Seconds shift = step >= 3600 ? utc_offset : 0;
  Seconds local = t + shift;
  Seconds r = ((local % step) + step) % step;
  return local - r - shift;
}

void GoLive(View& v, int columns, int64_t utc_offset) {
  v.cursor = AlignDown(v.now, v.step, utc_offset);
  v.origin = v.cursor - std::min<int64_t>(6, columns / 4) * v.step;
  v.live = true;
}

void MoveCursor(View& v, int64_t columns, int visible_columns) {
  v.cursor += columns * v.step;
  if (v.cursor < v.origin) v.origin = v.cursor;
  Seconds last = v.origin + (visible_columns - 1) * v.step;
  if (v.cursor > last) v.origin += v.cursor - last;
  v.live = false;
}

void Pan(View& v, int64_t columns) {
  v.origin += columns * v.step;
  v.cursor += columns * v.step;
  v.live = false;
}

bool Zoom(View& v, const std::vector<Seconds>& levels, bool in, int visible_columns, int64_t utc_offset) {
  auto it = std::find(levels.begin(), levels.end(), v.step);
  size_t at = it == levels.end() ? 0 : static_cast<size_t>(it - levels.begin());
  if (in ? at == 0 : at + 1 >= levels.size()) return false;
  int64_t column = (v.cursor - v.origin) / v.step;
  v.step = levels[in ? at - 1 : at + 1];
  v.cursor = AlignDown(v.cursor, v.step, utc_offset);
  column = std::clamp<int64_t>(column, 0, std::max(visible_columns - 1, 0));
  v.origin = v.cursor - column * v.step;
  return true;
}

std::vector<int> PanelRows(const Data& d, const std::string& filter) {
  std::vector<int> rows;
  for (size_t i = 0; i < d.reservations.size(); ++i) {
    const auto& r = d.reservations[i];
    if (r.end <= d.live.now) continue;
    if (!filter.empty() && r.username != filter) continue;
    rows.push_back(static_cast<int>(i));
  }
  return rows;
}

int ReservationAt(const Data& d, int gpu, Seconds from, Seconds to) {
  if (gpu < 0 || gpu >= static_cast<int>(d.by_gpu.size())) return -1;
  int found = -1;
  for (int i : d.by_gpu[gpu]) {
    const auto& r = d.reservations[i];
    if (r.start >= to) break;
    if (r.end <= from) continue;
    if (r.uid == d.me) return i;
    if (found < 0) found = i;
  }
  return found;
}

std::string EquivalentCommand(const Editor& e, const engine::Zone& zone) {
  std::string cmd = fmt::format("bk {}{} {}", e.mode == engine::Mode::kExclusive ? "x " : "", e.count,
                                engine::FormatDuration(e.duration));
  cmd += fmt::format(" -t '{}'", engine::FormatLocalShort(e.start, zone));
  if (!e.gpus.empty()) cmd += " -g " + JoinInts(e.gpus, ",");
  if (e.memory_mb) cmd += " --mem " + fmt::format("{}m", *e.memory_mb);
  return cmd;
}

}  // namespace bk::tui
