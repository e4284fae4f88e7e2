// Remote mode: the same Ledger calls as JSON-RPC requests on the server's socket.
// The daemon identifies us through SO_PEERCRED; nothing we send names a user.

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "client/method_ledger.h"
#include "server/unix_socket.h"
#include "sys/users.h"

namespace bk::client {
namespace {

using rpc::json;
namespace methods = rpc::methods;

class RemoteLedger : public MethodLedger<RemoteLedger> {
 public:
  RemoteLedger(const config::Config& config, const sys::Clock& clock) : config_(config), clock_(clock) {
    policy_ = config.policy;
    actor_.uid = sys::CurrentUid();
    actor_.username = sys::UserName(actor_.uid);
  }
  ~RemoteLedger() override {
    if (fd_ >= 0) close(fd_);
  }

  // Connects and asks who we are and which policy the daemon applies.
  ::bk::Status Connect() {
    BK_ASSIGN_OR_RETURN(rpc::ServerInfo info, Run(methods::kPing, {}));
    actor_ = info.actor;
    now_offset_ = info.now - clock_.Now();
    policy_ = info.policy;
    telemetry_ = info.telemetry;
    return Ok();
  }

  std::string Transport() const override { return "socket"; }
  const service::Actor& actor() const override { return actor_; }
  const engine::Policy& policy() const override { return policy_; }
  engine::Seconds Now() const override { return clock_.Now() + now_offset_; }
  std::string Telemetry() override { return telemetry_; }

  Result<std::string> Usage(const monitor::UsageQuery& q, bool text) override {
    BK_ASSIGN_OR_RETURN(rpc::UsageReply reply, Run(methods::kUsage, {q, /*to_given=*/true, text}));
    return reply.document;
  }

  // The descriptor rides with the request line; the daemon reads the file
  // and tells how far it is until it answers.
  Result<service::ImportSummary> ImportFile(const std::string& path, sys::UniqueFd file,
                                            const service::ImportProgressFn& progress) override {
    (void)path;
    progress_ = &progress;
    passed_ = file.get();
    auto reply = Send(methods::kImport.name, methods::kImport.encode_request({.descriptor = true}));
    progress_ = nullptr;
    passed_ = -1;
    if (!reply) return std::unexpected(reply.error());
    return methods::kImport.decode_reply(*reply);
  }

  // The backup's descriptor rides with the request line, as an import's does.
  Result<service::LedgerSwap> Restore(const std::string& path, sys::UniqueFd file) override {
    passed_ = file.get();
    auto reply = RunMethod(methods::kRestore, {path});
    passed_ = -1;
    return reply;
  }

 private:
  friend class MethodLedger<RemoteLedger>;

  Error Unreachable(const std::string& why) const {
    return Error{
        ErrorKind::kUnavailable,
        fmt::format("the GPUBK server at {} is not reachable ({}); its owner {} must run `bk server serve "
                    "--config {}` (keep it in tmux)",
                    config_.socket_path, why, config_.owner, config_.server_config)};
  }

  // The kernel's word on who answers: only the server's owner runs its
  // daemon. Anyone else listening on the socket's path (bound while the
  // daemon was down) is never told a request, nor believed.
  ::bk::Status CheckPeer() {
    auto peer = server::PeerCredentials(fd_);
    if (peer && peer->uid == config_.owner_uid) return Ok();
    Drop();
    if (!peer) return std::unexpected(peer.error());
    return Fail(
        ErrorKind::kPermission,
        fmt::format("{} is answered by {} (UID {}), not by the server owner {} (UID {}); nothing was "
                    "sent. Tell {}: another account may have taken the socket while the daemon was down",
                    config_.socket_path, sys::UserName(peer->uid), peer->uid, config_.owner,
                    config_.owner_uid, config_.owner));
  }

  // Forgets a broken connection, so that a long-running client (the worker)
  // reconnects on its next call once the daemon is back.
  void Drop() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    buffer_.clear();
  }

  // One call: the request encoded, the reply decoded, as the method says.
  template <class M>
  Result<typename M::Reply> RunMethod(const M& m, const typename M::Request& request) {
    BK_ASSIGN_OR_RETURN(json j, Send(m.name, m.encode_request(request)));
    return m.decode_reply(j);
  }

