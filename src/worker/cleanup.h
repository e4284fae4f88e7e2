#pragma once
// Private spec and log cleanup: a spec or log is
// kept while its job may still run or be retried; finished ones go (logs
// after job_log_retention_days), unreferenced specs after 24 hours. Only
// regular single-link files of the user are ever removed.

#include <sys/types.h>

#include <string>
#include <vector>

#include "service/types.h"
#include "worker/settings.h"

namespace bk::client {
class Ledger;
}

namespace bk::worker {

struct CleanupReport {
  int removed = 0, retained = 0, deferred = 0, failed = 0;
  int64_t bytes_removed = 0, bytes_retained = 0;
  std::vector<std::string> warnings;
};

// Both refuse to touch anything (one failure, its reason the warning) when
// CheckJobDir(root, uid) does.
CleanupReport CleanupSpecs(const std::string& root, const std::vector<service::JobView>& jobs,
                           engine::Seconds now, uid_t uid);
CleanupReport CleanupLogs(const std::string& root, const std::vector<service::JobView>& jobs,
                          engine::Seconds now, int64_t retention_days, uid_t uid);
// After `cancelled` was cancelled, as the original: when it is the caller's,
// the private specs no job of theirs can launch from any more go at once (a
// job that started keeps its own until it ends). Returns the warnings.
std::vector<std::string> SweepSpecsAfterCancel(client::Ledger& ledger, const config::Config& config,
                                               const config::EnvFn& env,
                                               const engine::Reservation& cancelled);

// {"deferred_orphans":..,"failed":..,"removed":..,"retained":..,"warnings":[..]}
std::string SpecReportJson(const CleanupReport& r);
// {"bytes_removed":..,"bytes_retained":..,"failed":..,"quota_excess_bytes":0,"removed":..,"retained":..,"warnings":[..]}
std::string LogReportJson(const CleanupReport& r);

}  // namespace bk::worker
