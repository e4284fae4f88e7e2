#include "cli/app.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <map>
#include <set>

#include "base/strings.h"
#include "base/version.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/help.h"
#include "cli/notices.h"
#include "client/server_discovery.h"
#include "cluster/catalog_file.h"
#include "surface/documents.h"
#include "surface/text.h"
#include "sys/fs.h"
#include "sys/local_zone.h"

namespace bk::cli {

Result<client::Ledger*> Context::Ledger() {
  if (!ledger) {
    // A person hears why a write pauses; a JSON reader gets one document and
    // an untouched stderr.
    client::LockWaitNotice notice;
    if (!json)
      notice = [this](const std::string& holder) {
        std::fprintf(err, "bk: waiting for the ledger lock (held by %s)...\n",
                     holder.empty() ? "another process" : holder.c_str());
      };
    BK_ASSIGN_OR_RETURN(ledger, client::Open(config, *clock, std::move(notice)));
  }
  return ledger.get();
}

void Context::Print(const std::string& text) const {
  std::fputs(text.c_str(), out);
  std::fputc('\n', out);
}

void Context::PrintDoc(const std::string& compact_json) const {
  Print(surface::Dump(compact_json, surface::JsonStyle::kLine));
}

void Context::Warn(const std::string& text) const {
  std::fprintf(err, "%s %s\n", surface::Paint("warning:", surface::Style::kWarning, color.err).c_str(),
               Local(text).c_str());
}

std::string Context::Local(std::string_view text) const {
  return zone ? surface::LocalTimes(text, *zone) : std::string(text);
}

Status Confirm(const Context& ctx, bool yes, const std::string& question) {
  if (yes) return Ok();
  if (!isatty(STDIN_FILENO))
    return Invalid("no terminal to confirm at; add --yes to go ahead without the question");
  std::fprintf(ctx.out, "%s [y/N] ", question.c_str());
  std::fflush(ctx.out);
  std::string line;
  if (std::getline(std::cin, line) && (Trim(line) == "y" || Trim(line) == "yes")) return Ok();
  return Invalid("not confirmed; nothing was changed");
}

bool TypedWord(const Context& ctx, const std::string& prompt, const std::string& word) {
  std::fputs(prompt.c_str(), ctx.out);
  std::fflush(ctx.out);
  std::string line;
  return std::getline(std::cin, line) && Trim(line) == word;
}

std::optional<Result<int>> ParseOrHelp(Context& ctx, ArgSpec& spec, const std::vector<std::string>& args) {
  if (Status s = spec.Parse(args); !s) return std::unexpected(s.error());
  if (!spec.help_requested()) return std::nullopt;
  ctx.Print(spec.Help());
  return 0;
}

namespace {

bool IsHelp(const std::string& a) { return a == "-h" || a == "--help"; }

Result<int> Book(Context& c, const std::vector<std::string>& a) { return RunBook(c, a, "bk book", false); }
Result<int> Shared(Context& c, const std::vector<std::string>& a) {
  return RunBook(c, a, "bk shared", false);
}
Result<int> Exclusive(Context& c, const std::vector<std::string>& a) {
  return RunBook(c, a, "bk exclusive", true);
}

const std::map<std::string, Command>& Commands() {
  static const std::map<std::string, Command> table = {
      {"book", Book},
      {"a", RunAdd},
      {"add", RunAdd},
      {"tutorial", RunTutorial},
      {"tour", RunTutorial},
      {"intro", RunTutorial},
      {"s", Shared},
      {"shared", Shared},
      {"auto", Shared},
      {"x", Exclusive},
      {"exclusive", Exclusive},
      {"l", RunList},
      {"ls", RunList},
      {"list", RunList},
      {"d", RunCancel},
      {"del", RunCancel},
      {"delete", RunCancel},
      {"rm", RunCancel},
      {"cancel", RunCancel},
      {"e", RunEdit},
      {"edit", RunEdit},
      {"renew", RunRenew},
      {"extend", RunRenew},
      {"slots", RunSlots},
      {"slot", RunSlots},
      {"free", RunSlots},
      {"sl", RunSlots},
      {"g", RunGpu},
      {"gpu", RunGpu},
      {"st", RunStatus},
      {"status", RunStatus},
      {"tl", RunTimeline},
      {"timeline", RunTimeline},
      {"history", RunHistory},
      {"hist", RunHistory},
      {"lg", RunLog},
      {"log", RunLog},
      {"n", RunNotifications},
      {"notify", RunNotifications},
      {"notification", RunNotifications},
      {"notifications", RunNotifications},
      {"login", RunLogin},
      {"notice", RunLogin},
      {"p", RunPreset},
      {"preset", RunPreset},
      {"presets", RunPreset},
      {"info", RunInfo},
      {"t", RunTui},
      {"tui", RunTui},
      {"contact", RunInfo},
      {"about", RunInfo},
      {"i", RunInfo},
      {"config", RunConfig},
      {"cfg", RunConfig},
      {"admin", RunAdmin},
      {"c", RunCluster},
      {"cluster", RunCluster},
      {"gpu-probe", RunGpuProbe},  // hidden: NVML diagnostics (tests/gpu/run-on-gpu.sh)
      {"completion", RunCompletion},
      {"cal", RunCalendar},
      {"calendar", RunCalendar},
      {"__complete", RunCompleteWords},  // hidden: what the completion scripts run on Tab
      {"__generate", RunGenerate},       // hidden: the build writes the manual and the like
      {"agent", RunAgent},
      {"ai", RunAgent},
      {"mcp", RunMcp},
      {"skill", RunSkill},
      {"server", RunServer},
      {"doctor", RunDoctor},
      {"dr", RunDoctor},
      {"reset", RunReset},
      {"run", RunRun},
      {"r", RunRun},
      {"worker", RunWorker},
      {"w", RunW},
      {"service", RunService},
      {"j", RunJobs},
      {"jobs", RunJobs},
      {"jl", RunJobLog},
      {"job-log", RunJobLog},
      {"jr", RunJobRetry},
      {"job-retry", RunJobRetry},
      {"shell", RunShell},
      {"m", RunMonitor},
      {"monitor", RunMonitor},
      {"u", RunUsage},
      {"usage", RunUsage},
  };
  return table;
}

// The original's commands that this version does not have yet, and what
// does the job meanwhile: they are known words, not typing mistakes.
const std::map<std::string, std::string>& NotYet() {
  static const std::string kUpdate =
      "install the newer bk the way this one was installed; `bk --version` says which this is";
  static const std::string kBroker = "share one ledger with `bk server` (`bk server -h`)";
  static const std::map<std::string, std::string> table = {
      {"update", kUpdate},
      {"upgrade", kUpdate},
      {"broker", kBroker},
  };
  return table;
}

// `bk admin` subcommands of the original beyond `admin data`.
bool AdminNotYet(const std::vector<std::string>& args) {
  static const std::set<std::string> subcommands = {"init", "login-hook", "worker-persistence", "update",
                                                    "upgrade"};
  return args.size() >= 2 && args[0] == "admin" && subcommands.contains(args[1]);
}

// Nothing for a command that exists; else why the words are refused.
std::optional<Error> NotInThisVersion(const std::vector<std::string>& args) {
  const std::string& w = args[0];
  std::string words = w, instead;
  if (auto it = NotYet().find(w); it != NotYet().end()) {
    instead = it->second;
  } else if (AdminNotYet(args)) {
    words = "admin " + args[1];
    instead = args[1] == "update" || args[1] == "upgrade"
                  ? NotYet().at("update")
                  : "`bk admin -h` lists what this version administers";
  } else {
    return std::nullopt;
  }
  return Error{ErrorKind::kInvalid, fmt::format("bk {} is not in this version yet; {}", words, instead)};
}

// The number of single-character edits between `a` and `b`.
size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// "unknown command: X; `bk -h` lists the commands", naming the nearest
// command word when one is a typo or two away (words of three letters or more).
std::string UnknownCommand(const std::string& w) {
  std::string best;
  size_t best_distance = 3;
  if (w.size() >= 3)
    for (const auto& name : CommandNames()) {
      size_t d = EditDistance(w, name);
      if (name.size() >= 3 && d < best_distance && d * 3 <= name.size()) best = name, best_distance = d;
    }
  std::string hint = best.empty() ? "" : fmt::format("did you mean `bk {}`? ", best);
  return fmt::format("unknown command: {}; {}`bk -h` lists the commands", w, hint);
}

// --color=WHEN or --color WHEN anywhere before `--`, taken out of `args`
// (commands parse their own options without it); auto when absent.
Result<surface::ColorMode> TakeColorOption(std::vector<std::string>& args) {
  surface::ColorMode mode = surface::ColorMode::kAuto;
  for (size_t i = 0; i < args.size() && args[i] != "--";) {
    std::optional<std::string> value;
    size_t taken = 1;
    if (args[i].starts_with("--color=")) {
      value = args[i].substr(8);
    } else if (args[i] == "--color") {
      if (i + 1 < args.size()) value = args[i + 1];
      taken = 2;
    } else {
      ++i;
      continue;
    }
    auto parsed = value ? surface::ParseColorMode(*value) : std::nullopt;
    if (!parsed) return UsageError("--color must be auto, always or never");
    mode = *parsed;
    args.erase(args.begin() + i, args.begin() + i + taken);
  }
  return mode;
}

// stdin is a pipe or a regular file: commands for the prompt.
bool ScriptedInput() {
  struct stat st {};
  return fstat(STDIN_FILENO, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISREG(st.st_mode));
}

bool IsAgent(const std::vector<std::string>& args) {
  return !args.empty() && (args[0] == "agent" || args[0] == "ai");
}

// JSON errors when --json or --compact appears before `--`.
bool WantsJson(const std::vector<std::string>& args) {
  // Agents always read JSON, even when the configuration itself is broken.
  if (IsAgent(args)) return true;
  for (const auto& a : args) {
    if (a == "--") break;
    if (a == "--json" || a == "--compact") return true;
  }
  return false;
}

// A reference the private ledger does not have may well be in a server's
// the user has not connected to: the one refusal where saying which ledger
// was searched changes what the user does next.
std::string WhereSearched(Context& ctx, const Error& e) {
  bool unknown_ref = e.kind == ErrorKind::kNotFound && (e.message.starts_with("reservation not found") ||
                                                        e.message.starts_with("job not found"));
  if (!unknown_ref || !ctx.ledger || ctx.ledger->Transport() != "direct") return {};
  return client::PrivateLedgerHint(sys::Dirname(ctx.config.ledger_path), client::RunningServerConfigs());
}

int Report(Context& ctx, const Error& e) {
  if (ctx.json && (e.kind != ErrorKind::kUsage || ctx.agent)) {
    ctx.PrintDoc(surface::ErrorDoc(e));
  } else {
    std::fprintf(ctx.err, "%s %s%s\n", surface::Paint("bk:", surface::Style::kError, ctx.color.err).c_str(),
                 Printable(ctx.Local(e.message)).c_str(), WhereSearched(ctx, e).c_str());
  }
  return ExitCode(e.kind);
}

Status Setup(Context& ctx) {
  BK_ASSIGN_OR_RETURN(ctx.config, config::Load(config::ProcessEnv()));
  ctx.zone = std::make_unique<sys::LocalZone>();
  if (ctx.config.test_now) {
    BK_ASSIGN_OR_RETURN(ctx.clock, sys::ClockFromTestNow(*ctx.config.test_now));
  } else {
    ctx.clock = std::make_unique<sys::RealClock>();
  }
  return Ok();
}

// GPUBK 0.2.8's private ledger next to an empty one of ours: said on stderr
// until the first write here, which would make the import impossible (it
// needs an empty ledger). Agents (JSON) are not told: they cannot act on it.
void NoteOriginalData(const Context& ctx, const std::vector<std::string>& args) {
  if (ctx.json || ctx.config_error || sys::Exists(ctx.config.ledger_path)) return;
  if (!args.empty() && (args[0] == "admin" || args[0] == "shell" || args[0] == "__complete")) return;
  std::string original = config::OriginalLedger(ctx.config, config::ProcessEnv());
  if (original.empty()) return;
  std::fprintf(ctx.err,
               "note: found GPUBK 0.2.8 bookings in %s; bring them in with `bk admin data import` before "
               "your first booking here\n",
               original.c_str());
  if (std::string logs = config::OriginalJobLogs(config::ProcessEnv()); !logs.empty())
    std::fprintf(ctx.err, "note: its job logs stay in %s (not imported; this bk keeps its own)\n",
                 logs.c_str());
}

}  // namespace

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  Context ctx;
  // The words after `__complete` are a command line being typed, not options of this one.
  bool completing = !args.empty() && args[0] == "__complete";
  Result<surface::ColorMode> color = completing ? surface::ColorMode::kNever : TakeColorOption(args);
  ctx.json = WantsJson(args);
  ctx.agent = IsAgent(args);
  if (!color) return Report(ctx, color.error());
  ctx.color = {surface::UseColor(STDOUT_FILENO, *color), surface::UseColor(STDERR_FILENO, *color)};

