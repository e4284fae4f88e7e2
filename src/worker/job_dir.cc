#include "worker/job_dir.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sys/fs.h"
#include "sys/random.h"
#include "sys/sha256.h"

namespace bk::worker {
namespace {

// The job directories are forced to 0700 whatever the umask or a previous
// mode: they hold command lines and logs.
Status Tighten(const std::string& dir, uid_t uid) {
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0)
    return Fail(ErrorKind::kIo, fmt::format("cannot inspect {}: {}", dir, std::strerror(errno)));
  if (!S_ISDIR(st.st_mode)) return Fail(ErrorKind::kPermission, fmt::format("{} is not a directory", dir));
  if (st.st_uid != uid)
    return Fail(ErrorKind::kPermission,
                fmt::format("{} belongs to UID {}, not to you; choose another BK_JOB_DIR", dir, st.st_uid));
  if ((st.st_mode & 07777) != 0700 && chmod(dir.c_str(), 0700) != 0)
    return Fail(ErrorKind::kIo, fmt::format("cannot make {} private: {}", dir, std::strerror(errno)));
  return Ok();
}

}  // namespace

Status EnsureJobDir(const std::string& root, uid_t uid) {
  if (!sys::Exists(root)) BK_TRY(sys::EnsurePrivateDir(root, 0700, uid));
  BK_TRY(Tighten(root, uid));
  std::string specs = SpecsDir(root);
  if (mkdir(specs.c_str(), 0700) != 0 && errno != EEXIST)
    return Fail(ErrorKind::kIo, fmt::format("cannot create {}: {}", specs, std::strerror(errno)));
  return Tighten(specs, uid);
}

bool JobDirExists(const std::string& root) {
  struct stat st {};
  return lstat(root.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Status CheckJobDir(const std::string& root, uid_t uid) {
  for (const std::string& dir : {root, SpecsDir(root)}) {
    struct stat st {};
    if (lstat(dir.c_str(), &st) != 0) {
      if (errno == ENOENT) return Ok();  // nothing below it to clean either
      return Fail(ErrorKind::kIo, fmt::format("cannot inspect {}: {}", dir, std::strerror(errno)));
    }
    if (!S_ISDIR(st.st_mode))
      return Fail(ErrorKind::kPermission, fmt::format("private job path is not a directory: {}", dir));
    if (st.st_uid != uid)
      return Fail(ErrorKind::kPermission,
                  fmt::format("private job directory is not owned by UID {}: {}", uid, dir));
    if ((st.st_mode & 077) != 0)
      return Fail(
          ErrorKind::kPermission,
          fmt::format("private job directory must not be accessible by group or other users: {}", dir));
  }
  return Ok();
}

std::string SpecsDir(const std::string& root) { return root + "/specs"; }

std::string LogPath(const std::string& root, const std::string& reservation_id) {
  std::string name = sys::IsLowercaseUuid(reservation_id) ? reservation_id : sys::Sha256Hex(reservation_id);
  return root + "/" + name + ".log";
}

}  // namespace bk::worker
