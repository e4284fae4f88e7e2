#include "worker/lease.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/json_opt.h"
#include "base/json_strict.h"
#include "engine/parse.h"
#include "sys/node.h"
#include "sys/sha256.h"

namespace bk::worker {
namespace {

using nlohmann::json;

std::string GlobalPath(const std::string& root) { return root + "/worker.lock"; }
std::string InstancePath(const std::string& root, const std::string& id) {
  return root + "/worker.instance." + id + ".lock";
}

// Opens a lease file refusing symlinks, foreign owners, links and loose modes.
Result<int> OpenSafe(const std::string& path, bool create) {
  int flags = (create ? O_RDWR | O_CREAT : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK;
  int fd = open(path.c_str(), flags, 0600);
  if (fd < 0) {
    if (errno == ENOENT) return Fail(ErrorKind::kNotFound, path);
    return Fail(ErrorKind::kIo, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || st.st_nlink != 1 ||
      (st.st_mode & 077) != 0) {
    close(fd);
    return Fail(ErrorKind::kPermission, fmt::format("{} is not a private regular file of yours", path));
  }
  return fd;
}

bool TryLock(int fd, int op) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (flock(fd, op | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Held by someone else: a shared probe would block.
Result<bool> Held(int fd) {
  if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
    flock(fd, LOCK_UN);
    return false;
  }
  if (errno == EWOULDBLOCK) return true;
  return Fail(ErrorKind::kIo, fmt::format("cannot probe the worker lease: {}", std::strerror(errno)));
}

// GPUBK 0.2.8's worker wrote the time only as ISO 8601 text (UTC).
std::optional<engine::Seconds> AcquiredAt(const json& j) {
  if (j.contains("acquired_at_epoch")) return j.at("acquired_at_epoch").get<int64_t>();
  auto t = engine::ParseIsoTime(j.at("acquired_at").get<std::string>(), engine::FixedZone(0));
  return t ? std::optional(*t) : std::nullopt;
}

// The lease metadata this bk or GPUBK 0.2.8 wrote; nullopt when it is not that.
std::optional<LeaseInfo> ReadInfo(int fd) {
  char buf[16384];
  ssize_t n = pread(fd, buf, sizeof(buf), 0);
  if (n <= 0) return std::nullopt;
  auto j = ParseStrictJson(std::string_view(buf, static_cast<size_t>(n)));
  if (!j || !j->is_object()) return std::nullopt;
  try {
    LeaseInfo i;
    i.worker_id = j->at("worker_id").get<std::string>();
    i.pid = j->at("pid").get<int64_t>();
    i.uid = j->at("uid").get<int64_t>();
    i.hostname = j->at("hostname").get<std::string>();
    auto acquired = AcquiredAt(*j);
    if (!acquired) return std::nullopt;
    i.acquired_at = *acquired;
    i.instance_id = j->value("instance_id", "");
    return i;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

std::string InstanceId(const std::string& identity) {
  std::string seed = "gpubk.worker.instance.v1";
  seed.push_back('\0');
  return sys::Sha256Hex(seed + identity);
}

Result<Lease> Lease::Acquire(const std::string& root, const std::string& identity,
                             const std::string& worker_id, engine::Seconds now) {
  std::string id = InstanceId(identity);
  BK_ASSIGN_OR_RETURN(int global, OpenSafe(GlobalPath(root), true));
  auto busy = [&] { return Fail(ErrorKind::kBusy, fmt::format("another worker is active for {}", root)); };
  if (!TryLock(global, LOCK_EX)) {
    close(global);
    return busy();
  }
  auto instance = OpenSafe(InstancePath(root, id), true);
  if (!instance) {
    close(global);
    return std::unexpected(instance.error());
  }
  if (!TryLock(*instance, LOCK_EX)) {
    close(*instance);
    close(global);
    return busy();
  }
  json meta = {{"acquired_at", engine::FormatIsoUtc(now)},
               {"acquired_at_epoch", now},
               {"hostname", sys::LocalNode().hostname},
               {"instance_id", id},
               {"pid", getpid()},
               {"uid", getuid()},
               {"version", 1},
               {"worker_id", worker_id}};
  std::string line = meta.dump() + "\n";
  // Diagnostics only: a failure to record them does not stop the worker.
  if (ftruncate(global, 0) == 0 &&
      pwrite(global, line.data(), line.size(), 0) == static_cast<ssize_t>(line.size()))
    fsync(global);
  return Lease(global, *instance);
}

Lease::~Lease() {
  if (instance_ >= 0) close(instance_);
  if (global_ >= 0) close(global_);
}

WorkerStatus Inspect(const std::string& root, const std::string& identity, uid_t uid, engine::Seconds now) {
  WorkerStatus s;
  s.checked_at = now;
  if (uid != getuid()) {
    s.state = "unavailable";
    s.running.reset();
    return s;
  }
  auto fd = OpenSafe(GlobalPath(root), false);
  if (!fd) {
    if (fd.error().kind == ErrorKind::kNotFound) return s;  // not-seen
    s.state = "invalid";
    s.running.reset();
    s.warning = fd.error().message;
    return s;
  }
  s.lease_present = true;
  s.lease = ReadInfo(*fd);
  s.metadata_valid = s.lease.has_value();
  auto held = Held(*fd);
  close(*fd);
  if (!held) {
    s.state = "invalid";
    s.running.reset();
    s.warning = held.error().message;
    return s;
  }
  s.lease_held = *held;
  if (!*held) {
    s.state = "stopped";
    return s;
  }
  std::string id = InstanceId(identity);
  s.instance_match = s.lease && s.lease->instance_id == id;
  auto ifd = OpenSafe(InstancePath(root, id), false);
  bool instance_held = false;
  if (ifd) {
    auto h = Held(*ifd);
    close(*ifd);
    instance_held = h && *h;
  }
  s.instance_lease_held = instance_held;
  if (instance_held) {
    s.state = "running";
    s.running = true;
  } else {
    s.state = "other-instance";
    s.running = false;
  }
  return s;
}

namespace {

// Whether this user's worker survives logout.
json Persistence(const std::string& user) {
  // This bk has no `bk admin worker-persistence`: linger is systemd's own switch.
  json admin = {"sudo", "loginctl", "enable-linger", user};
  std::string state = "not-applicable";
  json logout_safe;
  struct stat st {};
  if (stat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode)) {
    std::string linger = "/var/lib/systemd/linger/" + user;
    bool enabled = lstat(linger.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == 0;
    state = enabled ? "enabled" : "disabled";
    logout_safe = enabled;
  }
  return {{"kind", "systemd-linger"},
          {"state", state},
          {"logout_safe", logout_safe},
          {"admin_argv", admin},
          {"remediation",
           {{"admin_persistence_argv", admin},
            {"foreground_argv", {"bk", "w", "start"}},
            {"status_argv", {"bk", "w"}},
            {"temporary_survives_logout", true},
            {"temporary_survives_reboot", false},
            {"temporary_transport", "tmux"},
            {"user_setup_argv",
             {{"bk", "service", "install", "worker"},
              {"systemctl", "--user", "enable", "--now", "bk-worker.service"}}}}}};
}

}  // namespace

std::optional<std::string> SchedulingWarning(const WorkerStatus& s) {
  if (s.running.value_or(false)) return std::nullopt;
  if (s.state == "not-seen" || s.state == "stopped")
    return fmt::format(
        "scheduled command worker is {}; start `bk w start` now or enable bk-worker.service, otherwise the "
        "command cannot launch. For temporary use keep `bk w start` in tmux; for logout/reboot persistence "
        "contact the GPUBK administrator shown by `bk info`",
        s.state);
  if (s.state == "invalid")
    return "scheduled command worker status is invalid; run `bk worker --status --json` and repair the "
           "private "
           "job directory before relying on automatic launch";
  if (s.state == "other-instance")
    return "scheduled command worker serves another data directory; start or restart it with this "
           "BK_DATA_DIR "
           "before relying on automatic launch";
  return fmt::format(
      "scheduled command worker status is {}; verify `bk worker --status --json` before relying on automatic "
      "launch",
      s.state);
}

service::BookingOutcome WithSchedulingWarning(service::BookingOutcome o, const WorkerStatus& s) {
  auto warning = SchedulingWarning(s);
  if (o.job && warning && std::find(o.warnings.begin(), o.warnings.end(), *warning) == o.warnings.end())
    o.warnings.push_back(*warning);
  return o;
}

std::string StatusLine(const WorkerStatus& s, const engine::Zone& zone) {
  auto since = [&] { return s.lease ? engine::FormatLocal(s.lease->acquired_at, zone) : std::string("?"); };
  if (s.state == "not-seen") return "worker: not seen (`bk w` checks status; `bk w start` launches it)";
  if (s.state == "running")
    return fmt::format("worker: running (lease held) recorded-pid={} host={} since={}",
                       s.lease ? s.lease->pid : 0, s.lease ? s.lease->hostname : "?", since());
  if (s.state == "stopped") {
    if (!s.lease) return "worker: stopped";
    return fmt::format("worker: stopped (last pid={} host={} since={})", s.lease->pid, s.lease->hostname,
                       since());
  }
  if (s.state == "other-instance")
    return "worker: other instance (lease held for another data directory; start or restart the worker with "
           "this "
           "configuration)";
  return fmt::format("worker: {}: {}", s.state, s.warning.empty() ? "status unavailable" : s.warning);
}

std::string StatusJson(const WorkerStatus& s, const std::string& username) {
  json lease;
  if (s.lease)
    lease = {{"worker_id", s.lease->worker_id},
             {"pid", s.lease->pid},
             {"uid", s.lease->uid},
             {"hostname", s.lease->hostname},
             {"acquired_at", engine::FormatIsoUtc(s.lease->acquired_at)},
             {"instance_id", s.lease->instance_id}};
  json d = {{"schema_version", "gpubk.worker.v1"},
            {"state", s.state},
            {"running", OptJson(s.running)},
            {"lease_present", s.lease_present},
            {"lease_held", s.lease_present ? OptJson(s.lease_held) : json(false)},
            {"instance_lease_held", OptJson(s.instance_lease_held)},
            {"metadata_valid", OptJson(s.metadata_valid)},
            {"instance_match", OptJson(s.instance_match)},
            {"evidence", s.lease_present ? json("kernel-flock") : json()},
            {"checked_at", engine::FormatIsoUtc(s.checked_at)},
            {"lease", lease},
            {"warning", s.warning.empty() ? json() : json(s.warning)},
            {"persistence", Persistence(username)}};
  return d.dump();
}

}  // namespace bk::worker
