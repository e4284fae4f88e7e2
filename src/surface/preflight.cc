#include "surface/preflight.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpu/open_source.h"
#include "sys/fs.h"
#include "sys/random.h"

namespace bk::surface {
namespace {

using nlohmann::json;

constexpr mode_t kDirMode = 0700;
constexpr mode_t kFileMode = 0600;
// Below both, a booking could fail to commit: warn.
constexpr uint64_t kMinFreeBytes = 100ull << 20;
constexpr double kMinFreeRatio = 0.01;

std::string ModeText(mode_t mode) { return fmt::format("{:04o}", mode & 07777); }

const char* TypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "directory";
  if (S_ISREG(mode)) return "regular-file";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

std::string Errno(int err) { return std::strerror(err); }

Finding Probe(std::string name, std::string status, std::string message, json details = json::object()) {
  return Finding{.name = std::move(name),
                 .status = std::move(status),
                 .message = std::move(message),
                 .details = details};
}

// The directory the write probes use: the data directory, or while it does
// not exist yet the nearest existing directory above it, where bk would
// create it.
std::string ProbeDirectory(const std::string& data_dir) {
  std::string dir = data_dir;
  struct stat st {};
  while (lstat(dir.c_str(), &st) != 0 && dir != "/" && dir != ".") dir = sys::Dirname(dir);
  return dir;
}

Finding DataDirectoryProbe(const DataDirExpectation& want) {
  struct stat st {};
  if (lstat(want.path.c_str(), &st) != 0) {
    if (errno != ENOENT) return Probe("data-directory", "fail", Errno(errno), {{"path", want.path}});
    std::string parent = ProbeDirectory(want.path);
    if (!want.writes)
      return Probe("data-directory", "fail", "directory does not exist", {{"path", want.path}});
    if (access(parent.c_str(), W_OK | X_OK) != 0)
      return Probe("data-directory", "fail", "directory does not exist and cannot be created here",
                   {{"path", want.path}, {"parent", parent}});
    return Probe("data-directory", "pass", "directory does not exist yet; bk creates it at the first booking",
                 {{"path", want.path}, {"parent", parent}});
  }
  if (!S_ISDIR(st.st_mode))
    return Probe(
        "data-directory", "fail",
        S_ISLNK(st.st_mode) ? "path is a symbolic link; use the real path" : "path is not a directory",
        {{"path", want.path}});
  if (st.st_uid != want.owner)
    return Probe("data-directory", "fail", "directory is not owned by the expected UID",
                 {{"expected_uid", want.owner}, {"actual_uid", st.st_uid}});
  if ((st.st_mode & 07777) != kDirMode)
    return Probe("data-directory", "fail", "directory mode does not match configuration",
                 {{"expected_mode", ModeText(kDirMode)}, {"actual_mode", ModeText(st.st_mode)}});
  if (want.writes && access(want.path.c_str(), R_OK | W_OK | X_OK) != 0)
    return Probe("data-directory", "fail", "current UID cannot read, write, and traverse");
  return Probe("data-directory", "pass",
               want.writes ? "directory is accessible with the configured mode"
                           : "service-owned directory; the daemon reads and writes it",
               {{"path", want.path},
                {"mode", ModeText(st.st_mode)},
                {"owner_uid", st.st_uid},
                {"owner_gid", st.st_gid}});
}

// Removes the probe's own files; the first failure, or "".
std::string Cleanup(const std::vector<std::string>& paths) {
  std::string failed;
  for (const auto& p : paths)
    if (unlink(p.c_str()) != 0 && errno != ENOENT && failed.empty())
      failed = fmt::format("probe cleanup failed: {}: {}", p, Errno(errno));
  return failed;
}

// Write, fsync, rename within the directory, fsync the directory, read back:
// the steps of an atomic file replacement (sys::WriteFileAtomic). Returns ""
// or what failed.
std::string ReplaceSteps(const std::string& dir, const std::string& from, const std::string& to) {
  static constexpr std::string_view kPayload = "gpubk atomic replace probe\n";
  int fd = open(from.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kFileMode);
  if (fd < 0) return fmt::format("cannot create {}: {}", from, Errno(errno));
  bool wrote = fchmod(fd, kFileMode) == 0 &&
               write(fd, kPayload.data(), kPayload.size()) == ssize_t(kPayload.size()) && fsync(fd) == 0;
  int err = errno;
  close(fd);
  if (!wrote) return fmt::format("cannot write {}: {}", from, Errno(err));
  if (rename(from.c_str(), to.c_str()) != 0)
    return fmt::format("cannot rename within {}: {}", dir, Errno(errno));
  int dfd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || fsync(dfd) != 0) {
    err = errno;
    if (dfd >= 0) close(dfd);
    return fmt::format("cannot sync {}: {}", dir, Errno(err));
  }
  close(dfd);
  auto back = sys::ReadSmallFile(to, 4096);
  if (!back) return back.error().message;
  if (*back != kPayload) return "atomic replace probe content mismatch";
  struct stat st {};
  if (lstat(to.c_str(), &st) != 0 || (st.st_mode & 07777) != kFileMode)
    return fmt::format("probe file mode {} does not match configured {}", ModeText(st.st_mode),
                       ModeText(kFileMode));
  return "";
}

Finding AtomicReplaceProbe(const std::string& dir) {
  std::string base = sys::JoinPath(dir, ".gpubk-probe-" + sys::NewUuid());
  std::string from = base + ".tmp", to = base + ".done";
  std::string failed = ReplaceSteps(dir, from, to);
  std::string cleanup = Cleanup({from, to});
  if (failed.empty()) failed = cleanup;
  if (!failed.empty()) return Probe("atomic-replace", "fail", failed);
  return Probe("atomic-replace", "pass", "same-directory replace, file fsync, and directory fsync succeeded",
               {{"directory", dir}});
}

// bk's single-instance locks (worker, monitor, daemon) are flock locks, which
// belong to an open file: a second open of the same file stands for a second
// process. Returns "" or what failed.
std::string LockSteps(const std::string& path) {
  int first = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kFileMode);
  if (first < 0) return fmt::format("cannot create {}: {}", path, Errno(errno));
  int second = open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  std::string failed;
  if (second < 0)
    failed = fmt::format("cannot open {}: {}", path, Errno(errno));
  else if (flock(first, LOCK_EX | LOCK_NB) != 0)
    failed = fmt::format("cannot lock {}: {}", path, Errno(errno));
  else if (flock(second, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK)
    failed = "a second holder was not excluded";
  else if (flock(first, LOCK_UN) != 0 || flock(second, LOCK_EX | LOCK_NB) != 0)
    failed = "the lock was not acquirable after release";
  if (second >= 0) close(second);
  close(first);
  return failed;
}

Finding ProcessLockProbe(const std::string& dir) {
  std::string path = sys::JoinPath(dir, ".gpubk-probe-" + sys::NewUuid() + ".lock");
  std::string failed = LockSteps(path);
  std::string cleanup = Cleanup({path});
  if (failed.empty()) failed = cleanup;
  if (!failed.empty()) return Probe("process-lock", "fail", failed, {{"scope", "same-host-processes"}});
  return Probe("process-lock", "pass", "a second holder was excluded and acquired the lock after release",
               {{"scope", "same-host-processes"}});
}

Finding DiskSpaceProbe(const std::string& dir) {
  struct statvfs vfs {};
  if (statvfs(dir.c_str(), &vfs) != 0) return Probe("disk-space", "fail", Errno(errno));
  uint64_t free_bytes = uint64_t(vfs.f_bavail) * vfs.f_frsize, total = uint64_t(vfs.f_blocks) * vfs.f_frsize;
  double ratio = total ? double(free_bytes) / double(total) : 0.0;
  bool enough = free_bytes >= kMinFreeBytes && ratio >= kMinFreeRatio;
  return Probe(
      "disk-space", enough ? "pass" : "warn",
      enough ? "sufficient free space" : "free space is below the safety threshold",
      {{"free_bytes", free_bytes}, {"total_bytes", total}, {"free_ratio", std::round(ratio * 1e6) / 1e6}});
}

// The daemon answered the kernel-authenticated connection, as its owner, and
// named the caller the kernel names.
Finding DaemonProbe(const config::Config& c, client::Ledger* ledger, const std::string& error) {
  if (!ledger) return Probe("daemon", "fail", error, {{"socket", c.socket_path}});
  if (ledger->actor().uid != getuid())
    return Probe("daemon", "fail", "the daemon did not report the kernel-authenticated caller UID",
                 {{"socket", c.socket_path}, {"actor_uid", ledger->actor().uid}});
  return Probe("daemon", "pass", "the daemon accepted the kernel-authenticated local connection",
               {{"socket", c.socket_path}, {"service_uid", c.owner_uid}, {"actor_uid", ledger->actor().uid}});
}

Finding GpuProbe(const std::string& status, const std::string& message, const std::string& source,
                 int devices, int configured) {
  return Probe("gpu-telemetry", status, message,
               {{"source", source}, {"device_count", devices}, {"configured_device_count", configured}});
}

// What the source says about the configured GPUs, judged as a scheduled
// command and the monitor need it: every GPU, with its processes and a
// stable identifier for CUDA_VISIBLE_DEVICES.
Finding JudgeSnapshot(const gpu::Snapshot& snap, int configured) {
  std::string source = "none";
  int devices = 0;
  bool processes = true, identifiers = true;
  for (const auto& d : snap.devices) {
    if (d.source == gpu::Source::kNone) continue;
    source = gpu::SourceName(d.source);
    ++devices;
    processes = processes && d.process_telemetry;
    identifiers = identifiers && gpu::IsValidDeviceUuid(d.uuid);
  }
  auto result = [&](const char* status, const std::string& message) {
    return GpuProbe(status, message, source, devices, configured);
  };
  if (!snap.ok()) return result("fail", "GPU probe failed: " + snap.error);
  if (devices == 0) return result("fail", "no usable GPU telemetry source");
  if (devices != configured) return result("fail", "configured GPU topology does not match detected devices");
  if (!processes) return result("fail", "process telemetry is unavailable for configured GPUs");
  if (!identifiers)
    return result("fail", "stable GPU identifiers are unavailable for scheduled command binding");
  if (source == "simulation")
    return result("warn", "simulation is active; real GPU telemetry was not tested");
  return result("pass", "NVML device and process telemetry is available");
}

// This process's GPU source in private mode; on a server, the daemon's word
// on what its monitor samples (its heartbeat says how well: the monitor check).
Finding GpuTelemetryProbe(const config::Config& c, client::Ledger* ledger, bool local) {
  const int configured = c.policy.gpu_count;
  if (!local) {
    if (!ledger) return GpuProbe("fail", "the daemon is not reachable", "unknown", 0, configured);
    std::string t = ledger->Telemetry();
    if (t.starts_with("none"))
      return GpuProbe("fail", "no usable GPU telemetry source", "none", 0, configured);
    if (t.starts_with("simulation"))
      return GpuProbe("warn", "simulation is active; real GPU telemetry was not tested", "simulation",
                      configured, configured);
    return GpuProbe("pass", "the daemon samples NVML", "nvml", configured, configured);
  }
  // A failed sample carries its reason in `error` (JudgeSnapshot fails on it).
  return JudgeSnapshot(gpu::OpenSource(c.gpu_sim_file).source->Sample(configured), configured);
}

}  // namespace

