#include "surface/text.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "base/civil_time.h"
#include "base/strings.h"
#include "engine/parse.h"

namespace bk::surface {

std::string ShareText(const engine::Reservation& r, const engine::Policy& p) {
  if (r.mode == engine::Mode::kExclusive) return "";
  return fmt::format("share={} slot{} (max {}) ", r.share_units, r.share_units == 1 ? "" : "s",
                     p.share_capacity);
}

ShortRange ShortRangeText(engine::Seconds start, engine::Seconds end, const engine::Zone& zone) {
  ShortRange r{engine::FormatLocalShort(start, zone), engine::FormatLocalShort(end, zone)};
  r.offsets = zone.OffsetAt(start) != zone.OffsetAt(end);
  if (r.offsets) {
    r.start += " " + engine::FormatLocal(start, zone).substr(17);
    r.end += " " + engine::FormatLocal(end, zone).substr(17);
  }
  return r;
}

std::string RangeText(engine::Seconds start, engine::Seconds end, const engine::Zone& zone) {
  return engine::FormatLocal(start, zone) + " -> " + engine::FormatLocal(end, zone);
}

namespace {

bool Digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  for (size_t i = at; i < at + n; ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

int Num(std::string_view s, size_t at, size_t n) {
  int v = 0;
  for (size_t i = at; i < at + n; ++i) v = v * 10 + (s[i] - '0');
  return v;
}

// The length of a UTC instant "YYYY-MM-DDTHH:MM:SS" + "Z" or "+00:00" at
// `at` (fractions allowed), or 0.
size_t UtcInstantAt(std::string_view s, size_t at) {
  if (!Digits(s, at, 4) || s.substr(at + 4, 1) != "-" || !Digits(s, at + 5, 2) ||
      s.substr(at + 7, 1) != "-" || !Digits(s, at + 8, 2) || s.substr(at + 10, 1) != "T" ||
      !Digits(s, at + 11, 2) || s.substr(at + 13, 1) != ":" || !Digits(s, at + 14, 2) ||
      s.substr(at + 16, 1) != ":" || !Digits(s, at + 17, 2))
    return 0;
  size_t end = at + 19;
  if (s.substr(end, 1) == ".")
    for (++end; end < s.size() && s[end] >= '0' && s[end] <= '9';) ++end;
  if (s.substr(end, 1) == "Z") return end + 1 - at;
  if (s.substr(end, 6) == "+00:00") return end + 6 - at;
  return 0;
}

}  // namespace

std::string LocalTimes(std::string_view text, const engine::Zone& zone) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))) ? UtcInstantAt(text, i) : 0;
    if (n == 0) {
      out += text[i++];
      continue;
    }
    CivilTime c{Num(text, i, 4),      Num(text, i + 5, 2),  Num(text, i + 8, 2),
                Num(text, i + 11, 2), Num(text, i + 14, 2), Num(text, i + 17, 2)};
    if (!ValidDate(c.year, c.month, c.day) || c.hour > 23 || c.minute > 59 || c.second > 59) {
      out += text.substr(i, n);
    } else {
      engine::Seconds t = CivilToEpoch(c);
      std::string local = engine::FormatLocal(t, zone);
      if (c.second != 0) local.insert(16, fmt::format(":{:02}", c.second));
      out += local;
    }
    i += n;
  }
  return out;
}

std::string UnreadNoticeLine(const service::UnreadNotifications& u) {
  if (u.count <= 0) return "";
  std::string what;
  if (!u.newest.empty()) {
    const store::Notification& n = u.newest.front();
    std::string verb = n.type == "reservation-admin-cancelled" ? "admin cancelled"
                       : n.type.starts_with("reservation-")    ? n.type.substr(12)
                                                               : n.type;
    std::replace(verb.begin(), verb.end(), '-', ' ');
    // A reclaim's reason is a paragraph; the line stays one line.
    std::string reason = Printable(n.reason);
    if (reason.size() > 60) reason = reason.substr(0, 57) + "...";
    what = fmt::format(" ({} {}{})", Printable(verb), n.reservation_id.substr(0, 8),
                       reason.empty() ? "" : ": " + reason);
  }
  return fmt::format("notice: {} unread{}; read {} with `bk n`", u.count, what, u.count == 1 ? "it" : "them");
}

