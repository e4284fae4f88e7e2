#include "worker/job_log.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "engine/parse.h"

namespace bk::worker {
namespace {

using nlohmann::json;

Result<int> CreateLog(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return Fail(ErrorKind::kIo, fmt::format("cannot create job log {}: {}", path, std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid() || st.st_nlink != 1) {
    close(fd);
    return Fail(ErrorKind::kPermission, fmt::format("job log {} is not a private file of yours", path));
  }
  fchmod(fd, 0600);
  return fd;
}

bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// A safe private file's content (its last `tail` bytes when tail > 0), or
// nullopt when absent.
Result<std::optional<std::string>> ReadSegment(const std::string& path, uid_t uid, int64_t tail = 0) {
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<std::string>();
    return Fail(ErrorKind::kIo, fmt::format("cannot open {}: {}", path, std::strerror(errno)));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != uid || st.st_nlink != 1 ||
      (st.st_mode & 077)) {
    close(fd);
    return Fail(ErrorKind::kPermission, fmt::format("{} is not a private file of yours; not shown", path));
  }
  if (tail > 0 && st.st_size > tail) lseek(fd, st.st_size - tail, SEEK_SET);
  std::string out;
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  // A segment still being written may have grown since fstat.
  if (tail > 0 && static_cast<int64_t>(out.size()) > tail) out.erase(0, out.size() - tail);
  close(fd);
  return std::optional(out);
}

}  // namespace

std::string LogHeader(const std::string& event, engine::Seconds now, const std::string& reservation_id,
                      const std::vector<int>& gpus, const std::string& cwd,
                      const std::vector<std::string>& argv) {
  // Python's default separators, in the original's key order.
  auto q = [](const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); };
  std::string g, a;
  for (size_t i = 0; i < gpus.size(); ++i) g += (i ? ", " : "") + std::to_string(gpus[i]);
  for (size_t i = 0; i < argv.size(); ++i) a += (i ? ", " : "") + q(argv[i]);
  return fmt::format(
      "{{\"event\": {}, \"timestamp\": {}, \"reservation_id\": {}, \"gpus\": [{}], \"cwd\": {}, "
      "\"argv\": [{}]}}",
      q(event), q(engine::FormatIsoUtc(now)), q(reservation_id), g, q(cwd), a);
}

Result<std::unique_ptr<JobLog>> JobLog::Open(const std::string& path, int64_t max_mb,
                                             const std::string& header) {
  struct stat st {};
  bool rotated = false;
  // A retry keeps the previous attempt as .log.1.
  if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    if (rename(path.c_str(), (path + ".1").c_str()) != 0)
      return Fail(ErrorKind::kIo, fmt::format("cannot rotate {}: {}", path, std::strerror(errno)));
    rotated = true;
  }
  int64_t segment = max_mb > 0 ? max_mb * 1024 * 1024 / 2 : 0;
  if (segment > 0 && segment <= static_cast<int64_t>(header.size()) + 65536)
    return Invalid("job_log_max_mb is too small for one log segment");
  BK_ASSIGN_OR_RETURN(int fd, CreateLog(path));
  std::unique_ptr<JobLog> log(new JobLog(path, fd, segment, header));
  log->rotated_ = rotated;
  log->Line(header);
  return log;
}

JobLog::~JobLog() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (read_fd_ >= 0) close(read_fd_);
  if (fd_ >= 0) close(fd_);
}

void JobLog::Line(const std::string& text) {
  std::string line = text + "\n";
  Write(line.data(), line.size());
}

std::string JobLog::error() const {
  std::lock_guard<std::mutex> l(mu_);
  return error_;
}

void JobLog::Rotate() {
  close(fd_);
  fd_ = -1;
  if (rename(path_.c_str(), (path_ + ".1").c_str()) != 0) {
    std::lock_guard<std::mutex> l(mu_);
    error_ = fmt::format("cannot rotate the job log: {}", std::strerror(errno));
    return;
  }
  auto fd = CreateLog(path_);
  if (!fd) {
    std::lock_guard<std::mutex> l(mu_);
    error_ = fd.error().message;
    return;
  }
  fd_ = *fd;
  size_ = 0;
  rotated_ = true;
  std::string h = header_ + "\n";
  if (WriteAll(fd_, h.data(), h.size())) size_ += static_cast<int64_t>(h.size());
}

void JobLog::Write(const char* data, size_t n) {
  if (fd_ < 0) return;  // after an error the data is drained and dropped
  if (segment_ > 0 && size_ > 0 && size_ + static_cast<int64_t>(n) > segment_) Rotate();
  if (fd_ < 0) return;
  if (!WriteAll(fd_, data, n)) {
    std::lock_guard<std::mutex> l(mu_);
    error_ = fmt::format("cannot write the job log: {}", std::strerror(errno));
    close(fd_);
    fd_ = -1;
    return;
  }
  size_ += static_cast<int64_t>(n);
}

void JobLog::Start(int read_fd) {
  read_fd_ = read_fd;
  fcntl(read_fd_, F_SETFL, fcntl(read_fd_, F_GETFL) | O_NONBLOCK);
  thread_ = std::thread([this] { Pump(); });
}

void JobLog::Pump() {
  char buf[65536];
  while (!stop_) {
    pollfd p{read_fd_, POLLIN, 0};
    int rc = poll(&p, 1, 200);
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    ssize_t n = read(read_fd_, buf, sizeof(buf));
    if (n > 0) {
      Write(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) break;
  }
  done_ = true;
}

bool JobLog::Finish(int wait_ms) {
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (!done_ && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  bool complete = done_;
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) fdatasync(fd_);
  return complete;
}

Result<std::string> ReadJobLog(const std::string& path, uid_t uid) {
  BK_ASSIGN_OR_RETURN(auto old, ReadSegment(path + ".1", uid));
  BK_ASSIGN_OR_RETURN(auto cur, ReadSegment(path, uid));
  if (!old && !cur) return Fail(ErrorKind::kNotFound, "no log");
  return old.value_or("") + cur.value_or("");
}

Result<LogTail> ReadJobLogTail(const std::string& path, uid_t uid, int64_t max_bytes) {
  LogTail t;
  BK_ASSIGN_OR_RETURN(auto cur, ReadSegment(path, uid, max_bytes));
  int64_t left = max_bytes - static_cast<int64_t>(cur.value_or("").size());
  // Even when the current segment fills the tail, the older one is opened (for
  // a byte) to count it under the same checks.
  BK_ASSIGN_OR_RETURN(auto old, ReadSegment(path + ".1", uid, std::max<int64_t>(left, 1)));
  if (old && left <= 0) old->clear();
  t.segments = (cur ? 1 : 0) + (old ? 1 : 0);
  t.bytes = old.value_or("") + cur.value_or("");
  return t;
}

}  // namespace bk::worker
