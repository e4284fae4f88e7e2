#pragma once
// Test support: an SQLite VFS that makes the disk fail on purpose, so tests
// can prove that every write the ledger and the usage history make survives
// a failing disk and a power cut (service/fault_test.cc). Only tests register
// it; production code opens its files through the VFS named in its options,
// which defaults to SQLite's own.
//
// It wraps SQLite's default (unix) VFS and counts, on database, WAL and
// rollback journal files only, four kinds of call: xWrite, xSync, xTruncate
// and xOpen. Two kinds of fault:
//   - FailAt: the Nth call of one kind returns an error code (SQLITE_IOERR_*,
//     SQLITE_FULL); "sticky" makes every later call of that kind fail too,
//     as a disk that stays full would.
//   - CutPowerAt: at the Nth write, sync or truncate the machine "loses
//     power": that call and every later mutation fails and changes nothing.
//     Once every connection is closed, RevertUnsynced puts each file back to
//     what its last xSync made durable, dropping every write made after it,
//     as the disk would after the reboot. (File creation and deletion count
//     as durable at once: the model covers file contents, not directories.)
//
// Single-threaded: the counters are plain process-wide state.

#include <cstdint>

#include "base/result.h"

namespace bk::store {

enum class FaultPoint { kWrite = 0, kSync = 1, kTruncate = 2, kOpen = 3 };

class FaultVfs {
 public:
  static constexpr const char* kName = "bk-fault";

  // Registers the VFS (once, never as the default) and returns it.
  static FaultVfs& Install();

  // Restarts counting, disarms every fault, restores power and forgets the
  // durable state of every file.
  void Reset();
  // The nth call (from 1, counted since Reset) at `point` fails with `rc`.
  void FailAt(FaultPoint point, int64_t n, int rc, bool sticky = false);
  // Stops FailAt's failures; counting goes on (the disk was repaired).
  void Disarm();
  // Power fails at the nth mutation (write, sync or truncate) since Reset.
  // Call before the files are opened: a file's durable state is what it
  // held when first opened after Reset, then what each xSync made durable.
  void CutPowerAt(int64_t n);
  // After the cut, with every connection through this VFS closed: rewrites
  // each file as it was at its last sync, then restores power.
  Status RevertUnsynced();

  int64_t count(FaultPoint point) const;
  int64_t mutations() const;  // writes + syncs + truncates
  int64_t injected() const;   // calls failed on purpose since Reset
  bool power_cut() const;

 private:
  FaultVfs() = default;
};

}  // namespace bk::store
