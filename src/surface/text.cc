#include "surface/text.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

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

std::string SlotsText(const engine::Reservation& r, const engine::Policy& p) {
  if (r.mode == engine::Mode::kExclusive) return "all";
  return fmt::format("{}/{}", r.share_units, p.share_capacity);
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
