#pragma once
// The cluster tools of `bk mcp`, offered only where a cluster catalog exists.
// Each call runs this bk as a child, `bk c ARGS --json`, rather than the
// cluster client in-process: the child's bounded runner owns every SSH
// session and its group is killed whole when the call ends, so a hung host
// costs the agent one timed-out call, never the server.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/mcp_catalog.h"
#include "agent/mcp_tools.h"
#include "base/result.h"
#include "cluster/catalog.h"
#include "cluster/runner.h"

namespace bk::agent {

// In the order tools/list shows them, after the local tools.
const std::vector<ToolSpec>& ClusterTools();
const ToolSpec* FindClusterTool(std::string_view name);

// The outputSchema of a cluster document (`kind` cluster-...).
nlohmann::json ClusterOutputSchema(std::string_view kind);

// The `bk c` arguments (after the bk executable) a call of `tool` runs, or
// the message of the first bad argument. `arguments_json` as for CallTool.
Result<std::vector<std::string>> ClusterArgv(const ToolSpec& tool, const std::string& arguments_json);

// Seconds a call may take: every enabled host's own timeout (at least 30 s)
// five times over plus 10 s, within 30-600 s. Without a catalog: 160 s.
double ClusterTimeoutSeconds(const std::optional<cluster::Catalog>& catalog);

// What the child's end means for the agent (see docs/agents.md).
ToolOutcome ClusterOutcome(const std::string& tool, const cluster::RunResult& run);

// Runs one cluster tool: `name` must be a ClusterTools() name. `runner` is
// the seam tests replace; production passes a cluster::ProcessRunner.
ToolOutcome CallClusterTool(cluster::Runner& runner, const std::string& name,
                            const std::string& arguments_json);

}  // namespace bk::agent
