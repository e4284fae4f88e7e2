#include "worker/procs.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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
  std::map<int, int> groups;
  std::string marker = "BK_RESERVATION_ID=" + reservation_id;
  DIR* d = opendir(root.c_str());
  if (available) *available = d != nullptr;
  if (!d) return groups;
  closedir(d);
  for (const auto& p : ListProcesses(root)) {
    if (p.ruid != uid || p.euid != uid || p.pgid <= 1 || p.pgid == exclude_pgid || p.state == 'Z') continue;
    std::string env = ReadAll(root + "/" + std::to_string(p.pid) + "/environ", 1 << 20);
    size_t start = 0;
    bool hit = false;
    while (start <= env.size() && !hit) {
      size_t end = env.find('\0', start);
      if (end == std::string::npos) end = env.size();
      hit = env.compare(start, end - start, marker) == 0 && end - start == marker.size();
      start = end + 1;
    }
    if (!hit) continue;
    auto it = groups.find(p.pgid);
    if (it == groups.end() || p.pid < it->second) groups[p.pgid] = p.pid;
  }
  return groups;
}

}  // namespace bk::worker
