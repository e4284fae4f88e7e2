// bk tutorial|tour|intro [--tui]: a short walkthrough that runs the real
// commands, this very bk, on a throwaway sandbox (simulated GPUs, a ledger of
// its own), so that what the user sees is real output and nothing of theirs
// changes. The sandbox goes at the end, on q, Ctrl-D and Ctrl-C.

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <iostream>

#include "base/exit_codes.h"
#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "cli/guided.h"
#include "cli/line_reader.h"
#include "cli/sandbox.h"

namespace bk::cli {
namespace {

constexpr int kGpus = 2;

struct Step {
  const char* title;
  const char* text;  // one or two lines
  std::vector<std::vector<std::string>> commands;
};

// Booking 1 starts now and booking 2 tomorrow: only one that has not started
// can move, and the running one is what renewing and cancelling are for.
const std::vector<Step>& Steps() {
  static const std::vector<Step> steps = {
      {"Book a GPU",
       "`bk COUNT DURATION` books at the earliest free slot. Shared is the default;\n"
       "`bk x 1 30m` would book the GPU for you alone.",
       {{"1", "30m"}}},
      {"Book for later",
       "-t/--at gives an exact start: now, +30m, 14:00, \"tomorrow 9\", 12-24 09:00.",
       {{"1", "1h", "--at", "tomorrow 9"}}},
      {"See your bookings",
       "`bk l` lists them, numbered: the other commands take that number (or the ID).",
       {{"l"}}},
      {"Move one",
       "`bk e` changes a booking: its start, length, GPUs or VRAM (a running one: only its end).",
       {{"e", "2", "--at", "tomorrow 10"}}},
      {"Extend one",
       "`bk renew N DURATION` adds time at the end when the GPU is free then.",
       {{"renew", "1", "30m"}}},
      {"Cancel one", "`bk d N` cancels; a running booking gives its GPU back at once.", {{"d", "1"}, {"l"}}},
  };
  return steps;
}

constexpr const char* kSummary = R"(The three commands to remember:
  bk 1 30m    book one GPU for 30 minutes
  bk l        list your bookings
  bk d 1      cancel the first of them
`bk -h` lists every command; the user guide explains them (docs/user-guide.md,
installed under share/doc/gpubk).)";

volatile sig_atomic_t g_interrupted = 0;
// The standard library retries a read that a signal interrupted, so the
// prompt would wait on: the terminal is swapped for /dev/null (open and dup2
// are async-signal-safe) and the retried read ends the input instead.
void NoteInterrupt(int) {
  g_interrupted = 1;
  int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null >= 0) dup2(null, STDIN_FILENO), close(null);
}

// While it lives, SIGINT, SIGTERM and SIGHUP are only noted, and interrupt a
// read or a wait, so that the sandbox is removed before bk exits.
class InterruptGuard {
 public:
  InterruptGuard() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = NoteInterrupt;  // no SA_RESTART: a read returns
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~InterruptGuard() {
    for (size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &old_[i], nullptr);
  }

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[std::size(kSignals)]{};
};

class Tour {
 public:
  Tour(Context& ctx, Sandbox& box, bool terminal)
      : ctx_(ctx), box_(box), terminal_(terminal), reader_(PlainLineReader(std::cin, ctx.out)) {}

  // `bk WORDS...` in the sandbox, on this terminal; its exit status.
  Result<int> Run(const std::vector<std::string>& words) {
    std::fflush(ctx_.out);
    std::vector<std::string> argv = {SelfPath()};
    argv.insert(argv.end(), words.begin(), words.end());
    return RunAttached(argv, box_.Environment(ProcessEnvironment()));
  }

  // Every step, each command run once the user presses Enter (at once
  // without a terminal). False when the user left early.
  Result<bool> Walk() {
    const auto& steps = Steps();
    size_t total = steps.size() + 1;
    for (size_t i = 0; i < steps.size(); ++i) {
      const Step& s = steps[i];
      ctx_.Print(fmt::format("\nStep {}/{}  {}\n{}", i + 1, total, s.title, s.text));
      for (const auto& words : s.commands) {
        ctx_.Print("  $ " + CommandLine(words));
        if (terminal_ && !Continue()) return false;
        BK_TRY(Run(words));
        if (g_interrupted) return false;
      }
    }
    ctx_.Print(fmt::format("\nStep {}/{}  That is all you need\n{}", total, total, kSummary));
    return true;
  }

 private:
  // Enter (or anything but q) goes on; q, the end of input and Ctrl-C stop.
  bool Continue() {
    std::optional<std::string> line = reader_->Read("Press Enter to run it (q quits): ");
    if (!line) std::fputc('\n', ctx_.out);
    if (!line || g_interrupted) return false;
    std::string word = ToLower(Trim(*line));
    return word != "q" && word != "quit" && word != "exit";
  }

  Context& ctx_;
  Sandbox& box_;
  bool terminal_;
  std::unique_ptr<LineReader> reader_;
};

// `bk t` on the sandbox; false when it did not run there (this bk may not
// have it), the walkthrough then taking its place.
Result<bool> Visual(Context& ctx, Tour& tour) {
  ctx.Print(fmt::format("A sandbox with {} simulated GPUs is ready; `bk t` opens on it.", kGpus));
  BK_ASSIGN_OR_RETURN(int rc, tour.Run({"t"}));
  if (rc == 0 || g_interrupted) return true;
  ctx.Print("`bk t` did not open here; the walkthrough shows the same in plain commands.");
  return false;
}

}  // namespace

Result<int> RunTutorial(Context& ctx, const std::vector<std::string>& args) {
  bool tui = false;
  ArgSpec spec("bk tutorial",
               "A short walkthrough that runs real bk commands on a throwaway sandbox (simulated GPUs, a "
               "ledger of its own): your own bookings and settings are never touched.");
  spec.Flag("--tui", &tui, "open the terminal interface (`bk t`) on the sandbox");
  spec.Footer("Without a terminal the steps run one after the other without pausing.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  bool terminal = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
  if (tui && !terminal)
    return Invalid("bk tutorial --tui needs a terminal; `bk tutorial` without one prints the walkthrough");
  InterruptGuard guard;
  BK_ASSIGN_OR_RETURN(std::unique_ptr<Sandbox> box, Sandbox::Create(TempParent(), kGpus));
  Tour tour(ctx, *box, terminal);
  // The visual tour stands in for the walkthrough when it opens.
  bool visual = false;
  if (tui) {
    BK_ASSIGN_OR_RETURN(visual, Visual(ctx, tour));
  } else {
    ctx.Print(
        fmt::format("GPUBK tutorial: a few steps that run real bk commands on a throwaway sandbox\n"
                    "with {} simulated GPUs ({}). Your own bookings and settings are not touched.",
                    kGpus, box->dir()));
  }
  bool finished = true;
  if (visual) {
    ctx.Print(std::string("\n") + kSummary);
  } else {
    BK_ASSIGN_OR_RETURN(finished, tour.Walk());
  }
  if (Status removed = box->Remove(); !removed) ctx.Warn(removed.error().message);
  if (g_interrupted) {
    ctx.Print("\ninterrupted; the tutorial's sandbox is removed");
    return exit_code::kInterrupted;
  }
  ctx.Print(finished ? "\nThe sandbox is removed. `bk tutorial` runs it again."
                     : "tutorial ended; its sandbox is removed (`bk tutorial` starts it again)");
  return 0;
}

}  // namespace bk::cli
