// Shared-server throughput: a standalone load generator for `bk server serve`.
//
// It creates a throw-away server directory (`bk server init`), starts the
// daemon (`bk server serve`, readiness from its sd_notify READY=1), and drives
// the broker socket with N concurrent clients, each a thread with its own Unix
// socket connection and one request in flight (closed loop):
//
//   reads      server.ping, then reservations.list (limit 20) on a seeded ledger
//   bookings   booking.create with an op_id: every one is a committed, fsynced
//              transaction in the daemon (durable bookings per second)
//
// and finally times `bk l` as a whole process through the daemon (its own
// spawn-and-wait median, and hyperfine's when hyperfine is installed). The
// daemon is stopped with SIGTERM and must exit 0. Only POSIX calls are used.
//
// With --config the load goes to a server that is already running (a seeded
// ledger, say): nothing is created, `bk l` is not timed, the daemon is left
// running, and --pid names it for its CPU figures. --start puts the bookings
// from that time on (past a seeded block; default: the next slot).
//
// usage: server_bench --bk PATH [--clients 32] [--seconds 3] [--dir DIR]
//                     [--json FILE] [--runs 100] [--order plb] [--seed 320]
//                     [--config FILE --pid PID] [--start UNIX]
// Reported, never asserted: the targets are printed next to the figures.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "server_bench: %s\n", what.c_str());
  std::exit(2);
}

struct Options {
  std::string bk;
  std::string dir;
  std::string json_out;
  int clients = 32;
  double seconds = 3.0;
  int runs = 100;
  std::string order = "plb";  // phases: p = server.ping, l = reservations.list, b = booking.create
  long long seed = 320;       // bookings made before the timed phases, so reads return something
  std::string config;         // an existing server's config.json: attach instead of creating one
  pid_t pid = 0;              // with --config: the daemon, for its CPU time
  long long start = 0;        // first booking's slot (Unix seconds); 0: the slot after now
};

// ---- processes --------------------------------------------------------------

std::vector<std::string> BaseEnv() {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    if (kv.rfind("BK_", 0) == 0 || kv.rfind("XDG_", 0) == 0 || kv.rfind("NOTIFY_SOCKET=", 0) == 0) continue;
    env.push_back(kv);
  }
  env.push_back("TZ=UTC");
  return env;
}

pid_t Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, int out_fd = -1,
            int err_fd = -1) {
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : env) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  if (out_fd >= 0)
    posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  else
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  if (err_fd >= 0) posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, a[0], &fa, nullptr, a.data(), e.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) Die("cannot run " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

int Run(const std::vector<std::string>& argv, const std::vector<std::string>& env, bool quiet = false) {
  int null_fd = quiet ? open("/dev/null", O_WRONLY | O_CLOEXEC) : -1;
  int rc = Wait(Spawn(argv, env, null_fd, quiet ? null_fd : 2));
  if (null_fd >= 0) close(null_fd);
  return rc;
}

bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::stringstream ss(path);
  std::string d;
  while (std::getline(ss, d, ':'))
    if (!d.empty() && access((d + "/" + name).c_str(), X_OK) == 0) return true;
  return false;
}

// ---- sockets ----------------------------------------------------------------

