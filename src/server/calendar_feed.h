#pragma once
// The daemon's calendar feeds (calendar_feed_dir): DIR/USER.ics holds each
// user's bookings as an iCalendar that a calendar app or the lab's web server
// subscribes to. Rewritten on the event loop after the ledger changed, at
// most once per interval so a burst of bookings costs one pass; a file is
// written only when its bytes change (the encoding is stable), atomically,
// so a reader never sees half a calendar.

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "service/booking_service.h"

namespace bk::server {

// A user's calendar file from their bookings: those ending at or after
// `since`, for `who` on `host`. The encoding is the surfaces' (iCalendar,
// as `bk cal` writes it), handed down by the command that starts the daemon.
using CalendarRender =
    std::function<std::string(std::vector<engine::Reservation> reservations, const std::string& who,
                              const std::string& host, engine::Seconds since)>;

class CalendarFeed {
 public:
  CalendarFeed(std::string dir, std::string host, CalendarRender render, service::BookingService& service,
               service::Actor reader, int64_t interval_ms = 5000);

  // Rewrites what changed when the ledger moved on and the interval passed
  // since the last pass. An error is for the log; the next pass tries again.
  Status Refresh(int64_t now_ms);
  size_t files_written() const { return files_written_; }

 private:
  Status Pass();

  std::string dir_;
  std::string host_;
  CalendarRender render_;
  service::BookingService& service_;
  service::Actor reader_;  // the daemon's owner: reads every user's bookings
  int64_t interval_ms_;
  int64_t next_ms_ = 0;
  bool done_once_ = false;
  uint64_t generation_ = 0;
  std::map<std::string, std::string> written_;  // user -> the calendar last written
  size_t files_written_ = 0;
};

// Whether `name` is safe as a feed's file name (a login name: letters,
// digits, `.`, `_`, `-`, not starting with `.` or `-`).
bool FeedName(const std::string& name);

}  // namespace bk::server
