#include "cli/policy_edit.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "cli/args.h"
#include "engine/parse.h"
#include "surface/text.h"
#include "sys/fs.h"
#include "sys/sha256.h"
#include "sys/users.h"

namespace bk::cli {
namespace {

using ordered = nlohmann::ordered_json;

// The file with `edit` applied, keys kept in the order the file had.
Result<std::string> Edited(const std::string& path, const std::string& text, const PolicyEdit& edit) {
  ordered doc = ordered::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    return Invalid(fmt::format("{} is not a JSON object; repair it first (`bk doctor`)", path));
  for (const auto& [key, value] : edit.keys) {
    if (!value) {
      doc.erase(key);
      continue;
    }
    ordered v = ordered::parse(*value, nullptr, false);
    if (v.is_discarded()) return Invalid(fmt::format("{}: not a JSON value: {}", key, *value));
    doc[key] = std::move(v);
  }
  return doc.dump(2) + "\n";
}

nlohmann::json ConflictJson(const service::PolicyConflictItem& c) {
  const engine::Reservation& r = c.reservation;
  return {{"id", r.id},
          {"owner", r.username},
          {"uid", r.uid},
          {"gpus", r.gpus},
          {"start_at", engine::FormatIsoUtc(r.start)},
          {"end_at", engine::FormatIsoUtc(r.end)},
          {"why", c.why}};
}

std::string Document(const PolicyEdit& edit, const service::PolicyChange& change) {
  nlohmann::json changes = nlohmann::json::array(), conflicts = nlohmann::json::array();
  for (const auto& c : change.changes)
    changes.push_back({{"key", c.key},
                       {"before", nlohmann::json::parse(c.before, nullptr, false)},
                       {"after", nlohmann::json::parse(c.after, nullptr, false)}});
  for (const auto& c : change.conflicts) conflicts.push_back(ConflictJson(c));
  return nlohmann::json{{"schema_version", "gpubk.admin.v1"},
                        {"kind", edit.kind},
                        {"status", edit.dry_run && change.status == "checked" ? "dry-run" : change.status},
                        {"changes", changes},
                        {"conflicts", conflicts},
                        {"restart_needed", change.restart},
                        {"notified", change.notified},
                        {"cancelled", change.cancelled}}
      .dump(2);
}

// One blackout window as people read it: "START -> END on GPU 1,2: REASON" (UTC here, local once printed).
std::string WindowText(const nlohmann::json& w) {
  std::string gpus = "all GPUs";
  if (w.contains("gpus") && w["gpus"].is_array() && !w["gpus"].empty())
    gpus = "GPU " + JoinInts(w["gpus"].get<std::vector<int>>(), ",");
  return fmt::format("{} -> {} on {}: {}", w.value("start_at", "?"), w.value("end_at", "?"), gpus,
                     w.value("reason", ""));
}

// The windows a blackout change adds and removes, rather than both lists whole.
void PrintBlackoutChange(const Context& ctx, const config::KeyChange& c) {
  auto list = [](const std::string& text) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    return j.is_array() ? j : nlohmann::json::array();
  };
  nlohmann::json before = list(c.before), after = list(c.after);
  ctx.Print(fmt::format("  blackout windows: {} -> {}", before.size(), after.size()));
  for (const auto& w : before)
    if (std::find(after.begin(), after.end(), w) == after.end())
      ctx.Print("    - " + ctx.Local(WindowText(w)));
  for (const auto& w : after)
    if (std::find(before.begin(), before.end(), w) == before.end())
      ctx.Print("    + " + ctx.Local(WindowText(w)));
}

void PrintPlan(const Context& ctx, const service::PolicyChange& change) {
  for (const auto& c : change.changes) {
    if (c.key == "booking_blackouts") {
      PrintBlackoutChange(ctx, c);
    } else {
      ctx.Print(fmt::format("  {}: {} -> {}", c.key, c.before, c.after));
    }
  }
  if (!change.restart.empty())
    ctx.Print(fmt::format("  also changed in the file, applied at the daemon's next start: {}",
                          Join(change.restart, ", ")));
  if (change.conflicts.empty()) return;
  ctx.Print(fmt::format("{} booking(s) the new policy would not admit:", change.conflicts.size()));
  for (const auto& c : change.conflicts) {
    const engine::Reservation& r = c.reservation;
    ctx.Print(fmt::format("  {}  {:<12} GPU {:<5} {}  {}", r.ShortId(), r.username, JoinInts(r.gpus, ","),
                          surface::RangeText(r.start, r.end, *ctx.zone), ctx.Local(c.why)));
  }
}

// Puts `text` in place of `path`, keeping its mode and owner.
Status Replace(const std::string& path, const std::string& text) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return Invalid(fmt::format("cannot inspect {}", path));
  BK_TRY(sys::WriteFileAtomic(path, text, st.st_mode & 07777));
  // Root editing a rootless server's file gives it back to its owner.
  if (getuid() == 0 && st.st_uid != 0 && lchown(path.c_str(), st.st_uid, st.st_gid) != 0)
    return Invalid(fmt::format("cannot give {} back to UID {}", path, st.st_uid));
  return Ok();
}

}  // namespace

