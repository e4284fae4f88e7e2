#include "server/daemon.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

#include "base/exit_codes.h"
#include "engine/parse.h"
#include "gpu/source.h"
#include "monitor/runner.h"
#include "monitor/usage_view.h"
#include "server/calendar_feed.h"
#include "server/dispatcher.h"
#include "server/import_job.h"
#include "server/notify.h"
#include "server/passed_file.h"
#include "server/unix_socket.h"
#include "service/booking_service.h"
#include "sys/clock.h"
#include "sys/fs.h"
#include "sys/local_zone.h"
#include "sys/node.h"
#include "sys/pid_lock.h"
#include "sys/users.h"

namespace bk::server {
namespace {

using Steady = std::chrono::steady_clock;

void Log(const std::string& line) {
  std::time_t t = std::time(nullptr);
  std::fprintf(stderr, "%s serve: %s\n", engine::FormatIsoUtc(t).c_str(), line.c_str());
  std::fflush(stderr);
}

// Fairness: each round of the event loop gives a connection one read of at
// most kReadChunk bytes and a turn of at most kRequestsPerTurn requests (fewer
// once the turn has used kTurnBudget); the rest wait in `in` for the next
// round. A round ends early after kRoundBudget, so signals and new
// connections are seen promptly; the next round resumes where it stopped.
constexpr size_t kReadChunk = 64 * 1024;
constexpr int kRequestsPerTurn = 4;
constexpr auto kTurnBudget = std::chrono::milliseconds(5);
constexpr auto kRoundBudget = std::chrono::milliseconds(50);
// A drained buffer larger than this gives its memory back.
constexpr size_t kKeepCapacity = 2 * kReadChunk;

struct Conn {
  int fd = -1;
  service::Actor actor;
  std::string in;
  size_t scanned = 0;  // in[0, scanned) holds no newline
  std::string out;
  size_t sent = 0;  // out[0, sent) is already sent
  Steady::time_point last_activity;
  Steady::time_point partial_since;
  PassedFile passed;     // a descriptor that came with a request line (an import's file)
  bool eof = false;      // the peer sent its last byte: answer what is complete, then close
  bool closing = false;  // no more requests: flush `out`, then close
  // Replies waiting for the group commit, in request order: a write's until
  // the ledger has it on disk, and any reply after one, so that a
  // connection's answers keep the order of its requests.
  struct Held {
    std::string reply;
    bool write = false;
  };
  std::vector<Held> held;

  size_t pending() const { return out.size() - sent; }
  // Whether `in` holds a complete line (its newline at in[scanned] then).
  bool HasLine() {
    size_t nl = in.find('\n', scanned);
    scanned = nl == std::string::npos ? in.size() : nl;
    return nl != std::string::npos;
  }
};

// The single-instance lock: flock held for the daemon's life; the file names the holder.
Result<int> TakeLock(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Fail(ErrorKind::kIo, fmt::format("cannot open lock {}: {}", path, std::strerror(errno)));
  BK_TRY(sys::LockNamingPid(fd, path, [](const std::string& pid) {
    return fmt::format("another `bk server serve` is running for this server (pid {})", pid);
  }));
  return fd;
}

class Loop {
 public:
  Loop(const ServeOptions& o, const config::Config& c, service::BookingService& s, monitor::Runner* m)
      : opt_(o), config_(c), service_(s), dispatcher_(s, c, o.cache_max_bytes), monitor_(m) {
    dispatcher_.SetBeforeRun([this](bool write) { write ? OpenGroup() : CommitGroup(); });
    dispatcher_.SetStartImport([this](const service::Actor& a, const std::string& id, sys::UniqueFd file) {
      return StartImport(a, id, std::move(file));
    });
    if (m) {
      dispatcher_.SetUsage([m](const monitor::UsageQuery& q, bool text) -> Result<std::string> {
        // Text is rendered in the server's local time: clients are users of this host.
        static sys::LocalZone zone;
        if (text) return monitor::UsageText(m->usage(), q, m->NowMs(), zone, m->not_recording());
        return monitor::UsageJson(m->usage(), q, m->NowMs(), m->not_recording());
      });
    }
    if (m) m->SetRequests(&dispatcher_.stats());
    if (!c.calendar_feed_dir.empty() && o.calendar)
      feed_.emplace(c.calendar_feed_dir, sys::LocalNode().hostname, o.calendar, s,
                    service::Actor{c.owner_uid, c.owner, true});
  }

