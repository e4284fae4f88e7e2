#pragma once
// What `bk mcp` offers: the tools with their inputs, descriptions and
// annotations (names and inputs follow the original GPUBK MCP server, plus
// renew_my_gpu_booking and get_my_gpu_operation), the bk://context and
// bk://usage/me/recent resources and the plan_gpu_experiment prompt.

#include <string>
#include <string_view>
#include <vector>

namespace bk::agent {

enum class ArgType { kInteger, kString, kBoolean, kIntegerList, kStringList };

struct ToolParam {
  std::string_view name;
  ArgType type;
  bool required = false;
  std::string_view description;
  std::string_view default_json = "";  // the schema's "default" (JSON text); empty when none
};

// The original's annotation presets.
enum class ToolKind { kReadOnly, kIdempotentWrite, kDestructiveWrite, kIdempotentCleanup };

struct ToolSpec {
  std::string_view name;
  std::string_view title;
  std::string_view description;
  ToolKind kind;
  std::vector<ToolParam> params;
  std::string_view output_kind;  // the `kind` of the document the tool returns
};

// In the order tools/list shows them.
const std::vector<ToolSpec>& Tools();
const ToolSpec* FindTool(std::string_view name);

// The JSON array for tools/list: name, title, description, inputSchema,
// outputSchema and annotations of every tool, and of the cluster tools
// (mcp_cluster.h) after them when `with_cluster`.
std::string ToolListJson(bool with_cluster = false);

inline constexpr std::string_view kServerName = "GPUBK";
inline constexpr std::string_view kInstructions =
    "Inspect context or call recommend before booking. Create, edit and renew writes require a stable "
    "operation_id: reuse it for an exact retry, choose a new one for a new intent. Never invent a UID; "
    "identity is the MCP process UID. GPU indexes (gpus) are device numbers; count is how many GPUs.";

// plan_gpu_experiment's one user message.
std::string PlanPromptText(std::string_view count, std::string_view duration,
                           std::string_view expected_memory);

}  // namespace bk::agent
