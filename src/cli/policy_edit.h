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
// applied, unchanged or only checked; 2 when the question was not answered y;
// 2 when refused (conflicts without --force, or bad input).
Result<int> ApplyPolicyEdit(Context& ctx, const PolicyEdit& edit);

// A new blackout window as `bk admin blackout add` takes it: START as -t
// takes it, END a time or a length after START, a reason of 1-512
// characters, GPUs "all" (or absent) or a list; checked against this server.
Result<engine::Blackout> NewBlackout(const Context& ctx, const std::string& start, const std::string& end,
                                     const std::string& reason, const std::optional<std::string>& gpus);
// The edit that makes `windows` the server's blackouts, with the flags of
// `opts`: bookings they overlap stay (owners told `why`, or opts.reason)
// unless opts.cancel_conflicting, which needs opts.reason.
Result<PolicyEdit> BlackoutChange(const Context& ctx, const std::vector<engine::Blackout>& windows,
                                  const std::string& why, const PolicyEdit& opts);

// The server config a policy change rewrites, refused for a private ledger
// and for a caller who may not write it (root or the file's owner may).
Result<std::string> EditableServerConfig(const Context& ctx);

}  // namespace bk::cli