int Connect(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Die(std::string("socket: ") + std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) Die("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// One connection, one request in flight.
class Client {
 public:
  explicit Client(const std::string& path) : fd_(Connect(path)) {}
  ~Client() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

  // Sends one line, returns the reply line ("" when the connection failed).
  std::string Call(const std::string& line) {
    std::string out = line + "\n";
    size_t off = 0;
    while (off < out.size()) {
      ssize_t n = write(fd_, out.data() + off, out.size() - off);
      if (n <= 0) return "";
      off += static_cast<size_t>(n);
    }
    while (true) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string reply = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return reply;
      }
      char tmp[65536];
      ssize_t n = read(fd_, tmp, sizeof(tmp));
      if (n <= 0) return "";
      buf_.append(tmp, static_cast<size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buf_;
};

bool IsResult(const std::string& reply) { return reply.find("\"result\":") != std::string::npos; }

// "now": the daemon's clock from server.ping.
long long PingNow(const std::string& socket_path) {
  Client c(socket_path);
  if (!c.ok()) Die("cannot connect to " + socket_path);
  std::string r = c.Call(R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})");
  size_t at = r.find("\"now\":");
  if (at == std::string::npos) Die("unexpected server.ping reply: " + r);
  return std::atoll(r.c_str() + at + 6);
}

// ---- load phases ------------------------------------------------------------

// CPU seconds (user + system) the daemon has used so far, from /proc/PID/stat.
double ProcessCpuSeconds(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t close_paren = text.rfind(')');
  if (close_paren == std::string::npos) return 0;
  std::istringstream fields(text.substr(close_paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::atof(field.c_str());  // utime, stime
    if (i == 15) break;
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

struct PhaseResult {
  std::string name;
  double daemon_cpu_s = 0;  // CPU the daemon spent during the phase
  long long ok = 0;
  long long errors = 0;
  double seconds = 0;
  double p50_us = 0;
  double p99_us = 0;
  std::string first_error;
  double rate() const { return seconds > 0 ? ok / seconds : 0; }
  double cpu_us_per_op() const {
    return ok + errors > 0 ? daemon_cpu_s * 1e6 / static_cast<double>(ok + errors) : 0;
  }
};

// Each client calls make_line(client, sequence) in a closed loop for `seconds`
// (or until `limit` requests in all when limit > 0).
template <class MakeLine>
PhaseResult Phase(const std::string& name, const std::string& socket_path, pid_t daemon, int clients,
                  double seconds, long long limit, MakeLine make_line) {
  std::atomic<bool> go{false}, stop{false};
  std::atomic<long long> issued{0};
  std::vector<std::vector<double>> lat(static_cast<size_t>(clients));
  std::vector<long long> oks(static_cast<size_t>(clients)), errs(static_cast<size_t>(clients));
  std::vector<std::string> first_err(static_cast<size_t>(clients));
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < clients; ++i) {
    threads.emplace_back([&, i] {
      Client c(socket_path);
      ready.fetch_add(1);
      if (!c.ok()) {
        errs[i]++;
        first_err[i] = "connect failed";
        return;
      }
      while (!go.load()) std::this_thread::yield();
      auto& l = lat[static_cast<size_t>(i)];
      l.reserve(1 << 16);
      while (!stop.load()) {
        long long seq = issued.fetch_add(1);
        if (limit > 0 && seq >= limit) break;
        std::string line = make_line(i, seq);
        auto t0 = Clock::now();
        std::string reply = c.Call(line);
        l.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (IsResult(reply)) {
          oks[i]++;
        } else {
          errs[i]++;
          if (first_err[i].empty()) first_err[i] = reply.empty() ? "connection closed" : reply.substr(0, 300);
          if (reply.empty()) return;
        }
      }
    });
  }
  while (ready.load() < clients) std::this_thread::yield();
  const double cpu0 = ProcessCpuSeconds(daemon);
  auto t0 = Clock::now();
  go.store(true);
  if (limit > 0) {
    for (auto& t : threads) t.join();
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));  // the measuring window itself
    stop.store(true);
    for (auto& t : threads) t.join();
  }
  PhaseResult r;
  r.name = name;
  r.seconds = Seconds(Clock::now() - t0);
  r.daemon_cpu_s = ProcessCpuSeconds(daemon) - cpu0;
  std::vector<double> all;
  for (int i = 0; i < clients; ++i) {
    r.ok += oks[i];
    r.errors += errs[i];
    if (r.first_error.empty()) r.first_error = first_err[i];
    all.insert(all.end(), lat[i].begin(), lat[i].end());
  }
  if (!all.empty()) {
    std::sort(all.begin(), all.end());
    r.p50_us = all[all.size() / 2];
    r.p99_us = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  return r;
}

// ---- readiness --------------------------------------------------------------

int NotifySocket(const std::string& path) {
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), std::min(path.size() + 1, sizeof(addr.sun_path) - 1));
  unlink(path.c_str());
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    Die("cannot bind the notify socket " + path);
  return fd;
}

bool WaitReady(int notify_fd, pid_t daemon, int timeout_ms) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    pollfd p{notify_fd, POLLIN, 0};
    if (poll(&p, 1, 100) > 0) {
      char buf[512];
      ssize_t n = recv(notify_fd, buf, sizeof(buf) - 1, 0);
      if (n > 0 && std::string(buf, static_cast<size_t>(n)).find("READY=1") != std::string::npos) return true;
    }
    int status;
    if (waitpid(daemon, &status, WNOHANG) == daemon) return false;
  }
  return false;
}

