// bk admin transfer and bk admin data restore|clear: administrators' changes
// that reassign or replace what the ledger holds. Each asks first (or takes
// --yes), and each is decided by the service, in process or in the daemon.

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/output.h"
#include "engine/parse.h"
#include "surface/documents.h"
#include "surface/text.h"
#include "sys/unique_fd.h"

namespace bk::cli {
namespace {

// Goes on with --yes, or when a person at a terminal types yes to `question`.
// Without a terminal nobody can answer: refused, naming the flag.
Result<bool> Confirmed(Context& ctx, bool yes, const std::string& question) {
  if (yes) return true;
  if (!isatty(STDIN_FILENO)) return Invalid(question + " Add --yes to confirm without a terminal.");
  return TypedWord(ctx, question + " Type yes to continue: ", "yes");
}

void PrintChecked(Context& ctx, const service::VerifyReport& r) {
  ctx.Print(fmt::format("verified: integrity {}, {} reservations ({} active)", r.integrity, r.reservations,
                        r.active));
}

}  // namespace

Result<int> RunAdminTransfer(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref, to, reason;
  bool yes = false;
  JsonOutput out;
  ArgSpec spec("bk admin transfer",
               "Give someone's active booking to another local account (administrators): same GPUs and "
               "times; both owners are notified and the history keeps who did it and why.");
  spec.NeededPositional("ref", &ref, "the reservation's ID, or enough of its first characters to name one");
  spec.NeededPositional("user", &to, "the login name of the new owner");
  spec.Option("--reason", &reason, "why (required; both owners read it)", "TEXT");
  spec.Flag("--yes", &yes, "do not ask for confirmation");
  out.AddTo(spec, "print the transfer_result document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref || !to) return Invalid("usage: bk admin transfer REF USER --reason TEXT [--yes]");
  if (!reason) return Invalid("a transfer needs --reason TEXT; both owners are notified of it");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(
      bool go, Confirmed(ctx, yes || out.wanted(), fmt::format("Transfer reservation {} to {}?", *ref, *to)));
  if (!go) {
    ctx.Print("transfer cancelled");
    return 1;
  }
  BK_ASSIGN_OR_RETURN(service::TransferOutcome o, ledger->Transfer({*ref, *to, *reason}));
  if (out.wanted()) {
    ctx.PrintDoc(surface::TransferDoc(o, ledger->actor().uid, ledger->policy(), ledger->Now()));
    return 0;
  }
  const engine::Reservation& r = o.reservation;
  ctx.Print(fmt::format("transferred: {} from {} to {} (GPU {} {})", r.ShortId(), o.from_username, r.username,
                        JoinInts(r.gpus), surface::RangeText(r.start, r.end, *ctx.zone)));
  ctx.Print("both owners are notified (bk n)");
  return 0;
}

Result<int> RunAdminRestore(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> path;
  bool yes = false;
  JsonOutput out;
  ArgSpec spec("bk admin data restore",
               "Replace the ledger with a backup (bk admin data backup): the backup is verified first "
               "(integrity, calendar invariants, this deployment's policy), then swapped in at once; the "
               "ledger as it was is kept beside it.");
  spec.NeededPositional("file", &path, "the backup to restore");
  spec.Flag("--yes", &yes, "do not ask for confirmation");
  out.AddTo(spec, "print the gpubk.restore.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!path) return Invalid("give the backup to restore, e.g. bk admin data restore /srv/backups/ledger.db");
  sys::UniqueFd file(open(path->c_str(), O_RDONLY | O_CLOEXEC));
  if (!file.ok()) return Invalid(fmt::format("cannot open {}: {}", *path, std::strerror(errno)));
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(bool go,
                      Confirmed(ctx, yes || out.wanted(),
                                fmt::format("Replace every booking of this ledger with {}?", *path)));
  if (!go) {
    ctx.Print("restore cancelled");
    return 1;
  }
  BK_ASSIGN_OR_RETURN(service::LedgerSwap s, ledger->Restore(*path, std::move(file)));
  if (out.wanted()) {
    ctx.PrintDoc(surface::LedgerSwapDoc("restore", s));
    return 0;
  }
  PrintChecked(ctx, s.checked);
  ctx.Print(fmt::format("restored: {}", *path));
  ctx.Print(fmt::format("the replaced ledger is kept in {}", s.kept));
  return 0;
}

Result<int> RunAdminClear(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> backup;
  bool yes = false;
  JsonOutput out;
  ArgSpec spec("bk admin data clear",
               "Empty the ledger (every booking, the history, notifications) after writing and verifying a "
               "backup of it.");
  spec.Flag("--yes", &yes, "required: clearing cannot be undone except by restoring the backup");
  spec.Option("--backup-to", &backup, "absolute path of the new backup (default: beside the ledger)", "FILE");
  out.AddTo(spec, "print the gpubk.clear.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!yes) return Invalid("bk admin data clear empties the whole ledger; add --yes to confirm");
  if (backup && (backup->empty() || backup->front() != '/'))
    return Invalid("give --backup-to as an absolute path");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::LedgerSwap s, ledger->Clear(backup.value_or("")));
  if (out.wanted()) {
    ctx.PrintDoc(surface::LedgerSwapDoc("clear", s));
    return 0;
  }
  ctx.Print(fmt::format("backup: {}", s.kept));
  PrintChecked(ctx, s.checked);
  ctx.Print("cleared: the ledger is empty");
  ctx.Print(fmt::format("undo with: bk admin data restore {}", s.kept));
  return 0;
}

}  // namespace bk::cli
