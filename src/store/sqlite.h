#pragma once
// A thin RAII layer over the SQLite C API that reports errors as values.
// <sqlite3.h> stays in the store's .cc files: this header names its handles
// only, so the layers above compile without SQLite's header.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace bk::store {

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3* db, sqlite3_stmt* stmt, bool owned = true) : db_(db), stmt_(stmt), owned_(owned) {}
  Stmt(Stmt&& o) noexcept : db_(o.db_), stmt_(o.stmt_), owned_(o.owned_) { o.stmt_ = nullptr; }
  Stmt& operator=(Stmt&& o) noexcept;
  ~Stmt();

  // Binding is 1-based like SQLite; chained for brevity.
  Stmt& Bind(int i, int64_t v);
  Stmt& Bind(int i, std::string_view v);
  Stmt& Bind(int i, const std::optional<int64_t>& v);
  Stmt& BindNull(int i);

  // Advances: true with a row, false when done.
  Result<bool> Step();
  Status Run();  // steps to completion
  void Reset();

  int64_t Int(int col) const;
  int Columns() const;
  bool IsNull(int col) const;
  std::optional<int64_t> OptInt(int col) const {
    return IsNull(col) ? std::nullopt : std::optional(Int(col));
  }
  std::string Text(int col) const;

 private:
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  bool owned_ = true;  // false: borrowed from Db's cache, reset instead of finalised
};

// How a connection waits for another's write lock: up to `timeout_ms`, and
// `on_wait`, when set, is told once per connection, after half a second, who
// holds the lock (LockHolder's text), so a person is not left staring at a
// silent terminal.
struct BusyWait {
  int timeout_ms = 10000;
  std::function<void(const std::string& holder)> on_wait;
};

class Db {
 public:
  // flags: SQLITE_OPEN_* (NOFOLLOW is always added for files). `vfs` names a
  // registered SQLite VFS; empty is the default one.
  static Result<std::unique_ptr<Db>> Open(const std::string& path, int flags, const std::string& vfs = "");
  ~Db();
  Status Exec(std::string_view sql);
  Result<Stmt> Prepare(std::string_view sql);
  // A prepared statement kept for the connection's life. The returned handle
  // resets it when destroyed, so no read snapshot outlives its use.
  Result<Stmt> Cached(const std::string& sql);
  int64_t Changes() const;
  std::string ErrorText() const;
  // Replaces SQLite's plain busy timeout.
  void SetBusyWait(BusyWait wait);
  sqlite3* raw() { return db_; }
  const std::string& path() const { return path_; }

 private:
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
  std::map<std::string, sqlite3_stmt*> cache_;
  BusyWait wait_;
  int64_t busy_since_ms_ = 0;
  bool told_ = false;
  static int OnBusy(void* self, int count);
};

// The process holding SQLite's write lock on the database at `path`, as
// "PID 123 (bk)": the writer byte of a WAL database's -shm file, else the
// lock bytes of the file itself. Empty when none is visible (no lock, or one
// this process holds).
std::string LockHolder(const std::string& path);

// Maps an SQLite result code to an Error naming the database file.
Error SqliteError(sqlite3* db, int rc, const std::string& path);

}  // namespace bk::store
