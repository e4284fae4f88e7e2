#include "tui/screen.h"

#include <algorithm>

namespace bk::tui {

Screen::Screen(int width, int height)
    : width_(std::max(width, 1)),
      height_(std::max(height, 1)),
      cells_(static_cast<size_t>(width_) * height_) {}

void Screen::Set(int x, int y, char32_t glyph, Role role, uint8_t attrs) {
  if (x < 0 || y < 0 || y >= height_ || x >= width_ - 1) return;
  cells_[static_cast<size_t>(y) * width_ + x] = Cell{glyph, role, attrs};
}

int Screen::Put(int x, int y, std::string_view text, Role role, uint8_t attrs) {
  size_t i = 0;
  while (i < text.size()) {
    auto b = static_cast<unsigned char>(text[i]);
    int extra = b < 0x80 ? 0 : b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : b >= 0xc0 ? 1 : 0;
    char32_t c = extra == 0 ? b : extra == 1 ? (b & 0x1f) : extra == 2 ? (b & 0x0f) : (b & 0x07);
    size_t j = i + 1;
    for (int k = 0; k < extra && j < text.size(); ++k, ++j) c = (c << 6) | (text[j] & 0x3f);
    // Control characters (C0, DEL, C1, and stray bytes of broken UTF-8)
    // never reach the terminal: a user name or reason could otherwise move
    // its cursor.
    if (c < 0x20 || (c >= 0x7f && c < 0xa0)) c = U'?';
    Set(x++, y, c, role, attrs);
    i = j;
  }
  return x;
}

void Screen::FillRow(int y, Role role, uint8_t attrs, int x) {
  for (; x < width_ - 1; ++x) Set(x, y, U' ', role, attrs);
}

void Screen::AddAttrs(int x, int y, int n, uint8_t attrs) {
  if (y < 0 || y >= height_) return;
  for (int i = std::max(x, 0); i < std::min(x + n, width_ - 1); ++i)
    cells_[static_cast<size_t>(y) * width_ + i].attrs |= attrs;
}

std::string Utf8(char32_t c) {
  std::string s;
  if (c < 0x80) {
    s += static_cast<char>(c);
  } else if (c < 0x800) {
    s += static_cast<char>(0xc0 | (c >> 6));
    s += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    s += static_cast<char>(0xe0 | (c >> 12));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    s += static_cast<char>(0xf0 | (c >> 18));
    s += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    s += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    s += static_cast<char>(0x80 | (c & 0x3f));
  }
  return s;
}

std::string Screen::RowText(int y) const {
  std::string s;
  for (int x = 0; x < width_; ++x) s += Utf8(at(x, y).glyph);
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

std::string Screen::Text() const {
  std::string s;
  for (int y = 0; y < height_; ++y) s += RowText(y) + "\n";
  return s;
}

}  // namespace bk::tui
