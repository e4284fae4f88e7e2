#pragma once
// What a shell should see now (`bk shell env`): the GPUs of the caller's
// bookings active at this instant, as CUDA_VISIBLE_DEVICES tokens, and the next
// instant that can change that (a start or an end), so the prompt hook can
// stay silent until then.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/reservation.h"
#include "gpu/snapshot.h"

namespace bk::shell {

struct ShellEnv {
  std::string state = "none";  // ok | none | unreachable
  engine::Seconds now = 0;
  std::vector<int> gpus;  // union of the active bookings' GPUs, in booking order
  std::vector<std::string> reservation_ids;
  std::vector<std::string> tokens;               // CUDA_VISIBLE_DEVICES entries
  std::optional<engine::Seconds> next_boundary;  // the next start or end, or a retry time
  std::optional<engine::Seconds> until;          // earliest end of the active ones
  std::string notice;                            // one short line for the terminal
  std::string unread;                            // the unread-notifications line, "" when none (or not known)
};

// Retry an unreachable service this long after the failure.
inline constexpr engine::Seconds kUnreachableRetry = 60;

// `mine` are the caller's bookings (any status; only active ones count);
// `snapshot` supplies GPU UUIDs (indexes when any is unknown); `clock_text`
// renders the earliest active end for the notice, as the user reads times.
ShellEnv ComputeShellEnv(const std::vector<engine::Reservation>& mine, engine::Seconds now,
                         const gpu::Snapshot& snapshot,
                         const std::function<std::string(engine::Seconds)>& clock_text);
// True when a booking is active now, so its GPUs' UUIDs need a sample.
bool NeedsSnapshot(const std::vector<engine::Reservation>& mine, engine::Seconds now);
ShellEnv Unreachable(engine::Seconds now, const std::string& why);
// The configuration cannot be loaded: no GPU, retried like an unreachable service.
ShellEnv Misconfigured(engine::Seconds now, const std::string& why);

// KEY=VALUE lines, one per variable, for the hook to parse without eval.
std::string RenderPlain(const ShellEnv& env);
// gpubk.shell-env.v1
std::string RenderJson(const ShellEnv& env);

}  // namespace bk::shell
