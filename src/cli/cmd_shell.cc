// bk shell init [bash|zsh], bk shell env [--json]: GPU visibility for a plain shell.

#include <fmt/format.h>
#include <limits.h>
#include <unistd.h>

#include <cstdlib>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "engine/parse.h"
#include "shell/init_script.h"
#include "shell/shell_env.h"
#include "surface/text.h"
#include "worker/live_clock.h"

namespace bk::cli {

std::string SelfPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "bk";
  return std::string(buf, static_cast<size_t>(n));
}

namespace {

// Never an error: the hook needs values even when the service is down.
shell::ShellEnv Compute(Context& ctx) {
  if (ctx.config_error) return shell::Misconfigured(ctx.clock->Now(), ctx.config_error->message);
  auto ledger = ctx.Ledger();
  if (!ledger) return shell::Unreachable(ctx.clock->Now(), ledger.error().message);
  auto mine = (*ledger)->List(service::ListQuery{});
  engine::Seconds now = (*ledger)->Now();
  if (!mine) return shell::Unreachable(now, mine.error().message);
  gpu::Snapshot snapshot;
  // Sampling (NVML) only when some GPU is to be shown: the UUIDs.
  if (shell::NeedsSnapshot(mine->reservations, now))
    snapshot = worker::Sampler(ctx.config, **ledger).Sample((*ledger)->policy().gpu_count);
  shell::ShellEnv env = shell::ComputeShellEnv(mine->reservations, now, snapshot, [&](engine::Seconds t) {
    return engine::FormatLocalClock(t, *ctx.zone);
  });
  // One indexed count; a failure only leaves the line out.
  if (auto unread = (*ledger)->UnreadNotifications(1))
    env.unread = ctx.Local(surface::UnreadNoticeLine(*unread));
  return env;
}

}  // namespace

Result<int> RunShell(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> action, shell_name;
  bool json = false;
  ArgSpec spec("bk shell",
               "Make a shell see only the GPUs you have booked now.\n"
               "  eval \"$(bk shell init)\"   in ~/.bashrc or ~/.zshrc\n"
               "  bk shell env [--json]     the raw values the prompt hook reads");
  spec.NeededPositional("action", &action, "init | env");
  spec.Positional("shell", &shell_name, "bash | zsh (init; default: from $SHELL)");
  spec.Flag("--json", &json, "env: the gpubk.shell-env.v1 document");
  spec.Footer(
      "The hook re-reads your bookings only when one starts or ends, after a `bk` command typed in that "
      "shell, or when you run bk_gpu_refresh; in between it starts no process.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!action) return Invalid("give an action: bk shell init [bash|zsh] or bk shell env [--json]");
  if (*action == "init") {
    if (json) return Invalid("--json applies to bk shell env");
    std::string name = shell_name.value_or("");
    if (name.empty()) {
      const char* sh = getenv("SHELL");
      std::string base = sh ? std::string(sh) : "";
      base = base.substr(base.find_last_of('/') == std::string::npos ? 0 : base.find_last_of('/') + 1);
      name = base == "zsh" ? "zsh" : "bash";
    }
    BK_ASSIGN_OR_RETURN(std::string script, shell::InitScript(name, SelfPath()));
    std::fputs(script.c_str(), ctx.out);
    return 0;
  }
  if (*action == "env") {
    if (shell_name) return Invalid(fmt::format("unexpected argument {}", *shell_name));
    shell::ShellEnv env = Compute(ctx);
    std::fputs(json ? (shell::RenderJson(env) + "\n").c_str() : shell::RenderPlain(env).c_str(), ctx.out);
    return 0;
  }
  return Invalid(fmt::format("unknown shell action {}; use init or env", *action));
}

}  // namespace bk::cli
