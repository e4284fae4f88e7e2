#pragma once
// A read position in text for the small hand-written parsers (times, ISO 8601).

#include <cstddef>
#include <optional>
#include <string_view>

namespace bk {

inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }

class Cursor {
 public:
  explicit Cursor(std::string_view s) : s_(s) {}
  bool Done() const { return i_ == s_.size(); }
  char Peek() const { return Done() ? '\0' : s_[i_]; }
  bool PeekDigit() const { return IsDigit(Peek()); }
  bool Eat(char c) {
    if (Done() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  // Exactly n digits.
  std::optional<int> Fixed(int n) {
    if (s_.size() - i_ < static_cast<size_t>(n)) return std::nullopt;
    int v = 0;
    for (int k = 0; k < n; ++k) {
      if (!IsDigit(s_[i_ + k])) return std::nullopt;
      v = v * 10 + (s_[i_ + k] - '0');
    }
    i_ += n;
    return v;
  }
  size_t Pos() const { return i_; }
  void SkipDigits() {
    while (PeekDigit()) ++i_;
  }

 private:
  std::string_view s_;
  size_t i_ = 0;
};

}  // namespace bk