  if (!args.empty() && (args[0] == "-V" || args[0] == "--version" || args[0] == "version")) {
    std::printf("bk %s\n", kVersion);
    return 0;
  }
  if (!args.empty() && (IsHelp(args[0]) || args[0] == "help")) {
    if (args[0] == "help" && args.size() > 1) {
      std::vector<std::string> rest(args.begin() + 1, args.end());
      std::string cmd = rest[0];
      rest.erase(rest.begin());
      rest.insert(rest.begin(), "--help");
      rest.insert(rest.begin(), cmd);
      args = rest;
    } else {
      std::fputs(MainHelp(cluster::CatalogConfigured()).c_str(), stdout);
      return 0;
    }
  }

  // The completion script and the manual depend on no configuration: the
  // build needs none.
  if (!args.empty() && (args[0] == "completion" || args[0] == "__generate")) {
    ctx.zone = std::make_unique<sys::LocalZone>();
    ctx.clock = std::make_unique<sys::RealClock>();
    Result<int> rc = Dispatch(ctx, args);
    if (!rc) return Report(ctx, rc.error());
    std::fflush(stdout);
    return *rc;
  }

  if (auto st = Setup(ctx); !st) {
    if (IsLoginHook(args)) return 0;
    // `bk server ...` must work even when the remembered server is broken:
    // that is how a user gets out of it. `bk shell` too: the hook installs
    // anyway and shows no GPU until the configuration works again. `bk skill`
    // reads no configuration at all: an agent can install it to learn to fix one.
    // `bk admin install|uninstall|services` read the installed configuration
    // themselves: they repair or remove a broken one.
    bool system_admin = args.size() > 1 && args[0] == "admin" &&
                        (args[1] == "install" || args[1] == "uninstall" || args[1] == "services");
    // `bk __complete` (a Tab) still completes commands and options; it
    // offers no references without a ledger.
    if (args.empty() || (args[0] != "server" && args[0] != "shell" && args[0] != "skill" &&
                         args[0] != "__complete" && !system_admin))
      return Report(ctx, st.error());
    ctx.config = config::Config{};
    ctx.config_error = st.error();
    ctx.zone = std::make_unique<sys::LocalZone>();
    ctx.clock = std::make_unique<sys::RealClock>();
  }

