#pragma once
// Reservations as an RFC 5545 iCalendar, for the calendar a lab already uses
// (`bk cal`). One VEVENT per reservation: its UID is the reservation's ID, so
// a calendar that subscribes updates an event in place; SEQUENCE counts the
// changes (each edit or renewal, and a cancellation), and a cancelled booking
// stays as STATUS:CANCELLED so the calendar takes it off rather than keeping a
// stale copy. The same reservations give the same bytes (every stamp is the
// reservation's own), so a feed file rewritten without changes does not churn.

#include <string>
#include <vector>

#include "engine/reservation.h"

namespace bk::surface {

struct CalendarInfo {
  std::string name;  // X-WR-CALNAME, e.g. "GPU bookings on gpu-a (alice)"
  std::string host;  // named in each event's location and description
};

std::string ICalendar(const std::vector<engine::Reservation>& reservations, const CalendarInfo& info);

// The calendar `bk cal` writes and the daemon keeps as a user's feed: of
// `reservations`, those that end at or after `since`, oldest first, titled
// "GPU bookings on HOST (WHO)".
struct BookingCalendar {
  std::string text;
  size_t events = 0;
};
BookingCalendar BookingsCalendar(std::vector<engine::Reservation> reservations, const std::string& who,
                                 const std::string& host, engine::Seconds since);

// A TEXT value escaped as RFC 5545 3.3.11 says (backslash, `;`, `,`, newline);
// other control characters become spaces and bytes that are not UTF-8 '?'.
std::string IcalText(std::string_view text);
// A content line folded at 75 octets (never inside a UTF-8 character), CRLF-ended.
std::string IcalLine(std::string_view line);

}  // namespace bk::surface
