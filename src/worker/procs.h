#pragma once
// Processes through /proc, for supervising and recovering jobs. Every signal
// goes through SignalGroup, which signals only processes whose real and
// effective UID are the given user's: bk never kills another user's process,
// even when it runs as root.

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace bk::worker {

struct ProcInfo {
  int pid = 0;
  int ppid = 0;
  int pgid = 0;
  int sid = 0;
  char state = '?';  // 'Z' for zombies
  uid_t ruid = 0;
  uid_t euid = 0;
};

// Every process visible in `proc_root` (tests pass a fake tree).
std::vector<ProcInfo> ListProcesses(const std::string& proc_root = "/proc");

// Members of process group `pgid` that are still running (not zombies).
std::vector<ProcInfo> GroupMembers(const std::vector<ProcInfo>& all, int pgid);

// Sends `sig` to every live member of `pgid` whose real and effective UID are
// `uid`. Refuses pgid <= 1 and this process's own group. Each process is
// re-checked through a pidfd right before the signal, so a reused PID is never
// hit. Returns how many processes were signalled.
int SignalGroup(int pgid, int sig, uid_t uid);

// Process groups (pgid -> lowest pid) of `uid` whose environment holds exactly
// BK_RESERVATION_ID=<reservation_id>. Groups <= 1 and
// `exclude_pgid` are skipped. `available` is false when /proc cannot be read.
std::map<int, int> FindMarkedGroups(const std::string& reservation_id, uid_t uid, int exclude_pgid,
                                    bool* available = nullptr, const std::string& proc_root = "/proc");

// The same scan, kept to processes that descend from `ancestor` through their
// parent links as the kernel reports them. A supervisor that is a child
// subreaper inherits its job's orphans, so these are what its own job left
// behind; a command another `bk run` started on the same booking never
// descends from it and is not found. Groups <= 1 and the caller's own group
// are skipped.
std::map<int, int> FindMarkedDescendants(const std::string& reservation_id, uid_t uid, int ancestor,
                                         const std::string& proc_root = "/proc");

}  // namespace bk::worker
