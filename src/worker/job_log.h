#pragma once
// The private rolling log of one job: a header line,
// then the command's stdout and stderr, drained from a pipe by a thread so the
// command never blocks. When a segment would pass half of job_log_max_mb it
// becomes <id>.log.1 and a new segment starts. Files are 0600.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "engine/types.h"

namespace bk::worker {

// {"event": "bk-job-start", "timestamp": ..., "reservation_id": ..., "gpus": [...], "cwd": ..., "argv":
// [...]}
std::string LogHeader(const std::string& event, engine::Seconds now, const std::string& reservation_id,
                      const std::vector<int>& gpus, const std::string& cwd,
                      const std::vector<std::string>& argv);

class JobLog {
 public:
  // A new attempt's log at `path`: a non-empty previous log becomes .log.1.
  static Result<std::unique_ptr<JobLog>> Open(const std::string& path, int64_t max_mb,
                                              const std::string& header);
  ~JobLog();

  // Appends a line (launch errors before the command runs).
  void Line(const std::string& text);
  // Drains `read_fd` (taken over) in a thread until EOF or Stop().
  void Start(int read_fd);
  // Waits up to `wait_ms` for the stream to end, then stops draining.
  // False when the stream was still open (a grandchild kept it).
  bool Finish(int wait_ms);
  bool rotated() const { return rotated_; }
  std::string error() const;

 private:
  JobLog(std::string path, int fd, int64_t segment, std::string header)
      : path_(std::move(path)), fd_(fd), segment_(segment), header_(std::move(header)) {}
  void Pump();
  void Write(const char* data, size_t n);
  void Rotate();

  std::string path_;
  int fd_;
  int64_t segment_;  // bytes per segment; 0 = unlimited
  int64_t size_ = 0;
  std::string header_;
  int read_fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  bool rotated_ = false;
  mutable std::mutex mu_;
  std::string error_;
};

// Both segments of a job's log (.log.1 first), or kNotFound.
Result<std::string> ReadJobLog(const std::string& path, uid_t uid);

// The last `max_bytes` bytes of both segments together, and how many
// segments exist (0 to 2); the same safety checks as ReadJobLog.
struct LogTail {
  std::string bytes;
  int segments = 0;
};
Result<LogTail> ReadJobLogTail(const std::string& path, uid_t uid, int64_t max_bytes);

}  // namespace bk::worker