  Result<json> Send(std::string_view method, json params) {
    if (fd_ < 0) {
      auto fd = server::ConnectUnix(config_.socket_path, 30000);
      if (!fd) {
        if (fd.error().kind == ErrorKind::kPermission)
          return Fail(
              ErrorKind::kPermission,
              fmt::format("permission denied on {}; ask {} to give you access (bk server init --access group "
                          "--group NAME)",
                          config_.socket_path, config_.owner));
        return std::unexpected(Unreachable(fd.error().message));
      }
      fd_ = *fd;
      BK_TRY(CheckPeer());
    }
    json req = {{"jsonrpc", "2.0"}, {"id", ++next_id_}, {"method", method}, {"params", std::move(params)}};
    std::string line = req.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    if (passed_ >= 0) {
      if (!server::SendWithDescriptor(fd_, line, passed_)) {
        Drop();
        return std::unexpected(Unreachable("the connection closed while sending"));
      }
    } else {
      size_t off = 0;
      while (off < line.size()) {
        // MSG_NOSIGNAL: a daemon gone meanwhile is an error to report, not a SIGPIPE.
        ssize_t n = send(fd_, line.data() + off, line.size() - off, MSG_NOSIGNAL);
        if (n <= 0) {
          Drop();
          return std::unexpected(Unreachable("the connection closed while sending"));
        }
        off += static_cast<size_t>(n);
      }
    }
    BK_ASSIGN_OR_RETURN(json resp, Reply());
    if (resp.contains("error")) return std::unexpected(rpc::ErrorFromObject(resp["error"]));
    if (!resp.contains("result"))
      return Fail(ErrorKind::kCorrupt, "the daemon sent a reply without a result");
    return resp["result"];
  }

  // The answer to the request just sent: requests go one at a time, so the
  // first line with an id. Notifications before it (no id) are told to
  // `progress_` when they are an import's progress, and otherwise skipped.
  Result<json> Reply() {
    while (true) {
      BK_ASSIGN_OR_RETURN(std::string line, ReadLine());
      json resp;
      try {
        resp = json::parse(line);
      } catch (const json::exception&) {
        return Fail(ErrorKind::kCorrupt, "the daemon sent a reply that is not JSON");
      }
      if (!resp.is_object() || resp.contains("id")) return resp;
      if (progress_ && *progress_ && resp.value("method", "") == methods::kImportProgress) Progress(resp);
    }
  }

  void Progress(const json& notice) {
    const json& p = notice.contains("params") ? notice["params"] : json();
    if (!p.is_object() || !p.contains("phase") || !p["phase"].is_string()) return;
    auto phase = service::kImportPhaseNames.Parse(p["phase"].get<std::string>());
    auto count = [&](const char* key) {
      return p.contains(key) && p[key].is_number_integer() ? p[key].get<int64_t>() : 0;
    };
    if (phase) (*progress_)(*phase, count("done"), count("total"));
  }

  Result<std::string> ReadLine() {
    while (true) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      char buf[65536];
      ssize_t n = read(fd_, buf, sizeof(buf));
      if (n <= 0) {
        Drop();
        return std::unexpected(
            Unreachable(n == 0 ? "the daemon closed the connection" : "no answer in 30 s"));
      }
      buffer_.append(buf, static_cast<size_t>(n));
    }
  }

  const config::Config& config_;
  const sys::Clock& clock_;
  engine::Policy policy_;
  service::Actor actor_;
  engine::Seconds now_offset_ = 0;
  std::string telemetry_;  // what the daemon says its monitor samples
  int fd_ = -1;
  int64_t next_id_ = 0;
  std::string buffer_;
  // While ImportFile runs: the descriptor to pass and who hears the progress.
  int passed_ = -1;
  const service::ImportProgressFn* progress_ = nullptr;
};

}  // namespace

Result<std::unique_ptr<Ledger>> OpenRemote(const config::Config& config, const sys::Clock& clock) {
  auto ledger = std::make_unique<RemoteLedger>(config, clock);
  BK_TRY(ledger->Connect());
  return std::unique_ptr<Ledger>(std::move(ledger));
}

Result<std::unique_ptr<Ledger>> Open(const config::Config& config, const sys::Clock& clock,
                                     LockWaitNotice notice) {
  if (config.deployment == config::Deployment::kPrivate) return OpenDirect(config, clock, std::move(notice));
  return OpenRemote(config, clock);
}

}  // namespace bk::client
