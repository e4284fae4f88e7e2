// `bk completion bash|zsh|fish`, and what the scripts and the build call:
// `bk __complete WORD...` (the candidates for the last word) and
// `bk __generate DIR` (the manual pages, completion scripts and systemd unit
// templates that the package and `make install` ship).

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <fstream>

#include "admin/unit.h"
#include "cli/args.h"
#include "cli/completion.h"
#include "cli/context.h"
#include "cli/manpages.h"
#include "client/ledger.h"
#include "config/config.h"
#include "sys/fs.h"
#include "worker/unit.h"

namespace bk::cli {
namespace {

// A Tab must never hang a shell: a ledger or daemon slower than this gives
// no references at all.
constexpr int kRefDeadlineMs = 500;

}  // namespace

Result<int> RunCompletion(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> shell;
  ArgSpec spec(
      "bk completion",
      "Print the Tab-completion script for a shell. It completes commands, subcommands, options, GPU "
      "counts and indices from the policy, and the references of your own bookings.\n"
      "  bash: bk completion bash > ~/.local/share/bash-completion/completions/bk\n"
      "  zsh:  bk completion zsh > ~/.zfunc/_bk   (with fpath+=~/.zfunc before compinit)\n"
      "  fish: bk completion fish > ~/.config/fish/completions/bk.fish");
  spec.NeededPositional("shell", &shell, "bash | zsh | fish");
  spec.Footer("The Debian package and `make install` install all three where each shell looks for them.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!shell) return Invalid("give the shell: bk completion bash, zsh or fish");
  std::string script = CompletionScript(*shell);
  if (script.empty()) return Invalid(fmt::format("no completion for {}; give bash, zsh or fish", *shell));
  std::fputs(script.c_str(), ctx.out);
  return 0;
}

int ContextSource::GpuCount() { return ctx_.config.policy.gpu_count; }

std::vector<std::string> ContextSource::OwnRefs() {
  if (ctx_.config_error) return {};
  if (ctx_.config.deployment == config::Deployment::kPrivate && !sys::Exists(ctx_.config.ledger_path))
    return {};
  if (deadline_ms_ > 0) {
    signal(SIGALRM, [](int) { _exit(0); });
    itimerval deadline{};
    deadline.it_value.tv_sec = deadline_ms_ / 1000;
    deadline.it_value.tv_usec = (deadline_ms_ % 1000) * 1000;
    setitimer(ITIMER_REAL, &deadline, nullptr);
  }
  std::vector<std::string> refs;
  if (auto ledger = ctx_.Ledger())
    if (auto list = (*ledger)->List({}))
      for (const auto& r : list->reservations) refs.push_back(r.ShortId());
  if (deadline_ms_ > 0) {
    itimerval off{};
    setitimer(ITIMER_REAL, &off, nullptr);
  }
  return refs;
}

Result<int> RunCompleteWords(Context& ctx, const std::vector<std::string>& args) {
  ContextSource source(ctx, kRefDeadlineMs);
  Completions c = Complete(args.empty() ? std::vector<std::string>{""} : args, source);
  if (c.files) {
    std::fputs(":files\n", ctx.out);
    return 0;
  }
  for (const auto& w : c.words) std::fprintf(ctx.out, "%s\n", w.c_str());
  return 0;
}

namespace {

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  if (!f.flush()) return Fail(ErrorKind::kIo, fmt::format("cannot write {}", path));
  return Ok();
}

}  // namespace

Result<int> RunGenerate(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> dir, date, bk_path;
  ArgSpec spec("bk __generate",
               "Write bk's manual pages (DIR/man), completion scripts (DIR/completion) and systemd unit "
               "templates (DIR/systemd) for the package and `make install`.");
  spec.NeededPositional("dir", &dir, "an existing directory");
  spec.Option("--date", &date, "the date the pages carry (default: today)", "YYYY-MM-DD");
  spec.Option("--bk-path", &bk_path, "where bk is installed (default /usr/bin/bk)", "PATH");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!dir) return Invalid("give the directory: bk __generate DIR");
  std::string day = date.value_or("");
  if (day.empty()) {
    std::time_t now = std::time(nullptr);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
    day = buf;
  }
  for (const char* sub : {"/man", "/completion", "/systemd"})
    if (mkdir((*dir + sub).c_str(), 0755) != 0 && errno != EEXIST)
      return Fail(ErrorKind::kIo, fmt::format("cannot create {}{}", *dir, sub));
  for (const auto& page : ManPages(day)) BK_TRY(WriteFile(*dir + "/man/" + page.file, page.text));
  BK_TRY(WriteFile(*dir + "/completion/bk", CompletionScript("bash")));
  BK_TRY(WriteFile(*dir + "/completion/_bk", CompletionScript("zsh")));
  BK_TRY(WriteFile(*dir + "/completion/bk.fish", CompletionScript("fish")));
  // What `bk admin install` and `bk service install` write, for the default
  // layout and service account: a reference, not units that start anything.
  std::string bk = bk_path.value_or("/usr/bin/bk");
  admin::SystemUnitSpec system{.bk_path = bk,
                               .config_path = "/etc/gpubk/config.json",
                               .data_dir = "/var/lib/gpubk",
                               .user = "gpubk",
                               .group = "gpubk"};
  BK_TRY(WriteFile(*dir + "/systemd/gpubk.service", admin::RenderSystemUnit(system)));
  BK_TRY(WriteFile(*dir + "/systemd/bk-worker.service", worker::RenderWorkerUnit({.bk_path = bk})));
  BK_TRY(WriteFile(*dir + "/systemd/bk-monitor.service", worker::RenderMonitorUnit({.bk_path = bk})));
  return 0;
}

}  // namespace bk::cli
