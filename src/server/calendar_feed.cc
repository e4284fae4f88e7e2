#include "server/calendar_feed.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <tuple>
#include <vector>

#include "sys/fs.h"

namespace bk::server {
namespace {

// A feed keeps the last 30 days beside everything to come, as `bk cal` does.
constexpr engine::Seconds kFeedDays = 30;

}  // namespace

bool FeedName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name.front() == '.' || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == '-'; });
}

CalendarFeed::CalendarFeed(std::string dir, std::string host, CalendarRender render,
                           service::BookingService& service, service::Actor reader, int64_t interval_ms)
    : dir_(std::move(dir)),
      host_(std::move(host)),
      render_(std::move(render)),
      service_(service),
      reader_(std::move(reader)),
      interval_ms_(interval_ms) {}

Status CalendarFeed::Refresh(int64_t now_ms) {
  if (done_once_ && (service_.Generation() == generation_ || now_ms < next_ms_)) return Ok();
  next_ms_ = now_ms + interval_ms_;
  return Pass();
}

Status CalendarFeed::Pass() {
  struct stat st {};
  if (lstat(dir_.c_str(), &st) != 0) {
    if (errno != ENOENT || mkdir(dir_.c_str(), 0755) != 0)
      return Fail(ErrorKind::kIo, fmt::format("calendar_feed_dir {}: {}", dir_, std::strerror(errno)));
  } else if (!S_ISDIR(st.st_mode)) {
    return Fail(ErrorKind::kIo,
                fmt::format("calendar_feed_dir {} is not a directory (a link is never followed)", dir_));
  }
  const uint64_t generation = service_.Generation();
  BK_ASSIGN_OR_RETURN(service::ListResult list, service_.List(reader_, {.history = true, .everyone = true}));
  const engine::Seconds since = service_.Now() - kFeedDays * engine::kDay;
  std::map<std::string, std::vector<engine::Reservation>> by_user;
  for (const auto& [user, text] : written_)
    by_user[user];  // a user whose bookings all aged out gets an empty feed
  for (auto& r : list.reservations)
    if (FeedName(r.username)) by_user[r.username].push_back(std::move(r));
  for (auto& [user, mine] : by_user) {
    std::string text = render_(std::move(mine), user, host_, since);
    auto it = written_.find(user);
    if (it != written_.end() && it->second == text) continue;
    BK_TRY(sys::WriteFileAtomic(fmt::format("{}/{}.ics", dir_, user), text, 0644));
    written_[user] = std::move(text);
    ++files_written_;
  }
  generation_ = generation;
  done_once_ = true;
  return Ok();
}

}  // namespace bk::server