  int Run(int listen_fd, int signal_fd) {
    std::vector<pollfd> fds;
    while (true) {
      fds.clear();
      fds.push_back({listen_fd, POLLIN, 0});
      fds.push_back({signal_fd, POLLIN, 0});
      bool ready = false;  // some connection has a request it may run now
      for (auto& c : conns_) {
        fds.push_back({c->fd, Events(*c), 0});
        ready = ready || Runnable(*c);
      }
      // The monitor's sampler thread signals a delivered sample; ingesting it
      // here keeps this thread the ledger's only writer (monitor/runner.h).
      const size_t monitor_at = fds.size();
      if (monitor_ && monitor_->fd() >= 0) fds.push_back({monitor_->fd(), POLLIN, 0});
      const size_t import_at = fds.size();
      if (import_) fds.push_back({import_->fd(), POLLIN, 0});
      int n = poll(fds.data(), fds.size(), ready ? 0 : import_ ? kImportProgressMs : 1000);
      if (n < 0 && errno != EINTR) {
        Log(fmt::format("poll failed: {}", std::strerror(errno)));
        return 1;
      }
      if ((fds[1].revents & POLLIN) && !Signalled(signal_fd)) return Stop();
      // Connections first (their indexes match fds[2..]), then new ones.
      for (size_t i = 0; i < conns_.size(); ++i) Service(*conns_[i], fds[i + 2].revents);
      if (fds[0].revents & POLLIN) Accept(listen_fd);
      if (monitor_at < fds.size() && (fds[monitor_at].revents & POLLIN)) monitor_->OnReadable();
      if (import_at < fds.size() && (fds[import_at].revents & POLLIN)) FinishImport();
      RunTurns();
      // The round's writes reach the disk together before the next poll: no
      // reply waits on other clients' traffic, and the monitor above never
      // finds a group open.
      CommitGroup();
      ReportImport();
      RefreshFeeds();
      Expire();
      Reap();
    }
  }

  size_t writes() const { return writes_; }
  size_t groups() const { return groups_; }
  size_t requests() const { return requests_; }

 private:
  // Read only while no complete request waits: a client that sends faster
  // than it is served fills its own socket buffer, not our memory.
  short Events(Conn& c) {
    short ev = 0;
    if (!c.eof && !c.closing && !c.HasLine()) ev |= POLLIN;
    if (c.pending() > 0) ev |= POLLOUT;
    return ev;
  }

  // Whether `c` may run its next request now: one is complete and its unsent
  // replies (and everyone's together, unless it has none) are under the caps.
  bool Runnable(Conn& c) {
    if (c.fd < 0 || c.closing || c.pending() >= opt_.max_output_bytes) return false;
    if (pending_ > opt_.max_total_output_bytes && c.pending() > 0) return false;
    return c.HasLine();
  }

  // At most kAcceptsPerRound a round: a burst of connects is taken in steps,
  // with the requests of those already accepted read in between, so a client
  // that has spoken is never the longest idle just because the burst came
  // before the loop could read it. The listening socket stays readable, so
  // the next poll returns at once.
  static constexpr int kAcceptsPerRound = 32;

  void Accept(int listen_fd) {
    for (int taken = 0; taken < kAcceptsPerRound; ++taken) {
      int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) return;
      auto cred = PeerCredentials(fd);
      if (!cred) {
        close(fd);
        continue;
      }
      // Closed connections stay in conns_ until the round's Reap: count the
      // open ones, or a burst of connects evicts one live client per accept.
      if (OpenCount() >= opt_.max_clients) DropLongestIdle();
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      c->actor.uid = cred->uid;
      c->actor.username = sys::UserName(cred->uid);
      c->actor.admin = sys::IsAdministrator(cred->uid, config_.owner_uid, config_.admin_group);
      c->last_activity = Steady::now();
      conns_.push_back(std::move(c));
    }
  }

