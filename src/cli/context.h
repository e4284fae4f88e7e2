#pragma once
// Everything a command needs: configuration, clock, local zone, the ledger
// (opened on first use) and where to print.

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/ledger.h"
#include "config/config.h"
#include "engine/civil_time.h"
#include "monitor/usage_view.h"
#include "sys/clock.h"

namespace bk::cli {

struct Context {
  config::Config config;
  std::unique_ptr<sys::Clock> clock;
  std::unique_ptr<engine::Zone> zone;
  std::unique_ptr<client::Ledger> ledger;
  FILE* out = stdout;
  FILE* err = stderr;
  bool json = false;  // --json or --compact seen before `--`: errors become documents
  // `bk agent`: usage errors become documents too (elsewhere they stay on
  // stderr, as argparse's do, so a script sees the usage it got wrong).
  bool agent = false;
  // Whether what goes to `out` and to `err` is coloured (--color, NO_COLOR,
  // TERM, whether each is a terminal); see surface::Paint.
  struct Color {
    bool out = false;
    bool err = false;
  } color;
  // Why the configuration could not be loaded, for the commands that run
  // anyway (`bk server`, `bk shell`); `config` then holds only defaults.
  std::optional<Error> config_error;

  Result<client::Ledger*> Ledger();
  void Print(const std::string& text) const;  // adds a newline
  // A single-line document with Python's separators, as the original printed them.
  void PrintDoc(const std::string& compact_json) const;
  void Warn(const std::string& text) const;  // "warning: ..." on stderr, times local
  // A message from the service (UTC instants) with its times in the user's zone.
  std::string Local(std::string_view text) const;
};

class ArgSpec;
// Parses `args`. Returns what the command returns when parsing already ends it:
// 0 once -h/--help has printed the help, or the parse error; nothing when the
// command goes on. Every command starts with
//   if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
std::optional<Result<int>> ParseOrHelp(Context& ctx, ArgSpec& spec, const std::vector<std::string>& args);

// A command: parses its arguments, talks to the ledger, prints, returns the exit status.
using Command = Result<int> (*)(Context& ctx, const std::vector<std::string>& args);

// Commands (one file each under src/cli/).
Result<int> RunBook(Context& ctx, const std::vector<std::string>& args, const std::string& prog,
                    bool exclusive);
Result<int> RunAdd(Context& ctx, const std::vector<std::string>& args);       // bk a|add (guided)
Result<int> RunTutorial(Context& ctx, const std::vector<std::string>& args);  // bk tutorial|tour|intro
Result<int> RunList(Context& ctx, const std::vector<std::string>& args);
Result<int> RunCancel(Context& ctx, const std::vector<std::string>& args);
Result<int> RunEdit(Context& ctx, const std::vector<std::string>& args);
Result<int> RunRenew(Context& ctx, const std::vector<std::string>& args);
Result<int> RunSlots(Context& ctx, const std::vector<std::string>& args);
Result<int> RunGpu(Context& ctx, const std::vector<std::string>& args);
Result<int> RunStatus(Context& ctx, const std::vector<std::string>& args);
// The same page; `with_info` adds the info announcements at its end (plain `bk`).
Result<int> StatusPage(Context& ctx, const std::vector<std::string>& args, bool with_info);
Result<int> RunTimeline(Context& ctx, const std::vector<std::string>& args);
Result<int> RunHistory(Context& ctx, const std::vector<std::string>& args);
Result<int> RunLog(Context& ctx, const std::vector<std::string>& args);
Result<int> RunNotifications(Context& ctx, const std::vector<std::string>& args);
Result<int> RunConfig(Context& ctx, const std::vector<std::string>& args);
Result<int> RunInfo(Context& ctx, const std::vector<std::string>& args);  // bk info|contact|about|i
Result<int> RunTui(Context& ctx, const std::vector<std::string>& args);   // bk t|tui
Result<int> RunAdmin(Context& ctx, const std::vector<std::string>& args);
// bk admin WORD: policy|gpu-policy, blackout, maintain (cmd_admin_policy.cc,
// cmd_admin_maintain.cc); install, uninstall, services; transfer, data
// restore, data clear (cmd_admin_ledger.cc).
Result<int> RunAdminPolicy(Context& ctx, const std::vector<std::string>& args);
Result<int> RunAdminBlackout(Context& ctx, const std::vector<std::string>& args);
Result<int> RunAdminMaintain(Context& ctx, const std::vector<std::string>& args);
Result<int> RunAdminInstall(Context& ctx, const std::vector<std::string>& args);
Result<int> RunAdminUninstall(Context& ctx, const std::vector<std::string>& args);
Result<int> RunAdminServices(Context& ctx, const std::vector<std::string>& args);
Result<int> RunAdminTransfer(Context& ctx, const std::vector<std::string>& args);
Result<int> RunAdminRestore(Context& ctx, const std::vector<std::string>& args);
Result<int> RunAdminClear(Context& ctx, const std::vector<std::string>& args);
Result<int> RunAdminNotice(Context& ctx, const std::vector<std::string>& args);   // bk admin notice ...
Result<int> RunAdminCancel(Context& ctx, const std::vector<std::string>& args);   // bk admin cancel REF
Result<int> RunAdminCluster(Context& ctx, const std::vector<std::string>& args);  // bk admin cluster ...
Result<int> RunCluster(Context& ctx, const std::vector<std::string>& args);       // bk c|cluster ...
// bk @NODE N DUR ...: book on that catalog host only (cmd_cluster_write.cc).
Result<int> RunAtNode(Context& ctx, const std::string& node, const std::vector<std::string>& args);
Result<int> RunGpuProbe(Context& ctx, const std::vector<std::string>& args);  // hidden
Result<int> RunAgent(Context& ctx, const std::vector<std::string>& args);     // bk agent|ai
Result<int> RunMcp(Context& ctx, const std::vector<std::string>& args);       // bk mcp
Result<int> RunSkill(Context& ctx, const std::vector<std::string>& args);     // bk skill
Result<int> RunServer(Context& ctx, const std::vector<std::string>& args);
Result<int> RunDoctor(Context& ctx, const std::vector<std::string>& args);
Result<int> RunReset(Context& ctx, const std::vector<std::string>& args);   // bk reset [--yes]
Result<int> RunRun(Context& ctx, const std::vector<std::string>& args);     // bk run|r
Result<int> RunWorker(Context& ctx, const std::vector<std::string>& args);  // bk worker
Result<int> RunW(Context& ctx, const std::vector<std::string>& args);       // bk w [start|once|status]
Result<int> RunService(Context& ctx,
                       const std::vector<std::string>& args);  // bk service install|show|uninstall worker
Result<int> RunJobs(Context& ctx, const std::vector<std::string>& args);      // bk j|jobs
Result<int> RunJobLog(Context& ctx, const std::vector<std::string>& args);    // bk jl|job-log
Result<int> RunJobRetry(Context& ctx, const std::vector<std::string>& args);  // bk jr|job-retry
Result<int> RunShell(Context& ctx, const std::vector<std::string>& args);     // bk shell init|env

// Administrators (src/cli/cmd_admin_notice.cc, cmd_admin_cancel.cc), reached through `bk admin`.
Result<int> RunLogin(Context& ctx, const std::vector<std::string>& args);  // bk login|notice
// `bk login --hook` (or `bk notice --hook`): what a login shell runs, silent on any error.
bool IsLoginHook(const std::vector<std::string>& args);
// bk login install|uninstall [--rc FILE] (cmd_login_rc.cc).
Result<int> RunLoginRc(Context& ctx, const std::vector<std::string>& args, bool install);

// A change the person should confirm: Ok with --yes (`yes`), or when they
// answer y to `question` at a terminal; refused otherwise (no terminal to ask
// at, or any other answer), with nothing changed.
Status Confirm(const Context& ctx, bool yes, const std::string& question);
// For what cannot be undone: prints `prompt` and reads one line; true only
// when it is `word` itself (end of input is a no).
bool TypedWord(const Context& ctx, const std::string& prompt, const std::string& word);

// A booking with `-- COMMAND` binds a job; `after` (bk run) takes over once it
// is booked, otherwise the result and the worker's status are printed.
// With `preset`, its options fill what the command line leaves out (FillFromPreset).
using AfterBooking = std::function<Result<int>(Context&, const service::BookingOutcome&)>;
struct BookingArgs;
Result<int> RunBookThen(Context& ctx, const std::vector<std::string>& args, const std::string& prog,
                        bool exclusive, const AfterBooking& after, const BookingArgs* preset = nullptr);
Result<int> RunPreset(Context& ctx, const std::vector<std::string>& args);   // bk preset|presets|p
Result<int> RunMonitor(Context& ctx, const std::vector<std::string>& args);  // bk m|monitor
Result<int> RunUsage(Context& ctx, const std::vector<std::string>& args);    // bk u|usage

// One command line (without the program name), as `bk ARGS...` would run it.
Result<int> RunCalendar(Context& ctx, const std::vector<std::string>& args);       // bk cal
Result<int> RunCompletion(Context& ctx, const std::vector<std::string>& args);     // bk completion SHELL
Result<int> RunCompleteWords(Context& ctx, const std::vector<std::string>& args);  // bk __complete WORD...
Result<int> RunGenerate(Context& ctx, const std::vector<std::string>& args);       // bk __generate DIR
Result<int> Dispatch(Context& ctx, const std::vector<std::string>& args);
// Plain `bk` at a terminal: a `bk> ` prompt running one command per line.
int RunPrompt(Context& ctx);
// Every command word Dispatch knows, aliases included, for completion.
std::vector<std::string> CommandNames();

// `bk u`'s rendering of a usage query (text or JSON), for this user and deployment.
Result<std::string> UsageDocument(Context& ctx, const monitor::UsageQuery& q, bool text);
// The smallest usage query whose document carries the monitor's heartbeat
// (`collector`): the caller's last minute, one row.
monitor::UsageQuery CollectorQuery(int64_t now, uint32_t uid);

// This executable's path, for what runs bk later (the shell hook, the worker's
// systemd unit); "bk" when /proc does not say.
std::string SelfPath();

// Shared by booking-like commands: the printed result line.
std::string BookingLine(const std::string& status, const engine::Reservation& r, const engine::Policy& p,
                        const engine::Zone& zone);

}  // namespace bk::cli