Result<std::string> EditableServerConfig(const Context& ctx) {
  const config::Config& c = ctx.config;
  if (c.deployment == config::Deployment::kPrivate || c.server_config.empty())
    return Invalid(
        "this bk uses a private ledger: its policy is its config.json (`bk config --keys` lists the keys); "
        "`bk admin` changes a shared server's policy (`bk server connect` first)");
  if (c.original_format)
    return Invalid(fmt::format(
        "{} is GPUBK 0.2.8's config, which this bk reads but never rewrites; edit it by hand and restart the "
        "daemon, or write a gpubk.server.v1 config (the administrator guide shows how)",
        c.server_config));
  struct stat st {};
  if (lstat(c.server_config.c_str(), &st) != 0)
    return Invalid(fmt::format("cannot read {}", c.server_config));
  uid_t me = getuid();
  if (me != 0 && me != st.st_uid)
    return Fail(
        ErrorKind::kPermission,
        fmt::format("only root or {} (the owner of {}) can change this server's policy; run it with sudo",
                    sys::UserName(st.st_uid), c.server_config));
  return c.server_config;
}

// Long on purpose: the three steps and the way back from the third are one
// sequence; split, the order they depend on would hide.
Result<int> ApplyPolicyEdit(Context& ctx, const PolicyEdit& edit) {
  BK_ASSIGN_OR_RETURN(std::string path, EditableServerConfig(ctx));
  const bool ask = !edit.yes && !edit.dry_run;
  if (ask && (edit.json || !isatty(STDIN_FILENO)))
    return Invalid("pass --yes to apply the change without a question (or --dry-run to see it)");
  BK_ASSIGN_OR_RETURN(std::string before, sys::ReadSmallFile(path, 1 << 20));
  BK_ASSIGN_OR_RETURN(std::string after, Edited(path, before, edit));
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  service::PolicyReloadRequest check{after, sys::Sha256Hex(before), edit.force, edit.cancel_conflicting,
                                     edit.reason};
  BK_ASSIGN_OR_RETURN(service::PolicyChange plan, ledger->ReloadPolicy(check));
  const bool refused = !plan.conflicts.empty() && !edit.force && !edit.cancel_conflicting;
  if (edit.json && (edit.dry_run || plan.status == "unchanged" || refused)) {
    if (refused) plan.status = "refused";
    ctx.Print(Document(edit, plan));
    return refused ? 2 : 0;
  }
  if (!edit.json) {
    ctx.Print(plan.status == "unchanged" ? "policy unchanged" : "GPUBK policy change (" + path + ")");
    PrintPlan(ctx, plan);
  }
  if (plan.status == "unchanged" || edit.dry_run) return 0;
  if (refused)
    return Fail(
        ErrorKind::kConflict,
        "refused: nothing changed; cancel or move those bookings first, or rerun with --force --reason "
        "TEXT (they stay, their owners are told) or --cancel-overlapping --reason TEXT");
  BK_TRY(Confirm(ctx, !ask, edit.question));
  BK_TRY(Replace(path, after));
  service::PolicyReloadRequest apply{std::nullopt, sys::Sha256Hex(after), edit.force, edit.cancel_conflicting,
                                     edit.reason};
  auto done = ledger->ReloadPolicy(apply);
  // "unchanged": the daemon runs by this file already (another administrator
  // made the same change, or it restarted meanwhile); the file stays.
  if (done && done->status == "unchanged") {
    ctx.Print("applied: the daemon already runs by this policy");
    return 0;
  }
  if (!done || done->status != "applied") {
    // The daemon kept the old policy: so does the file.
    Status back = Replace(path, before);
    std::string why = done ? "a booking made meanwhile conflicts with it" : done.error().message;
    return Fail(done ? ErrorKind::kConflict : done.error().kind,
                fmt::format("the daemon refused the change ({}); {}", why,
                            back ? "the config file is as it was"
                                 : "restoring the config file failed: " + back.error().message));
  }
  if (edit.json) {
    ctx.Print(Document(edit, *done));
    return 0;
  }
  std::string outcome = fmt::format("applied: {} setting(s) changed, effective now", done->changes.size());
  if (done->notified) outcome += fmt::format("; {} booking owner(s) notified", done->notified);
  if (done->cancelled) outcome += fmt::format("; {} booking(s) cancelled", done->cancelled);
  ctx.Print(outcome);
  return 0;
}

}  // namespace bk::cli
