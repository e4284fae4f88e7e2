#pragma once
// Asking one GPU host of the catalog something: `bk ARGS` run on that host
// (over OpenSSH, or this bk for the local host), its one JSON reply checked
// before anyone reads it. A reply must be a JSON object that names the host's
// stable identity, and that identity must be the catalog's: a host that was
// re-imaged, or a DNS name now pointing elsewhere, is refused rather than
// booked on. Every failure is a value with a class, because what the client
// may do next depends on it (a write whose reply was lost is asked about
// again; one the host refused is final).

#include <expected>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cluster/catalog.h"
#include "cluster/runner.h"

namespace bk::cluster {

enum class FailClass {
  kTransport,  // ssh failed, the connection dropped, the host exited oddly
  kTimeout,    // no reply within the node's timeout
  kProtocol,   // a reply that is not one JSON object
  kIdentity,   // the reply is not from the host the catalog names
  kRemote,     // the host answered with an error document: its final word
  kCancelled,
  kDisabled,  // the administrator disabled the node: never contacted
};
const char* FailClassName(FailClass c);

struct NodeError {
  FailClass cls = FailClass::kTransport;
  std::string message;  // one sanitized line
};

struct Reply {
  int exit_code = 0;  // 0, or 3 (a read that found nothing: still a reply)
  nlohmann::json doc;
};
using NodeResult = std::expected<Reply, NodeError>;

struct RemoteOptions {
  std::string ssh = "ssh";  // the OpenSSH client
  // Where OpenSSH keeps shared connections (0700, ours); "" for none, and
  // "auto" for ControlDir(), made on the first SSH call (so a command that
  // fails before reaching any host leaves nothing on disk).
  std::string control_dir;
  int control_persist_seconds = 60;
  std::string self_exe;  // this bk, run for a `local` node
};

// One line of a remote's text, safe to print: control characters become
// spaces, runs of space collapse, at most 1000 characters ("~" where cut).
std::string Sanitize(std::string_view text, size_t max = 1000);

class Remote {
 public:
  Remote(Runner& runner, RemoteOptions options) : runner_(runner), options_(std::move(options)) {}

  // Runs `bk ARGS` on the node and checks the reply. `expected_id` is the
  // catalog's node ID; nullopt only for `bk c probe`, which learns it.
  NodeResult Call(const Node& node, const std::vector<std::string>& args,
                  const std::optional<std::string>& expected_id) const;
  NodeResult Call(const Node& node, const std::vector<std::string>& args) const {
    return Call(node, args, node.node_id);
  }

  // The argv that runs `bk ARGS` on the node (for the tests and --verbose).
  std::vector<std::string> Argv(const Node& node, const std::vector<std::string>& args) const;

 private:
  const std::string& control_dir() const;

  Runner& runner_;
  RemoteOptions options_;
  mutable std::once_flag control_once_;
  mutable std::string control_dir_;
};

// Checks a reply from `node` (exit status, stdout, stderr): see Remote::Call.
NodeResult CheckReply(const RunResult& run, const Node& node, const std::optional<std::string>& expected_id);

// The connection-sharing directory for this user: $XDG_RUNTIME_DIR/gpubk-ssh,
// else ~/.cache/gpubk/ssh; created 0700. "" when sharing is off
// (BK_CLUSTER_SSH_CONTROL=off) or the directory is not safely ours.
std::string ControlDir();

// This bk's own path (/proc/self/exe).
std::string SelfExecutable();

}  // namespace bk::cluster