  size_t OpenCount() const {
    return static_cast<size_t>(std::count_if(conns_.begin(), conns_.end(),
                                             [](const std::unique_ptr<Conn>& c) { return c->fd >= 0; }));
  }

  void DropLongestIdle() {
    Conn* victim = nullptr;
    for (auto& c : conns_)
      if (c->fd >= 0 && !c->closing && (!victim || c->last_activity < victim->last_activity))
        victim = c.get();
    if (victim) Close(*victim);
  }

  void Service(Conn& c, short revents) {
    if (c.fd < 0) return;
    if (revents & (POLLERR | POLLNVAL)) return Close(c);
    if (revents & POLLIN) Read(c);
    if (c.fd >= 0 && (revents & POLLOUT)) Flush(c);
    // Hung up with nothing (more) read: the peer can take no answers.
    if (c.fd >= 0 && (revents & POLLHUP) && !(revents & POLLIN)) c.eof = true;
    Settle(c);
  }

  // One read per round, however much the client has sent.
  void Read(Conn& c) {
    char buf[kReadChunk];
    Received got = ReceiveWithDescriptors(c.fd, buf, sizeof(buf));
    c.passed.Arrived(std::move(got.fds), c.in.size());
    ssize_t n = got.n;
    if (n == 0) {
      c.eof = true;
      return;
    }
    if (n < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK) Close(c);
      return;
    }
    if (c.in.empty()) c.partial_since = Steady::now();
    c.in.append(buf, static_cast<size_t>(n));
    c.last_activity = Steady::now();
  }

  // Each connection's turn, round-robin from where the last round stopped.
  void RunTurns() {
    const auto round_start = Steady::now();
    const size_t n = conns_.size();
    for (size_t k = 0; k < n; ++k) {
      size_t i = (next_turn_ + k) % n;
      Turn(*conns_[i]);
      if (Steady::now() - round_start > kRoundBudget) {
        next_turn_ = (i + 1) % n;
        return;
      }
    }
  }

  void Turn(Conn& c) {
    const auto start = Steady::now();
    bool answered = false;
    for (int i = 0; i < kRequestsPerTurn && Runnable(c); ++i) {
      Request(c);
      answered = true;
      if (Steady::now() - start > kTurnBudget) break;
    }
    if (answered && c.fd >= 0) Flush(c);
    Settle(c);
  }

  // Runs the first complete line of `c.in`.
  void Request(Conn& c) {
    if (!c.HasLine()) return;
    std::string line = c.in.substr(0, c.scanned);
    sys::UniqueFd passed = c.passed.TakeFor(c.scanned + 1);
    c.in.erase(0, c.scanned + 1);
    c.scanned = 0;
    if (c.in.empty()) {
      Release(c.in);
    } else if (!c.HasLine()) {
      // What remains is the start of the next line: its clock starts now.
      c.partial_since = Steady::now();
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) return;
    if (line.size() > opt_.max_line_bytes) return TooLong(c);
    ++requests_;
    c.last_activity = Steady::now();
    requesting_ = &c;
    auto reply = dispatcher_.Handle(c.actor, line, std::move(passed));
    const bool write = dispatcher_.last_was_write();
    if (write) {
      ++writes_;
      wrote_ = true;
    }
    if (reply) Reply(c, std::move(*reply), write);
  }

  // Group commit: the writes run between two commits share one ledger
  // transaction and so one fsync, and their replies are held until it is on
  // disk. The group opens at the first write and is committed before any
  // read runs (no answer may show what is not durable) and at the end of
  // each round.
  void OpenGroup() {
    if (group_open_) return;
    // A group that cannot begin leaves each write its own transaction, whose
    // commit reports the error to its own client.
    group_open_ = service_.BeginBatch().has_value();
  }

  void CommitGroup() {
    Status committed = Ok();
    if (group_open_) {
      group_open_ = false;
      committed = service_.CommitBatch();
      if (committed) ++groups_;
    }
    if (!wrote_) return;
    wrote_ = false;
    for (auto& c : conns_) Deliver(*c, committed);
    if (monitor_) monitor_->OnWrite();  // a new exclusive booking may pause sampling
  }

