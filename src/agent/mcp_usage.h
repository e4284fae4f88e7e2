#pragma once
// get_my_gpu_usage and bk://usage/me/recent: the caller's own usage history
// as one gpubk.usage.v1 "my-usage" document. Every part is asked of the
// ledger the way `bk u --json` asks it (usage.db itself in private mode, the
// daemon's usage.query on a server), always for the ledger's own UID.

#include <string>
#include <string_view>

#include "base/result.h"
#include "client/ledger.h"
#include "engine/types.h"

namespace bk::agent {

struct MyUsageRequest {
  engine::Seconds since = engine::kDay;  // the window is [now - since, now]
  std::string resolution = "auto";       // auto | 1m | 1h (minute and hour too)
  bool include_events = false;
  int64_t limit = 1000;  // sample records; events at most min(limit, 5000)
};

// {"schema_version":"gpubk.usage.v1","kind":"my-usage","generated_at",
//  "summary":<usage-users, limit 1>,"samples":<usage-samples>[,"events":<usage-events>]}
Result<std::string> MyUsageDoc(client::Ledger& ledger, const MyUsageRequest& request);

}  // namespace bk::agent
