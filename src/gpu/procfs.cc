// PID attribution through /proc and container
// attribution against bookings (1.8 rule 4).

#include "gpu/procfs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <set>

#include "base/strings.h"
#include "sys/users.h"

namespace bk::gpu {

// ---- readers ------------------------------------------------------------------

std::optional<ProcStat> RealProcReader::Stat(int pid) const {
  if (pid <= 0) return std::nullopt;
  char path[320];
  std::snprintf(path, sizeof path, "%s/%d", root_.c_str(), pid);
  struct stat st {};
  if (::stat(path, &st) != 0) return std::nullopt;
  return ProcStat{st.st_uid, static_cast<uint64_t>(st.st_ino),
                  static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec};
}

std::optional<std::string> RealProcReader::Read(int pid, std::string_view name, size_t max_bytes) const {
  if (pid <= 0) return std::nullopt;
  char path[384];
  std::snprintf(path, sizeof path, "%s/%d/%.*s", root_.c_str(), pid, static_cast<int>(name.size()),
                name.data());
  int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  // procfs files report size 0, so read until EOF or the cap.
  std::string out;
  out.resize(std::min<size_t>(max_bytes, 4096));
  size_t used = 0;
  while (used < max_bytes) {
    if (used == out.size()) out.resize(std::min(max_bytes, out.size() * 2));
    ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  ::close(fd);
  out.resize(used);
  return out;
}

void FakeProcReader::Add(int pid, uid_t uid, const std::string& cmdline, uint64_t starttime,
                         const std::string& cgroup) {
  Proc p;
  p.stat = ProcStat{uid, static_cast<uint64_t>(100000 + pid), static_cast<int64_t>(starttime) * 10'000'000};
  std::string comm = cmdline.substr(0, cmdline.find_first_of(std::string_view("\0 ", 2)));
  comm = comm.substr(comm.rfind('/') == std::string::npos ? 0 : comm.rfind('/') + 1).substr(0, 15);
  // Fields 3..21 are filler; field 22 is starttime.
  p.files["stat"] = fmt::format("{} ({}) S 1 {} {} 0 -1 4194560 100 0 0 0 1 1 0 0 20 0 1 0 {} 1000000 100\n",
                                pid, comm, pid, pid, starttime);
  p.files["cmdline"] = cmdline;
  p.files["comm"] = comm + "\n";
  p.files["cgroup"] = cgroup;
  procs[pid] = std::move(p);
}

std::optional<ProcStat> FakeProcReader::Stat(int pid) const {
  ++stat_calls;
  auto it = procs.find(pid);
  if (it == procs.end()) return std::nullopt;
  return it->second.stat;
}

std::optional<std::string> FakeProcReader::Read(int pid, std::string_view name, size_t max_bytes) const {
  ++read_calls;
  auto it = procs.find(pid);
  if (it == procs.end()) return std::nullopt;
  auto f = it->second.files.find(name);
  if (f == it->second.files.end()) return std::nullopt;
  return f->second.substr(0, max_bytes);
}

// ---- parsing ------------------------------------------------------------------

namespace {

bool IsHex(std::string_view s) {
  if (s.size() < 12 || s.size() > 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

std::string_view StripScope(std::string_view s) {
  constexpr std::string_view kScope = ".scope";
  if (s.size() > kScope.size() && s.substr(s.size() - kScope.size()) == kScope)
    s.remove_suffix(kScope.size());
  return s;
}

// "<id>" after `prefix` in one path segment, if it is 12-64 hex.
std::optional<std::string_view> PrefixedId(std::string_view segment, std::string_view prefix) {
  if (!StartsWith(segment, prefix)) return std::nullopt;
  std::string_view id = StripScope(segment.substr(prefix.size()));
  if (!IsHex(id)) return std::nullopt;
  return id;
}

std::vector<std::string_view> SplitView(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(sep, start);
    if (end == std::string_view::npos) end = s.size();
    out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Appends `cp` as UTF-8.
void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Valid UTF-8 is copied; each invalid byte becomes U+FFFD, so a command line
// can always be shown and serialised as JSON.
std::string SanitizeUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    int len = (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
    uint32_t cp = len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    bool ok = len != 0 && i + len <= s.size();
    for (int k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (c & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid too.
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (ok && (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      AppendUtf8(out, 0xFFFD);
      ++i;
    }
  }
  return out;
}

constexpr size_t kMaxCommandBytes = 4096;
constexpr size_t kMaxCgroupBytes = size_t{64} * 1024;
constexpr size_t kMaxStatBytes = 4096;
constexpr int64_t kNameTtlNs = 60'000'000'000;

}  // namespace

std::optional<ContainerRef> ParseContainer(std::string_view text) {
  std::optional<std::string_view> kube_id;
  for (std::string_view line : SplitView(text, '\n')) {
    // "hierarchy-ID:controllers:path"; the path itself may contain ':'.
    size_t first = line.find(':');
    size_t second = first == std::string_view::npos ? std::string_view::npos : line.find(':', first + 1);
    std::string_view path = second == std::string_view::npos ? line : line.substr(second + 1);
    std::vector<std::string_view> segments = SplitView(path, '/');
    for (size_t i = 0; i < segments.size(); ++i) {
      std::string_view seg = segments[i];
      std::optional<std::string_view> id;
      const char* runtime = nullptr;
      if ((id = PrefixedId(seg, "docker-"))) {
        runtime = "docker";
      } else if (seg == "docker" && i + 1 < segments.size() && IsHex(StripScope(segments[i + 1]))) {
        id = StripScope(segments[i + 1]);
        runtime = "docker";
      } else if ((id = PrefixedId(seg, "cri-containerd-"))) {
        runtime = "containerd";
      } else if ((id = PrefixedId(seg, "libpod-"))) {
        runtime = "podman";
      }
      if (runtime != nullptr) return ContainerRef{runtime, ToLower(*id)};
      if (StripScope(seg).size() == 64 && IsHex(StripScope(seg))) kube_id = StripScope(seg);
    }
  }
  if (kube_id && text.find("kubepods") != std::string_view::npos)
    return ContainerRef{"containerd", ToLower(*kube_id)};
  return std::nullopt;
}

std::optional<uint64_t> ParseStartTime(std::string_view stat_text) {
  size_t close = stat_text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  // After ") " come fields 3, 4, ...; starttime is field 22.
  std::string_view rest = stat_text.substr(close + 1);
  int field = 2;
  size_t i = 0;
  while (i < rest.size()) {
    while (i < rest.size() && rest[i] == ' ') ++i;
    size_t j = i;
    while (j < rest.size() && rest[j] != ' ' && rest[j] != '\n') ++j;
    if (j == i) break;
    if (++field == 22) {
      auto v = ParseUint(rest.substr(i, j - i));
      if (!v) return std::nullopt;
      return static_cast<uint64_t>(*v);
    }
    i = j;
  }
  return std::nullopt;
}

std::string CommandFromCmdline(std::string_view raw) {
  std::string text(raw.substr(0, kMaxCommandBytes));
  std::replace(text.begin(), text.end(), '\0', ' ');
  return SanitizeUtf8(Trim(text));
}

// ---- identities ---------------------------------------------------------------

ProcIdentities::ProcIdentities(const ProcReader* reader, std::function<std::string(uid_t)> user_name)
    : reader_(reader),
      user_name_(user_name ? std::move(user_name) : [](uid_t u) { return sys::UserName(u); }) {}

void ProcIdentities::ReadCommand(int pid, HostIdentity& id) const {
  id.command.clear();
  if (auto raw = reader_->Read(pid, "cmdline", kMaxCommandBytes)) id.command = CommandFromCmdline(*raw);
  // Kernel threads and zombies have an empty cmdline; comm still names them.
  if (id.command.empty()) {
    if (auto comm = reader_->Read(pid, "comm", 256)) id.command = SanitizeUtf8(Trim(*comm));
  }
}

const std::string& ProcIdentities::UserNameFor(uid_t uid, int64_t now_ns) {
  Name& n = names_[uid];
  if (n.name.empty() || now_ns >= n.expires_ns) {
    n.name = user_name_(uid);
    n.expires_ns = now_ns + kNameTtlNs;
  }
  return n.name;
}

const HostIdentity& ProcIdentities::Resolve(int pid, int64_t now_ns) {
  if (pid <= 0) return unknown_;
  if (auto hit = entries_.find(pid); hit != entries_.end() && hit->second.checked == generation_)
    return hit->second.identity;
  std::optional<ProcStat> st = reader_->Stat(pid);
  if (!st) {
    entries_.erase(pid);
    return unknown_;
  }
  auto it = entries_.find(pid);
  if (it != entries_.end() && it->second.stat.ino == st->ino && it->second.stat.ctime_ns == st->ctime_ns &&
      it->second.stat.uid == st->uid) {
    Entry& e = it->second;
    e.checked = generation_;
    if (now_ns - e.refreshed_ns >= kTtlNs) {
      ReadCommand(pid, e.identity);
      e.refreshed_ns = now_ns;
    }
    return e.identity;
  }

  Entry e;
  e.stat = *st;
  e.refreshed_ns = now_ns;
  e.checked = generation_;
  HostIdentity& id = e.identity;
  id.uid = st->uid;
  id.username = UserNameFor(st->uid, now_ns);
  std::optional<uint64_t> start;
  if (auto text = reader_->Read(pid, "stat", kMaxStatBytes)) start = ParseStartTime(*text);
  id.start_token = start ? std::to_string(*start) : fmt::format("{}:{}", st->ino, st->ctime_ns);
  ReadCommand(pid, id);
  if (auto cgroup = reader_->Read(pid, "cgroup", kMaxCgroupBytes)) id.container = ParseContainer(*cgroup);
  auto [pos, inserted] = entries_.insert_or_assign(pid, std::move(e));
  if (entries_.size() > kMaxEntries) {
    Prune(now_ns);
    pos = entries_.find(pid);
  }
  return pos->second.identity;
}

void ProcIdentities::Prune(int64_t now_ns) {
  std::erase_if(entries_, [&](const auto& kv) { return now_ns - kv.second.refreshed_ns >= kTtlNs; });
  if (entries_.size() <= kMaxEntries) return;
  std::vector<std::pair<int64_t, int>> ages;
  for (const auto& [pid, e] : entries_) ages.emplace_back(e.refreshed_ns, pid);
  std::sort(ages.begin(), ages.end());
  // Keep the newest kMaxEntries; the entry just inserted is among them.
  for (size_t i = 0; i + kMaxEntries < ages.size(); ++i) entries_.erase(ages[i].second);
}

void ApplyHostIdentity(const HostIdentity& id, ProcessSample& p) {
  p.uid = id.uid;
  p.host_uid = id.uid;
  p.username = id.uid ? id.username : "?";
  p.command = id.command;
  p.host_start_id = id.start_token;
  p.identity_source = "host";
  if (id.container) {
    p.container_runtime = id.container->runtime;
    p.container_id = id.container->id;
  } else {
    p.container_runtime.clear();
    p.container_id.clear();
  }
}

// ---- container attribution ----------------------------------------------------------

void Attribute(std::vector<ProcessSample>& processes, std::span<const GpuBooking> bookings,
               const ContainerEligibility& eligible) {
  for (ProcessSample& p : processes) {
    const std::optional<uid_t> host = p.host_uid ? p.host_uid : p.uid;
    if (!host || *host != 0 || p.container_runtime.empty() || p.container_id.empty()) continue;
    if (p.identity_source != "host") continue;  // already attributed
    std::set<uid_t> candidates;
    const GpuBooking* owner = nullptr;
    for (const GpuBooking& b : bookings) {
      if (b.uid == 0) continue;  // root holds no evidence about who runs a container
      if (eligible && !eligible(b.uid, p.container_runtime)) continue;
      if (candidates.insert(b.uid).second) owner = &b;
    }
    if (candidates.empty()) continue;
    p.host_uid = 0;
    if (candidates.size() == 1) {
      p.uid = owner->uid;
      p.username = owner->username.empty() ? sys::UserName(owner->uid) : owner->username;
      p.identity_source = "container-reservation";
    } else {
      p.uid = 0;
      p.identity_source = "container-ambiguous";
    }
  }
}

}  // namespace bk::gpu
