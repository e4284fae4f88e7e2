#pragma once
// What the terminal UI shows and where its cursor is: the ledger data it
// last read (Data), the state of the view (View), and the pure moves that
// keys make on it. No I/O here: app.cc reads the ledger, render.cc draws.

#include <optional>
#include <string>
#include <vector>

#include "engine/civil_time.h"
#include "engine/policy.h"
#include "engine/reservation.h"
#include "service/types.h"
#include "store/records.h"

namespace bk::tui {

using engine::Seconds;

// Glyphs for the timeline: Unicode block elements in a UTF-8 locale, ASCII
// otherwise (LANG=C, a serial console), so that every state stays readable.
struct Glyphs {
  bool unicode = true;
  char32_t free, partly, full, exclusive, mine, blackout, now, preview, blocked, lane;
  char32_t rule, tick, hour_tick, day_tick;
};
Glyphs UnicodeGlyphs();
Glyphs AsciiGlyphs();

// The ledger as last read.
struct Data {
  engine::Policy policy;
  service::StatusView live;  // live GPU state; its reservations are unused
  // Reservations overlapping [from, to), not cancelled, sorted by start.
  std::vector<engine::Reservation> reservations;
  Seconds from = 0, to = 0;
  std::vector<store::Announcement> announcements;  // active ones
  uint32_t me = 0;
  std::string deployment;  // "private" or "server"
  std::string monitor = "unknown";
  std::string worker = "idle";
  // Per GPU, indexes into `reservations` in start order (built by Index()).
  std::vector<std::vector<int>> by_gpu;
  void Index();
};

enum class Focus { kTimeline, kReservations };

// The booking being made (`a`) or changed (`e`) and its live preview.
struct Editor {
  enum class Kind { kAdd, kEdit };
  Kind kind = Kind::kAdd;
  engine::Reservation original;  // edit: the reservation as it was
  bool end_only = false;         // edit of a started reservation: only its end moves
  int count = 1;
  Seconds start = 0;
  Seconds duration = 0;
  engine::Mode mode = engine::Mode::kShared;
  std::vector<int> gpus;  // pinned GPUs; empty: the service picks
  std::optional<int64_t> memory_mb;
  // The preview: what the service's admission said of the request as it
  // stands (READY with the placement, or BLOCKED with the reason).
  bool checked = false;
  bool ready = false;
  std::string verdict;
  std::vector<int> placed;
  Seconds placed_start = 0, placed_end = 0;
  Seconds end() const { return start + duration; }
};

// A boxed window over the frame: details, help, usage, a yes/no question.
struct Dialog {
  enum class Kind { kText, kConfirmCancel };
  Kind kind = Kind::kText;
  std::string title;
  std::vector<std::string> lines;
  int scroll = 0;
  std::string target;  // kConfirmCancel: the reservation ID
};

// One line of text input in the message row.
struct Prompt {
  enum class Purpose { kFilter, kMemory, kDuration, kStart };
  Purpose purpose = Purpose::kFilter;
  std::string label;
  std::string text;
};

struct View {
  Seconds now = 0;
  Seconds step = 5 * 60;  // per column
  Seconds origin = 0;     // the first column's start
  Seconds cursor = 0;     // the cursor column's start
  int gpu = 0;            // the cursor's GPU
  Focus focus = Focus::kTimeline;
  int selected = -1;   // index into the panel's rows; -1 = none
  std::string filter;  // only this user's bookings in the panel, highlighted in the timeline
  std::string message;
  bool message_error = false;
  std::optional<Editor> editor;
  std::optional<Dialog> dialog;
  std::optional<Prompt> prompt;
  bool live = true;  // the window follows NOW until the user moves it away
};

// Column widths the frame is cut into: the label column, then one column per step.
inline constexpr int kLabelWidth = 21;
inline constexpr int kMinWidth = 72;
inline constexpr int kMinHeight = 18;
int TimelineColumns(int width);

// Zoom levels the policy's slot allows: the slot, then 5m, 15m, 1h, 6h, 1d
// where they are larger multiples of it.
std::vector<Seconds> ZoomLevels(Seconds slot);
// The window's columns start on a step boundary in local time for steps of
// an hour or more (whole local hours, midnight), in UTC below (the slot grid;
// every zone is a whole number of 15 minutes off it).
Seconds AlignDown(Seconds t, Seconds step, int64_t utc_offset);

// The default window: NOW six columns from the left, the cursor on NOW.
void GoLive(View& v, int columns, int64_t utc_offset);
// Moves the cursor by `columns` (negative: back), panning the window to keep
// it visible.
void MoveCursor(View& v, int64_t columns, int visible_columns);
// Moves the window by `columns` and the cursor with it.
void Pan(View& v, int64_t columns);
// One zoom level in (`in`) or out, keeping the cursor's time at its column.
bool Zoom(View& v, const std::vector<Seconds>& levels, bool in, int visible_columns, int64_t utc_offset);

// The reservations the panel lists: not yet ended, the filter's user only
// when set, in start order (indexes into data.reservations).
std::vector<int> PanelRows(const Data& d, const std::string& filter);

// The reservation of `gpu` at the cursor's column, preferring the caller's;
// -1 when the cell is free.
int ReservationAt(const Data& d, int gpu, Seconds from, Seconds to);

// The editor's request as a one-line command ("bk 1 1h --at '11-29 19:00' -g 2").
std::string EquivalentCommand(const Editor& e, const engine::Zone& zone);

}  // namespace bk::tui
