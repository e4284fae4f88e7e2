#pragma once
// The `bk c` commands, split by what they do (cmd_cluster.cc: dispatch and
// views; cmd_cluster_write.cc: recommend and the writes; cmd_cluster_usage.cc).

#include <string>
#include <vector>

#include "cli/context.h"

namespace bk::cli {

Result<int> ClusterRecommend(Context& ctx, const std::vector<std::string>& args);
// `args` starts with the count or the mode word (x, s, exclusive, ...).
Result<int> ClusterBook(Context& ctx, const std::vector<std::string>& args);
Result<int> ClusterEdit(Context& ctx, const std::vector<std::string>& args);
Result<int> ClusterRenew(Context& ctx, const std::vector<std::string>& args);
Result<int> ClusterCancel(Context& ctx, const std::vector<std::string>& args);
Result<int> ClusterUsage(Context& ctx, const std::vector<std::string>& args);
// Whether a word starts a booking (a count, or book/b/auto/s/shared/x/exclusive).
bool IsClusterBooking(const std::string& first_arg);

}  // namespace bk::cli
