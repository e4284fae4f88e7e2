#pragma once
// Renders one frame of the terminal UI into a Screen: the header, the banner,
// the timeline (timeline.cc), the lower panel and dialogs (panels.cc), the
// message line and the footer. Pure: the same inputs give the same frame.

#include <vector>

#include "engine/civil_time.h"
#include "tui/model.h"
#include "tui/screen.h"

namespace bk::tui {

struct Frame {
  const Data& data;
  const View& view;
  const std::vector<int>& rows;  // the panel's rows (PanelRows)
  const Glyphs& glyphs;
  const engine::Zone& zone;
};

// Where things landed, for mouse clicks and for keeping the cursor visible.
struct Layout {
  bool too_small = false;
  int timeline_x = 0;             // the first column's screen x
  int columns = 0;                // timeline columns shown
  std::vector<int> gpu_at_row;    // per screen row: the GPU drawn there, or -1
  std::vector<int> panel_at_row;  // per screen row: the panel row index there, or -1
};

Layout Render(const Frame& f, Screen& s);

// The rows the GPU list and the panel get at this height, with `banner` lines.
struct Rows {
  int banner = 0;
  int axis_top = 0;
  int gpu_top = 0;
  int gpus = 0;
  int lanes = 0;
  int panel_top = 0;
  int panel = 0;
};
Rows SplitRows(int height, int gpu_count, int banner, int lanes_wanted);

}  // namespace bk::tui
