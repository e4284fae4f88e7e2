#pragma once
// What `bk doctor` looks at on disk and asks the GPU source. Nothing here
// creates or changes data: the storage checks only lstat, and the probes that
// must write (atomic-replace, process-lock) use a temporary file of their own
// that they remove. A data directory that does not exist yet is probed in the
// directory that would hold it, since bk creates it at the first booking.

#include <sys/types.h>

#include <string>
#include <vector>

#include "client/ledger.h"
#include "config/config.h"
#include "surface/doctor.h"

namespace bk::surface {

// The data directory as this user's bk finds it: who must own it, and
// whether this user's bk writes it (private mode, or the server's owner) or
// only the server's daemon does.
struct DataDirExpectation {
  std::string path;
  uid_t owner = 0;
  bool writes = true;
};
DataDirExpectation ExpectedDataDir(const config::Config& c, uid_t me);

// Storage issues: the data root a symlink or not a directory (then nothing
// below it may be read: `unsafe` is set), its owner or mode not what bk
// makes, and on a group-access server a server directory whose group is not
// the configured one.
struct StorageFindings {
  std::vector<Finding> issues;
  bool unsafe = false;
};
StorageFindings InspectStorage(const config::Config& c, const DataDirExpectation& want);

// The probes of `bk doctor --probe`, in order: data-directory, then
// atomic-replace and process-lock where this user's bk writes the data,
// disk-space, daemon (on a server), gpu-telemetry. `ledger` is what opening
// the deployment's ledger gave (null with its error when it failed).
std::vector<Finding> RunProbes(const config::Config& c, const DataDirExpectation& want,
                               client::Ledger* ledger, const std::string& ledger_error);

}  // namespace bk::surface
