// bk admin policy (gpu-policy) and bk admin blackout: an administrator changes
// a running server's scheduling policy without stopping it (cli/policy_edit.h).

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <tuple>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/policy_edit.h"
#include "config/keys.h"
#include "engine/limit_fields.h"
#include "engine/parse.h"
#include "surface/text.h"
#include "sys/sha256.h"

namespace bk::cli {
namespace {

using nlohmann::json;

// --user-max-gpus for max_gpus: the flag of a fair-share limit for everyone.
std::string LimitFlag(const engine::LimitField& f) {
  std::string flag = fmt::format("--user-{}", f.name);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// A whole number given to a policy flag, as the JSON its key takes.
Result<std::string> Number(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  auto n = ParseUint(Trim(text));
  if (!n || static_cast<int64_t>(*n) < lo || static_cast<int64_t>(*n) > hi)
    return Invalid(fmt::format("{} must be a whole number between {} and {}", flag, lo, hi));
  return std::to_string(*n);
}

void ShowPolicy(const Context& ctx) {
  const engine::Policy& p = ctx.config.policy;
  ctx.Print(fmt::format("GPUBK policy ({})", ctx.config.server_config));
  ctx.Print(
      fmt::format("  disabled GPUs: {}", p.disabled_gpus.empty() ? "none" : JoinInts(p.disabled_gpus, ",")));
  std::vector<std::string> prio;
  for (const auto& [g, v] : p.gpu_priority) prio.push_back(fmt::format("{}={}", g, v));
  ctx.Print(
      fmt::format("  GPU priority: {}", prio.empty() ? "none" : Join(prio, ",") + " (larger is later)"));
  ctx.Print(fmt::format("  max booking: {}h, horizon: {}d, shared slots per GPU: {}",
                        p.max_duration / engine::kHour, p.horizon / engine::kDay, p.share_capacity));
  ctx.Print(fmt::format("  VRAM budget for shared bookings: {}",
                        p.require_shared_memory ? "required" : "automatic"));
  ctx.Print(fmt::format("  host CPUs: {}, host RAM: {}", p.host_cpus ? std::to_string(*p.host_cpus) : "off",
                        p.host_ram_mb ? engine::FormatSizeMb(*p.host_ram_mb) : "off"));
  ctx.Print(fmt::format("  blackouts: {} (`bk admin blackout list`)", p.blackouts.size()));
  const engine::FairShare& fs = p.fair_share;
  if (!fs.Any()) {
    ctx.Print("  fair share: no limits");
    return;
  }
  std::vector<std::string> each;
  for (const engine::LimitField& f : engine::LimitFields())
    if (const auto& v = fs.user.*f.member) each.push_back(fmt::format("{} {}", f.name, *v / f.unit));
  ctx.Print(fmt::format("  fair share per user: {}", each.empty() ? "none" : Join(each, ", ")));
  ctx.Print(fmt::format("  fair share entries: {} user(s), {} group(s) (`bk u limits` shows the use)",
                        fs.users.size(), fs.groups.size()));
}

// A blackout's ID: the first 8 hex digits of SHA-256 over its window and
// reason (and GPUs, when it has some), so it names the same window on every host.
std::string BlackoutId(const engine::Blackout& b) {
  std::string text =
      fmt::format("{}\0{}\0{}", engine::FormatIsoUtc(b.start), engine::FormatIsoUtc(b.end), b.reason);
  if (!b.gpus.empty()) text += "\0" + JoinInts(b.gpus, ",");
  return sys::Sha256Hex(text).substr(0, 8);
}

Result<size_t> FindBlackout(const std::vector<engine::Blackout>& windows, const std::string& ref) {
  std::vector<size_t> hits;
  std::string want = ToLower(std::string(Trim(ref)));
  for (size_t i = 0; i < windows.size(); ++i)
    if (!want.empty() && BlackoutId(windows[i]).starts_with(want)) hits.push_back(i);
  if (hits.empty())
    return Invalid(fmt::format("no blackout {}; `bk admin blackout list` shows their IDs", ref));
  if (hits.size() > 1) return Invalid(fmt::format("blackout ID {} is ambiguous; give more characters", ref));
  return hits[0];
}

// START and END of a window: END may be a length after START (2h, +2h).
Result<std::pair<engine::Seconds, engine::Seconds>> Window(const Context& ctx, const std::string& start_text,
                                                           const std::string& end_text) {
  engine::Seconds now = ctx.clock->Now();
  BK_ASSIGN_OR_RETURN(engine::Seconds start, engine::ParseViewTime(start_text, now, *ctx.zone));
  std::string e(Trim(end_text));
  engine::Seconds end = 0;
  if (auto d = engine::ParseDuration(e.starts_with('+') ? e.substr(1) : e)) {
    end = start + *d;
  } else {
    BK_ASSIGN_OR_RETURN(end, engine::ParseViewTime(e, now, *ctx.zone));
  }
  if (end <= start)
    return Invalid(fmt::format("the blackout must end after it starts ({} is not after {})",
                               surface::LocalTimes(engine::FormatIsoUtc(end), *ctx.zone),
                               surface::LocalTimes(engine::FormatIsoUtc(start), *ctx.zone)));
  if (end <= now) return Invalid("the blackout is over already; give a window that ends in the future");
  if (end - start > 365 * engine::kDay) return Invalid("a blackout may last at most 365 days");
  return std::pair{start, end};
}

Result<std::vector<int>> BlackoutGpus(const Context& ctx, const std::optional<std::string>& text) {
  if (!text || Trim(*text) == "all") return std::vector<int>{};
  BK_ASSIGN_OR_RETURN(std::vector<int> gpus, engine::ParseGpuList(*text, "--gpus"));
  for (int g : gpus)
    if (g >= ctx.config.policy.gpu_count)
      return Invalid(fmt::format("--gpus names GPU {} but this server has {} (0-{})", g,
                                 ctx.config.policy.gpu_count, ctx.config.policy.gpu_count - 1));
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

Status CheckReasonText(const std::string& reason) {
  std::string r(Trim(reason));
  if (r.empty() || r.size() > 512) return Invalid("the blackout's REASON must be 1-512 characters");
  for (unsigned char c : r)
    if (c < 0x20) return Invalid("the blackout's REASON must not contain control characters");
  return Ok();
}

int BlackoutList(const Context& ctx, bool as_json) {
  const auto& windows = ctx.config.policy.blackouts;
  if (as_json) {
    json out = json::array();
    for (const auto& b : windows) {
      json j = config::BlackoutJson(b);
      j["id"] = BlackoutId(b);
      j["gpus"] = b.gpus;
      out.push_back(j);
    }
    ctx.Print(out.dump(2));
    return 0;
  }
  if (windows.empty()) {
    ctx.Print("No booking blackout windows.");
    return 0;
  }
  ctx.Print(fmt::format("{:<9} {:<8} {:<40} {}", "ID", "GPUs", "Window", "Reason"));
  for (const auto& b : windows)
    ctx.Print(fmt::format("{:<9} {:<8} {:<40} {}", BlackoutId(b),
                          b.gpus.empty() ? "all" : JoinInts(b.gpus, ","),
                          surface::RangeText(b.start, b.end, *ctx.zone), b.reason));
  return 0;
}

}  // namespace

Result<engine::Blackout> NewBlackout(const Context& ctx, const std::string& start, const std::string& end,
                                     const std::string& reason, const std::optional<std::string>& gpus) {
  BK_ASSIGN_OR_RETURN(auto w, Window(ctx, start, end));
  BK_TRY(CheckReasonText(reason));
  BK_ASSIGN_OR_RETURN(std::vector<int> closed, BlackoutGpus(ctx, gpus));
  return engine::Blackout{w.first, w.second, std::string(Trim(reason)), closed};
}

Result<PolicyEdit> BlackoutChange(const Context& ctx, const std::vector<engine::Blackout>& windows,
                                  const std::string& why, const PolicyEdit& opts) {
  if (windows.size() > 512)
    return Invalid("a server keeps at most 512 blackout windows; remove old ones first");
  if (opts.cancel_conflicting && !opts.reason)
    return Invalid("--cancel-overlapping needs --reason TEXT: the owners are told");
  PolicyEdit edit = opts;
  json list = json::array();
  for (const auto& b : windows) list.push_back(config::BlackoutJson(b));
  edit.keys["booking_blackouts"] = windows.empty() ? std::nullopt : std::optional(list.dump());
  edit.kind = "admin-blackout";
  // Overlapping bookings never stop a blackout: they stay unless cancelled,
  // and their owners are told why, in the blackout's words.
  edit.force = !opts.cancel_conflicting;
  edit.reason = opts.reason ? opts.reason : std::optional(why);
  edit.question = fmt::format("Apply this blackout change ({} -> {} windows)?",
                              ctx.config.policy.blackouts.size(), windows.size());
  return edit;
}

// bk admin blackout list | add START END REASON | edit ID | rm ID.
// Long on purpose: the four actions share their options and the one apply.
Result<int> RunAdminBlackout(Context& ctx, const std::vector<std::string>& all) {
  std::string action = all.empty() ? "list" : all[0];
  std::vector<std::string> args(all.begin() + (all.empty() ? 0 : 1), all.end());
  if (action == "-h" || action == "--help") action = "list", args = {"--help"};
  std::optional<std::string> start, end, reason_text, gpus, new_start, new_end, new_reason;
  bool as_json = false;
  PolicyEdit opts;
  ArgSpec spec(
      "bk admin blackout " + action,
      "Windows in which nobody may book (all GPUs or some): refused from the moment this returns, with "
      "the window's reason and end. Existing bookings that overlap are listed and their owners told; "
      "only --cancel-overlapping --reason cancels them. Running processes are never touched.");
  if (action == "add") {
    spec.NeededPositional("start", &start, "when it starts: now, 20:00, tomorrow 09:00, ISO 8601");
    spec.NeededPositional("end", &end, "when it ends, or its length: 2h");
    spec.NeededPositional("reason", &reason_text, "why, shown to everyone refused");
  } else if (action == "edit" || action == "rm" || action == "remove") {
    spec.NeededPositional("id", &start, "the blackout's ID (or its first characters)");
  } else if (action != "list") {
    return Invalid(fmt::format("unknown blackout action {}; use list, add, edit or rm", action));
  }
  if (action == "add" || action == "edit")
    spec.Option("--gpus", &gpus, "the GPUs it closes, e.g. 2,3 (default all)", "LIST");
  if (action == "edit") {
    spec.Option("--start", &new_start, "a new start", "TIME");
    spec.Option("--end", &new_end, "a new end, or a length after the start", "TIME|DUR");
    spec.Option("--reason", &new_reason, "a new reason", "TEXT");
  }
  if (action != "list") {
    spec.Flag("--cancel-overlapping", &opts.cancel_conflicting, "cancel the bookings it overlaps");
    if (action != "edit")
      spec.Option("--reason", &opts.reason, "why they are cancelled (with --cancel-overlapping)", "TEXT");
    spec.Flag("--dry-run", &opts.dry_run, "show the change and the bookings it overlaps; change nothing");
    spec.Flag("--yes", &opts.yes, "apply without asking");
  }
  spec.Flag("--json", &as_json,
            action == "list" ? "print the windows as JSON" : "print a gpubk.admin.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (action == "list") {
    if (ctx.config.deployment == config::Deployment::kPrivate) BK_TRY(EditableServerConfig(ctx));
    return BlackoutList(ctx, as_json);
  }
  std::vector<engine::Blackout> windows = ctx.config.policy.blackouts;
  engine::Blackout changed;
  if (action == "add") {
    BK_ASSIGN_OR_RETURN(changed, NewBlackout(ctx, *start, *end, *reason_text, gpus));
    windows.push_back(changed);
  } else {
    BK_ASSIGN_OR_RETURN(size_t i, FindBlackout(windows, *start));
    if (action == "edit") {
      if (!new_start && !new_end && !new_reason && !gpus)
        return Invalid("say what to change: --start, --end, --reason or --gpus");
      engine::Blackout& b = windows[i];
      std::string s_text = new_start.value_or(engine::FormatIsoUtc(b.start));
      std::string e_text = new_end.value_or(engine::FormatIsoUtc(b.end));
      BK_ASSIGN_OR_RETURN(auto w, Window(ctx, s_text, e_text));
      b.start = w.first, b.end = w.second;
      if (new_reason) {
        BK_TRY(CheckReasonText(*new_reason));
        b.reason = std::string(Trim(*new_reason));
      }
      if (gpus) {
        BK_ASSIGN_OR_RETURN(b.gpus, BlackoutGpus(ctx, gpus));
      }
      changed = b;
    } else {
      windows.erase(windows.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  if (action == "edit") opts.reason = changed.reason;
  opts.json = as_json;
  BK_ASSIGN_OR_RETURN(
      PolicyEdit edit,
      BlackoutChange(ctx, windows, changed.reason.empty() ? "blackout removed" : changed.reason, opts));
  return ApplyPolicyEdit(ctx, edit);
}

// Long on purpose: one flag after another, each turned into its key.
Result<int> RunAdminPolicy(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> disabled, priority, hours, days, shared, cpus, ram, reason;
  std::array<std::optional<std::string>, engine::kLimitKinds> user_limits;  // --user-max-*, by kind
  bool enable_all = false, clear_priority = false, require = false, allow = false;
  PolicyEdit edit;
  ArgSpec spec(
      "bk admin policy",
      "Change the running server's scheduling policy without stopping it: the config file is rewritten "
      "and the daemon applies it at once. Without options: show the policy.");
  spec.Option("--disabled-gpus", &disabled, "GPUs nobody may book, e.g. 6,7 (none: all bookable)", "LIST");
  spec.Flag("--enable-all", &enable_all, "enable every GPU");
  spec.Option("--gpu-priority", &priority, "GPUs picked later, e.g. 6=10,7=20 (larger is later)", "G=L,...");
  spec.Flag("--clear-priority", &clear_priority, "every GPU equal again");
  spec.Option("--max-booking-hours", &hours, "longest booking, 1-87600", "N");
  spec.Option("--booking-horizon-days", &days, "how far ahead a booking may end, 1-3650", "N");
  spec.Option("--max-shared", &shared, "shared slots per GPU, 1-10000", "N");
  spec.Flag("--require-shared-memory", &require, "shared bookings must declare a VRAM budget");
  spec.Flag("--allow-implicit-shared-memory", &allow,
            "shared bookings without --mem get an automatic budget");
  spec.Option("--cpus", &cpus, "host CPU budget shared by all bookings, or off", "N|off");
  spec.Option("--ram", &ram, "host RAM budget, e.g. 256g, or off", "SIZE|off");
  for (const engine::LimitField& f : engine::LimitFields())
    spec.Option(LimitFlag(f), &user_limits[static_cast<std::size_t>(f.kind)],
                fmt::format("fair share: {}, or off", f.what), "N|off");
  spec.Flag("--force", &edit.force, "apply even if existing bookings conflict (they stay; owners are told)");
  spec.Flag("--cancel-overlapping", &edit.cancel_conflicting, "cancel the bookings that conflict");
  spec.Option("--reason", &edit.reason, "why, for the audit log and the owners told", "TEXT");
  spec.Flag("--dry-run", &edit.dry_run, "show the change and its conflicts; change nothing");
  spec.Flag("--yes", &edit.yes, "apply without asking");
  spec.Flag("--json", &edit.json, "print a gpubk.admin.v1 document");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (disabled && enable_all) return Invalid("give --disabled-gpus or --enable-all, not both");
  if (priority && clear_priority) return Invalid("give --gpu-priority or --clear-priority, not both");
  if (require && allow)
    return Invalid("give --require-shared-memory or --allow-implicit-shared-memory, not both");
  auto& k = edit.keys;
  if (enable_all || (disabled && Trim(*disabled) == "none")) {
    k["disabled_gpus"] = std::nullopt;
  } else if (disabled) {
    BK_ASSIGN_OR_RETURN(std::vector<int> gpus, engine::ParseGpuList(*disabled, "--disabled-gpus"));
    k["disabled_gpus"] = json(gpus).dump();
  }
  if (clear_priority) k["gpu_priority"] = std::nullopt;
  if (priority) k["gpu_priority"] = json(*priority).dump();
  const std::tuple<const std::optional<std::string>&, const char*, const char*, int64_t> numbers[] = {
      {hours, "max_booking_duration_hours", "--max-booking-hours", 87600},
      {days, "booking_horizon_days", "--booking-horizon-days", 3650},
      {shared, "max_shared_users", "--max-shared", 10000}};
  for (const auto& [text, key, flag, hi] : numbers) {
    if (!text) continue;
    BK_ASSIGN_OR_RETURN(k[key], Number(flag, *text, 1, hi));
  }
  // Fair-share limits: off removes the key (no limit); per-user and group
  // entries are JSON in the config file (user_limits, group_limits).
  for (const engine::LimitField& f : engine::LimitFields()) {
    const std::optional<std::string>& text = user_limits[static_cast<std::size_t>(f.kind)];
    if (!text) continue;
    const std::string key = fmt::format("user_{}", f.name);
    if (Trim(*text) == "off") {
      k[key] = std::nullopt;
      continue;
    }
    BK_ASSIGN_OR_RETURN(k[key], Number(LimitFlag(f), *text, f.lo, f.hi));
  }
  if (require || allow) k["require_shared_memory"] = require ? "true" : "false";
  if (cpus && Trim(*cpus) == "off") {
    k["host_cpus"] = std::nullopt;
  } else if (cpus) {
    BK_ASSIGN_OR_RETURN(int64_t n, engine::ParseCpus(*cpus));
    k["host_cpus"] = std::to_string(n);
  }
  if (ram && Trim(*ram) == "off") {
    k["host_ram_mb"] = std::nullopt;
  } else if (ram) {
    BK_ASSIGN_OR_RETURN(int64_t mb, engine::ParseSizeMb(*ram, "--ram"));
    k["host_ram_mb"] = std::to_string(mb);
  }
  if (k.empty()) {
    if (edit.force || edit.cancel_conflicting || edit.reason)
      return Invalid("say what to change, e.g. bk admin policy --disabled-gpus 3 --reason 'fan failure'");
    if (auto path = EditableServerConfig(ctx); !path && ctx.config.deployment == config::Deployment::kPrivate)
      return std::unexpected(path.error());
    ShowPolicy(ctx);
    return 0;
  }
  edit.kind = "admin-policy";
  edit.question = "Apply this policy change?";
  return ApplyPolicyEdit(ctx, edit);
}

}  // namespace bk::cli
