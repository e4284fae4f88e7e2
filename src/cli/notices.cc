#include "cli/notices.h"

#include <nlohmann/json.hpp>

#include "surface/text.h"

namespace bk::cli {

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

}  // namespace bk::cli
