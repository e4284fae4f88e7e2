#pragma once
// The lower part of a frame: the reservations panel, the GPU focus panel or
// the booking editor; dialogs drawn over everything; the footer.

#include "tui/render.h"

namespace bk::tui {

// Rows top..top+rows-1. The reservations panel records which panel row each
// screen row shows in `layout` (mouse clicks).
void DrawReservations(const Frame& f, Screen& s, int top, int rows, Layout& layout);
void DrawGpuPanel(const Frame& f, Screen& s, int top, int rows);
// The rows the GPU focus panel would fill: title, bookings ahead, processes.
int GpuPanelRows(const Frame& f);
void DrawEditor(const Frame& f, Screen& s, int top, int rows);
void DrawDialog(const Frame& f, Screen& s);
// The key hints that fit the width, for the mode the view is in.
std::string FooterText(const View& v, int width);
// "GPU map": one position per GPU ("..2."), or a list when over ten GPUs.
std::string GpuMap(const std::vector<int>& gpus, int gpu_count);

}  // namespace bk::tui