  // Queues what `c` holds: after a failed commit each write's reply becomes
  // the error that lost it, under the same request id.
  void Deliver(Conn& c, const Status& committed) {
    if (c.held.empty()) return;
    std::vector<Conn::Held> held;
    held.swap(c.held);
    if (c.fd < 0) return;
    for (const auto& h : held)
      Queue(c, h.write && !committed ? Dispatcher::Unwritten(h.reply, committed.error()) : h.reply);
    Flush(c);
    // Only a connection with no request running can be closing.
    if (c.closing) Settle(c);
  }

  // Queues `reply`, or holds it for the group commit when it answers a write
  // or follows a held reply.
  void Reply(Conn& c, std::string reply, bool write) {
    if (c.fd < 0) return;  // a send failed while the request ran: the peer is gone
    if (write || !c.held.empty())
      c.held.push_back({std::move(reply), write});
    else
      Queue(c, reply);
  }

  // Moves a connection on once it has no complete request left: an
  // over-long partial line is refused, a finished peer is closed after its
  // last answer.
  void Settle(Conn& c) {
    if (c.fd < 0) return;
    if (!c.closing && !c.HasLine()) {
      if (c.in.size() > opt_.max_line_bytes)
        TooLong(c);
      else if (c.eof)
        c.closing = true;
    }
    if (c.closing && c.pending() == 0 && c.held.empty()) Close(c);
  }

  void TooLong(Conn& c) {
    c.in.clear();
    c.passed.Reset();
    Release(c.in);
    c.scanned = 0;
    Reply(
        c,
        fmt::format(
            R"({{"jsonrpc":"2.0","id":null,"error":{{"code":-32600,"message":"request line exceeds {} bytes"}}}})",
            opt_.max_line_bytes),
        false);
    c.closing = true;
  }

  void Queue(Conn& c, const std::string& reply) {
    if (c.sent > 0) {
      c.out.erase(0, c.sent);
      c.sent = 0;
    }
    c.out += reply;
    c.out += '\n';
    pending_ += reply.size() + 1;
  }

