#pragma once
// The unread-notifications line of the summaries: plain `bk` and `bk st`
// (which the prompt starts with), `bk l`, and its count in `bk l --json`.
// Notifications stay unread until `bk n` shows them. And the administrators'
// active announcements, which show wherever a person looks.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/context.h"

namespace bk::cli {

// Prints the line when some are unread, nothing otherwise. A count that
// cannot be read prints nothing: the summary it ends matters more.
void PrintUnreadNotice(Context& ctx);
// `compact_json` (an object) with "unread_notifications": the count, while
// some are unread. Without any the document stays the original's, key for key.
std::string WithUnreadCount(Context& ctx, const std::string& compact_json);

// The active announcements, most urgent first; none when they cannot be
// read (the view they head matters more).
std::vector<store::Announcement> ActiveAnnouncements(Context& ctx);
// "WARNING: <message> (until <local time>)", one line for each active
// announcement of a level from `from` to `to`.
void PrintAnnouncementLines(const Context& ctx, const std::vector<store::Announcement>& active,
                            store::AnnouncementLevel from,
                            store::AnnouncementLevel to = store::AnnouncementLevel::kCritical);
// A message on one line: tabs and line feeds become spaces, the rest printable.
std::string OneLine(std::string_view message);

}  // namespace bk::cli
