#include "worker/cleanup.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/strings.h"
#include "client/ledger.h"
#include "worker/job_dir.h"

namespace bk::worker {
namespace {

using nlohmann::json;

// May this job still launch or be retried? Then its files stay.
bool Needed(const service::JobView& v, engine::Seconds now) {
  using enum store::JobStatus;
  store::JobStatus s = v.job.status;
  if (s == kClaimed || s == kRunning) return true;
  bool live = v.reservation.ActiveAt(now);
  return live && (s == kPending || s == kFailed || s == kInterrupted || s == kUncertain);
}

// The file's stat when it is a private file of `uid`; one that is not is left
// alone, counted as failed with a warning, and one that vanished is skipped.
std::optional<struct stat> PrivateFile(const std::string& path, uid_t uid, CleanupReport& r) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode) || st.st_uid != uid || st.st_nlink != 1 || (st.st_mode & 077) != 0) {
    r.warnings.push_back(fmt::format("{} is not a private file of yours; left alone", path));
    ++r.failed;
    return std::nullopt;
  }
  return st;
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// True, with the reason in `r`, when the job directory is unsafe to clean.
bool Refused(const std::string& root, uid_t uid, CleanupReport& r) {
  auto safe = CheckJobDir(root, uid);
  if (safe) return false;
  r.failed = 1;
  r.warnings.push_back(safe.error().message);
  return true;
}

}  // namespace

CleanupReport CleanupSpecs(const std::string& root, const std::vector<service::JobView>& jobs,
                           engine::Seconds now, uid_t uid) {
  CleanupReport r;
  if (Refused(root, uid, r)) return r;
  std::map<std::string, const service::JobView*> by_spec;
  for (const auto& v : jobs) by_spec[v.job.spec_id] = &v;
  std::string dir = SpecsDir(root);
  for (const auto& name : Names(dir)) {
    if (!EndsWith(name, ".json")) continue;
    std::string path = dir + "/" + name;
    std::optional<struct stat> st = PrivateFile(path, uid, r);
    if (!st) continue;
    auto it = by_spec.find(name.substr(0, name.size() - 5));
    bool remove;
    if (it == by_spec.end()) {
      // Written just before a booking that may still be committing: 24 h grace.
      remove = now - st->st_mtime > 86400;
      if (!remove) ++r.deferred;
    } else {
      remove = !Needed(*it->second, now);
    }
    if (!remove) {
      ++r.retained;
      continue;
    }
    if (unlink(path.c_str()) == 0)
      ++r.removed;
    else
      ++r.failed;
  }
  return r;
}

CleanupReport CleanupLogs(const std::string& root, const std::vector<service::JobView>& jobs,
                          engine::Seconds now, int64_t retention_days, uid_t uid) {
  CleanupReport r;
  if (Refused(root, uid, r)) return r;
  std::map<std::string, const service::JobView*> by_log;
  for (const auto& v : jobs) by_log[LogPath(root, v.reservation.id)] = &v;
  for (const auto& name : Names(root)) {
    if (!EndsWith(name, ".log") && !EndsWith(name, ".log.1")) continue;
    std::string path = root + "/" + name;
    std::string group = EndsWith(name, ".log.1") ? path.substr(0, path.size() - 2) : path;
    std::optional<struct stat> st = PrivateFile(path, uid, r);
    if (!st) continue;
    auto it = by_log.find(group);
    bool needed = it != by_log.end() && Needed(*it->second, now);
    bool old = retention_days > 0 && now - st->st_mtime > retention_days * 86400;
    if (needed || !old) {
      ++r.retained;
      r.bytes_retained += st->st_size;
      continue;
    }
    if (unlink(path.c_str()) == 0) {
      ++r.removed;
      r.bytes_removed += st->st_size;
    } else {
      ++r.failed;
    }
  }
  return r;
}

std::vector<std::string> SweepSpecsAfterCancel(client::Ledger& ledger, const config::Config& config,
                                               const config::EnvFn& env,
                                               const engine::Reservation& cancelled) {
  if (cancelled.uid != ledger.actor().uid) return {};  // another user's specs are out of reach
  auto settings = LoadSettings(config, env);
  auto jobs = settings ? ledger.Jobs({false}) : std::unexpected(settings.error());
  if (!jobs) return {"private job spec cleanup failed: " + jobs.error().message};
  return CleanupSpecs(settings->job_dir, *jobs, ledger.Now(), getuid()).warnings;
}

std::string SpecReportJson(const CleanupReport& r) {
  return json{{"deferred_orphans", r.deferred},
              {"failed", r.failed},
              {"removed", r.removed},
              {"retained", r.retained},
              {"warnings", r.warnings}}
      .dump();
}

std::string LogReportJson(const CleanupReport& r) {
  return json{{"bytes_removed", r.bytes_removed},
              {"bytes_retained", r.bytes_retained},
              {"failed", r.failed},
              {"quota_excess_bytes", 0},
              {"removed", r.removed},
              {"retained", r.retained},
              {"warnings", r.warnings}}
      .dump();
}

}  // namespace bk::worker
