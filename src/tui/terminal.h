#pragma once
// tui::Terminal: where frames are drawn and keys come from. The curses one
// drives a real terminal; tests drive the app through the same interface.

#include <memory>
#include <string>

#include "base/result.h"
#include "tui/screen.h"

namespace bk::tui {

// Keys beyond plain characters, outside the byte range.
enum Key : int {
  kKeyCtrlC = 3,
  kKeyTab = 9,
  kKeyEnter = 10,
  kKeyEscape = 27,
  kKeyBackspace = 127,
  kKeyUp = 0x10000,
  kKeyDown,
  kKeyLeft,
  kKeyRight,
  kKeyShiftLeft,
  kKeyShiftRight,
  kKeyShiftUp,
  kKeyShiftDown,
  kKeyPageUp,
  kKeyPageDown,
  kKeyHome,
  kKeyEnd,
  kKeyBackTab,
};

struct Event {
  enum class Kind { kNone, kKey, kClick, kResize, kInterrupt };
  Kind kind = Kind::kNone;
  int key = 0;
  int x = 0, y = 0;  // kClick: the cell clicked
};

class Terminal {
 public:
  virtual ~Terminal() = default;
  virtual int width() const = 0;
  virtual int height() const = 0;
  virtual void Draw(const Screen& screen) = 0;
  // The next event, or kNone after `timeout_ms` without one.
  virtual Event Next(int timeout_ms) = 0;
  // Whether keys are waiting (the app skips slow work until they are handled).
  virtual bool Pending() = 0;
};

struct TerminalOptions {
  bool color = true;  // false: attributes only (NO_COLOR)
};

// The controlling terminal through ncursesw; fails (so the caller prints the
// plain fallback) when curses cannot drive it. Restores the terminal when
// destroyed and on SIGINT, SIGTERM and SIGHUP, which end the app.
Result<std::unique_ptr<Terminal>> OpenCurses(const TerminalOptions& options);

}  // namespace bk::tui
