// bk info / contact / about / i: who administers this deployment and how to
// reach them. Needs no ledger and no daemon: it reads the Linux account.

#include "cli/args.h"
#include "cli/context.h"
#include "cli/output.h"
#include "surface/administrator.h"
#include "surface/documents.h"
#include "sys/users.h"

namespace bk::cli {

Result<int> RunInfo(Context& ctx, const std::vector<std::string>& args) {
  ArgSpec spec("bk info",
               "The administrator of this deployment and how to reach them (from the Linux account).");
  JsonOutput out;
  out.AddTo(spec, "print the gpubk.administrator.v1 document (indented)");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  uid_t uid = surface::AdministratorUid(ctx.config, sys::CurrentUid());
  surface::Administrator admin = surface::ReadAdministrator(uid, sys::LookupAccount(uid));
  if (out.wanted()) {
    std::string doc = surface::AdministratorDoc(admin);
    ctx.Print(out.compact ? doc : surface::Dump(doc, surface::JsonStyle::kPretty));
    return 0;
  }
  bool server = ctx.config.deployment != config::Deployment::kPrivate;
  for (const auto& line : surface::AdministratorLines(admin, server)) ctx.Print(line);
  return 0;
}

}  // namespace bk::cli
