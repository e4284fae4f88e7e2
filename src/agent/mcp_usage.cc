#include "agent/mcp_usage.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "engine/parse.h"

namespace bk::agent {
namespace {

using nlohmann::json;

constexpr int64_t kMaxRecords = 200000;  // what usage.query accepts
constexpr int64_t kMaxEvents = 5000;

}  // namespace

Result<std::string> MyUsageDoc(client::Ledger& ledger, const MyUsageRequest& request) {
  if (request.limit < 1 || request.limit > kMaxRecords)
    return Invalid(fmt::format("limit must be between 1 and {}", kMaxRecords));
  BK_ASSIGN_OR_RETURN(int64_t resolution,
                      monitor::ParseResolution(ToLower(Trim(request.resolution)), request.since));
  const engine::Seconds now = ledger.Now();
  monitor::UsageQuery q;
  q.to = now + 1;  // the current second's samples belong to the range, as in `bk u`
  q.from = q.to - request.since;
  q.uid = ledger.actor().uid;
  q.kind = monitor::UsageKind::kMe;
  q.limit = 1;
  BK_ASSIGN_OR_RETURN(std::string summary, ledger.Usage(q, false));
  q.kind = monitor::UsageKind::kSamples;
  q.limit = static_cast<int>(request.limit);
  q.resolution = resolution;
  BK_ASSIGN_OR_RETURN(std::string samples, ledger.Usage(q, false));
  json doc = {{"schema_version", "gpubk.usage.v1"},
              {"kind", "my-usage"},
              {"generated_at", engine::FormatIsoUtc(now)},
              {"summary", json::parse(summary)},
              {"samples", json::parse(samples)}};
  if (request.include_events) {
    q.kind = monitor::UsageKind::kEvents;
    q.limit = static_cast<int>(std::min(request.limit, kMaxEvents));
    BK_ASSIGN_OR_RETURN(std::string events, ledger.Usage(q, false));
    doc["events"] = json::parse(events);
  }
  return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace bk::agent
