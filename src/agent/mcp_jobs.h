#pragma once
// The scheduled-command side of `bk mcp`, on the same paths as the command
// line: booking with a command (`bk N DUR -- CMD`), a bounded tail of a job's
// log (`bk jl`), and the private spec and log cleanups (`bk j --cleanup`).
// Private files belong to this process's user; the job directory is the one
// the worker settings name.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "client/ledger.h"
#include "config/config.h"
#include "sys/file_system.h"
#include "worker/settings.h"

namespace bk::agent {

// An absolute path to an existing directory this user can read and enter, or
// one error that says which of these it is not.
Status CheckWorkingDirectory(sys::FileSystem& fs, const std::string& path);

// Books `request` with `argv` attached, run from `cwd` (checked by
// CheckWorkingDirectory; this process's working directory when absent). The private spec is written before
// the booking and withdrawn when the booking fails or does not bind it (a replay). Returns the booking_result
// document with the worker's status.
Result<std::string> CreateWithCommand(client::Ledger& ledger, const config::Config& config,
                                      const worker::Settings& settings, service::CreateRequest request,
                                      const std::vector<std::string>& argv,
                                      const std::optional<std::string>& cwd);

// kind "job_log": the last `max_chars` characters (1-128000; invalid UTF-8
// replaced) of the log of this user's job whose reservation ID starts with `ref`.
Result<std::string> JobLogDoc(client::Ledger& ledger, const worker::Settings& settings, std::string_view ref,
                              int64_t max_chars);

// kind "job-spec-cleanup" / "job-log-cleanup". A failure never fails the
// call: it is reported inside the document as failed 1 with a warning.
std::string SpecCleanupDoc(client::Ledger& ledger, const Result<worker::Settings>& settings);
std::string LogCleanupDoc(client::Ledger& ledger, const Result<worker::Settings>& settings);

}  // namespace bk::agent
