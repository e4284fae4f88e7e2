#pragma once
// How `bk admin policy` and `bk admin blackout` change a running server's
// policy: the server's config file is rewritten (it stays the one source of
// truth) and its daemon reads it back, in three steps:
//   1. the daemon checks the proposed file without changing anything and
//      lists the bookings it would make illegal;
//   2. the file is replaced atomically (temp file, fsync, rename);
//   3. the daemon reads it and, in one ledger transaction, binds the ledger
//      to the new policy and records the change; it admits by it from then on.
// When step 3 is refused (a booking made meanwhile conflicts), the old file
// is put back, so file and daemon never disagree.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/context.h"
#include "service/types.h"

namespace bk::cli {

struct PolicyEdit {
  // config.json key -> new JSON text; nullopt removes the key (its default applies).
  std::map<std::string, std::optional<std::string>> keys;
  bool dry_run = false;
  bool yes = false;
  bool json = false;
  bool force = false;
  bool cancel_conflicting = false;
  std::optional<std::string> reason;
  std::string kind;      // the JSON document's kind: admin-policy | admin-blackout
  std::string question;  // asked before applying, e.g. "Apply this policy change?"
};

// Runs the three steps, printing the plan and the outcome. Exit status: 0
// applied, unchanged or only checked; 1 when the question was answered no;
// 2 when refused (conflicts without --force, or bad input).
Result<int> ApplyPolicyEdit(Context& ctx, const PolicyEdit& edit);

// The server config a policy change rewrites, refused for a private ledger
// and for a caller who may not write it (root or the file's owner may).
Result<std::string> EditableServerConfig(const Context& ctx);

}  // namespace bk::cli