  // Sends what the socket takes now; never waits.
  void Flush(Conn& c) {
    while (c.pending() > 0) {
      ssize_t n = send(c.fd, c.out.data() + c.sent, c.pending(), MSG_NOSIGNAL);
      if (n > 0) {
        c.sent += static_cast<size_t>(n);
        pending_ -= static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      return Close(c);
    }
    c.out.clear();
    c.sent = 0;
    Release(c.out);
  }

  // A large reply or line must not keep its memory once it is gone.
  static void Release(std::string& s) {
    if (s.empty() && s.capacity() > kKeepCapacity) std::string().swap(s);
  }

  void Expire() {
    auto now = Steady::now();
    for (auto& c : conns_) {
      if (c->fd < 0) continue;
      auto idle = std::chrono::duration_cast<std::chrono::milliseconds>(now - c->last_activity).count();
      auto partial = std::chrono::duration_cast<std::chrono::milliseconds>(now - c->partial_since).count();
      bool unfinished = !c->in.empty() && !c->HasLine();
      if (idle > opt_.idle_timeout_ms || (unfinished && partial > opt_.partial_timeout_ms)) Close(*c);
    }
  }

  void Close(Conn& c) {
    if (c.fd >= 0) close(c.fd);
    c.fd = -1;
    c.passed.Reset();
    if (&c == import_conn_) import_conn_ = nullptr;  // the import goes on; its answer has nobody to go to
    pending_ -= c.pending();
    c.out.clear();
    c.sent = 0;
    c.held.clear();
  }

  void Reap() {
    std::erase_if(conns_, [](const std::unique_ptr<Conn>& c) { return c->fd < 0; });
  }

  // An import from a passed descriptor runs as a job (server/import_job.h):
  // this thread starts it, tells its client how far it is, and swaps its
  // ledger in when it is done; meanwhile writes are refused and reads go on.
  static constexpr int kImportProgressMs = 250;

  ::bk::Status StartImport(const service::Actor& actor, const std::string& id, sys::UniqueFd file) {
    BK_ASSIGN_OR_RETURN(auto staged, service_.PrepareImport(actor));
    BK_ASSIGN_OR_RETURN(import_, ImportJob::Start(std::move(staged), std::move(file)));
    import_conn_ = requesting_;
    import_id_ = id;
    dispatcher_.RefuseWrites(std::string(kImportBusy));
    Log(fmt::format("import by {} (UID {}) started", actor.username, actor.uid));
    return Ok();
  }

  void FinishImport() {
    auto outcome = import_->Finish();
    if (outcome) {
      if (auto adopted = service_.AdoptImport(import_->staging_path()); !adopted)
        outcome = std::unexpected(adopted.error());
    }
    Log(outcome ? fmt::format("import done: {} reservations", outcome->reservations)
                : "import refused: " + outcome.error().message);
    import_.reset();  // removes the staging file unless it became the ledger
    dispatcher_.RefuseWrites("");
    if (outcome) {
      ++writes_;
      if (monitor_) monitor_->OnWrite();  // imported exclusive bookings may pause sampling
    }
    if (!import_conn_) return;
    Queue(*import_conn_, Dispatcher::ImportAnswer(import_id_, outcome));
    Flush(*import_conn_);
    import_conn_ = nullptr;
  }

  // At most one notification per kImportProgressMs, and none while the
  // client has not read the last one.
  void ReportImport() {
    if (!import_ || !import_conn_) return;
    auto now = Steady::now();
    import_conn_->last_activity = now;  // waiting for its answer is not idling
    if (import_conn_->pending() > 0 || now - last_progress_ < std::chrono::milliseconds(kImportProgressMs))
      return;
    last_progress_ = now;
    ImportJob::Progress p = import_->progress();
    Queue(*import_conn_, Dispatcher::ImportProgress(import_id_, p.phase, p.done, p.total));
    Flush(*import_conn_);
  }

  // Reads the signal that arrived: SIGHUP reloads the policy and goes on
  // (true), SIGINT and SIGTERM stop (false).
  bool Signalled(int signal_fd) {
    signalfd_siginfo info{};
    if (read(signal_fd, &info, sizeof(info)) != sizeof(info) || info.ssi_signo != SIGHUP) return false;
    ReloadPolicy();
    return true;
  }

  // SIGHUP (`systemctl reload gpubk`): the config file's policy, as the
  // owner would apply it with `bk admin policy`, but never forced: when
  // existing bookings conflict, the running policy stays and the log says so.
  void ReloadPolicy() {
    if (import_) {
      Log("SIGHUP: policy not reloaded while an import runs; send it again afterwards");
      return;
    }
    CommitGroup();  // the change commits in a transaction of its own
    service::Actor owner{config_.owner_uid, config_.owner, true};
    auto change = service_.ChangePolicy(owner, {});
    if (!change) {
      Log("SIGHUP: policy not reloaded: " + change.error().message);
    } else if (change->status == "refused") {
      Log(
          fmt::format("SIGHUP: policy not reloaded: {} booking(s) conflict with it; apply it with `bk admin "
                      "policy --force --reason TEXT` or `--cancel-overlapping --reason TEXT`",
                      change->conflicts.size()));
    } else {
      std::vector<std::string> keys;
      for (const auto& c : change->changes) keys.push_back(c.key);
      Log(fmt::format("SIGHUP: policy {}{}{}", change->status, keys.empty() ? "" : ": ",
                      fmt::join(keys, ", ")));
    }
    if (change && !change->restart.empty())
      Log(fmt::format("SIGHUP: also changed, applied at the next start: {}",
                      fmt::join(change->restart, ", ")));
  }

  // The calendar feeds follow the ledger; a failure is logged once until it changes.
  void RefreshFeeds() {
    if (!feed_) return;
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Steady::now().time_since_epoch()).count();
    Status st = feed_->Refresh(ms);
    std::string error = st ? "" : st.error().message;
    if (error != feed_error_ && !error.empty()) Log("calendar feeds: " + error);
    feed_error_ = error;
  }

  // SIGINT/SIGTERM: an import still running is stopped and leaves nothing behind.
  int Stop() {
    if (import_) Log("stopping: the import in progress is abandoned; the ledger is unchanged");
    import_.reset();
    return 0;
  }

