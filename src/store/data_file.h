#pragma once
// Opening the SQLite files GPUBK owns (ledger.db, usage.db): directory and file
// checked (or created) with tight modes and no symlinks, and a database that is
// someone else's refused before anything touches it.

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/result.h"
#include "store/sqlite.h"
#include "sys/file_system.h"

namespace bk::store {

struct DataFile {
  std::unique_ptr<Db> db;
  int64_t version = 0;  // PRAGMA user_version (0: new and empty)
};

// The key-value table both files start with: the usage file's format marker,
// the ledger's bound policy and last prune.
inline constexpr std::string_view kMetaTableSql =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;\n";

// PRAGMA user_version, read by a statement finalised before returning: one
// left open would pin a read snapshot and make BEGIN IMMEDIATE fail at once
// instead of waiting.
Result<int64_t> UserVersion(Db& db);

// `what` names the file in errors ("a GPUBK ledger"). SQLite gives the -wal
// and -shm files the database file's mode. `vfs` as for Db::Open; the
// directory is created through `fs`.
Result<DataFile> OpenDataFile(const std::string& path, bool create, uid_t owner, const BusyWait& wait,
                              std::string_view what, const std::string& vfs, sys::FileSystem& fs);

// Switches to WAL. A new file needs a moment alone for that; concurrent first
// writers may all try at once and SQLite answers some "busy" without waiting,
// so this retries for as long as the busy timeout allows.
Status UseWal(Db& db, int busy_timeout_ms);

}  // namespace bk::store
