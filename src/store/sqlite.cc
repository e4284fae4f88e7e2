#include "store/sqlite.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace bk::store {

namespace {
void Release(sqlite3_stmt* st, bool owned) {
  if (!st) return;
  if (owned) {
    sqlite3_finalize(st);
  } else {
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
  }
}
}  // namespace

Stmt& Stmt::operator=(Stmt&& o) noexcept {
  if (this != &o) {
    Release(stmt_, owned_);
    db_ = o.db_;
    stmt_ = o.stmt_;
    owned_ = o.owned_;
    o.stmt_ = nullptr;
  }
  return *this;
}

Stmt::~Stmt() { Release(stmt_, owned_); }

int64_t Stmt::Int(int col) const { return sqlite3_column_int64(stmt_, col); }
int Stmt::Columns() const { return sqlite3_column_count(stmt_); }
bool Stmt::IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
int64_t Db::Changes() const { return sqlite3_changes64(db_); }
std::string Db::ErrorText() const { return sqlite3_errmsg(db_); }

Stmt& Stmt::Bind(int i, int64_t v) {
  sqlite3_bind_int64(stmt_, i, v);
  return *this;
}
Stmt& Stmt::Bind(int i, std::string_view v) {
  sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  return *this;
}
Stmt& Stmt::Bind(int i, const std::optional<int64_t>& v) {
  if (v) return Bind(i, *v);
  return BindNull(i);
}
Stmt& Stmt::BindNull(int i) {
  sqlite3_bind_null(stmt_, i);
  return *this;
}

Result<bool> Stmt::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return std::unexpected(
      SqliteError(db_, rc, sqlite3_db_filename(db_, "main") ? sqlite3_db_filename(db_, "main") : ""));
}

Status Stmt::Run() {
  while (true) {
    BK_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Ok();
  }
}

void Stmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Stmt::Text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col));
}

Error SqliteError(sqlite3* db, int rc, const std::string& path) {
  std::string what = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  int primary = rc & 0xff;
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    std::string holder = path.empty() ? "" : LockHolder(path);
    return Error{
        ErrorKind::kBusy,
        holder.empty()
            ? fmt::format("ledger {} is busy ({}); another bk is writing, retry", path, what)
            : fmt::format("ledger {} is busy ({}; held by {}); retry when it is done", path, what, holder)};
  }
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT)
    return Error{
        ErrorKind::kCorrupt,
        fmt::format("ledger {} is not a valid GPUBK database ({}); move it aside or restore a backup", path,
                    what)};
  // A full disk and a failing disk are the administrator's to fix, not the
  // user's: the message names the cause in words a shell user recognises.
  // SQLite reports a file it could not create as "unable to open database
  // file" whatever the reason, so the system error tells ENOSPC apart.
  int sys = db ? sqlite3_system_errno(db) : 0;
  bool os_error = primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN;
  if (primary == SQLITE_FULL || (os_error && (sys == ENOSPC || sys == EDQUOT)))
    return Error{
        ErrorKind::kIo,
        fmt::format("cannot write {}: the disk is full (no space left on device); free space and retry",
                    path)};
  if (primary == SQLITE_IOERR || (primary == SQLITE_CANTOPEN && sys == EIO))
    return Error{ErrorKind::kIo, fmt::format("I/O error on {} ({}); check the disk and retry", path, what)};
  if (primary == SQLITE_READONLY || primary == SQLITE_PERM || primary == SQLITE_CANTOPEN)
    return Error{ErrorKind::kIo, fmt::format("cannot {} {} ({}); check the file and directory permissions",
                                             primary == SQLITE_CANTOPEN ? "open" : "write", path, what)};
  if (primary == SQLITE_CONSTRAINT)
    return Error{ErrorKind::kInvalid, fmt::format("ledger constraint failed: {}", what)};
  return Error{ErrorKind::kIo, fmt::format("ledger {} error: {}", path, what)};
}

Result<std::unique_ptr<Db>> Db::Open(const std::string& path, int flags, const std::string& vfs) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
                           vfs.empty() ? nullptr : vfs.c_str());
  if (rc != SQLITE_OK) {
    Error e = SqliteError(db, rc, path);
    sqlite3_close_v2(db);
    return std::unexpected(e);
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<Db>(new Db(db, path));
}

