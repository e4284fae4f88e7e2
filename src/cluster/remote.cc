#include "cluster/remote.h"

#include <fmt/format.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/strings.h"
#include "cluster/reply_fields.h"
#include "sys/fs.h"
#include "sys/users.h"

namespace bk::cluster {
namespace {

using nlohmann::json;

bool IsNodeId(const json& v) {
  if (!v.is_string()) return false;
  const std::string& s = v.get_ref<const std::string&>();
  return s.size() == 20 && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::string LastLine(const std::string& text) {
  std::string_view t = Trim(text);
  size_t nl = t.rfind('\n');
  return Sanitize(nl == std::string_view::npos ? t : t.substr(nl + 1));
}

std::unexpected<NodeError> Failed(FailClass cls, std::string message) {
  return std::unexpected(NodeError{cls, std::move(message)});
}

}  // namespace

const char* FailClassName(FailClass c) {
  switch (c) {
    case FailClass::kTransport: return "transport";
    case FailClass::kTimeout: return "timeout";
    case FailClass::kProtocol: return "protocol";
    case FailClass::kIdentity: return "identity";
    case FailClass::kRemote: return "remote";
    case FailClass::kCancelled: return "cancelled";
    case FailClass::kDisabled: return "disabled";
  }
  return "transport";
}

std::string Sanitize(std::string_view text, size_t max) {
  std::string out;
  bool space = false;
  for (unsigned char c : text) {
    bool blank = c < 0x20 || c == 0x7f || c == ' ';
    if (blank) {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += static_cast<char>(c);
  }
  if (out.size() > max) out = out.substr(0, max - 1) + "~";
  return out;
}

std::vector<std::string> Remote::Argv(const Node& node, const std::vector<std::string>& args) const {
  if (node.transport == Transport::kLocal) {
    std::vector<std::string> argv = {options_.self_exe.empty() ? SelfExecutable() : options_.self_exe};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
  // The remote side gets one string that its login shell splits: every word
  // is quoted, so a value like `12g; touch x` stays one argument of bk.
  std::string remote = ShellQuote(node.executable);
  for (const auto& a : args) remote += " " + ShellQuote(a);
  int connect = std::max(1, static_cast<int>(node.timeout_seconds));
  std::vector<std::string> argv = {options_.ssh, "-T",
                                   "-o",         "BatchMode=yes",
                                   "-o",         "StrictHostKeyChecking=yes",
                                   "-o",         "NumberOfPasswordPrompts=0",
                                   "-o",         "ClearAllForwardings=yes",
                                   "-o",         "PermitLocalCommand=no",
                                   "-o",         "RequestTTY=no",
                                   "-o",         fmt::format("ConnectTimeout={}", connect),
                                   "-o",         "ConnectionAttempts=1"};
  if (!control_dir().empty()) {
    // One authenticated connection per host, kept for a minute: the next
    // `bk c` skips the key exchange (the warm path).
    argv.insert(argv.end(), {"-o", "ControlMaster=auto", "-o", "ControlPath=" + control_dir() + "/%C", "-o",
                             fmt::format("ControlPersist={}", options_.control_persist_seconds)});
  }
  argv.insert(argv.end(), {"--", node.target, remote});
  return argv;
}

const std::string& Remote::control_dir() const {
  std::call_once(control_once_, [&] {
    control_dir_ = options_.control_dir == "auto" ? ControlDir() : options_.control_dir;
  });
  return control_dir_;
}

NodeResult CheckReply(const RunResult& run, const Node& node, const std::optional<std::string>& expected_id) {
  using End = RunResult::End;
  switch (run.end) {
    case End::kSpawnFailed:
      return Failed(FailClass::kTransport, node.transport == Transport::kSsh
                                               ? "OpenSSH client is unavailable: " + Sanitize(run.why_spawn)
                                               : "cannot run bk: " + Sanitize(run.why_spawn));
    case End::kTimedOut:
      return Failed(FailClass::kTimeout, fmt::format("timed out after {}s", node.timeout_seconds));
    case End::kOverflow: return Failed(FailClass::kProtocol, "response exceeds 8 MiB");
    case End::kCancelled: return Failed(FailClass::kCancelled, "request cancelled");
    case End::kSignaled: return Failed(FailClass::kTransport, fmt::format("killed by signal {}", run.code));
    case End::kExited: break;
  }
  bool usual_exit = run.code == 0 || run.code == 3;
  json doc = json::parse(run.out, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    if (!usual_exit && !Trim(run.err).empty()) return Failed(FailClass::kTransport, LastLine(run.err));
    if (!usual_exit) return Failed(FailClass::kTransport, fmt::format("exit {}", run.code));
    return Failed(FailClass::kProtocol,
                  doc.is_discarded() ? "returned invalid JSON" : "returned a non-object JSON response");
  }
  const json* id = doc.contains("node") && doc["node"].is_object() && doc["node"].contains("id")
                       ? &doc["node"]["id"]
                       : nullptr;
  if (!id || !IsNodeId(*id)) return Failed(FailClass::kIdentity, "returned an invalid stable node identity");
  if (expected_id && id->get<std::string>() != *expected_id)
    return Failed(FailClass::kIdentity,
                  fmt::format("stable node identity does not match the catalog ({} is not {})",
                              id->get<std::string>(), *expected_id));
  if (StrField(doc, "kind") == "error") {
    std::string message;
    if (doc.contains("error") && doc["error"].is_object() && doc["error"].contains("message") &&
        doc["error"]["message"].is_string())
      message = doc["error"]["message"].get<std::string>();
    return Failed(FailClass::kRemote, Sanitize(message.empty() ? "the host refused the request" : message));
  }
  if (!usual_exit) {
    return Failed(FailClass::kTransport,
                  Trim(run.err).empty() ? fmt::format("exit {}", run.code) : LastLine(run.err));
  }
  return Reply{run.code, std::move(doc)};
}

NodeResult Remote::Call(const Node& node, const std::vector<std::string>& args,
                        const std::optional<std::string>& expected_id) const {
  RunSpec spec;
  spec.argv = Argv(node, args);
  // The local node's bk must answer for this host alone, never route again.
  spec.env = EnvironmentWith(node.transport == Transport::kLocal
                                 ? std::vector<std::string>{"BK_CLUSTER_DISABLE=1", "NO_COLOR=1"}
                                 : std::vector<std::string>{});
  spec.timeout_seconds = node.timeout_seconds;
  return CheckReply(runner_.Run(spec), node, expected_id);
}

std::string ControlDir() {
  const char* off = std::getenv("BK_CLUSTER_SSH_CONTROL");
  if (off && std::string_view(off) == "off") return "";
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  std::string dir;
  struct stat st {};
  if (runtime && runtime[0] == '/' && stat(runtime, &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == sys::CurrentUid())
    dir = std::string(runtime) + "/gpubk-ssh";
  else
    dir = sys::HomeDir() + "/.cache/gpubk/ssh";
  // A socket path is at most 107 bytes, and while a master starts OpenSSH
  // binds DIR/%C.<16 random>: the directory, "/", 40 hex, "." and 16 more.
  if (dir.size() > 107 - 58) return "";
  if (!sys::EnsurePrivateDir(dir, 0700, sys::CurrentUid())) return "";
  return dir;
}

std::string SelfExecutable() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "bk";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace bk::cluster
