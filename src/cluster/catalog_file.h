#pragma once
// Reading the catalog from disk with the trust it needs: the hosts it names
// receive every cluster booking and run commands as the caller, so a file
// someone else could have written is refused, never read.

#include <optional>
#include <string>

#include "base/result.h"
#include "cluster/catalog.h"

namespace bk::cluster {

inline constexpr const char* kSystemCatalog = "/etc/gpubk/cluster.json";

// `option` (--cluster-file), else BK_CLUSTER_CONFIG, else /etc/gpubk/cluster.json.
// A relative path is refused.
Result<std::string> CatalogPath(const std::optional<std::string>& option);

// The catalog at `path`, or nothing when there is none. Refused: a symlink
// or anything not a regular file, a file group- or other-writable, one owned
// by neither root nor the caller, and for the system path one not root's.
Result<std::optional<Catalog>> LoadCatalog(const std::string& path);

// The catalog `bk c` routes through, or why there is none (with what to do).
// BK_CLUSTER_DISABLE=1 (set for the local node's own bk) turns routing off.
Result<Catalog> RequireCatalog(std::string* path_out = nullptr);

// Whether a catalog exists for this user (cluster help and MCP tools show then).
bool CatalogConfigured();

}  // namespace bk::cluster
