#include "monitor/reclaim.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "engine/parse.h"
#include "monitor/heartbeat.h"

namespace bk::monitor {

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kUse: return "use";
    case Verdict::kNoUse: return "no-use";
    case Verdict::kUntrusted: return "untrusted";
  }
  return "untrusted";
}

Judgement Judge(const BookingRef& b, const SampleView& s) {
  if (s.paused) return {Verdict::kUntrusted, "sampling paused during an exclusive window"};
  if (s.failed || s.snapshot == nullptr || !s.snapshot->ok())
    return {Verdict::kUntrusted, "the sample failed"};
  if (s.at_ms < b.start_ms) return {Verdict::kUntrusted, "the booking has not started"};
  // Use anywhere wins: one living owner process is enough, whatever else is
  // unknown. Only then does missing evidence on any GPU spoil the sample.
  std::string untrusted;
  for (int g : b.gpus) {
    const auto& devices = s.snapshot->devices;
    if (g < 0 || static_cast<size_t>(g) >= devices.size()) {
      if (untrusted.empty()) untrusted = fmt::format("GPU {} was not sampled", g);
      continue;
    }
    const gpu::DeviceSample& d = devices[g];
    if (d.source == gpu::Source::kNone || !d.process_telemetry) {
      if (untrusted.empty()) untrusted = fmt::format("GPU {} has no process telemetry", g);
      continue;
    }
    for (const gpu::ProcessSample& p : d.processes) {
      if (p.identity_source == "container-ambiguous") {
        if (untrusted.empty())
          untrusted = fmt::format("GPU {} pid {} is a container process of ambiguous owner", g, p.pid);
        continue;
      }
      if (!p.uid) {
        if (untrusted.empty())
          untrusted = fmt::format("GPU {} pid {} cannot be attributed to a user", g, p.pid);
        continue;
      }
      if (*p.uid == b.uid) return {Verdict::kUse, fmt::format("GPU {} pid {}", g, p.pid)};
    }
  }
  if (!untrusted.empty()) return {Verdict::kUntrusted, untrusted};
  return {Verdict::kNoUse, ""};
}

Step Advance(const Streak& streak, const BookingRef& b, const SampleView& s, const Rules& rules) {
  Step step;
  step.next = streak;
  step.judgement = Judge(b, s);
  step.next.last_ms = s.at_ms;
  step.gap =
      streak.last_ms && (s.at_ms - *streak.last_ms > 2 * rules.interval_ms || s.at_ms < *streak.last_ms);
  switch (step.judgement.verdict) {
    case Verdict::kUse:
      if (!step.next.used_ms) step.next.used_ms = s.at_ms;
      step.next.since_ms.reset();
      break;
    case Verdict::kUntrusted: step.next.since_ms.reset(); break;
    case Verdict::kNoUse:
      if (!streak.since_ms || step.gap) step.next.since_ms = s.at_ms;
      break;
  }
  step.reclaim = rules.reclaim_after_ms > 0 && !step.next.used_ms && step.next.since_ms &&
                 s.at_ms - *step.next.since_ms >= rules.reclaim_after_ms;
  return step;
}

std::optional<size_t> FirstReclaim(const BookingRef& b, std::span<const SampleView> samples,
                                   const Rules& rules) {
  Streak streak;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].at_ms < b.start_ms || samples[i].at_ms >= b.end_ms) continue;
    Step step = Advance(streak, b, samples[i], rules);
    if (step.reclaim) return i;
    streak = step.next;
  }
  return std::nullopt;
}

std::string ReclaimReason(const BookingRef& b, const std::string& username, const Streak& streak,
                          int64_t at_ms, const Rules& rules) {
  int64_t since = streak.since_ms.value_or(at_ms);
  return fmt::format(
      "no-show: no process of {} on GPU {} for {} of consecutive trustworthy samples since {} "
      "(reclaim_after_seconds={})",
      username, JoinInts(b.gpus), DurationText((at_ms - since) / 1000), engine::FormatIsoUtc(since / 1000),
      rules.reclaim_after_ms / 1000);
}

}  // namespace bk::monitor
