#pragma once
// The no-show rule, as pure functions over samples so every case is a unit
// test.
//
// A booking is reclaimed when its owner had no process on any of its GPUs
// through `reclaim_after` of consecutive TRUSTWORTHY samples since its start.
// Per sample, each started booking gets one verdict:
//   use        a living process of the owner is on one of its GPUs (any
//              utilisation, 0% included); the booking is then never reclaimed
//   no-use     every GPU of the booking was sampled with trustworthy process
//              telemetry and none of its processes is the owner's
//   untrusted  the sample failed, was paused (exclusive window), a GPU had no
//              process telemetry, or a process on it could not be attributed
//              or is an ambiguous container process
// The streak of no-use samples restarts on an untrusted sample and on a gap
// (the previous sample is more than 2 x interval old, or the clock went
// back): missing evidence is never evidence of absence. The streak reclaims at
// the first sample whose time is at least `reclaim_after` after the streak's
// first sample. Nothing here (or anywhere in the monitor) signals a process.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu/snapshot.h"

namespace bk::monitor {

struct BookingRef {
  std::string id;
  uint32_t uid = 0;
  std::vector<int> gpus;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
};

// What one sample says, as the rule needs it.
struct SampleView {
  int64_t at_ms = 0;
  bool paused = false;  // the source was not queried (exclusive-window pause)
  bool failed = false;  // the whole sample failed (NVML error, unreadable simulation file)
  const gpu::Snapshot* snapshot = nullptr;  // attributed (gpu::Attribute already applied)
};

enum class Verdict { kUse, kNoUse, kUntrusted };
const char* VerdictName(Verdict v);  // use | no-use | untrusted

struct Judgement {
  Verdict verdict = Verdict::kUntrusted;
  std::string why;  // for untrusted: which evidence was missing; for use: which process
};
Judgement Judge(const BookingRef& booking, const SampleView& sample);

struct Rules {
  int64_t reclaim_after_ms = int64_t{3600} * 1000;  // 0: reclamation off
  int64_t interval_ms = 2000;                       // a gap is more than 2 x this between samples
};

struct Streak {
  std::optional<int64_t> since_ms;  // first sample of the current no-use run
  std::optional<int64_t> last_ms;   // the previous sample that judged this booking
  std::optional<int64_t> used_ms;   // the owner was seen using it
};

struct Step {
  Streak next;
  Judgement judgement;
  bool gap = false;      // the streak restarted because of a gap
  bool reclaim = false;  // reclaim now
};
Step Advance(const Streak& streak, const BookingRef& booking, const SampleView& sample, const Rules& rules);

// The whole rule over a sequence of samples in time order: the index of the
// sample at which the booking is reclaimed, or nullopt. For tests and docs.
std::optional<size_t> FirstReclaim(const BookingRef& booking, std::span<const SampleView> samples,
                                   const Rules& rules);

// The reason recorded with a reclaim: owner, GPUs, how long, since when.
std::string ReclaimReason(const BookingRef& booking, const std::string& username, const Streak& streak,
                          int64_t at_ms, const Rules& rules);

}  // namespace bk::monitor
