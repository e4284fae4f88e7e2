#pragma once
// Runs one MCP tool call against a client::Ledger: checks the arguments
// against the tool's inputs, converts them into a service request, and returns
// the bk.agent.v1 document, or the error message the client shows the model.

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/mcp_catalog.h"
#include "base/result.h"
#include "client/ledger.h"
#include "cluster/runner.h"
#include "config/config.h"
#include "engine/civil_time.h"

namespace bk::agent {

struct ToolEnv {
  // Opened on first use, so `bk mcp` answers initialize without touching the ledger.
  std::function<Result<client::Ledger*>()> ledger;
  const config::Config* config = nullptr;
  const engine::Zone* zone = nullptr;  // naive start times are local
  // Where the worker settings (the private job directory) are read from.
  config::EnvFn env = config::ProcessEnv();
  // Runs the cluster tools' `bk c` children; null: a cluster::ProcessRunner.
  cluster::Runner* cluster_runner = nullptr;
};

struct ToolOutcome {
  bool is_error = false;
  std::string document;  // JSON object text (structuredContent) when !is_error
  std::string message;   // "Error executing tool NAME: ..." when is_error
};

// `name` must be a known tool (FindTool); `arguments_json` is the JSON text of
// the call's arguments (an object, or "null" when absent).
// Whether an argument is an integer (2.0 from a client counts: JSON has one
// number type). Shared by the local and the cluster tools.
bool IsInteger(const nlohmann::json& v);

// A call's arguments checked against the tool's inputs: an object of known
// names, each of its type (a GPU list's elements are left to the caller),
// the required ones present; a null value counts as absent.
// `op_id_required` is the message when operation_id is missing.
Result<nlohmann::json> CheckArguments(const ToolSpec& tool, const nlohmann::json& raw,
                                      std::string_view op_id_required);

ToolOutcome CallTool(const ToolEnv& env, const std::string& name, const std::string& arguments_json);

}  // namespace bk::agent
