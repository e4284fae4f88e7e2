#include "cluster/catalog_file.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sys/fs.h"

namespace bk::cluster {

Result<std::string> CatalogPath(const std::optional<std::string>& option) {
  std::string path = option ? *option : "";
  const char* env = std::getenv("BK_CLUSTER_CONFIG");
  if (path.empty() && env && *env) path = env;
  if (path.empty()) return std::string(kSystemCatalog);
  if (path[0] != '/') return Invalid(fmt::format("the cluster catalog path must be absolute, not {}", path));
  return path;
}

Result<std::optional<Catalog>> LoadCatalog(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::optional<Catalog>();
    return Fail(ErrorKind::kIo, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return Invalid(path + " must be a regular file, not a symlink or a directory");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return Invalid(
        fmt::format("{} is writable by others (mode {:o}); chmod 0644 it", path, st.st_mode & 07777));
  if (path == kSystemCatalog && st.st_uid != 0)
    return Invalid(fmt::format("{} belongs to UID {}; the system catalog must be root's", path, st.st_uid));
  if (st.st_uid != 0 && st.st_uid != geteuid())
    return Invalid(
        fmt::format("{} belongs to UID {}; the catalog must be root's (or yours)", path, st.st_uid));
  BK_ASSIGN_OR_RETURN(std::string text, sys::ReadSmallFile(path, kMaxCatalogBytes));
  BK_ASSIGN_OR_RETURN(Catalog c, ParseCatalog(text, path));
  return std::optional<Catalog>(std::move(c));
}

Result<Catalog> RequireCatalog(std::string* path_out) {
  const char* off = std::getenv("BK_CLUSTER_DISABLE");
  if (off && std::string_view(off) == "1")
    return Fail(ErrorKind::kUnavailable, "cluster routing is off here (BK_CLUSTER_DISABLE=1)");
  BK_ASSIGN_OR_RETURN(std::string path, CatalogPath(std::nullopt));
  BK_ASSIGN_OR_RETURN(std::optional<Catalog> c, LoadCatalog(path));
  if (!c)
    return Fail(
        ErrorKind::kUnavailable,
        fmt::format("cluster mode is not configured: {}; on a GPU host use 'sudo bk admin cluster init NODE "
                    "--yes', or probe the first remote host with 'bk c probe NODE HOST' and run its "
                    "reviewed add command",
                    path));
  if (path_out) *path_out = path;
  return std::move(*c);
}

bool CatalogConfigured() {
  const char* off = std::getenv("BK_CLUSTER_DISABLE");
  if (off && std::string_view(off) == "1") return false;
  auto path = CatalogPath(std::nullopt);
  if (!path) return false;
  struct stat st {};
  return lstat(path->c_str(), &st) == 0;
}

}  // namespace bk::cluster
