#include "store/fault_vfs.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <string>

namespace bk::store {
namespace {

struct State {
  sqlite3_vfs vfs{};
  sqlite3_vfs* root = nullptr;
  int64_t counts[4] = {0, 0, 0, 0};
  int64_t mutations = 0;
  int64_t injected = 0;
  int last_errno = 0;  // what xGetLastError reports after an injected failure
  // FailAt
  FaultPoint fail_point = FaultPoint::kWrite;
  int64_t fail_n = 0;  // 0: disarmed
  int fail_rc = SQLITE_OK;
  bool sticky = false;
  // CutPowerAt
  int64_t cut_at = 0;  // 0: disarmed
  bool cut = false;
  // What each tracked file holds durably (by path), while a cut is armed.
  std::map<std::string, std::string> durable;
};

State& S() {
  static State s;
  return s;
}

// SQLite sees `base`; the wrapped file lives right after this struct, in the
// same allocation (szOsFile covers both).
struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;
  const char* name;  // valid until xClose (SQLite's guarantee for xOpen's name)
  bool counted;      // database, WAL or main journal
};
static_assert(sizeof(FaultFile) % 8 == 0, "the wrapped file must stay 8-byte aligned");

sqlite3_file* Real(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f)->real; }
FaultFile* Ff(sqlite3_file* f) { return reinterpret_cast<FaultFile*>(f); }

// Fails a call as the operating system would have: SQLite asks the VFS for
// the system error (sqlite3_system_errno) and bk's messages depend on it.
int Inject(int rc) {
  State& s = S();
  ++s.injected;
  s.last_errno = (rc & 0xff) == SQLITE_FULL ? ENOSPC : EIO;
  return rc;
}

// Counts one call; returns the code to fail it with, or SQLITE_OK.
int Hit(FaultPoint p, int power_rc) {
  State& s = S();
  int64_t n = ++s.counts[static_cast<int>(p)];
  if (p != FaultPoint::kOpen && ++s.mutations == s.cut_at) s.cut = true;
  if (s.cut) return Inject(power_rc);
  if (s.fail_n > 0 && p == s.fail_point && (n == s.fail_n || (s.sticky && n > s.fail_n)))
    return Inject(s.fail_rc);
  return SQLITE_OK;
}

bool ReadAll(sqlite3_file* real, std::string& out) {
  sqlite3_int64 size = 0;
  if (real->pMethods->xFileSize(real, &size) != SQLITE_OK) return false;
  out.assign(static_cast<size_t>(size), '\0');
  if (size == 0) return true;
  return real->pMethods->xRead(real, out.data(), static_cast<int>(size), 0) == SQLITE_OK;
}

// Remembers what a file holds now as durable.
void Track(FaultFile* f, bool replace) {
  State& s = S();
  if (!f->counted || s.cut_at == 0 || s.cut) return;
  if (!replace && s.durable.count(f->name)) return;
  std::string content;
  if (ReadAll(f->real, content)) s.durable[f->name] = std::move(content);
}

