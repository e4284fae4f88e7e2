#pragma once
// `bk mcp`: a Model Context Protocol server on stdio. One JSON-RPC 2.0 message
// per line in each direction; nothing but MCP messages on stdout, logs on
// stderr. Dual-era: the initialize handshake (2025-11-25, 2025-06-18,
// 2025-03-26) and the stateless 2026-07-28 revision (server/discover, the
// version in each request's _meta). Every tool reads and writes through the
// client::Ledger, so the same server works on a private ledger and against a
// shared server's daemon; identity is the process UID, never an argument.

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "agent/mcp_tools.h"
#include "cluster/runner.h"

namespace bk::agent {

inline constexpr std::string_view kModernProtocol = "2026-07-28";
inline constexpr std::string_view kLegacyProtocols[] = {"2025-11-25", "2025-06-18", "2025-03-26"};

class McpServer {
 public:
  // Offers the cluster tools when a cluster catalog exists now: the tool
  // list is fixed for the life of the server (listChanged is false).
  explicit McpServer(ToolEnv env);
  McpServer(const McpServer&) = delete;  // env_ may point at process_runner_
  McpServer& operator=(const McpServer&) = delete;

  // Handles one line (a message or a batch). Returns the line to write back
  // (without the newline), or nothing for notifications and responses.
  std::optional<std::string> HandleLine(std::string_view line);

  // Reads `in` until EOF, answering on `out`. Returns the exit status.
  int Serve(std::FILE* in, std::FILE* out);

  // The version a legacy client negotiated; empty before initialize.
  const std::string& negotiated() const { return negotiated_; }

 private:
  ToolEnv env_;
  bool cluster_ = false;
  cluster::ProcessRunner process_runner_;
  std::string negotiated_;
};

}  // namespace bk::agent
