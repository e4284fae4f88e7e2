#pragma once
// tui::Screen: one frame as a grid of cells, each a glyph and what it shows
// (its role, which the terminal turns into colour or attributes). Rendering
// writes a Screen and nothing else, so a frame can be tested and timed
// without a terminal; the terminal draws it in one pass.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bk::tui {

// What a cell shows; the terminal maps each role to a colour pair (or, on a
// monochrome terminal or with NO_COLOR, to attributes alone).
enum class Role : uint8_t {
  kNormal,
  kHeader,     // title and footer bars
  kMuted,      // labels, axis, past cells
  kFree,       // free timeline cells
  kShared,     // others' shared bookings
  kFull,       // a GPU whose shared slots are all taken
  kExclusive,  // others' exclusive bookings
  kMine,       // the caller's bookings
  kBlackout,   // administrator blackouts
  kNow,        // the NOW marker
  kError,      // errors, BLOCKED previews, disabled GPUs
  kWarning,    // the banner
  kPreview,    // a READY booking preview
  kSelected,   // the focused row or reservation
  kRoleCount,
};

// Attributes that say something without colour (monochrome, NO_COLOR).
enum Attr : uint8_t {
  kPlain = 0,
  kBold = 1,
  kDim = 2,
  kReverse = 4,
  kUnderline = 8,
};

struct Cell {
  char32_t glyph = U' ';
  Role role = Role::kNormal;
  uint8_t attrs = kPlain;
  bool operator==(const Cell&) const = default;
};

class Screen {
 public:
  Screen(int width, int height);
  int width() const { return width_; }
  int height() const { return height_; }

  const Cell& at(int x, int y) const { return cells_[static_cast<size_t>(y) * width_ + x]; }
  // Writes UTF-8 `text` from column `x` of row `y`, clipped at the last
  // column but one (a terminal scrolls when its last cell is written).
  // Returns the column after the text.
  int Put(int x, int y, std::string_view text, Role role = Role::kNormal, uint8_t attrs = kPlain);
  void Set(int x, int y, char32_t glyph, Role role, uint8_t attrs = kPlain);
  // Row `y` from column `x` to the last usable column in `role` (spaces).
  void FillRow(int y, Role role, uint8_t attrs = kPlain, int x = 0);
  // Adds `attrs` to the cells [x, x + n) of row `y`.
  void AddAttrs(int x, int y, int n, uint8_t attrs);
  // Row `y` as UTF-8 text, trailing spaces removed (tests, the plain fallback).
  std::string RowText(int y) const;
  std::string Text() const;  // every row, newline-terminated

 private:
  int width_;
  int height_;
  std::vector<Cell> cells_;
};

// UTF-8 encoding of one code point.
std::string Utf8(char32_t c);

}  // namespace bk::tui
