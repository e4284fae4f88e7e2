#pragma once
// One line per person across hosts: each host's own usage summary
// (gpubk.usage.v1 "users") summed under the principal the catalog maps that
// host's UID to. Unmapped accounts stay apart as NODE_ID:UID: two hosts'
// "alice" are not assumed to be one person.

#include <nlohmann/json.hpp>
#include <vector>

#include "cluster/catalog.h"
#include "cluster/fanout.h"

namespace bk::cluster {

// `replies` are answers to `usage me|users --json --compact`; failed ones
// are skipped. Principals sorted by active GPU time, most first, then id.
nlohmann::json AggregateUsage(const Catalog& catalog, const std::vector<NodeReply>& replies);

}  // namespace bk::cluster
