#pragma once
// usage.lock: one writer of usage.db at a time.
// A non-blocking flock held for the writer's life; the file names the holder.

#include <string>

#include "base/result.h"

namespace bk::monitor {

class UsageLock {
 public:
  // kBusy (exit 75) when another monitor holds it.
  static Result<UsageLock> Take(const std::string& path);
  UsageLock(UsageLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  UsageLock& operator=(UsageLock&&) = delete;
  ~UsageLock();

 private:
  explicit UsageLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace bk::monitor