DataDirExpectation ExpectedDataDir(const config::Config& c, uid_t me) {
  if (c.deployment == config::Deployment::kPrivate) return {.path = c.data_dir, .owner = me, .writes = true};
  return {.path = c.data_dir, .owner = c.owner_uid, .writes = me == c.owner_uid};
}

StorageFindings InspectStorage(const config::Config& c, const DataDirExpectation& want) {
  StorageFindings out;
  struct stat st {};
  if (lstat(want.path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      out.unsafe = true;
      out.issues.push_back(
          {.name = "directory-type",
           .details = {{"path", want.path}, {"expected", "directory"}, {"actual", TypeName(st.st_mode)}}});
    } else {
      if (st.st_uid != want.owner)
        out.issues.push_back(
            {.name = "directory-owner",
             .message = "data directory is not owned by the expected UID",
             .details = {{"path", want.path}, {"expected_uid", want.owner}, {"actual_uid", st.st_uid}}});
      if ((st.st_mode & 07777) != kDirMode)
        out.issues.push_back(
            {.name = "directory-mode",
             .details = {
                 {"path", want.path}, {"expected", ModeText(kDirMode)}, {"actual", ModeText(st.st_mode)}}});
    }
  } else if (errno != ENOENT) {
    out.unsafe = true;
    out.issues.push_back({.name = "path-stat", .message = Errno(errno), .details = {{"path", want.path}}});
  }
  // A group-access server: members reach the socket through the server
  // directory and its run/ directory, which carry the configured group.
  if (c.deployment != config::Deployment::kPrivate && c.access == "group" && c.gid) {
    std::string run = sys::Dirname(c.socket_path);
    std::vector<std::string> dirs = {run};
    if (sys::Dirname(c.server_config) == sys::Dirname(run)) dirs.push_back(sys::Dirname(run));
    for (const auto& dir : dirs)
      if (stat(dir.c_str(), &st) == 0 && st.st_gid != *c.gid)
        out.issues.push_back(
            {.name = "directory-gid",
             .message = "server directory does not match the configured group",
             .details = {{"path", dir}, {"expected_gid", *c.gid}, {"actual_gid", st.st_gid}}});
  }
  return out;
}

std::vector<Finding> RunProbes(const config::Config& c, const DataDirExpectation& want,
                               client::Ledger* ledger, const std::string& ledger_error) {
  std::vector<Finding> probes = {DataDirectoryProbe(want)};
  const bool ready = probes.back().status == "pass";
  const std::string dir = ProbeDirectory(want.path);
  auto add = [&](const char* name, Finding (*probe)(const std::string&)) {
    probes.push_back(ready ? probe(dir) : Probe(name, "fail", "data directory is not ready"));
  };
  if (want.writes) {
    add("atomic-replace", AtomicReplaceProbe);
    add("process-lock", ProcessLockProbe);
  }
  add("disk-space", DiskSpaceProbe);
  bool shared = c.deployment != config::Deployment::kPrivate;
  if (shared) probes.push_back(DaemonProbe(c, ledger, ledger_error));
  probes.push_back(GpuTelemetryProbe(c, ledger, !shared));
  return probes;
}

}  // namespace bk::surface
