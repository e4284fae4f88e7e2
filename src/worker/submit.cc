#include "worker/submit.h"

#include "worker/job_dir.h"

namespace bk::worker {

Result<Submission> Submit(const Settings& settings, const std::vector<std::string>& argv, uid_t uid,
                          engine::Seconds now) {
  Submission s;
  BK_ASSIGN_OR_RETURN(s.spec, CaptureSpec(argv, uid, now));
  BK_TRY(EnsureJobDir(settings.job_dir, uid));
  s.specs_dir = SpecsDir(settings.job_dir);
  BK_TRY(WriteSpec(s.specs_dir, s.spec));
  s.binding = {s.spec.spec_id, s.spec.digest, Summary(argv)};
  return s;
}

void Withdraw(const Submission& s, const service::BookingOutcome* outcome, uid_t uid) {
  if (outcome && outcome->job && outcome->job->spec_id == s.spec.spec_id) return;
  (void)RemoveSpec(s.specs_dir, s.spec.spec_id, uid);
}

}  // namespace bk::worker
