// bk admin cancel REF --reason TEXT: an administrator cancels anyone's
// booking. The cancellation is `bk d`'s (the same service call, audited as
// admin-cancel); this form makes the reason required and says who was told.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/output.h"
#include "surface/documents.h"
#include "worker/cleanup.h"

namespace bk::cli {

Result<int> RunAdminCancel(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> ref, reason;
  bool yes = false;
  JsonOutput out;
  ArgSpec spec(
      "bk admin cancel",
      "Cancel anyone's booking as an administrator; its owner is notified with the reason (`bk n`).");
  spec.NeededPositional("reservation", &ref, "its ID or a unique prefix (`bk st -v` shows everyone's)");
  spec.Option("--reason", &reason, "why, shown to the owner (1-512 characters)", "TEXT");
  spec.Flag("--yes", &yes, "cancel without asking");
  out.AddTo(spec, "print the gpubk.admin.v1 admin-cancel document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ref) return Invalid("which reservation? e.g. `bk admin cancel 3dee5b08 --reason \"GPU maintenance\"`");
  if (!reason)
    return Invalid("bk admin cancel needs --reason TEXT (1-512 characters); the owner sees it in `bk n`");
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  if (!ledger->actor().admin)
    return Fail(
        ErrorKind::kPermission,
        "bk admin cancel is for administrators (root or the server's owner); cancel your own bookings "
        "with `bk d`");
  BK_TRY(Confirm(
      ctx, yes,
      fmt::format("Cancel reservation {} as administrator, telling its owner why?", Printable(*ref))));
  BK_ASSIGN_OR_RETURN(service::CancelOutcome o, ledger->Cancel({.ref = *ref, .reason = reason}));
  for (const auto& w :
       worker::SweepSpecsAfterCancel(*ledger, ctx.config, config::ProcessEnv(), o.reservation))
    ctx.Warn(w);
  const engine::Reservation& r = o.reservation;
  const std::string why = r.cancellation ? r.cancellation->reason : "";
  if (out.wanted()) {
    ctx.PrintDoc(nlohmann::json{
        {"schema_version", "gpubk.admin.v1"},
        {"kind", "admin-cancel"},
        {"status", "cancelled"},
        {"reservation_id", r.id},
        {"owner_uid", r.uid},
        {"owner_username", r.username},
        {"reason",
         why}}.dump());
    return 0;
  }
  ctx.Print(
      fmt::format("cancelled: {} owner={} reason={}", r.ShortId(), Printable(r.username), Printable(why)));
  ctx.Print("The owner can see this cancellation with `bk notifications` or `bk l --history`.");
  return 0;
}

}  // namespace bk::cli
