#pragma once
// The private spec of a scheduled command: the
// argv, working directory and PATH of the submitter, in a 0600 file under the
// user's private job directory. The shared ledger only ever sees its digest
// (SHA-256 of the canonical JSON) and a short summary.

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "engine/types.h"

namespace bk::worker {

struct JobSpec {
  std::string spec_id;  // UUID, also the file name
  uid_t uid = 0;
  std::vector<std::string> argv;
  std::string cwd;
  std::string path;  // PATH at submission: the only environment captured
  // The booking stays whole after the command exits (--keep); by default what
  // is left of it from the next slot boundary is given back.
  bool keep_booking = false;
  engine::Seconds created_at = 0;
  std::string digest;
};

// argv: 1-256 items, no NUL, non-empty argv[0] that is not an option, at most
// 64 KiB in total. cwd: absolute, an existing directory, at most 4096 bytes.
// PATH: at most 32 KiB, no control characters.
Status ValidateCommand(const std::vector<std::string>& argv, const std::string& cwd, const std::string& path);

// A new spec for `argv` run from `cwd` (this process's working directory when
// empty) with this process's PATH. Refused (kInvalid, one line saying how to
// fix it) when argv[0] does not resolve to an executable the way its launch
// will resolve it.
Result<JobSpec> CaptureSpec(const std::vector<std::string>& argv, uid_t uid, engine::Seconds now,
                            const std::string& cwd = "", bool keep_booking = false);

// {"argv":[...],"cwd":"...","environment":{"PATH":"..."},"uid":U,"version":2},
// with "keep_booking":true only when set: compact, sorted keys, ASCII (the
// hash input).
std::string CanonicalJson(const JobSpec& spec);
std::string Digest(const JobSpec& spec);

// "python train.py (+2 args)": argv[0]'s basename, for Python also -m MODULE,
// -c or the script's basename, then the count of the remaining arguments.
// At most 200 printable characters.
std::string Summary(const std::vector<std::string>& argv);

// <specs_dir>/<spec_id>.json, created 0600 with O_EXCL|O_NOFOLLOW and fsynced
// with its directory. A partial file is removed.
Status WriteSpec(const std::string& specs_dir, const JobSpec& spec);
// Reads and checks a spec: owned by `uid`, no group/other bits, one link, at
// most 128 KiB, matching IDs, and a digest equal to its own and `digest`.
Result<JobSpec> ReadSpec(const std::string& specs_dir, const std::string& spec_id, uid_t uid,
                         const std::string& digest);
// The checks of ReadSpec on the file's text: a version 2 spec whose IDs match
// and whose digest equals both its own and `digest`.
Result<JobSpec> ParseSpec(std::string_view text, const std::string& spec_id, uid_t uid,
                          const std::string& digest);
// Removes a spec if it is a safe file of `uid`; absent is fine.
Status RemoveSpec(const std::string& specs_dir, const std::string& spec_id, uid_t uid);

}  // namespace bk::worker
