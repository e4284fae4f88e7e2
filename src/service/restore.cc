// Administrators replace the ledger's content: `bk admin data restore` puts a
// verified backup in its place, `bk admin data clear` empties it once a
// verified backup of it exists. Either way the ledger file stays where it is
// and its content changes in one write transaction (LedgerStore::ReplaceWith):
// a private ledger's other processes, which may hold it open, see the old
// ledger or the new one and never a mix, and the daemon's exclusive hold on
// its file is never let go. The ledger as it was is copied to a file of its
// own first, under the same write lock.

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "config/config.h"
#include "engine/parse.h"
#include "service/impl.h"
#include "sys/file_system.h"
#include "sys/fs.h"
#include "sys/unique_fd.h"

namespace bk::service {
namespace {

constexpr std::string_view kDataNeedsAdmin =
    "only an administrator (root, the server owner or a member of admin_group) can {} the ledger";

// A file name beside the ledger that is not taken yet: `ledger.db.<what>-<UTC
// stamp>`, with a counter when two land in the same second. The wall clock
// names it, not the service's (a test clock stands still).
std::string Beside(const std::string& ledger, std::string_view what) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
  std::string path = fmt::format("{}.{}-{}", ledger, what, stamp);
  for (int i = 2; sys::Exists(path); ++i) path = fmt::format("{}.{}-{}-{}", ledger, what, stamp, i);
  return path;
}

// Copies the backup the caller opened, from offset 0 (the caller's offset is
// not ours to move), into the new file `to`, made like a ledger file.
Status CopyIn(int from, const std::string& to, uid_t owner, const std::string& name) {
  struct stat st {};
  if (fstat(from, &st) != 0 || !S_ISREG(st.st_mode))
    return Invalid(
        fmt::format("{} is not a regular file; give a file written by bk admin data backup", name));
  BK_TRY(sys::CreateDataFile(to, 0600, owner));
  sys::UniqueFd out(open(to.c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
  auto io = [&](const char* what) {
    return Fail(ErrorKind::kIo, fmt::format("cannot {} for the restore: {}; the ledger is unchanged", what,
                                            std::strerror(errno)));
  };
  if (!out.ok()) return io("open a staging file");
  char buf[65536];
  for (off_t at = 0;;) {
    ssize_t n = pread(from, buf, sizeof(buf), at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io(fmt::format("read {}", name).c_str());
    if (n == 0) break;
    for (ssize_t put = 0; put < n;) {
      ssize_t w = write(out.get(), buf + put, static_cast<size_t>(n - put));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return io("write the staging file");
      put += w;
    }
    at += n;
  }
  if (fsync(out.get()) != 0) return io("sync the staging file");
  return Ok();
}

// Verifies the staged copy of backup `name` like `verify`, and that it is
// bound to this deployment's policy (or to none yet). Every refusal is one
// line that says the live ledger is unchanged.
Result<VerifyReport> CheckBackup(const store::OpenOptions& staged, const std::string& name,
                                 const engine::Policy& policy, engine::Seconds now) {
  auto refuse = [&](const std::string& why) {
    return Invalid(fmt::format("{} cannot be restored: {}; the ledger is unchanged", name, why));
  };
  auto opened = store::LedgerStore::Open(staged);
  if (!opened) return refuse(opened.error().message);
  store::LedgerStore& s = **opened;
  VerifyReport r;
  r.path = name;
  if (auto checked = CheckLedger(s, policy, now, r); !checked) return refuse(checked.error().message);
  if (r.integrity != "ok") return refuse("SQLite's integrity check says " + r.integrity);
  if (!r.violations.empty())
    return refuse(fmt::format("{} calendar invariant violation(s), the first: {}", r.violations.size(),
                              r.violations.front()));
  BK_ASSIGN_OR_RETURN(auto bound, s.BoundPolicy());
  if (bound) {
    std::string diff = config::ComparePolicy(*bound, config::BoundPolicyJson(policy));
    if (!diff.empty()) return refuse("its policy differs from this deployment's: " + diff);
  }
  return r;
}

// Removes a staging file and its companions when the restore ends, however.
struct Staging {
  std::string path;
  ~Staging() { RemoveStaging(sys::RealFileSystem(), path); }
};

}  // namespace

Result<store::LedgerStore::Cleared> BookingService::Impl::Swap(
    store::LedgerStore& s, const std::string& source,
    const std::function<::bk::Status(store::LedgerStore&)>& keep) {
  // The daemon's writes grouped before this one are made durable first: they
  // are in the copy kept aside.
  BK_TRY(s.CommitGroup());
  Result<store::LedgerStore::Cleared> done = Fail(ErrorKind::kInternal, "not swapped");
  if (deps.exclusive_store) {
    // The daemon alone writes its ledger: nothing changes between the copy and the swap.
    BK_TRY(keep(s));
    done = s.ReplaceWith(source, {});
  } else {
    // Other processes may write a private ledger: the copy is taken while
    // this connection holds the write lock, through a second connection that
    // only reads (a connection cannot copy a database it is writing).
    BK_ASSIGN_OR_RETURN(auto reader, store::LedgerStore::Open(StoreOptions(false)));
    done = s.ReplaceWith(source, [&] { return keep(*reader); });
  }
  // What was derived from the old content goes: the calendar is read again.
  live.reset();
  policy_matched = false;
  ++generation;
  return done;
}

Result<LedgerSwap> BookingService::Restore(const Actor& actor, int backup, const std::string& name) {
  if (!actor.admin) return Fail(ErrorKind::kPermission, fmt::format(kDataNeedsAdmin, "restore"));
  if (backup < 0) return Invalid("no backup came with the request; give it as bk admin data restore FILE");
  const std::string& ledger = impl_->deps.config->ledger_path;
  const uid_t owner = impl_->deps.data_owner;
  store::OpenOptions staged = impl_->StoreOptions(false);
  staged.path = ledger + ".restore";
  staged.on_lock_wait = nullptr;
  // A staging file left by a restore that died is stale.
  RemoveStaging(sys::RealFileSystem(), staged.path);
  Staging staging{staged.path};
  BK_TRY(CopyIn(backup, staged.path, owner, name));
  BK_ASSIGN_OR_RETURN(VerifyReport checked, CheckBackup(staged, name, impl_->policy(), impl_->Now()));
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  std::string kept = Beside(ledger, "replaced");
  BK_TRY(impl_->Swap(*s, staged.path, [&](store::LedgerStore& from) { return from.BackupTo(kept, owner); }));
  return LedgerSwap{kept, checked};
}

Result<LedgerSwap> BookingService::Clear(const Actor& actor, const std::string& backup_path) {
  if (!actor.admin) return Fail(ErrorKind::kPermission, fmt::format(kDataNeedsAdmin, "clear"));
  const std::string& ledger = impl_->deps.config->ledger_path;
  std::string kept = backup_path.empty() ? Beside(ledger, "backup") : backup_path;
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  if (s->in_memory()) return Fail(ErrorKind::kNotFound, "there is no ledger yet: nothing to clear");
  BK_ASSIGN_OR_RETURN(s, impl_->Writer());
  VerifyReport checked;
  checked.path = kept;
  auto keep = [&](store::LedgerStore& from) -> ::bk::Status {
    BK_TRY(from.BackupTo(kept, impl_->deps.data_owner));
    BK_ASSIGN_OR_RETURN(auto copy,
                        store::LedgerStore::Open({kept, false, impl_->deps.data_owner, 1000, false}));
    BK_TRY(CheckLedger(*copy, impl_->policy(), impl_->Now(), checked));
    if (!checked.ok())
      return Fail(ErrorKind::kCorrupt,
                  fmt::format("the backup {} does not verify (integrity: {}, {} violation(s)); nothing was "
                              "cleared",
                              kept, checked.integrity, checked.violations.size()));
    return Ok();
  };
  BK_TRY(impl_->Swap(*s, "", keep));
  return LedgerSwap{kept, checked};
}

}  // namespace bk::service
