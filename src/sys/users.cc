#include "sys/users.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <vector>

#include "base/strings.h"

namespace bk::sys {

namespace {

size_t InitialBufferSize() {
  long n = sysconf(_SC_GETPW_R_SIZE_MAX);
  return n > 0 ? static_cast<size_t>(n) : 4096;
}

constexpr size_t kMaxBuffer = 1 << 20;

// Calls getpwuid_r / getpwnam_r, growing the buffer on ERANGE. `fn` receives the
// buffer and returns the errno-style result.
template <class Fn>
bool LookupPasswd(Fn fn, passwd& pw, std::vector<char>& buf) {
  buf.resize(InitialBufferSize());
  while (true) {
    passwd* result = nullptr;
    int rc = fn(&pw, buf.data(), buf.size(), &result);
    if (rc == ERANGE && buf.size() < kMaxBuffer) {
      buf.resize(buf.size() * 2);
      continue;
    }
    if (rc == EINTR) continue;
    return rc == 0 && result != nullptr;
  }
}

}  // namespace

uid_t CurrentUid() { return getuid(); }

std::string UserName(uid_t uid) {
  passwd pw{};
  std::vector<char> buf;
  bool found = LookupPasswd(
      [uid](passwd* p, char* b, size_t n, passwd** r) { return getpwuid_r(uid, p, b, n, r); }, pw, buf);
  if (found && pw.pw_name != nullptr && pw.pw_name[0] != '\0') return pw.pw_name;
  return std::to_string(uid);
}

Account LookupAccount(uid_t uid) {
  passwd pw{};
  std::vector<char> buf;
  Account a;
  a.found = LookupPasswd(
      [uid](passwd* p, char* b, size_t n, passwd** r) { return getpwuid_r(uid, p, b, n, r); }, pw, buf);
  a.username = a.found && pw.pw_name != nullptr && pw.pw_name[0] != '\0' ? pw.pw_name : std::to_string(uid);
  if (a.found && pw.pw_gecos != nullptr) a.gecos = pw.pw_gecos;
  return a;
}

std::optional<uid_t> UidForName(const std::string& name) {
  if (name.empty()) return std::nullopt;
  passwd pw{};
  std::vector<char> buf;
  bool found = LookupPasswd(
      [&name](passwd* p, char* b, size_t n, passwd** r) { return getpwnam_r(name.c_str(), p, b, n, r); }, pw,
      buf);
  if (found) return pw.pw_uid;
  // The inverse of UserName's fallback: a decimal UID without a passwd entry.
  if (auto v = ParseUint(name); v && *v <= static_cast<int64_t>(static_cast<uid_t>(-2))) {
    return static_cast<uid_t>(*v);
  }
  return std::nullopt;
}

bool IsAdministrator(uid_t uid, uid_t owner, const std::string& admin_group) {
  if (uid == 0 || uid == owner) return true;
  return !admin_group.empty() && InGroup(uid, admin_group);
}

bool InGroup(uid_t uid, const std::string& name) {
  group gr{};
  group* found = nullptr;
  std::vector<char> gbuf(InitialBufferSize());
  int rc = 0;
  while ((rc = getgrnam_r(name.c_str(), &gr, gbuf.data(), gbuf.size(), &found)) == ERANGE &&
         gbuf.size() < kMaxBuffer)
    gbuf.resize(gbuf.size() * 2);
  if (rc != 0 || found == nullptr) return false;  // no such group: nobody is in it
  const gid_t wanted = gr.gr_gid;
  passwd pw{};
  std::vector<char> buf;
  bool known = LookupPasswd(
      [uid](passwd* p, char* b, size_t n, passwd** r) { return getpwuid_r(uid, p, b, n, r); }, pw, buf);
  if (!known) return false;  // an account without a name belongs to no group
  if (pw.pw_gid == wanted) return true;
  std::vector<gid_t> groups(64);
  int n = static_cast<int>(groups.size());
  while (getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) < 0 && n > static_cast<int>(groups.size()))
    groups.resize(static_cast<size_t>(n));
  groups.resize(static_cast<size_t>(std::max(n, 0)));
  return std::find(groups.begin(), groups.end(), wanted) != groups.end();
}

std::string HomeDir() {
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] == '/') return home;
  passwd pw{};
  std::vector<char> buf;
  uid_t uid = getuid();
  bool found = LookupPasswd(
      [uid](passwd* p, char* b, size_t n, passwd** r) { return getpwuid_r(uid, p, b, n, r); }, pw, buf);
  if (found && pw.pw_dir != nullptr && pw.pw_dir[0] == '/') return pw.pw_dir;
  return "";
}

}  // namespace bk::sys
