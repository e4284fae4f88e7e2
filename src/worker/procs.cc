#include "worker/procs.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>
#include <string>

namespace bk::worker {
namespace {

std::string ReadAll(const std::string& path, size_t max) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[65536];
  ssize_t n;
  while (out.size() < max && (n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  if (out.size() > max) out.resize(max);
  return out;
}

bool ParseStat(const std::string& text, ProcInfo& p) {
  auto close_paren = text.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= text.size()) return false;
  std::istringstream in(text.substr(close_paren + 2));
  in >> p.state >> p.ppid >> p.pgid >> p.sid;
  return !in.fail();
}

bool ParseUids(const std::string& status, ProcInfo& p) {
  auto at = status.find("\nUid:");
  if (at == std::string::npos) return false;
  std::istringstream in(status.substr(at + 5));
  long r = -1, e = -1;
  in >> r >> e;
  if (in.fail() || r < 0 || e < 0) return false;
  p.ruid = static_cast<uid_t>(r);
  p.euid = static_cast<uid_t>(e);
  return true;
}

std::optional<ProcInfo> ReadProc(const std::string& root, int pid) {
  ProcInfo p;
  p.pid = pid;
  std::string base = root + "/" + std::to_string(pid);
  if (!ParseStat(ReadAll(base + "/stat", 4096), p)) return std::nullopt;
  if (!ParseUids(ReadAll(base + "/status", 16384), p)) return std::nullopt;
  return p;
}

#if defined(SYS_pidfd_open) && defined(SYS_pidfd_send_signal)
int PidfdOpen(int pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSignal(int fd, int sig) {
  return static_cast<int>(syscall(SYS_pidfd_send_signal, fd, sig, nullptr, 0));
}
#else
int PidfdOpen(int) {
  errno = ENOSYS;
  return -1;
}
int PidfdSignal(int, int) {
  errno = ENOSYS;
  return -1;
}
#endif

bool HasMarker(const std::string& root, int pid, const std::string& marker) {
  std::string env = ReadAll(root + "/" + std::to_string(pid) + "/environ", 1 << 20);
  size_t start = 0;
  while (start <= env.size()) {
    size_t end = env.find('\0', start);
    if (end == std::string::npos) end = env.size();
    if (end - start == marker.size() && env.compare(start, end - start, marker) == 0) return true;
    start = end + 1;
  }
  return false;
}

// Follows parent links up to `ancestor`; a bounded walk, as a listing taken
// while processes exit and are reparented need not be a tree.
bool Descends(const std::map<int, int>& parent, int pid, int ancestor) {
  for (int hops = 0; pid > 1 && hops < 4096; ++hops) {
    auto it = parent.find(pid);
    if (it == parent.end()) return false;
    pid = it->second;
    if (pid == ancestor) return true;
  }
  return false;
}

// Process groups (pgid -> lowest pid) of `uid` holding a process that carries
// the exact marker and passes `keep`.
std::map<int, int> MarkedGroups(const std::vector<ProcInfo>& procs, const std::string& reservation_id,
                                uid_t uid, int exclude_pgid, const std::string& root,
                                const std::function<bool(const ProcInfo&)>& keep) {
  std::map<int, int> groups;
  std::string marker = "BK_RESERVATION_ID=" + reservation_id;
  for (const auto& p : procs) {
    if (p.ruid != uid || p.euid != uid || p.pgid <= 1 || p.pgid == exclude_pgid || p.state == 'Z') continue;
    if (!keep(p) || !HasMarker(root, p.pid, marker)) continue;
    auto it = groups.find(p.pgid);
    if (it == groups.end() || p.pid < it->second) groups[p.pgid] = p.pid;
  }
  return groups;
}

}  // namespace

std::vector<ProcInfo> ListProcesses(const std::string& root) {
  std::vector<ProcInfo> out;
  DIR* d = opendir(root.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    if (auto p = ReadProc(root, static_cast<int>(pid))) out.push_back(*p);
  }
  closedir(d);
  return out;
}

std::vector<ProcInfo> GroupMembers(const std::vector<ProcInfo>& all, int pgid) {
  std::vector<ProcInfo> out;
  for (const auto& p : all)
    if (p.pgid == pgid && p.state != 'Z' && p.state != 'X') out.push_back(p);
  return out;
}

int SignalGroup(int pgid, int sig, uid_t uid) {
  if (pgid <= 1 || pgid == getpgrp()) return 0;
  int sent = 0;
  for (const auto& p : GroupMembers(ListProcesses(), pgid)) {
    if (p.ruid != uid || p.euid != uid || p.pid == getpid()) continue;
    int fd = PidfdOpen(p.pid);
    if (fd >= 0) {
      // Re-check the very process the pidfd holds: if the PID was reused since
      // the listing, this reads the new process, which the pidfd refers to.
      auto again = ReadProc("/proc", p.pid);
      if (again && again->pgid == pgid && again->ruid == uid && again->euid == uid &&
          PidfdSignal(fd, sig) == 0)
        ++sent;
      close(fd);
    } else if (errno == ENOSYS) {
      // Kernels before 5.3: the listing is the check.
      if (kill(p.pid, sig) == 0) ++sent;
    }
  }
  return sent;
}

std::map<int, int> FindMarkedGroups(const std::string& reservation_id, uid_t uid, int exclude_pgid,
                                    bool* available, const std::string& root) {
  DIR* d = opendir(root.c_str());
  if (available) *available = d != nullptr;
  if (!d) return {};
  closedir(d);
  return MarkedGroups(ListProcesses(root), reservation_id, uid, exclude_pgid, root,
                      [](const ProcInfo&) { return true; });
}

std::map<int, int> FindMarkedDescendants(const std::string& reservation_id, uid_t uid, int ancestor,
                                         const std::string& root) {
  auto procs = ListProcesses(root);
  std::map<int, int> parent;
  for (const auto& p : procs) parent[p.pid] = p.ppid;
  return MarkedGroups(procs, reservation_id, uid, getpgrp(), root,
                      [&](const ProcInfo& p) { return Descends(parent, p.pid, ancestor); });
}

}  // namespace bk::worker
