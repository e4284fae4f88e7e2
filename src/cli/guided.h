#pragma once
// `bk a`'s questions: a booking asked for one answer at a time, each answer
// checked as `bk COUNT DURATION ...` would check it and asked again until it
// is accepted, then turned into that command line.

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "cli/booking_args.h"
#include "cli/line_reader.h"
#include "engine/policy.h"

namespace bk::cli {

// The answers as typed (trimmed). `gpus` and `memory` may be auto, `start`
// now; `cpus` and `ram` stay empty when the policy has no host budgets.
struct GuidedBooking {
  std::string count, duration, mode, gpus, memory, start, cpus, ram;
};
// What the questions start from: one GPU for 30m (or one slot when slots are
// longer), shared, automatic GPUs and VRAM, the earliest start, the policy's
// default host CPUs and RAM when it has budgets.
GuidedBooking GuidedDefaults(const engine::Policy& p);

// Whether `b` makes a booking request; the error says what is wrong. Only an
// kInvalid error is the answer's fault: any other ends the questions.
using GuidedCheck = std::function<Status(const GuidedBooking& b)>;

// Asks each question on `out`, reading answers from `in`; Enter keeps what
// `b` holds (an earlier answer, or the default). Answer N is checked with the
// answers before it and defaults after it, so a later answer never blocks an
// earlier question. Host CPUs and RAM are asked only when `p` has budgets.
// False when the input ends (nothing was decided).
Result<bool> AskBooking(LineReader& in, FILE* out, const engine::Policy& p, const GuidedCheck& check,
                        GuidedBooking* b);

// The booking options these answers stand for (exclusive through --mode).
BookingArgs ToBookingArgs(const GuidedBooking& b);
// The same as the words after `bk`: [x] COUNT DURATION [--gpu L] [--mem M]
// [--at T] [--cpus N] [--ram R]. A start of `now` is left out: like no start,
// it takes the earliest legal slot.
std::vector<std::string> BookingWords(const GuidedBooking& b);
// `bk WORDS...` as a user pastes it, a word with blanks or quotes quoted.
std::string CommandLine(const std::vector<std::string>& words);

}  // namespace bk::cli
