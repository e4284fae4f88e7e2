#pragma once
// The heavy part of `bk admin data import`: parse a ledger.json of the Python
// original, validate every record and write them all into one store, in one
// transaction. It reads only what it is given (the policy and config are
// read-only), so the daemon runs it on a worker thread into a staging ledger
// while its event loop keeps answering; a private ledger runs it in process
// on the live file.

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "engine/policy.h"
#include "service/types.h"
#include "store/ledger_store.h"
#include "sys/file_system.h"

namespace bk::service {

// Everything the import reads besides the file, fixed when it starts.
struct ImportSpec {
  const engine::Policy* policy = nullptr;
  // The daemon's config file, named in advice (empty for a private ledger).
  std::string server_config;
  Actor actor;                              // who imports: named by every "import" event
  int64_t now = 0;                          // which of the file's active bookings are still to come
  ImportProgressFn progress;                // may be empty
  const std::atomic<bool>* stop = nullptr;  // set: give up (the daemon is stopping)
};

// Validates `json_text` and writes it into `s`, which must hold no
// reservation and no event, binding the policy like any first write. Either
// everything is committed or nothing: the refusal names the bad record.
Result<ImportSummary> ImportInto(store::LedgerStore& s, const ImportSpec& spec, std::string_view json_text);

// The refusal of an import into a ledger that is not empty.
Status CheckEmptyForImport(store::LedgerStore& s);

inline constexpr std::string_view kImportNeedsAdmin = "only the ledger owner or root can import data";

// The daemon stages an import beside the live ledger, in this file.
std::string StagingPath(const std::string& ledger_path);
// Removes a staging file and SQLite's companions of it; absence is fine.
void RemoveStaging(sys::FileSystem& fs, const std::string& staging);
// Renames the closed `staging` over the closed `ledger` and syncs the
// directory. Refused while SQLite's log of `ledger` is still there: its
// pages would be replayed into the new file.
Status ReplaceLedger(sys::FileSystem& fs, const std::string& staging, const std::string& ledger);

}  // namespace bk::service
