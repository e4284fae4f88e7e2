#include "store/data_file.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include "sys/fs.h"

namespace bk::store {

Result<DataFile> OpenDataFile(const std::string& path, bool create, uid_t owner, const BusyWait& wait,
                              std::string_view what, const std::string& vfs, sys::FileSystem& fs) {
  std::string dir = sys::Dirname(path);
  if (create) {
    BK_TRY(sys::EnsurePrivateDir(fs, dir, 0700, owner));
    BK_TRY(sys::CreateDataFile(path, 0600, owner));
  } else {
    BK_TRY(sys::CheckPrivateDir(dir, owner));
    BK_TRY(sys::CheckDataFile(path, owner));
  }
  DataFile f;
  BK_ASSIGN_OR_RETURN(f.db, Db::Open(path, SQLITE_OPEN_READWRITE, vfs));
  f.db->SetBusyWait(wait);
  // One statement, one snapshot: a concurrent first writer may create the
  // schema between two separate reads.
  BK_ASSIGN_OR_RETURN(Stmt st, f.db->Prepare("SELECT (SELECT user_version FROM pragma_user_version), "
                                             "(SELECT count(*) FROM sqlite_master)"));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  if (row && st.Int(0) == 0 && st.Int(1) > 0)
    return Fail(ErrorKind::kCorrupt,
                fmt::format("{} is an SQLite database but not {}; move it aside", path, what));
  f.version = row ? st.Int(0) : 0;
  return f;
}

Result<int64_t> UserVersion(Db& db) {
  BK_ASSIGN_OR_RETURN(Stmt st, db.Prepare("PRAGMA user_version"));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

Status UseWal(Db& db, int busy_timeout_ms) {
  for (int waited_ms = 0;; waited_ms += 5) {
    auto st = db.Prepare("PRAGMA journal_mode=WAL");
    Result<bool> row = st ? st->Step() : Result<bool>(std::unexpected(st.error()));
    if (row) return Ok();
    if (row.error().kind != ErrorKind::kBusy || waited_ms >= busy_timeout_ms)
      return std::unexpected(row.error());
    usleep(5000);
  }
}

}  // namespace bk::store
