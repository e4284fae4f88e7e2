#include "sys/trust.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <vector>

#include "sys/fs.h"
#include "sys/users.h"

namespace bk::sys {

Status CheckTrustedAncestors(const std::string& path, uid_t owner) {
  if (path.empty() || path[0] != '/') return Invalid(fmt::format("{} must be an absolute path", path));
  std::string dir = Dirname(path);
  std::vector<std::string> chain;
  for (std::string d = dir;; d = Dirname(d)) {
    chain.push_back(d);
    if (d == "/" || d.empty()) break;
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    struct stat st {};
    if (lstat(it->c_str(), &st) != 0) return Invalid(fmt::format("{} does not exist", *it));
    if (S_ISLNK(st.st_mode)) return Invalid(fmt::format("{} is a symbolic link; use the real path", *it));
    if (!S_ISDIR(st.st_mode)) return Invalid(fmt::format("{} is not a directory", *it));
    if (st.st_uid != 0 && st.st_uid != owner)
      return Invalid(
          fmt::format("{} belongs to {}, who could replace what is inside; use a directory owned by {} or "
                      "root",
                      *it, UserName(st.st_uid), UserName(owner)));
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
      return Invalid(fmt::format("{} is writable by other users (mode {:04o}); run chmod go-w {}", *it,
                                 st.st_mode & 07777, *it));
  }
  return Ok();
}

Status CheckSocketDirectory(const std::string& socket_path, uid_t owner) {
  BK_TRY(CheckTrustedAncestors(socket_path, owner));
  std::string dir = Dirname(socket_path);
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) return Invalid(fmt::format("{} does not exist", dir));
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return Invalid(fmt::format(
        "the socket directory {} is writable by other users (mode {:04o}), so anyone could stand in for the "
        "server while it is down; keep the socket in the server directory's run/ (0711 or 0710)",
        dir, st.st_mode & 07777));
  return Ok();
}

Status CheckTrustedFile(const std::string& path, uid_t owner) {
  BK_TRY(CheckTrustedAncestors(path, owner));
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return Invalid(fmt::format("{} does not exist", path));
  if (S_ISLNK(st.st_mode)) return Invalid(fmt::format("{} is a symbolic link; use the real path", path));
  if (!S_ISREG(st.st_mode) || st.st_nlink != 1) return Invalid(fmt::format("{} is not a plain file", path));
  if (st.st_uid != owner && st.st_uid != 0)
    return Invalid(fmt::format("{} belongs to {}, not to the server owner {} or root", path,
                               UserName(st.st_uid), UserName(owner)));
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return Invalid(fmt::format("{} is writable by other users (mode {:04o}); run chmod go-w {}", path,
                               st.st_mode & 07777, path));
  return Ok();
}

}  // namespace bk::sys
