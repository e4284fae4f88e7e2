#include "surface/icalendar.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "base/civil_time.h"
#include "base/strings.h"
#include "base/version.h"

namespace bk::surface {
namespace {

// 20261129T184500Z: UTC, so no time zone component is needed.
std::string IcalTime(Seconds t) {
  CivilTime c = EpochToCivil(t);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", c.year, c.month, c.day, c.hour, c.minute, c.second);
}

std::string Gpus(const engine::Reservation& r) {
  return fmt::format("GPU{} {}", r.gpus.size() == 1 ? "" : "s", JoinInts(r.gpus, ","));
}

std::string Summary(const engine::Reservation& r) {
  return fmt::format("{} {} ({})", Gpus(r), engine::ModeName(r.mode), r.username);
}

std::string Description(const engine::Reservation& r, const CalendarInfo& info) {
  std::string mode = r.mode == engine::Mode::kShared ? fmt::format("shared, {} slot(s)", r.share_units)
                                                     : std::string("exclusive");
  std::string lines =
      fmt::format("Reservation {} of {} on {}\n{}, {}", r.ShortId(), r.username, info.host, Gpus(r), mode);
  if (r.memory_mb) lines += fmt::format(", {} MiB per GPU", *r.memory_mb);
  if (r.cancellation) {
    lines +=
        fmt::format("\nCancelled ({})", engine::EnumNamesOf(r.cancellation->kind).Name(r.cancellation->kind));
    if (!r.cancellation->reason.empty()) lines += ": " + r.cancellation->reason;
  }
  return lines;
}

// The length of the well-formed UTF-8 character at `at`, or 0 when the bytes
// there are not one (a stray continuation byte, a truncated or overlong
// sequence, a surrogate, beyond U+10FFFF).
size_t Utf8Length(std::string_view s, size_t at) {
  auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char lead = b(at);
  if (lead < 0x80) return 1;
  size_t n = lead >= 0xc2 && lead <= 0xdf   ? 2
             : lead >= 0xe0 && lead <= 0xef ? 3
             : lead >= 0xf0 && lead <= 0xf4 ? 4
                                            : 0;
  if (n == 0 || at + n > s.size()) return 0;
  for (size_t i = 1; i < n; ++i)
    if ((b(at + i) & 0xc0) != 0x80) return 0;
  unsigned char second = b(at + 1);
  if ((lead == 0xe0 && second < 0xa0) || (lead == 0xed && second > 0x9f) || (lead == 0xf0 && second < 0x90) ||
      (lead == 0xf4 && second > 0x8f))
    return 0;
  return n;
}

}  // namespace

std::string IcalText(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    size_t n = Utf8Length(text, i);
    if (n == 0) {
      out += '?';  // iCalendar is UTF-8: a byte that is not becomes '?'
      ++i;
      continue;
    }
    if (n > 1) {
      out.append(text, i, n);
    } else if (c == '\\' || c == ';' || c == ',') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += ' ';  // other control characters are not allowed in TEXT
    } else {
      out += c;
    }
    i += n;
  }
  return out;
}

std::string IcalLine(std::string_view line) {
  std::string out;
  size_t width = 0;  // octets on the current physical line
  for (size_t i = 0; i < line.size();) {
    // The whole UTF-8 character, so that a fold never splits one (a byte
    // that is not UTF-8 goes alone; IcalText never leaves one).
    size_t n = std::max<size_t>(1, Utf8Length(line, i));
    if (width + n > 75) {
      out += "\r\n ";
      width = 1;
    }
    out.append(line, i, n);
    width += n;
    i += n;
  }
  return out + "\r\n";
}

std::string ICalendar(const std::vector<engine::Reservation>& reservations, const CalendarInfo& info) {
  std::string out = IcalLine("BEGIN:VCALENDAR") + IcalLine("VERSION:2.0") +
                    IcalLine(fmt::format("PRODID:-//GPUBK//bk {}//EN", kVersion)) +
                    IcalLine("CALSCALE:GREGORIAN") + IcalLine("METHOD:PUBLISH") +
                    IcalLine("X-WR-CALNAME:" + IcalText(info.name));
  for (const auto& r : reservations) {
    bool cancelled = r.status == engine::Status::kCancelled;
    out += IcalLine("BEGIN:VEVENT");
    out += IcalLine(fmt::format("UID:{}@gpubk", r.id));
    out += IcalLine("DTSTAMP:" + IcalTime(r.updated_at));
    out += IcalLine("CREATED:" + IcalTime(r.created_at));
    out += IcalLine("LAST-MODIFIED:" + IcalTime(r.updated_at));
    out += IcalLine("DTSTART:" + IcalTime(r.start));
    out += IcalLine("DTEND:" + IcalTime(r.end));
    out += IcalLine(fmt::format("SEQUENCE:{}", r.edit_count + (cancelled ? 1 : 0)));
    out += IcalLine(std::string("STATUS:") + (cancelled ? "CANCELLED" : "CONFIRMED"));
    out += IcalLine("SUMMARY:" + IcalText(Summary(r)));
    out += IcalLine("DESCRIPTION:" + IcalText(Description(r, info)));
    out += IcalLine("LOCATION:" + IcalText(info.host));
    out += IcalLine("CATEGORIES:GPU");
    out += IcalLine(std::string("TRANSP:") + (cancelled ? "TRANSPARENT" : "OPAQUE"));
    out += IcalLine("END:VEVENT");
  }
  return out + IcalLine("END:VCALENDAR");
}

BookingCalendar BookingsCalendar(std::vector<engine::Reservation> reservations, const std::string& who,
                                 const std::string& host, engine::Seconds since) {
  std::erase_if(reservations, [&](const engine::Reservation& r) { return r.end < since; });
  std::ranges::sort(reservations, [](const engine::Reservation& a, const engine::Reservation& b) {
    return std::tie(a.start, a.id) < std::tie(b.start, b.id);
  });
  std::string text = ICalendar(reservations, {fmt::format("GPU bookings on {} ({})", host, who), host});
  return {std::move(text), reservations.size()};
}

}  // namespace bk::surface
