#pragma once
// Time comes from a Clock so tests can fix or step it.

#include <memory>
#include <string>

#include "base/civil_time.h"
#include "base/result.h"

namespace bk::sys {

class Clock {
 public:
  virtual ~Clock() = default;
  // Whole seconds since the Unix epoch (UTC).
  virtual Seconds Now() const = 0;
  // Milliseconds since the epoch, for sample times and heartbeat ages. A
  // test clock has whole seconds only, so by default this is Now() * 1000.
  virtual int64_t NowMs() const { return Now() * 1000; }
};

class RealClock : public Clock {
 public:
  Seconds Now() const override;
  int64_t NowMs() const override;
};

class FixedClock : public Clock {
 public:
  explicit FixedClock(Seconds t) : t_(t) {}
  Seconds Now() const override { return t_; }
  void Set(Seconds t) { t_ = t; }

 private:
  Seconds t_;
};

// BK_TEST_NOW: "2026-11-29T18:49:00Z", an ISO time with offset, or Unix seconds.
// Only honoured by builds with test hooks; the caller decides where it applies.
Result<std::unique_ptr<Clock>> ClockFromTestNow(const std::string& value);

}  // namespace bk::sys