// ---- `bk l` as a whole process ---------------------------------------------------

double MedianBkListMs(const std::string& bk, const std::vector<std::string>& env, int runs) {
  std::vector<double> ms;
  int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  for (int i = 0; i < runs + 5; ++i) {
    auto t0 = Clock::now();
    int rc = Wait(Spawn({bk, "l"}, env, null_fd, null_fd));
    double t = Seconds(Clock::now() - t0) * 1000;
    if (rc != 0) Die("`bk l` through the daemon failed (exit " + std::to_string(rc) + ")");
    if (i >= 5) ms.push_back(t);  // the first five warm up
  }
  close(null_fd);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double HyperfineBkListMs(const std::string& bk, const std::vector<std::string>& env, int runs,
                         const std::string& json) {
  // hyperfine passes its environment on: the child's is ours, filtered, plus BK_CONFIG_FILE.
  std::vector<std::string> argv = {"hyperfine",     "-N", "--style", "basic",
                                   "--warmup",      "10", "--runs",  std::to_string(runs),
                                   "--export-json", json, bk + " l"};
  int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  int rc = Wait(Spawn(argv, env, null_fd, null_fd));
  close(null_fd);
  if (rc != 0) return -1;
  std::ifstream f(json);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  size_t at = text.find("\"median\":");
  if (at == std::string::npos) return -1;
  return std::atof(text.c_str() + at + 9) * 1000;
}

void RemoveTree(const std::string& dir) { Run({"rm", "-rf", dir}, BaseEnv(), true); }

// The "socket" member of a server's config.json (written by `bk server init`:
// a plain path, no escapes).
std::string SocketFromConfig(const std::string& config) {
  std::ifstream f(config);
  if (!f) Die("cannot read " + config);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  size_t key = text.find("\"socket\"");
  size_t open = key == std::string::npos ? key : text.find('"', text.find(':', key));
  size_t close = open == std::string::npos ? open : text.find('"', open + 1);
  if (close == std::string::npos) Die(config + " has no \"socket\"");
  return text.substr(open + 1, close - open - 1);
}

// ---- the server under load ------------------------------------------------------

struct Server {
  std::string work;    // our scratch directory (owned servers only)
  std::string config;  // its config.json
  std::string sock;    // its broker socket
  pid_t daemon = 0;
  bool owned = false;  // started here (and to be stopped here)
};

// A throw-away server under o.dir, served until the end of the run.
Server StartServer(const Options& o, std::vector<std::string> env) {
  std::string tmpl = o.dir + "/server-bench-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) Die("cannot create a directory under " + o.dir + ": " + std::strerror(errno));
  Server s;
  s.work = buf.data();
  s.owned = true;
  chmod(s.work.c_str(), 0755);
  std::string srv = s.work + "/srv";
  s.config = srv + "/config.json";
  s.sock = srv + "/run/broker.sock";
  env.push_back("HOME=" + s.work);

  // 8 GPUs, 2 share slots each, 5-minute slots: 16 bookings fit in every slot.
  int rc =
      Run({o.bk, "server", "init", "--directory", srv, "--gpu-count", "8", "--max-shared", "2"}, env, true);
  if (rc != 0) {
    RemoveTree(s.work);
    Die("bk server init failed (exit " + std::to_string(rc) +
        "); the directory's parents must not be writable by "
        "others: use --dir");
  }
  std::string notify = s.work + "/notify.sock";
  int nfd = NotifySocket(notify);
  env.push_back("NOTIFY_SOCKET=" + notify);
  int log_fd = open((s.work + "/serve.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  s.daemon = Spawn({o.bk, "server", "serve", "--config", s.config}, env, log_fd, log_fd);
  close(log_fd);
  if (!WaitReady(nfd, s.daemon, 30000)) {
    kill(s.daemon, SIGKILL);
    Wait(s.daemon);
    Die("bk server serve did not become ready; see " + s.work + "/serve.log");
  }
  close(nfd);
  return s;
}

// A server someone else started and will stop.
Server AttachServer(const Options& o) {
  Server s;
  s.config = o.config;
  s.sock = SocketFromConfig(o.config);
  s.daemon = o.pid;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + a);
      return argv[++i];
    };
    if (a == "--bk")
      o.bk = next();
    else if (a == "--dir")
      o.dir = next();
    else if (a == "--json")
      o.json_out = next();
    else if (a == "--clients")
      o.clients = std::max(1, std::atoi(next().c_str()));
    else if (a == "--seconds")
      o.seconds = std::max(0.2, std::atof(next().c_str()));
    else if (a == "--runs")
      o.runs = std::max(5, std::atoi(next().c_str()));
    else if (a == "--order")
      o.order = next();
    else if (a == "--seed")
      o.seed = std::max(0LL, std::atoll(next().c_str()));
    else if (a == "--config")
      o.config = next();
    else if (a == "--pid")
      o.pid = static_cast<pid_t>(std::atoi(next().c_str()));
    else if (a == "--start")
      o.start = std::max(0LL, std::atoll(next().c_str()));
    else if (a == "-h" || a == "--help") {
      std::puts(
          "usage: server_bench --bk PATH [--clients 32] [--seconds 3] [--dir DIR] [--json FILE] [--runs "
          "100]\n"
          "                    [--order plb] [--seed 320] [--config FILE --pid PID] [--start UNIX]\n"
          "  --order: phases, p server.ping, l reservations.list (limit 20), b booking.create\n"
          "  --seed: bookings made before the phases (the reads list them)\n"
          "  --config: load a running server instead (no `bk l` timing; it is left running)\n"
          "  --start: the first booking's slot, Unix seconds (default: the next slot)");
      return 0;
    } else {
      Die("unknown argument " + a + " (see --help)");
    }
  }
  if (o.bk.empty()) Die("give the bk binary: --bk build/bk");
  if (o.bk[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd))) o.bk = std::string(cwd) + "/" + o.bk;
  }
  if (access(o.bk.c_str(), X_OK) != 0) Die(o.bk + " is not executable");
  if (o.dir.empty()) {
    const char* t = std::getenv("TMPDIR");
    o.dir = t && *t ? t : "/tmp";
  }
  if (o.dir[0] != '/') {  // `bk server init` wants an absolute directory
    char cwd[4096];
    if (getcwd(cwd, sizeof(cwd))) o.dir = std::string(cwd) + "/" + o.dir;
  }
  signal(SIGPIPE, SIG_IGN);

  std::vector<std::string> env = BaseEnv();
  Server server = o.config.empty() ? StartServer(o, env) : AttachServer(o);
  if (server.owned) env.push_back("HOME=" + server.work);
  const std::string& sock = server.sock;
  const pid_t daemon = server.daemon;

  const long long now = PingNow(sock);
  const long long slot = 300;
  const long long base = o.start > 0 ? o.start / slot * slot : now / slot * slot + slot;
  const std::string run_id = std::to_string(static_cast<long long>(getpid()));
  auto booking = [&](long long k, const std::string& tag) {
    // Booking k starts in slot k/16 from the next one: each slot takes exactly its 16.
    long long start = base + (k / 16) * slot;
    return std::string(R"({"jsonrpc":"2.0","id":)") + std::to_string(k) +
           R"(,"method":"booking.create","params":{"count":1,"duration_seconds":300,"start":)" +
           std::to_string(start) + R"(,"op_id":")" + tag + "-" + run_id + "-" + std::to_string(k) + R"("}})";
  };

  std::printf("== server: %d clients, %.1f s per phase, %lld seeded bookings, daemon pid %d, config %s\n",
              o.clients, o.seconds, o.seed, static_cast<int>(daemon), server.config.c_str());
  std::fflush(stdout);

  // Seed the ledger so that reads have something to return (all of them the caller's own).
  const long long seed = o.seed;
  if (seed > 0) {
    PhaseResult seeded =
        Phase("seed", sock, daemon, o.clients, 0, seed, [&](int, long long k) { return booking(k, "seed"); });
    if (seeded.ok != seed) Die("seeding failed: " + seeded.first_error);
  }

  PhaseResult ping, list, book;
  for (char phase : o.order) {
    if (phase == 'p') {
      ping = Phase("server.ping", sock, daemon, o.clients, o.seconds, 0, [](int, long long k) {
        return std::string(R"({"jsonrpc":"2.0","id":)") + std::to_string(k) + R"(,"method":"server.ping"})";
      });
    } else if (phase == 'l') {
      list = Phase("reservations.list", sock, daemon, o.clients, o.seconds, 0, [](int, long long k) {
        return std::string(R"({"jsonrpc":"2.0","id":)") + std::to_string(k) +
               R"(,"method":"reservations.list","params":{"limit":20}})";
      });
    } else if (phase == 'b') {
      // Durable bookings: sequence numbers continue after the seed's slots.
      book = Phase("booking.create", sock, daemon, o.clients, o.seconds, 0,
                   [&](int, long long k) { return booking(seed + k, "bench"); });
    }
  }

  // A server of our own: `bk l` through it, then stop it. One we attached to keeps running.
  double bk_l = -1, hf = -1;
  int drc = 0;
  if (server.owned) {
    std::vector<std::string> cenv = env;
    cenv.push_back("BK_CONFIG_FILE=" + server.config);
    bk_l = MedianBkListMs(o.bk, cenv, o.runs);
    if (OnPath("hyperfine")) hf = HyperfineBkListMs(o.bk, cenv, o.runs, server.work + "/bk-l.json");
    kill(daemon, SIGTERM);
    drc = Wait(daemon);
  }

  auto line = [](const PhaseResult& r, const char* unit, const char* target) {
    if (r.name.empty()) return;  // not run (--order)
    std::printf(
        "%-26s %8.0f %-18s %s  (%lld ok, %lld errors; latency p50 %.0f us, p99 %.0f us; daemon CPU %.0f "
        "us/op)\n",
        r.name.c_str(), r.rate(), unit, target, r.ok, r.errors, r.p50_us, r.p99_us, r.cpu_us_per_op());
    if (r.errors) std::printf("  first error: %s\n", r.first_error.c_str());
  };
  line(book, "durable bookings/s", "target >= 3000 ");
  line(ping, "reads/s", "target >= 20000");
  line(list, "reads/s", "target >= 20000");
  if (server.owned) {
    std::printf("%-26s %8.2f %-18s %s  (median of %d spawns)\n", "bk l (whole process)", bk_l, "ms",
                "target < 10 ms ", o.runs);
    if (hf >= 0)
      std::printf("%-26s %8.2f %-18s %s  (hyperfine -N median, %d runs)\n", "bk l (whole process)", hf, "ms",
                  "target < 10 ms ", o.runs);
    else
      std::printf("%-26s %8s (hyperfine not installed)\n", "bk l (whole process)", "-");
    std::printf("daemon stopped with SIGTERM: exit %d%s\n", drc, drc == 0 ? "" : "  (expected 0)");
  }

  if (!o.json_out.empty()) {
    std::ofstream f(o.json_out);
    auto number = [](double v, bool known) { return known ? std::to_string(v) : std::string("null"); };
    auto phase = [&](const PhaseResult& r) {
      if (r.name.empty()) return std::string("null");
      std::ostringstream s;
      s << "{\"per_second\": " << r.rate() << ", \"ok\": " << r.ok << ", \"errors\": " << r.errors
        << ", \"p50_us\": " << r.p50_us << ", \"p99_us\": " << r.p99_us
        << ", \"daemon_cpu_us_per_op\": " << r.cpu_us_per_op() << "}";
      return s.str();
    };
    f << "{\n  \"clients\": " << o.clients << ",\n  \"seconds_per_phase\": " << o.seconds
      << ",\n  \"durable_bookings\": " << phase(book) << ",\n  \"reads_ping\": " << phase(ping)
      << ",\n  \"reads_list\": " << phase(list) << ",\n  \"bk_l_median_ms\": " << number(bk_l, bk_l >= 0)
      << ",\n  \"bk_l_hyperfine_median_ms\": " << number(hf, hf >= 0)
      << ",\n  \"daemon_exit\": " << (server.owned ? std::to_string(drc) : "null") << "\n}\n";
  }
  if (server.owned) RemoveTree(server.work);
  return drc == 0 && book.errors == 0 && ping.errors == 0 && list.errors == 0 ? 0 : 1;
}
