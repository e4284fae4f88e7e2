#include "tui/render.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/parse.h"
#include "surface/text.h"
#include "tui/panels.h"
#include "tui/timeline.h"

namespace bk::tui {
namespace {

std::string_view Mode(const View& v, int columns) {
  Seconds end = v.origin + columns * v.step;
  return end <= v.now ? "HISTORY" : v.origin > v.now ? "FUTURE" : "LIVE";
}

std::string TitleText(const Frame& f, int columns, int width) {
  const View& v = f.view;
  Seconds end = v.origin + columns * v.step;
  std::string step = engine::FormatDuration(v.step);
  if (width >= 100)
    return fmt::format(" GPUBK | {} | now {} | window {} -> {} | {}/col | {}", Mode(v, columns),
                       engine::FormatLocal(v.now, f.zone), engine::FormatLocalShort(v.origin, f.zone),
                       engine::FormatLocalShort(end, f.zone), step, f.data.deployment);
  return fmt::format(" GPUBK {} | {} | {}->{} | {}/col", Mode(v, columns),
                     engine::FormatLocalShort(v.now, f.zone), engine::FormatLocalShort(v.origin, f.zone),
                     engine::FormatLocalShort(end, f.zone), step);
}

std::string DetailsText(const Frame& f) {
  const engine::Policy& p = f.data.policy;
  std::string text =
      fmt::format(" monitor={} | worker={} | share={} slots/GPU | GPUs={}/{} enabled", f.data.monitor,
                  f.data.worker, p.share_capacity, p.EnabledGpus().size(), p.gpu_count);
  if (!f.view.filter.empty()) text += " | user=" + f.view.filter;
  return text;
}

// Warning and critical announcements, then the blackouts in view.
std::vector<std::pair<std::string, Role>> BannerLines(const Frame& f, int columns, int width) {
  std::vector<std::pair<std::string, Role>> lines;
  for (const auto& a : f.data.announcements) {
    if (a.level == store::AnnouncementLevel::kInfo) continue;
    std::string level = a.level == store::AnnouncementLevel::kCritical ? "CRITICAL" : "WARNING";
    lines.emplace_back(surface::FitWords(fmt::format(" {}: {}", level, a.message), width - 1),
                       a.level == store::AnnouncementLevel::kCritical ? Role::kError : Role::kWarning);
  }
  const View& v = f.view;
  Seconds end = v.origin + columns * v.step;
  for (const auto& b : f.data.policy.blackouts)
    if (b.start < end && b.end > v.origin)
      lines.emplace_back(
          surface::FitWords(fmt::format(" BLACKOUT {}{}: {}", surface::RangeText(b.start, b.end, f.zone),
                                        b.gpus.empty() ? "" : " GPU " + JoinInts(b.gpus, ","), b.reason),
                            width - 1),
          Role::kBlackout);
  if (lines.size() > 2) {
    size_t more = lines.size() - 1;
    lines.resize(1);
    lines.emplace_back(fmt::format("  ... {} more: bk n, bk admin blackout list", more), Role::kWarning);
  }
  return lines;
}

}  // namespace

Rows SplitRows(int height, int gpu_count, int banner, int lanes_wanted) {
  Rows r;
  r.banner = banner;
  r.axis_top = 2 + std::max(banner, 1);
  r.gpu_top = r.axis_top + 4;
  int free = height - 2 - r.gpu_top;  // message line and footer below
  const int min_panel = 4;
  r.gpus = std::clamp(gpu_count, 1, std::max(1, free - min_panel));
  r.lanes = std::clamp(lanes_wanted, 0, std::max(0, free - r.gpus - min_panel - 2));
  r.panel_top = r.gpu_top + r.gpus + r.lanes;
  r.panel = std::max(0, height - 2 - r.panel_top);
  return r;
}

Layout Render(const Frame& f, Screen& s) {
  Layout layout;
  const int w = s.width(), h = s.height();
  layout.gpu_at_row.assign(h, -1);
  layout.panel_at_row.assign(h, -1);
  if (w < kMinWidth || h < kMinHeight) {
    layout.too_small = true;
    s.Put(0, 0,
          fmt::format("Terminal too small: {}x{}; bk t needs at least {}x{} (q quits)", w, h, kMinWidth,
                      kMinHeight),
          Role::kError, kBold);
    return layout;
  }
  const View& v = f.view;
  const Data& d = f.data;
  const int columns = TimelineColumns(w);
  layout.timeline_x = kLabelWidth;
  layout.columns = columns;

  s.FillRow(0, Role::kHeader, kReverse);
  s.Put(0, 0, TitleText(f, columns, w), Role::kHeader, kReverse | kBold);
  s.Put(0, 1, DetailsText(f), Role::kMuted, kDim);
  auto banner = v.editor ? std::vector<std::pair<std::string, Role>>{} : BannerLines(f, columns, w);
  for (size_t i = 0; i < banner.size(); ++i)
    s.Put(0, 2 + static_cast<int>(i), banner[i].first, banner[i].second, kBold);

  // The cursor's GPU gets share lanes when its shared bookings overlap.
  int selected =
      v.focus == Focus::kReservations && v.selected >= 0 && v.selected < static_cast<int>(f.rows.size())
          ? f.rows[v.selected]
          : -1;
  int lane_gpu =
      selected >= 0 && !d.reservations[selected].gpus.empty() ? d.reservations[selected].gpus[0] : v.gpu;
  std::vector<int> lanes = LaneReservations(f, lane_gpu, columns, d.policy.share_capacity + 1);
  int lanes_wanted = lanes.size() >= 2 ? std::min<int>(lanes.size(), d.policy.share_capacity) : 0;
  Rows rows = SplitRows(h, d.policy.gpu_count, static_cast<int>(banner.size()), lanes_wanted);

  DrawAxis(f, s, rows.axis_top, kLabelWidth, columns);
  // The GPU list scrolls to keep the cursor's GPU in view.
  int first_gpu = std::clamp(v.gpu - rows.gpus + 1, 0, std::max(0, d.policy.gpu_count - rows.gpus));
  for (int i = 0; i < rows.gpus && first_gpu + i < d.policy.gpu_count; ++i) {
    DrawGpuRow(f, s, rows.gpu_top + i, kLabelWidth, columns, first_gpu + i, selected);
    layout.gpu_at_row[rows.gpu_top + i] = first_gpu + i;
  }
  for (int i = 0; i < rows.lanes; ++i) {
    int hidden = i + 1 == rows.lanes ? static_cast<int>(lanes.size()) - rows.lanes : 0;
    DrawLane(f, s, rows.gpu_top + rows.gpus + i, kLabelWidth, columns, lane_gpu, lanes[i], hidden);
  }

  if (v.editor) {
    DrawEditor(f, s, rows.panel_top, rows.panel);
  } else if (v.focus == Focus::kTimeline) {
    // The cursor's GPU first, the reservations below it when there is room.
    int gpu_rows = std::min(rows.panel, std::max(3, std::min(GpuPanelRows(f), rows.panel / 2)));
    DrawGpuPanel(f, s, rows.panel_top, gpu_rows);
    if (rows.panel - gpu_rows >= 4)
      DrawReservations(f, s, rows.panel_top + gpu_rows, rows.panel - gpu_rows, layout);
  } else {
    DrawReservations(f, s, rows.panel_top, rows.panel, layout);
  }

  if (v.prompt) {
    int x = s.Put(0, h - 2, " " + v.prompt->label + v.prompt->text, Role::kSelected, kBold);
    s.Set(x, h - 2, U' ', Role::kSelected, kReverse);  // where typing goes
  } else if (!v.message.empty()) {
    s.Put(0, h - 2, " " + surface::FitWords(v.message, w - 2), v.message_error ? Role::kError : Role::kNormal,
          v.message_error ? kBold : kPlain);
  }
  s.FillRow(h - 1, Role::kHeader, kReverse);
  s.Put(0, h - 1, FooterText(v, w), Role::kHeader, kReverse);
  DrawDialog(f, s);
  return layout;
}

}  // namespace bk::tui
