#include "worker/settings.h"

#include <fmt/format.h>

#include <climits>
#include <cstdlib>

#include "base/strings.h"
#include "sys/users.h"

namespace bk::worker {

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
  Settings s{c.worker};
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
