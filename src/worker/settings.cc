#include "worker/settings.h"

#include <fmt/format.h>

#include <climits>
#include <cmath>
#include <cstdlib>

#include "base/strings.h"
#include "sys/users.h"

namespace bk::worker {
namespace {

// The raw text of a key: a file value the config layer parsed (JSON text),
// else the BK_<KEY> environment variable.
std::optional<std::string> Raw(const config::Config& c, const config::EnvFn& env, const std::string& key) {
  auto src = c.sources.find(key);
  if (src != c.sources.end() && src->second != "default") {
    std::string v = c.values.at(key);
    if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
    return v;
  }
  std::string name = "BK_";
  for (char ch : key) name += static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
  return env(name);
}

Result<double> Number(const config::Config& c, const config::EnvFn& env, const std::string& key, double def,
                      double lo, double hi) {
  auto raw = Raw(c, env, key);
  if (!raw) return def;
  std::string s(Trim(*raw));
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d))
    return Invalid(fmt::format("{} must be a number", key));
  if (d < lo || d > hi) return Invalid(fmt::format("{} must be between {:g} and {:g}", key, lo, hi));
  return d;
}

Result<int64_t> Integer(const config::Config& c, const config::EnvFn& env, const std::string& key,
                        int64_t def, int64_t lo, int64_t hi) {
  auto raw = Raw(c, env, key);
  if (!raw) return def;
  auto v = ParseUint(Trim(*raw));
  if (!v) return Invalid(fmt::format("{} must be an integer", key));
  if (*v < lo || *v > hi) return Invalid(fmt::format("{} must be between {} and {}", key, lo, hi));
  return *v;
}

Result<bool> Boolean(const config::Config& c, const config::EnvFn& env, const std::string& key, bool def) {
  auto raw = Raw(c, env, key);
  if (!raw) return def;
  std::string v = ToLower(Trim(*raw));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return Invalid(fmt::format("{} must be a boolean", key));
}

}  // namespace

Result<std::string> JobDir(const config::EnvFn& env) {
  for (const char* name : {"BK_JOB_DIR", "BK_JOB_LOG_DIR"}) {
    if (auto v = env(name)) {
      if (v->empty() || (*v)[0] != '/' || v->size() > 4096)
        return Invalid(fmt::format("{} must be an absolute path", name));
      std::string d = *v;
      while (d.size() > 1 && d.back() == '/') d.pop_back();
      return d;
    }
  }
  auto xdg = env("XDG_STATE_HOME");
  std::string base = (xdg && StartsWith(*xdg, "/")) ? *xdg : sys::HomeDir() + "/.local/state";
  if (!StartsWith(base, "/"))
    return Invalid("cannot find a home directory for private job files; set BK_JOB_DIR");
  return base + "/gpubk/jobs";
}

Result<Settings> LoadSettings(const config::Config& c, const config::EnvFn& env) {
  Settings s;
  BK_ASSIGN_OR_RETURN(s.poll_seconds, Number(c, env, "worker_poll_seconds", 1.0, 0.1, 3600));
  BK_ASSIGN_OR_RETURN(s.grace_seconds, Number(c, env, "worker_termination_grace_seconds", 5.0, 0.1, 60));
  BK_ASSIGN_OR_RETURN(s.claim_timeout_seconds,
                      Number(c, env, "worker_claim_timeout_seconds", 30, 1, 7 * 86400));
  BK_ASSIGN_OR_RETURN(s.recovery_grace_seconds,
                      Number(c, env, "worker_recovery_grace_seconds", 5, 0.05, 86400));
  BK_ASSIGN_OR_RETURN(s.live_guard, Boolean(c, env, "worker_live_guard", true));
  BK_ASSIGN_OR_RETURN(int64_t parallel, Integer(c, env, "worker_max_parallel", 64, 1, 4096));
  s.max_parallel = static_cast<int>(parallel);
  BK_ASSIGN_OR_RETURN(s.log_max_mb, Integer(c, env, "job_log_max_mb", 64, 0, 1 << 20));
  BK_ASSIGN_OR_RETURN(s.log_retention_days, Integer(c, env, "job_log_retention_days", 30, 0, 36500));
  BK_ASSIGN_OR_RETURN(s.job_dir, JobDir(env));
  return s;
}

std::string InstanceIdentity(const config::Config& c) {
  if (c.deployment != config::Deployment::kPrivate) return "socket:" + c.socket_path;
  char buf[PATH_MAX];
  // The directory may not exist yet (first booking); the path as given then.
  if (realpath(c.data_dir.c_str(), buf)) return std::string("data:") + buf;
  return "data:" + c.data_dir;
}

}  // namespace bk::worker
