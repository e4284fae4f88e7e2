#pragma once
// Who owns a GPU process: NVML gives host PIDs, /proc turns them into a UID, a
// command line, a PID-reuse token and, for containers, a runtime and an id.
// Container processes running as root are then attributed to the user
// holding the booking on that GPU, when exactly one does.
//
// /proc is read through a ProcReader so tests can fake it; the monitor gets
// the real one. Nothing here ever signals a process.

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpu/snapshot.h"

namespace bk::gpu {

// stat() of /proc/<pid>: its owner is the process's effective UID as procfs
// shows it (non-dumpable processes show as root, a kernel caveat), and the
// inode identifies this incarnation of the PID while it lives.
struct ProcStat {
  uid_t uid = 0;
  uint64_t ino = 0;
  int64_t ctime_ns = 0;
};

class ProcReader {
 public:
  virtual ~ProcReader() = default;
  // nullopt when /proc/<pid> does not exist or cannot be seen (hidepid,
  // another PID namespace).
  virtual std::optional<ProcStat> Stat(int pid) const = 0;
  // /proc/<pid>/<name> ("stat", "cmdline", "comm", "cgroup"), at most
  // max_bytes; nullopt when unreadable.
  virtual std::optional<std::string> Read(int pid, std::string_view name, size_t max_bytes) const = 0;
};

// The real /proc (or another mount of procfs, for tests).
class RealProcReader : public ProcReader {
 public:
  explicit RealProcReader(std::string root = "/proc") : root_(std::move(root)) {}
  std::optional<ProcStat> Stat(int pid) const override;
  std::optional<std::string> Read(int pid, std::string_view name, size_t max_bytes) const override;

 private:
  std::string root_;
};

// An in-memory /proc for tests and benchmarks.
class FakeProcReader : public ProcReader {
 public:
  struct Proc {
    ProcStat stat;
    std::map<std::string, std::string, std::less<>> files;  // absent file = unreadable
  };
  std::map<int, Proc> procs;
  mutable int stat_calls = 0;  // lets tests check the cache really saves work
  mutable int read_calls = 0;

  // A plausible process: /proc/<pid>/stat with `starttime`, a cmdline, a cgroup.
  void Add(int pid, uid_t uid, const std::string& cmdline, uint64_t starttime,
           const std::string& cgroup = "0::/\n");
  std::optional<ProcStat> Stat(int pid) const override;
  std::optional<std::string> Read(int pid, std::string_view name, size_t max_bytes) const override;
};

// A container a process runs in, from its cgroup paths.
struct ContainerRef {
  std::string runtime;  // docker | containerd | podman
  std::string id;       // 12-64 lowercase hex
};
// docker-<id>.scope, docker/<id>, cri-containerd-<id>.scope, libpod-<id>.scope;
// otherwise, under kubepods, the last standalone 64-hex segment (containerd).
std::optional<ContainerRef> ParseContainer(std::string_view cgroup_text);

// Field 22 of /proc/<pid>/stat (starttime, clock ticks after boot), parsed
// after the last ')' because the command name may contain spaces and parens.
std::optional<uint64_t> ParseStartTime(std::string_view stat_text);

// cmdline with NULs as spaces, trimmed, invalid UTF-8 replaced by U+FFFD.
std::string CommandFromCmdline(std::string_view raw);

// Everything /proc says about one PID.
struct HostIdentity {
  std::optional<uid_t> uid;  // nullopt: no such PID here, or not visible
  std::string username = "?";
  std::string command;
  // PID-reuse token: "<starttime>" from /proc/<pid>/stat, which no later
  // process with the same PID can share; "<ino>:<ctime_ns>" of /proc/<pid>
  // when stat is unreadable. "" when the PID is not visible.
  std::string start_token;
  std::optional<ContainerRef> container;
};

// Resolves PIDs to identities with a short cache, because the monitor asks
// about the same few hundred PIDs every 2 s. Per PID, each lookup costs one
// stat() of /proc/<pid>: an entry is reused while the directory's owner and
// inode are unchanged and it is younger than the TTL; after the TTL only the
// command line is re-read (exec can change it; the PID incarnation, and so
// the start token and the cgroup a container process was started in, cannot).
// A different inode means a new process with a reused PID: everything is read
// again. Not thread-safe: owned by one sampler.
class ProcIdentities {
 public:
  static constexpr int64_t kTtlNs = 5'000'000'000;  // a process's identity is re-read after 5 s
  static constexpr size_t kMaxEntries = 4096;

  // `user_name` maps a UID to a name (sys::UserName by default); names are
  // cached for a minute, since NSS lookups cost more than the /proc reads.
  explicit ProcIdentities(const ProcReader* reader, std::function<std::string(uid_t)> user_name = {});

  // Starts a new sample: within one sample a PID is stat()ed at most once,
  // however often it is resolved (it can be in several process lists).
  void NextSample() { ++generation_; }
  // `now_ns` is a monotonic time; the caller passes it so tests control it.
  const HostIdentity& Resolve(int pid, int64_t now_ns);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    ProcStat stat;
    int64_t refreshed_ns = 0;
    uint64_t checked = 0;  // generation of the last stat()
    HostIdentity identity;
  };
  struct Name {
    std::string name;
    int64_t expires_ns = 0;
  };
  void ReadCommand(int pid, HostIdentity& id) const;
  const std::string& UserNameFor(uid_t uid, int64_t now_ns);
  void Prune(int64_t now_ns);

  const ProcReader* reader_;
  std::function<std::string(uid_t)> user_name_;
  std::unordered_map<int, Entry> entries_;
  std::unordered_map<uid_t, Name> names_;
  HostIdentity unknown_;
  uint64_t generation_ = 1;
};

// Fills the host identity of one NVML process (identity_source "host").
void ApplyHostIdentity(const HostIdentity& id, ProcessSample& p);

// A booking active now on the GPU whose processes are being attributed.
struct GpuBooking {
  uid_t uid = 0;
  std::string username;
  std::string reservation_id;
};

// May processes of `runtime` be attributed to `uid`? Upstream asks whether the
// user can reach the Docker socket or is in container_attribution_groups; the
// monitor supplies that policy. Empty = every booking holder is eligible.
using ContainerEligibility = std::function<bool(uid_t uid, const std::string& runtime)>;

// Container attribution for the processes of one GPU, given the bookings
// active on that GPU now. A process whose host UID is root and that runs in a
// detected container is
//   - attributed to the one eligible booking holder (UID > 0):
//     uid/username become that user's, host_uid stays 0, identity_source
//     "container-reservation";
//   - left as root with identity_source "container-ambiguous" when several
//     users hold bookings (a reader must not count it as anyone's use);
//   - left as a plain root process when nobody eligible holds a booking.
// Processes whose /proc was unreadable keep uid nullopt (unknown), and rootless
// container processes already carry their real host UID, so neither changes.
void Attribute(std::vector<ProcessSample>& processes, std::span<const GpuBooking> bookings,
               const ContainerEligibility& eligible = {});

}  // namespace bk::gpu
