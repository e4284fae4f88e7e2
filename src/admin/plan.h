#pragma once
// The plan of `bk admin install`: every path the system deployment needs,
// what is there now and what the install does about it. Planning only reads
// (lstat and small reads through sys::FileSystem); Apply changes the disk.
// Nothing that holds policy or data is ever rewritten: an existing
// configuration is kept and an existing data directory only adopted.

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "sys/file_system.h"

namespace bk::admin {

// Where a system deployment lives. With a staging root (`--root DIR`) every
// path is DIR + the path, while the files' contents name the final paths.
struct Layout {
  std::string root;  // "" on the real system
  static constexpr const char* kEtcDir = "/etc/gpubk";
  static constexpr const char* kConfig = "/etc/gpubk/config.json";
  static constexpr const char* kManifest = "/etc/gpubk/install.json";
  static constexpr const char* kDataDir = "/var/lib/gpubk";
  static constexpr const char* kRunDir = "/run/gpubk";
  static constexpr const char* kSocket = "/run/gpubk/broker.sock";
  static constexpr const char* kUnit = "/etc/systemd/system/gpubk.service";
  static constexpr const char* kUnitName = "gpubk.service";
  static constexpr const char* kHook = "/etc/profile.d/gpubk.sh";
  std::string On(const std::string& final_path) const { return root + final_path; }
};

enum class Kind {
  kParent,   // a missing directory above another path (root's, 0755)
  kDir,      // a directory of the deployment, owned by `uid`
  kConfig,   // the configuration: written once, then never rewritten
  kManaged,  // a file bk owns (first line a marker): rewritten when it differs
  kRecord,   // the install manifest: bk's alone, rewritten when it differs
};
enum class Action { kCreate, kUnchanged, kAdopt, kUpdate };
const char* ActionName(Action a);  // create | unchanged | adopt | update

// One path the deployment needs.
struct Want {
  std::string path;  // on disk (under the staging root)
  std::string what;  // "configuration", "data directory", ...
  Kind kind = Kind::kDir;
  mode_t mode = 0755;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string content;  // files
  std::string marker;   // kManaged: the first line that makes it ours
};

struct Step {
  Want want;
  Action action = Action::kCreate;
  std::optional<std::string> previous;  // an updated file's text before
};

// The steps for `wants`, in order, each preceded by its missing ancestors.
// A path that cannot be taken over (someone else's directory, a symlink, a
// file bk did not write) is one error naming it and the fix.
Result<std::vector<Step>> PlanSteps(sys::FileSystem& fs, const std::vector<Want>& wants);

// Carries out the steps (as root: mkdir, write, chown, chmod). On failure,
// what this call created is removed again and updated files get their text
// back; the error names the failed step.
Status Apply(const std::vector<Step>& steps);

// "  create     /etc/gpubk/config.json (file 0644 root:root)", one per step.
std::vector<std::string> PlanLines(const std::vector<Step>& steps);
// The steps as a JSON array (for `--json`).
std::string PlanJson(const std::vector<Step>& steps);

}  // namespace bk::admin
