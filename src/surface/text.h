#pragma once
// Human-readable rendering helpers shared by the CLI and the TUI.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/civil_time.h"
#include "engine/policy.h"
#include "engine/reservation.h"

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
// "1/2" or "all"
std::string SlotsText(const engine::Reservation& r, const engine::Policy& p);
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