std::string SlotsText(const engine::Reservation& r, const engine::Policy& p) {
  if (r.mode == engine::Mode::kExclusive) return "all";
  return fmt::format("{}/{}", r.share_units, p.share_capacity);
}

int DisplayWidth(std::string_view text) {
  int n = 0;
  for (char c : text)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

std::string FitWords(const std::string& text, int width) {
  if (DisplayWidth(text) <= width) return text;
  if (width <= 1) return width == 1 ? "\u2026" : "";
  std::string out;
  for (const std::string& word : Split(text, ' ')) {
    std::string next = out.empty() ? word : out + " " + word;
    if (DisplayWidth(next) > width - 1) break;
    out = next;
  }
  if (out.empty()) out = text.substr(0, width - 1);  // by bytes: the names cut here are ASCII
  return out + "\u2026";
}

std::string AlignRows(const std::vector<std::vector<std::string>>& rows, std::string_view align,
                      std::string_view indent) {
  std::vector<int> widths;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (widths.size() <= c) widths.push_back(0);
      widths[c] = std::max(widths[c], DisplayWidth(row[c]));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (size_t c = 0; c < row.size(); ++c) {
      std::string pad(widths[c] - DisplayWidth(row[c]), ' ');
      bool right = c < align.size() && align[c] == 'r';
      line += (c ? " " : "") + (right ? pad + row[c] : row[c] + pad);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string ListDuration(engine::Seconds d) {
  engine::Seconds h = d / 3600, m = (d % 3600) / 60;
  std::string hm = h ? (m ? fmt::format("{}h{}m", h, m) : fmt::format("{}h", h)) : fmt::format("{}m", m);
  if (d >= engine::kDay) return fmt::format("{} ({})", hm, engine::FormatDuration(d));
  return hm;
}

int TerminalWidth(int fd, int fallback) {
  if (const char* c = std::getenv("COLUMNS")) {
    if (auto v = ParseUint(c); v && *v >= 20 && *v <= 1000) return static_cast<int>(*v);
  }
  winsize ws{};
  if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return fallback;
}

bool UseColor(int fd) {
  if (std::getenv("NO_COLOR")) return false;
  const char* term = std::getenv("TERM");
  if (term && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fd);
}

std::optional<ColorMode> ParseColorMode(std::string_view text) {
  if (text == "auto") return ColorMode::kAuto;
  if (text == "always") return ColorMode::kAlways;
  if (text == "never") return ColorMode::kNever;
  return std::nullopt;
}

bool UseColor(int fd, ColorMode mode) {
  if (mode == ColorMode::kAuto) return UseColor(fd);
  return mode == ColorMode::kAlways;
}

std::string Paint(std::string_view text, Style style, bool on) {
  if (!on) return std::string(text);
  const char* code = "";
  switch (style) {
    case Style::kError: code = "\033[1;31m"; break;
    case Style::kWarning: code = "\033[33m"; break;
    case Style::kPrompt: code = "\033[1m"; break;
    case Style::kGood: code = "\033[32m"; break;
    case Style::kPending: code = "\033[36m"; break;
  }
  return code + std::string(text) + "\033[0m";
}

std::vector<std::string> WrapWords(const std::string& text, int width) {
  std::vector<std::string> lines;
  std::string line;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(at, end - at);
    at = end + 1;
    if (word.empty()) continue;
    if (!line.empty() && static_cast<int>(line.size() + 1 + word.size()) > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

}  // namespace bk::surface