int Close(sqlite3_file* f) {
  int rc = Real(f)->pMethods->xClose(Real(f));
  f->pMethods = nullptr;
  return rc;
}
int Read(sqlite3_file* f, void* buf, int amt, sqlite3_int64 off) {
  return Real(f)->pMethods->xRead(Real(f), buf, amt, off);
}
int Write(sqlite3_file* f, const void* buf, int amt, sqlite3_int64 off) {
  if (Ff(f)->counted)
    if (int rc = Hit(FaultPoint::kWrite, SQLITE_IOERR_WRITE); rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xWrite(Real(f), buf, amt, off);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  if (Ff(f)->counted)
    if (int rc = Hit(FaultPoint::kTruncate, SQLITE_IOERR_TRUNCATE); rc != SQLITE_OK) return rc;
  return Real(f)->pMethods->xTruncate(Real(f), size);
}
int Sync(sqlite3_file* f, int flags) {
  if (Ff(f)->counted)
    if (int rc = Hit(FaultPoint::kSync, SQLITE_IOERR_FSYNC); rc != SQLITE_OK) return rc;
  int rc = Real(f)->pMethods->xSync(Real(f), flags);
  if (rc == SQLITE_OK) Track(Ff(f), true);
  return rc;
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) { return Real(f)->pMethods->xFileSize(Real(f), size); }
int Lock(sqlite3_file* f, int level) { return Real(f)->pMethods->xLock(Real(f), level); }
int Unlock(sqlite3_file* f, int level) { return Real(f)->pMethods->xUnlock(Real(f), level); }
int CheckReservedLock(sqlite3_file* f, int* out) {
  return Real(f)->pMethods->xCheckReservedLock(Real(f), out);
}
int FileControl(sqlite3_file* f, int op, void* arg) {
  return Real(f)->pMethods->xFileControl(Real(f), op, arg);
}
int SectorSize(sqlite3_file* f) { return Real(f)->pMethods->xSectorSize(Real(f)); }
int DeviceCharacteristics(sqlite3_file* f) { return Real(f)->pMethods->xDeviceCharacteristics(Real(f)); }
int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Real(f)->pMethods->xShmMap(Real(f), region, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Real(f)->pMethods->xShmLock(Real(f), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { Real(f)->pMethods->xShmBarrier(Real(f)); }
int ShmUnmap(sqlite3_file* f, int del) { return Real(f)->pMethods->xShmUnmap(Real(f), del); }
int Fetch(sqlite3_file* f, sqlite3_int64 off, int amt, void** out) {
  return Real(f)->pMethods->xFetch(Real(f), off, amt, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return Real(f)->pMethods->xUnfetch(Real(f), off, p);
}

const sqlite3_io_methods kMethods = {
    3,
    Close,
    Read,
    Write,
    Truncate,
    Sync,
    FileSize,
    Lock,
    Unlock,
    CheckReservedLock,
    FileControl,
    SectorSize,
    DeviceCharacteristics,
    ShmMap,
    ShmLock,
    ShmBarrier,
    ShmUnmap,
    Fetch,
    Unfetch,
};

int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  State& s = S();
  auto* f = Ff(file);
  f->base.pMethods = nullptr;
  f->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + sizeof(FaultFile));
  f->name = name;
  f->counted =
      name != nullptr && (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL | SQLITE_OPEN_MAIN_JOURNAL)) != 0;
  if (f->counted)
    if (int rc = Hit(FaultPoint::kOpen, SQLITE_CANTOPEN); rc != SQLITE_OK) return rc;
  int rc = s.root->xOpen(s.root, name, f->real, flags, out_flags);
  if (rc != SQLITE_OK || f->real->pMethods == nullptr) return rc;
  // Our methods claim version 3; the wrapped file must offer at least that.
  if (f->real->pMethods->iVersion < 3) {
    f->real->pMethods->xClose(f->real);
    return SQLITE_CANTOPEN;
  }
  f->base.pMethods = &kMethods;
  Track(f, false);
  return SQLITE_OK;
}

int Delete(sqlite3_vfs*, const char* name, int sync_dir) {
  State& s = S();
  if (s.cut) return Inject(SQLITE_IOERR_DELETE);
  int rc = s.root->xDelete(s.root, name, sync_dir);
  if (rc == SQLITE_OK) s.durable.erase(name);
  return rc;
}
int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return S().root->xAccess(S().root, name, flags, out);
}
int FullPathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return S().root->xFullPathname(S().root, name, n, out);
}
void* DlOpen(sqlite3_vfs*, const char* name) { return S().root->xDlOpen(S().root, name); }
void DlError(sqlite3_vfs*, int n, char* out) { S().root->xDlError(S().root, n, out); }
void (*DlSym(sqlite3_vfs*, void* h, const char* sym))(void) { return S().root->xDlSym(S().root, h, sym); }
void DlClose(sqlite3_vfs*, void* h) { S().root->xDlClose(S().root, h); }
int Randomness(sqlite3_vfs*, int n, char* out) { return S().root->xRandomness(S().root, n, out); }
int Sleep(sqlite3_vfs*, int us) { return S().root->xSleep(S().root, us); }
int CurrentTime(sqlite3_vfs*, double* out) { return S().root->xCurrentTime(S().root, out); }
int GetLastError(sqlite3_vfs*, int n, char* out) {
  if (S().last_errno != 0) return S().last_errno;
  return S().root->xGetLastError(S().root, n, out);
}
int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) { return S().root->xCurrentTimeInt64(S().root, out); }

}  // namespace

FaultVfs& FaultVfs::Install() {
  static FaultVfs* installed = [] {
    State& s = S();
    s.root = sqlite3_vfs_find(nullptr);
    sqlite3_vfs& v = s.vfs;
    v.iVersion = 2;  // no system-call overrides: tests never replace them
    v.szOsFile = static_cast<int>(sizeof(FaultFile)) + s.root->szOsFile;
    v.mxPathname = s.root->mxPathname;
    v.zName = kName;
    v.xOpen = Open;
    v.xDelete = Delete;
    v.xAccess = Access;
    v.xFullPathname = FullPathname;
    v.xDlOpen = DlOpen;
    v.xDlError = DlError;
    v.xDlSym = DlSym;
    v.xDlClose = DlClose;
    v.xRandomness = Randomness;
    v.xSleep = Sleep;
    v.xCurrentTime = CurrentTime;
    v.xGetLastError = GetLastError;
    v.xCurrentTimeInt64 = CurrentTimeInt64;
    sqlite3_vfs_register(&v, 0);
    return new FaultVfs();
  }();
  return *installed;
}

void FaultVfs::Reset() {
  State& s = S();
  for (auto& c : s.counts) c = 0;
  s.mutations = 0;
  s.injected = 0;
  s.last_errno = 0;
  s.fail_n = 0;
  s.fail_rc = SQLITE_OK;
  s.sticky = false;
  s.cut_at = 0;
  s.cut = false;
  s.durable.clear();
}

void FaultVfs::FailAt(FaultPoint point, int64_t n, int rc, bool sticky) {
  State& s = S();
  s.fail_point = point;
  s.fail_n = n;
  s.fail_rc = rc;
  s.sticky = sticky;
}

void FaultVfs::Disarm() { S().fail_n = 0; }

void FaultVfs::CutPowerAt(int64_t n) { S().cut_at = n; }

Status FaultVfs::RevertUnsynced() {
  State& s = S();
  for (const auto& [path, content] : s.durable) {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return Fail(ErrorKind::kIo, fmt::format("cannot revert {}: {}", path, strerror(errno)));
    bool ok = pwrite(fd, content.data(), content.size(), 0) == static_cast<ssize_t>(content.size()) &&
              ftruncate(fd, static_cast<off_t>(content.size())) == 0;
    close(fd);
    if (!ok) return Fail(ErrorKind::kIo, fmt::format("cannot revert {}: {}", path, strerror(errno)));
  }
  s.durable.clear();
  s.cut = false;
  s.cut_at = 0;
  return Ok();
}

int64_t FaultVfs::count(FaultPoint point) const { return S().counts[static_cast<int>(point)]; }
int64_t FaultVfs::mutations() const { return S().mutations; }
int64_t FaultVfs::injected() const { return S().injected; }
bool FaultVfs::power_cut() const { return S().cut; }

}  // namespace bk::store
