#include "worker/submit.h"

#include <unistd.h>

#include "sys/fs.h"
#include "worker/job_dir.h"

namespace bk::worker {

Result<Submission> Submit(const Settings& settings, const std::vector<std::string>& argv, uid_t uid,
                          engine::Seconds now, const std::string& cwd, bool keep_booking) {
  Submission s;
  BK_ASSIGN_OR_RETURN(s.spec, CaptureSpec(argv, uid, now, cwd, keep_booking));
  // Remember what did not exist, so a withdrawn submission leaves no trace.
  for (std::string d = settings.job_dir; d.size() > 1 && !sys::Exists(d); d = sys::Dirname(d))
    s.created_top = d;
  BK_TRY(EnsureJobDir(settings.job_dir, uid));
  s.specs_dir = SpecsDir(settings.job_dir);
  BK_TRY(WriteSpec(s.specs_dir, s.spec));
  s.binding = {s.spec.spec_id, s.spec.digest, Summary(argv)};
  return s;
}

void Withdraw(const Submission& s, const service::BookingOutcome* outcome, uid_t uid) {
  if (outcome && outcome->job && outcome->job->spec_id == s.spec.spec_id) return;
  if (!RemoveSpec(s.specs_dir, s.spec.spec_id, uid)) return;
  if (s.created_top.empty()) return;
  // rmdir only removes empty directories: anything else written meanwhile stays.
  std::string d = s.specs_dir;
  while (true) {
    if (rmdir(d.c_str()) != 0 || d == s.created_top) break;
    d = sys::Dirname(d);
  }
}

}  // namespace bk::worker