  NoteOriginalData(ctx, args);
  if (args.empty()) {
    // `bk st` heads its page with the warnings; plain `bk` adds the rest after it.
    Result<int> rc = StatusPage(ctx, {}, true);
    if (!rc) return Report(ctx, rc.error());
    std::fflush(stdout);
    // At a terminal, plain `bk` stays for more commands (the original's
    // prompt); commands piped or redirected from a file are read the same way
    // (`printf 'l\nquit\n' | bk`). /dev/null or a closed stdin is not a script.
    if ((isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) || ScriptedInput()) return RunPrompt(ctx);
    std::fputs("Book with `bk 1 30m`; `bk -h` lists every command.\n", stdout);
    return *rc;
  }
  Result<int> rc = Dispatch(ctx, args);
  if (!rc) return Report(ctx, rc.error());
  std::fflush(stdout);
  return *rc;
}

Result<int> Dispatch(Context& ctx, const std::vector<std::string>& args) {
  if (args.size() >= 2 && AllDigits(args[0])) return RunBook(ctx, args, "bk", false);
  if (auto refused = NotInThisVersion(args)) return std::unexpected(*refused);
  if (args[0].size() > 1 && args[0][0] == '@')
    return RunAtNode(ctx, args[0].substr(1), std::vector<std::string>(args.begin() + 1, args.end()));
  auto it = Commands().find(args[0]);
  if (it == Commands().end()) {
    std::string msg = AllDigits(args[0])
                          ? fmt::format("`bk {}` needs a duration too, e.g. `bk {} 30m`", args[0], args[0])
                          : UnknownCommand(args[0]);
    return Invalid(msg);
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  return it->second(ctx, rest);
}

std::vector<std::string> CommandNames() {
  std::vector<std::string> names;
  for (const auto& [name, _] : Commands())
    if (name != "gpu-probe" && !name.starts_with("__")) names.push_back(name);
  return names;
}

}  // namespace bk::cli
