#include "worker/spec.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/json_strict.h"
#include "base/strings.h"
#include "engine/parse.h"
#include "sys/file_system.h"
#include "sys/fs.h"
#include "sys/random.h"
#include "sys/sha256.h"
#include "worker/spawn.h"

namespace bk::worker {
namespace {

using nlohmann::json;

constexpr size_t kMaxArgs = 256;
constexpr size_t kMaxArgvBytes = size_t{64} * 1024;
constexpr size_t kMaxCwdBytes = 4096;
constexpr size_t kMaxPathBytes = size_t{32} * 1024;
constexpr size_t kMaxSpecBytes = size_t{128} * 1024;
constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

std::string SpecFile(const std::string& dir, const std::string& spec_id) {
  return dir + "/" + spec_id + ".json";
}

bool SafeId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-')) return false;
  return true;
}

Status FsyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Fail(ErrorKind::kIo, fmt::format("cannot open {}: {}", dir, std::strerror(errno)));
  int rc = fsync(fd);
  close(fd);
  if (rc != 0) return Fail(ErrorKind::kIo, fmt::format("cannot sync {}: {}", dir, std::strerror(errno)));
  return Ok();
}

std::string Base(const std::string& p) {
  auto slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Every scheduled command is captured here (bk run, `bk N DUR -- CMD`, the
// agent's bookings), so this one check covers them all. It resolves argv[0]
// exactly as the launch will: through the PATH and working directory the spec
// keeps, not the environment of whichever worker runs it later.
Status CheckExecutable(const JobSpec& s) {
  auto found = ResolveExecutable(s.argv[0], s.path, s.cwd);
  if (found) return Ok();
  std::string name = Printable(s.argv[0]);
  bool on_path = s.argv[0].find('/') == std::string::npos;
  bool absent = found.error().kind == ErrorKind::kNotFound;
  if (on_path && absent)
    return Invalid(fmt::format(
        "{}: command not found on PATH; install it, activate the environment that has it, or give its path",
        name));
  if (on_path)
    return Invalid(
        fmt::format("{}: found on PATH but not executable; chmod +x it or give another path", name));
  if (absent) return Invalid(fmt::format("{}: no such file; give the path of an existing program", name));
  return Invalid(
      fmt::format("{}: not an executable file; chmod +x it or run it through its interpreter", name));
}

}  // namespace

Status ValidateCommand(const std::vector<std::string>& argv, const std::string& cwd,
                       const std::string& path) {
  if (argv.empty()) return Invalid("-- must be followed by a job command");
  if (argv.size() > kMaxArgs)
    return Invalid(fmt::format("a job command may have at most {} arguments", kMaxArgs));
  size_t total = 0;
  for (const auto& a : argv) {
    if (a.find('\0') != std::string::npos) return Invalid("job command arguments must not contain NUL bytes");
    total += a.size();
  }
  if (total > kMaxArgvBytes) return Invalid("the job command is longer than 64 KiB");
  if (argv[0].empty()) return Invalid("the job command must start with a program name");
  // `bk 1 30m -- --gpu 1 python x.py` is a misplaced option, not a program.
  if (argv[0][0] == '-')
    return Invalid(
        fmt::format("the job command must start with a program name, not the option {}; put bk's options "
                    "before --",
                    Printable(argv[0])));
  if (cwd.empty() || cwd[0] != '/' || cwd.size() > kMaxCwdBytes || cwd.find('\0') != std::string::npos)
    return Invalid("the working directory must be an absolute path of at most 4096 bytes");
  struct stat st {};
  if (stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Invalid(fmt::format("the working directory {} does not exist", Printable(cwd)));
  if (path.size() > kMaxPathBytes) return Invalid("PATH is longer than 32 KiB");
  for (unsigned char c : path)
    if (c < 0x20 || c == 0x7f) return Invalid("PATH must not contain control characters");
  return Ok();
}

Result<JobSpec> CaptureSpec(const std::vector<std::string>& argv, uid_t uid, engine::Seconds now,
                            const std::string& cwd, bool keep_booking) {
  JobSpec s;
  s.cwd = cwd;
  char buf[8192];
  if (s.cwd.empty() && !getcwd(buf, sizeof(buf)))
    return Fail(ErrorKind::kIo, fmt::format("cannot read the working directory: {}", std::strerror(errno)));
  if (s.cwd.empty()) s.cwd = buf;
  const char* path = getenv("PATH");
  s.path = path ? path : kDefaultPath;
  s.argv = argv;
  s.uid = uid;
  s.keep_booking = keep_booking;
  s.created_at = now;
  BK_TRY(ValidateCommand(s.argv, s.cwd, s.path));
  BK_TRY(CheckExecutable(s));
  s.spec_id = sys::NewUuid();
  s.digest = Digest(s);
  return s;
}

std::string CanonicalJson(const JobSpec& s) {
  json j = {
      {"argv", s.argv}, {"cwd", s.cwd}, {"environment", {{"PATH", s.path}}}, {"uid", s.uid}, {"version", 2}};
  if (s.keep_booking) j["keep_booking"] = true;  // absent otherwise: older specs keep their digests
  return j.dump(-1, ' ', true, json::error_handler_t::replace);
}

std::string Digest(const JobSpec& s) { return sys::Sha256Hex(CanonicalJson(s)); }

std::string Summary(const std::vector<std::string>& argv) {
  if (argv.empty()) return "";
  std::string exe = Base(argv[0]);
  std::string out = exe.empty() ? argv[0] : exe;
  size_t used = 1;
  if (StartsWith(exe, "python") && argv.size() > 1) {
    if (argv[1] == "-m" && argv.size() > 2) {
      out += " -m " + argv[2];
      used = 3;
    } else if (argv[1] == "-c") {
      out += " -c";
      used = 2;
    } else if (!argv[1].empty() && argv[1][0] != '-') {
      out += " " + Base(argv[1]);
      used = 2;
    }
  }
  if (argv.size() > used) out += fmt::format(" (+{} args)", argv.size() - used);
  out = Printable(out);
  if (out.size() > 200) out = out.substr(0, 197) + "...";
  return out;
}

Status WriteSpec(const std::string& dir, const JobSpec& s) {
  if (!SafeId(s.spec_id)) return Invalid("invalid job spec ID");
  json j = {{"version", 2},
            {"spec_id", s.spec_id},
            {"uid", s.uid},
            {"argv", s.argv},
            {"cwd", s.cwd},
            {"environment", {{"PATH", s.path}}},
            {"created_at", engine::FormatIsoUtc(s.created_at)},
            {"digest", s.digest}};
  if (s.keep_booking) j["keep_booking"] = true;
  std::string text = j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  std::string file = SpecFile(dir, s.spec_id);
  if (auto written = sys::RealFileSystem().WriteNewFile(file, text, 0600); !written)
    return Fail(ErrorKind::kIo,
                fmt::format("cannot write job spec {}: {}", file, std::strerror(written.error())));
  if (auto st = FsyncDir(dir); !st) {
    unlink(file.c_str());
    return st;
  }
  return Ok();
}

Result<JobSpec> ReadSpec(const std::string& dir, const std::string& spec_id, uid_t uid,
                         const std::string& digest) {
  if (!SafeId(spec_id)) return Fail(ErrorKind::kCorrupt, "private job spec integrity check failed");
  std::string file = SpecFile(dir, spec_id);
  int fd = open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return Fail(errno == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo,
                fmt::format("cannot open private job spec {}: {}", file, std::strerror(errno)));
  struct stat st {};
  std::string text;
  bool safe = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == uid && (st.st_mode & 077) == 0 &&
              st.st_nlink == 1 && st.st_size <= static_cast<off_t>(kMaxSpecBytes);
  if (safe) {
    char buf[16384];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0 && text.size() <= kMaxSpecBytes) text.append(buf, n);
  }
  close(fd);
  if (!safe || text.size() > kMaxSpecBytes)
    return Fail(ErrorKind::kPermission,
                fmt::format("private job spec {} is not a private file of yours", file));
  return ParseSpec(text, spec_id, uid, digest);
}

Result<JobSpec> ParseSpec(std::string_view text, const std::string& spec_id, uid_t uid,
                          const std::string& digest) {
  JobSpec s;
  try {
    auto parsed = ParseStrictJson(text);
    if (!parsed) return Fail(ErrorKind::kCorrupt, "private job spec integrity check failed");
    json j = std::move(*parsed);
    // Numbers are checked before get<>(): converting a float such as 1e300 to
    // an integer is undefined, and a UID beyond 32 bits would wrap to another.
    const json& version = j.at("version");
    if (!version.is_number_integer() || version.get<int64_t>() != 2)
      return Fail(ErrorKind::kCorrupt, "private job spec integrity check failed");
    s.spec_id = j.at("spec_id").get<std::string>();
    const json& owner = j.at("uid");
    if (!owner.is_number_unsigned() || owner.get<uint64_t>() > UINT32_MAX)
      return Fail(ErrorKind::kCorrupt, "private job spec integrity check failed");
    s.uid = owner.get<uid_t>();
    s.argv = j.at("argv").get<std::vector<std::string>>();
    s.cwd = j.at("cwd").get<std::string>();
    const json& env = j.at("environment");
    if (!env.is_object() || env.size() != 1)
      return Fail(ErrorKind::kCorrupt, "private job spec integrity check failed");
    s.path = env.at("PATH").get<std::string>();
    if (auto keep = j.find("keep_booking"); keep != j.end()) {
      if (!keep->is_boolean()) return Fail(ErrorKind::kCorrupt, "private job spec integrity check failed");
      s.keep_booking = keep->get<bool>();
    }
    s.digest = j.at("digest").get<std::string>();
  } catch (const json::exception&) {
    return Fail(ErrorKind::kCorrupt, "private job spec integrity check failed");
  }
  if (s.spec_id != spec_id || s.uid != uid || Digest(s) != s.digest || s.digest != digest)
    return Fail(ErrorKind::kCorrupt, "private job spec integrity check failed");
  return s;
}

Status RemoveSpec(const std::string& dir, const std::string& spec_id, uid_t uid) {
  if (!SafeId(spec_id)) return Ok();
  std::string file = SpecFile(dir, spec_id);
  struct stat st {};
  if (lstat(file.c_str(), &st) != 0) return Ok();
  if (!S_ISREG(st.st_mode) || st.st_uid != uid || st.st_nlink != 1)
    return Fail(ErrorKind::kPermission,
                fmt::format("refusing to remove {}: not a private file of yours", file));
  if (unlink(file.c_str()) != 0 && errno != ENOENT)
    return Fail(ErrorKind::kIo, fmt::format("cannot remove {}: {}", file, std::strerror(errno)));
  return Ok();
}

}  // namespace bk::worker
