#include "cli/notices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "engine/parse.h"
#include "surface/text.h"

namespace bk::cli {
namespace {

std::string Upper(std::string_view word) {
  std::string out(word);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::toupper(c); });
  return out;
}

}  // namespace

void PrintUnreadNotice(Context& ctx) {
  auto ledger = ctx.Ledger();
  if (!ledger) return;
  auto unread = (*ledger)->UnreadNotifications(1);
  if (unread && unread->count > 0) ctx.Print(ctx.Local(surface::UnreadNoticeLine(*unread)));
}

std::string WithUnreadCount(Context& ctx, const std::string& compact_json) {
  int64_t count = 0;
  if (auto ledger = ctx.Ledger()) {
    if (auto unread = (*ledger)->UnreadNotifications(1)) count = unread->count;
  }
  if (count == 0) return compact_json;
  nlohmann::json doc = nlohmann::json::parse(compact_json);
  doc["unread_notifications"] = count;
  return doc.dump();
}

std::vector<store::Announcement> ActiveAnnouncements(Context& ctx) {
  auto ledger = ctx.Ledger();
  if (!ledger) return {};
  return (*ledger)->Announcements({}).value_or(std::vector<store::Announcement>{});
}

void PrintAnnouncementLines(const Context& ctx, const std::vector<store::Announcement>& active,
                            store::AnnouncementLevel from, store::AnnouncementLevel to) {
  for (const auto& a : active) {
    if (a.level < from || a.level > to) continue;
    ctx.Print(fmt::format("{}: {} (until {})", Upper(store::kAnnouncementLevelNames.Name(a.level)),
                          OneLine(a.message), engine::FormatLocal(a.expires_at, *ctx.zone)));
  }
}

std::string OneLine(std::string_view message) {
  std::string flat(message);
  std::replace_if(
      flat.begin(), flat.end(), [](char c) { return c == '\n' || c == '\t'; }, ' ');
  return Printable(flat);
}

}  // namespace bk::cli
