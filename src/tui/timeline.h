#pragma once
// The timeline part of a frame: the axis rows (date, hour, minute, ruler)
// and one row per GPU, each column one step of time, plus the share lanes of
// the cursor's GPU.

#include <vector>

#include "tui/render.h"

namespace bk::tui {

// What one column of one GPU holds.
enum class CellKind { kFree, kPartly, kFull, kExclusive, kMine, kBlackout, kDisabled };

struct CellState {
  CellKind kind = CellKind::kFree;
  int slots = 0;          // shared slots in use at the busiest instant
  bool filtered = false;  // a booking of the filter's user is in it
  bool selected = false;  // the selected reservation is in it
  bool edge = false;      // exactly one booking, starting or ending inside
};

// The cells of `gpu` for `columns` steps from `origin`; `selected` is the
// index of the selected reservation (or -1).
std::vector<CellState> GpuCells(const Data& d, int gpu, Seconds origin, Seconds step, int columns,
                                const std::string& filter, int selected);

// Draws rows y..y+3 (date, hour, minute, ruler) over the timeline's columns.
void DrawAxis(const Frame& f, Screen& s, int y, int x0, int columns);
// Draws GPU `gpu`'s row at `y`: its label and its cells.
void DrawGpuRow(const Frame& f, Screen& s, int y, int x0, int columns, int gpu, int selected);
// The shared reservations on `gpu` in the window, one lane each (at most `max`).
std::vector<int> LaneReservations(const Frame& f, int gpu, int columns, int max);
void DrawLane(const Frame& f, Screen& s, int y, int x0, int columns, int gpu, int reservation, int hidden);

}  // namespace bk::tui
