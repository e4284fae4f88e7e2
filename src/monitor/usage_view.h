#pragma once
// `bk u`: reads usage.db (never writes it) and renders the gpubk.usage.v1
// documents and the text tables. nlohmann/json stays in usage_view.cc.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "config/config.h"
#include "engine/civil_time.h"
#include "monitor/heartbeat.h"
#include "store/usage_store.h"

namespace bk::monitor {

// kStorage: what usage.db holds and costs (`bk u storage`).
enum class UsageKind { kMe, kUsers, kEvents, kSamples, kStorage };
const char* UsageKindName(UsageKind k);  // me | users | events | samples | storage

struct UsageQuery {
  UsageKind kind = UsageKind::kMe;
  int64_t from = 0;  // epoch seconds, inclusive
  int64_t to = 0;    // exclusive
  std::optional<uint32_t> uid;
  std::optional<int> gpu;
  int64_t resolution = 60;  // samples: one of kResolutions
  int limit = 1000;
  // me, as text: append the ACTIVITY TREND (usage_trend.h). Off unless asked
  // for, so a caller that does not know about it gets the summary alone.
  bool chart = false;
  // Set by UsageVisibleTo, never taken from a request: the rows were narrowed
  // to the caller's own, which the answer says.
  bool own_rows_only = false;
};

// A server's usage_visibility for a query of `caller`: with "lab" everyone
// sees everyone's rows, as do administrators always; otherwise ("self") an
// ordinary user's users, events and samples are narrowed to their own rows
// (own_rows_only), and asking for someone else's (--user) is refused with a
// line naming the setting. `me` is the caller's already; storage describes
// the store, not anyone's use.
Result<UsageQuery> UsageVisibleTo(UsageQuery q, const std::string& visibility, uint32_t caller, bool admin);

// The sample resolutions `bk u samples -r` offers, as the original: usage.db
// keeps minute and hourly rollups, and the others are merged from those.
struct Resolution {
  std::string_view name;
  int64_t seconds;
};
inline constexpr Resolution kResolutions[] = {
    {"1m", 60}, {"5m", 300}, {"10m", 600}, {"1h", 3600}, {"1d", 86400}};
bool IsResolution(int64_t seconds);
// "auto" (by the window's length `span`: minutes up to 2 days, as the
// original, hours up to 90 days, else days) or a name of kResolutions.
Result<int64_t> ParseResolution(std::string_view text, int64_t span);

// The views, resolutions, tiers and retention this build's usage history
// offers (kind usage-capabilities): a description of the build and its fixed
// settings, so it reads nothing and answers alike in every deployment.
std::string UsageCapabilitiesJson(int64_t now_ms);
std::string UsageCapabilitiesText();

// `store` may be null: no usage.db yet (every list empty, collector not-seen).
// `now_ms` classifies the heartbeat. `not_recording`, from the live monitor
// (the daemon's), says why its samples are not being written: the heartbeat
// in usage.db cannot say so, since writing there is what fails.
Result<std::string> UsageJson(store::UsageStore* store, const UsageQuery& q, int64_t now_ms,
                              const std::string& not_recording = "");
Result<std::string> UsageText(store::UsageStore* store, const UsageQuery& q, int64_t now_ms,
                              const engine::Zone& zone, const std::string& not_recording = "");

// Opens usage.db (read-only use; owned by `owner`) beside the configured
// ledger and renders the query: the JSON document, or the text table in `zone`.
// No usage.db yet reads as empty history (collector not-seen).
Result<std::string> ReadUsage(const config::Config& config, uid_t owner, const UsageQuery& q, bool text,
                              int64_t now_ms, const engine::Zone& zone);

}  // namespace bk::monitor
