#pragma once
// `bk run [REF] -- CMD`: the command runs attached
// to the terminal on the caller's current bookings, without a shell, in its
// own session, and is stopped when the booking as it stands now ends (TERM at
// end - grace, KILL at end; exit 124) or is cancelled. Ctrl-C is forwarded.
// A hangup (terminal closed) does not end the supervision. When the command
// has exited, what it left running under the booking's marker is stopped.

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "client/ledger.h"
#include "engine/reservation.h"
#include "worker/settings.h"

namespace bk::worker {

struct AdhocRun {
  std::vector<engine::Reservation> selected;  // active now, the caller's
  std::vector<std::string> argv;
  std::vector<std::string> tokens;  // CUDA_VISIBLE_DEVICES, in GPU order
};

// The environment the command gets on top of ours.
std::map<std::string, std::string> AdhocEnvironment(const AdhocRun& run);

// Runs and supervises; returns the command's status (128+signal when killed),
// 124 at the deadline or on a cancel, 130 after Ctrl-C.
Result<int> RunAdhoc(client::Ledger& ledger, const sys::Clock& clock, const Settings& settings,
                     const AdhocRun& run, FILE* err);

}  // namespace bk::worker