namespace {

// The PID of another process's POSIX write lock overlapping [start,
// start+len) of `path`, from /proc/locks; 0 when none. The file is never
// opened: closing any descriptor of a file drops every POSIX lock this
// process holds on it, SQLite's included.
pid_t WriteLockHolder(const std::string& path, uint64_t start, uint64_t len) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return 0;
  std::string id = fmt::format("{:02x}:{:02x}:{}", major(st.st_dev), minor(st.st_dev), st.st_ino);
  std::ifstream locks("/proc/locks");
  std::string line;
  while (std::getline(locks, line)) {
    std::istringstream in(line);
    std::string n, type, advisory, access, pid, dev, from, to;
    if (!(in >> n >> type) || type == "->" || type != "POSIX") continue;
    if (!(in >> advisory >> access >> pid >> dev >> from >> to) || access != "WRITE" || dev != id) continue;
    uint64_t lo = std::strtoull(from.c_str(), nullptr, 10);
    uint64_t hi = to == "EOF" ? UINT64_MAX : std::strtoull(to.c_str(), nullptr, 10);
    long holder = std::strtol(pid.c_str(), nullptr, 10);
    if (lo < start + len && hi >= start && holder > 0 && holder != getpid())
      return static_cast<pid_t>(holder);
  }
  return 0;
}

std::string ProcessName(pid_t pid) {
  int fd = open(fmt::format("/proc/{}/comm", pid).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  char buf[64] = {};
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  std::string name(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!name.empty() && name.back() == '\n') name.pop_back();
  return name;
}

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string LockHolder(const std::string& path) {
  // SQLite's unix VFS: in WAL mode writers take byte 120 of the -shm file
  // (checkpoint and recovery the next two); otherwise, and in exclusive
  // locking mode, the pending/reserved/shared bytes at 1 GiB in the file.
  pid_t pid = WriteLockHolder(path + "-shm", 120, 3);
  if (pid == 0) pid = WriteLockHolder(path, 0x40000000, 512);
  if (pid == 0) return {};
  std::string name = ProcessName(pid);
  return name.empty() ? fmt::format("PID {}", pid) : fmt::format("PID {} ({})", pid, name);
}

void Db::SetBusyWait(BusyWait wait) {
  wait_ = std::move(wait);
  sqlite3_busy_handler(db_, &Db::OnBusy, this);
}

int Db::OnBusy(void* self, int count) {
  auto* db = static_cast<Db*>(self);
  int64_t now = SteadyMs();
  if (count == 0) db->busy_since_ms_ = now;
  int64_t waited = now - db->busy_since_ms_;
  if (waited >= db->wait_.timeout_ms) return 0;
  if (waited >= 500 && !db->told_ && db->wait_.on_wait) {
    db->told_ = true;
    db->wait_.on_wait(LockHolder(db->path_));
  }
  // Short sleeps first (a commit takes milliseconds), then 50 ms steps.
  int64_t step = count < 6 ? int64_t{1} << count : 50;
  usleep(static_cast<useconds_t>(std::min(step, db->wait_.timeout_ms - waited) * 1000));
  return 1;
}

Db::~Db() {
  for (auto& [sql, st] : cache_) sqlite3_finalize(st);
  sqlite3_close_v2(db_);
}

Result<Stmt> Db::Cached(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    sqlite3_stmt* st = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &st,
                                nullptr);
    if (rc != SQLITE_OK) return std::unexpected(SqliteError(db_, rc, path_));
    it = cache_.emplace(sql, st).first;
  }
  return Stmt(db_, it->second, false);
}

Status Db::Exec(std::string_view sql) {
  char* err = nullptr;
  std::string s(sql);
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &err);
  if (err) sqlite3_free(err);
  if (rc != SQLITE_OK) return std::unexpected(SqliteError(db_, rc, path_));
  return Ok();
}

Result<Stmt> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* st = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &st, nullptr);
  if (rc != SQLITE_OK) return std::unexpected(SqliteError(db_, rc, path_));
  return Stmt(db_, st);
}

}  // namespace bk::store
