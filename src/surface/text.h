#pragma once
// Human-readable rendering helpers shared by the CLI and the TUI.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/civil_time.h"
#include "engine/policy.h"
#include "engine/reservation.h"
#include "service/types.h"

namespace bk::surface {

// "share=1 slot (max 2) " for shared, "" for exclusive.
std::string ShareText(const engine::Reservation& r, const engine::Policy& p);
// "2026-11-29 18:50 +0000 -> 2026-11-29 19:20 +0000"
std::string RangeText(engine::Seconds start, engine::Seconds end, const engine::Zone& zone);
// Start and end as "11-29 18:50". When the zone's offset changes in between
// (a DST change), each carries its offset ("11-01 01:30 -0400"), so that an
// end in the repeated hour never reads as earlier than its start.
struct ShortRange {
  std::string start;
  std::string end;
  bool offsets = false;  // a DST change lies between: both carry their offset
};
ShortRange ShortRangeText(engine::Seconds start, engine::Seconds end, const engine::Zone& zone);
// `text` with every UTC instant it quotes ("2026-11-29T18:50:00Z", or with
// "+00:00") written in `zone` as "2026-11-30 02:50 +0800" (seconds kept when
// not zero). Messages come from the service in UTC, the same for every
// client of a daemon; a person reads them in their own zone.
std::string LocalTimes(std::string_view text, const engine::Zone& zone);
// The one line every summary shows while notices are unread ("" when none):
// `notice: 2 unread (admin cancelled 3f2a19c0: GPU maintenance); read them
// with `bk n``, describing the newest.
std::string UnreadNoticeLine(const service::UnreadNotifications& u);
// "1/2" or "all": the shared slots a booking holds per GPU out of the
// maximum, the one notation every human view uses ("Slots" in a table,
// "slots 1/2" in a line).
std::string SlotsText(const engine::Reservation& r, const engine::Policy& p);
// The columns `text` takes on a terminal: its UTF-8 code points.
int DisplayWidth(std::string_view text);
// `text` as it fits in `width` columns: whole, or its leading words and "…"
// ("NVIDIA H100…"); a first word too long is cut inside.
std::string FitWords(const std::string& text, int width);
// Rows of cells as lines of aligned columns: each column as wide as its
// widest cell, one space apart, `align` saying 'l' or 'r' per column, each
// line after `indent` and without trailing spaces.
std::string AlignRows(const std::vector<std::vector<std::string>>& rows, std::string_view align,
                      std::string_view indent);
// "30m", "1h30m", "124h20m (5d4h20m)"
std::string ListDuration(engine::Seconds d);

// Terminal width: COLUMNS, else the terminal's, else `fallback`.
int TerminalWidth(int fd, int fallback);
// `text` in lines of at most `width` characters (at least one word each),
// broken at spaces.
std::vector<std::string> WrapWords(const std::string& text, int width);
// ANSI colour when the stream is a terminal, NO_COLOR is unset and TERM != dumb.
bool UseColor(int fd);

// --color=auto|always|never: a choice on the command line outranks NO_COLOR
// and TERM; auto leaves it to UseColor.
enum class ColorMode { kAuto, kAlways, kNever };
std::optional<ColorMode> ParseColorMode(std::string_view text);
bool UseColor(int fd, ColorMode mode);

// What a piece of text says, and so its colour.
enum class Style {
  kError,    // the `bk:` of an error (red)
  kWarning,  // the `warning:` of a warning (yellow)
  kPrompt,   // the `bk>` prompt (bold)
  kGood,     // a status that went through: created, updated (green)
  kPending,  // a status still waiting: queued, pending (cyan)
};
// `text` in `style`'s ANSI colour when `on`; unchanged otherwise.
std::string Paint(std::string_view text, Style style, bool on);

}  // namespace bk::surface
