#pragma once
// The private half of `bk N DUR -- CMD`: the spec
// is written before the booking transaction and withdrawn again when the
// booking fails or does not use it, so no command outlives its booking.

#include <sys/types.h>

#include <string>
#include <vector>

#include "service/types.h"
#include "worker/settings.h"
#include "worker/spec.h"

namespace bk::worker {

struct Submission {
  JobSpec spec;
  service::JobBinding binding;
  std::string specs_dir;
  std::string created_top;  // the highest directory Submit created ("" when none)
};

// Captures argv, the working directory (`cwd`, else this process's) and PATH,
// writes the 0600 spec. `keep_booking`: the booking is not given back when
// the command exits.
Result<Submission> Submit(const Settings& settings, const std::vector<std::string>& argv, uid_t uid,
                          engine::Seconds now, const std::string& cwd = "", bool keep_booking = false);
// Removes the spec unless `outcome` bound it (a failed booking or a replay).
void Withdraw(const Submission& s, const service::BookingOutcome* outcome, uid_t uid);

}  // namespace bk::worker
