#include "tui/terminal.h"

#include <curses.h>

#include <csignal>
#include <cstdio>

namespace bk::tui {
namespace {

volatile std::sig_atomic_t g_interrupted = 0;

void OnSignal(int) { g_interrupted = 1; }

struct Colors {
  short c256;
  short c8;
};

// Foreground per role on a 256-colour terminal and on an 8-colour one;
// -1 keeps the terminal's own colour.
constexpr Colors kForeground[] = {
    {-1, -1},              // kNormal
    {255, COLOR_WHITE},    // kHeader (on blue)
    {-1, -1},              // kMuted
    {-1, -1},              // kFree
    {73, COLOR_CYAN},      // kShared
    {176, COLOR_MAGENTA},  // kFull
    {167, COLOR_RED},      // kExclusive
    {108, COLOR_GREEN},    // kMine
    {172, COLOR_YELLOW},   // kBlackout
    {117, COLOR_CYAN},     // kNow
    {203, COLOR_RED},      // kError
    {172, COLOR_YELLOW},   // kWarning
    {80, COLOR_CYAN},      // kPreview
    {117, COLOR_CYAN},     // kSelected
};
static_assert(std::size(kForeground) == static_cast<size_t>(Role::kRoleCount));

class CursesTerminal : public Terminal {
 public:
  CursesTerminal(SCREEN* screen, bool color) : screen_(screen), color_(color) {}
  ~CursesTerminal() override {
    endwin();
    delscreen(screen_);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    std::signal(SIGHUP, SIG_DFL);
  }

  void Setup() {
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    curs_set(0);
    set_escdelay(25);
    mousemask(BUTTON1_PRESSED | BUTTON1_CLICKED, nullptr);
    mouseinterval(0);
    if (color_ && has_colors()) {
      start_color();
      use_default_colors();
      bool rich = COLORS >= 256;
      for (int role = 1; role < static_cast<int>(Role::kRoleCount); ++role) {
        short fg = rich ? kForeground[role].c256 : kForeground[role].c8;
        short bg = role == static_cast<int>(Role::kHeader) ? (rich ? 24 : COLOR_BLUE) : -1;
        init_pair(static_cast<short>(role), fg, bg);
      }
    } else {
      color_ = false;
    }
    struct sigaction sa {};
    sa.sa_handler = OnSignal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGHUP, &sa, nullptr);
  }

  int width() const override { return COLS; }
  int height() const override { return LINES; }

  void Draw(const Screen& s) override {
    erase();
    std::wstring run;
    for (int y = 0; y < std::min(s.height(), LINES); ++y) {
      int x = 0;
      while (x < s.width() - 1 && x < COLS - 1) {
        const Cell& first = s.at(x, y);
        attr_t attrs = Attributes(first);
        run.clear();
        int start = x;
        while (x < s.width() - 1 && x < COLS - 1 && Attributes(s.at(x, y)) == attrs) {
          run.push_back(static_cast<wchar_t>(s.at(x, y).glyph));
          ++x;
        }
        attrset(attrs);
        mvaddwstr(y, start, run.c_str());
      }
    }
    attrset(A_NORMAL);
    wnoutrefresh(stdscr);
    doupdate();
  }

  Event Next(int timeout_ms) override {
    if (g_interrupted) return {Event::Kind::kInterrupt};
    timeout(timeout_ms);
    wint_t ch = 0;
    int got = get_wch(&ch);
    if (g_interrupted) return {Event::Kind::kInterrupt};
    if (got == ERR) return {};
    if (got == KEY_CODE_YES) return Special(static_cast<int>(ch));
    return {Event::Kind::kKey, ch == '\r' ? kKeyEnter : ch == 8 ? kKeyBackspace : static_cast<int>(ch)};
  }

  bool Pending() override {
    timeout(0);
    int ch = getch();
    if (ch == ERR) return false;
    ungetch(ch);
    return true;
  }

 private:
  attr_t Attributes(const Cell& c) const {
    attr_t a = A_NORMAL;
    bool header = c.role == Role::kHeader;
    if (c.attrs & kBold) a |= A_BOLD;
    if (c.attrs & kDim) a |= A_DIM;
    if (c.attrs & kUnderline) a |= A_UNDERLINE;
    // A coloured header bar needs no reversing; a selection always does.
    if ((c.attrs & kReverse) && !(header && color_)) a |= A_REVERSE;
    if (color_ && c.role != Role::kNormal) a |= COLOR_PAIR(static_cast<int>(c.role));
    return a;
  }

  static Event Special(int code) {
    switch (code) {
      case KEY_RESIZE: return {Event::Kind::kResize};
      case KEY_MOUSE: {
        MEVENT m{};
        if (getmouse(&m) == OK && (m.bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
          return {Event::Kind::kClick, 0, m.x, m.y};
        return {};
      }
      case KEY_UP: return {Event::Kind::kKey, kKeyUp};
      case KEY_DOWN: return {Event::Kind::kKey, kKeyDown};
      case KEY_LEFT: return {Event::Kind::kKey, kKeyLeft};
      case KEY_RIGHT: return {Event::Kind::kKey, kKeyRight};
      case KEY_SLEFT: return {Event::Kind::kKey, kKeyShiftLeft};
      case KEY_SRIGHT: return {Event::Kind::kKey, kKeyShiftRight};
      case KEY_SR: return {Event::Kind::kKey, kKeyShiftUp};
      case KEY_SF: return {Event::Kind::kKey, kKeyShiftDown};
      case KEY_PPAGE: return {Event::Kind::kKey, kKeyPageUp};
      case KEY_NPAGE: return {Event::Kind::kKey, kKeyPageDown};
      case KEY_HOME: return {Event::Kind::kKey, kKeyHome};
      case KEY_END: return {Event::Kind::kKey, kKeyEnd};
      case KEY_BTAB: return {Event::Kind::kKey, kKeyBackTab};
      case KEY_ENTER: return {Event::Kind::kKey, kKeyEnter};
      case KEY_BACKSPACE: return {Event::Kind::kKey, kKeyBackspace};
      default: return {};
    }
  }

  SCREEN* screen_;
  bool color_;
};

}  // namespace

Result<std::unique_ptr<Terminal>> OpenCurses(const TerminalOptions& options) {
  g_interrupted = 0;
  // newterm, unlike initscr, returns instead of exiting when it cannot
  // drive the terminal.
  SCREEN* screen = newterm(nullptr, stdout, stdin);
  if (!screen) return Fail(ErrorKind::kUnavailable, "curses cannot drive this terminal");
  auto terminal = std::make_unique<CursesTerminal>(screen, options.color);
  terminal->Setup();
  return terminal;
}

}  // namespace bk::tui
