#pragma once
// The unread-notifications line of the summaries: plain `bk` and `bk st`
// (which the prompt starts with), `bk l`, and its count in `bk l --json`.
// Notifications stay unread until `bk n` shows them.

#include <cstdint>
#include <string>

#include "cli/context.h"

namespace bk::cli {

// Prints the line when some are unread, nothing otherwise. A count that
// cannot be read prints nothing: the summary it ends matters more.
void PrintUnreadNotice(Context& ctx);
// `compact_json` (an object) with "unread_notifications": the count, while
// some are unread. Without any the document stays the original's, key for key.
std::string WithUnreadCount(Context& ctx, const std::string& compact_json);

}  // namespace bk::cli