  const ServeOptions& opt_;
  const config::Config& config_;
  service::BookingService& service_;
  Dispatcher dispatcher_;
  monitor::Runner* monitor_;
  std::vector<std::unique_ptr<Conn>> conns_;
  size_t next_turn_ = 0;  // where the next round's turns start
  size_t pending_ = 0;    // unsent reply bytes of all connections
  size_t writes_ = 0;
  size_t requests_ = 0;
  bool group_open_ = false;
  bool wrote_ = false;          // a write ran since the last group commit
  size_t groups_ = 0;           // group commits made: the ledger's fsyncs for writes
  Conn* requesting_ = nullptr;  // whose request the dispatcher is handling
  std::unique_ptr<ImportJob> import_;
  Conn* import_conn_ = nullptr;  // where the import's answer goes (null once it closed)
  std::string import_id_;        // the import request's id, as JSON
  Steady::time_point last_progress_;
  std::optional<CalendarFeed> feed_;
  std::string feed_error_;  // the last failure logged
};

}  // namespace

int Serve(const ServeOptions& options) {
  auto cfg = config::LoadServer(options.config_path, config::ProcessEnv(), true);
  if (!cfg) {
    std::fprintf(stderr, "bk: %s\n", cfg.error().message.c_str());
    return 2;
  }
  const config::Config& c = *cfg;
  uid_t me = sys::CurrentUid();
  if (me != c.owner_uid) {
    std::fprintf(stderr,
                 "bk: `bk server serve` must run as the server owner %s (UID %u); you are %s (UID %u)\n",
                 c.owner.c_str(), c.owner_uid, sys::UserName(me).c_str(), me);
    return exit_code::kNotOwner;
  }
  std::string run_dir = sys::Dirname(c.socket_path);
  auto lock = TakeLock(sys::JoinPath(run_dir, "serve.lock"));
  if (!lock) {
    std::fprintf(stderr, "bk: %s\n", lock.error().message.c_str());
    return lock.error().kind == ErrorKind::kBusy ? exit_code::kBusy : exit_code::kUsage;
  }

  std::unique_ptr<sys::Clock> clock = std::make_unique<sys::RealClock>();
  if (c.server_test_now) {
    auto fixed = sys::ClockFromTestNow(*c.server_test_now);
    if (!fixed) {
      std::fprintf(stderr, "bk: %s\n", fixed.error().message.c_str());
      return 2;
    }
    clock = std::move(*fixed);
  }
  // The monitor samples the GPUs; the service shows its latest snapshot.
  monitor::Runner monitor(c, *clock, Log);
  service::BookingService::Deps deps{&c, clock.get(), monitor.service_source(), c.owner_uid, true};
  deps.snapshot_ttl_ms = 2000;
  service::BookingService service(deps);
  // Open (and if needed create) the ledger now, so a broken data directory fails at start.
  if (auto st = service.Open(); !st) {
    std::fprintf(stderr, "bk: %s\n", st.error().message.c_str());
    return 2;
  }

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  mode_t mode = c.access == "group" ? 0660 : 0666;
  std::optional<gid_t> gid;
  if (c.access == "group" && c.gid) gid = *c.gid;
  auto listen_fd = ListenUnix(c.socket_path, mode, gid, c.owner_uid);
  if (!listen_fd) {
    std::fprintf(stderr, "bk: %s\n", listen_fd.error().message.c_str());
    return 2;
  }
  if (auto st = monitor.Start(service, c.owner_uid); !st) {
    std::fprintf(stderr, "bk: %s\n", st.error().message.c_str());
    close(*listen_fd);
    unlink(c.socket_path.c_str());
    return st.error().kind == ErrorKind::kBusy ? exit_code::kBusy : exit_code::kUsage;
  }
  Log(fmt::format("listening on {} (owner {}, {} GPUs, access {}, ledger {})", c.socket_path, c.owner,
                  c.policy.gpu_count, c.access, c.ledger_path));
  Notify("READY=1\nSTATUS=serving " + c.socket_path);
  Loop loop(options, c, service, &monitor);
  int rc = loop.Run(*listen_fd, sfd);
  Notify("STOPPING=1");
  monitor.Stop();
  close(*listen_fd);
  unlink(c.socket_path.c_str());
  Log(fmt::format("stopped: {} requests, {} writes in {} group commits", loop.requests(), loop.writes(),
                  loop.groups()));
  close(*lock);
  return rc;
}

}  // namespace bk::server
