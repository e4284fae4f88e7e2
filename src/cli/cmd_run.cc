// bk run|r: show your GPUs now, run a command on your current bookings, or
// book and then run one: here when the booking starts now (or with --wait),
// else by your worker at the booking's start.
//   bk run [N|ID]                read-only: the GPUs it would use, or the next suggestion
//   bk run [N|ID] -- CMD         now, on your current booking(s)
//   bk run [x] COUNT DUR ... -- CMD   book, then run here or queue for the worker
// As in the original, the `run: GPU=...` banner and the read-only and queued
// lines go to stdout; bk's lines around a command it runs go to stderr.

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "base/exit_codes.h"
#include "base/strings.h"
#include "cli/args.h"
#include "cli/booking_args.h"
#include "cli/context.h"
#include "engine/parse.h"
#include "engine/reference.h"
#include "worker/foreground.h"
#include "worker/guard.h"
#include "worker/job_dir.h"
#include "worker/lease.h"
#include "worker/live_clock.h"
#include "worker/settings.h"
#include "worker/worker.h"

namespace bk::cli {
namespace {

constexpr const char* kHelp =
    "usage: bk run [NUMBER|ID]                      the GPUs it would use now (read-only)\n"
    "       bk run [NUMBER|ID] -- COMMAND ARGS...   run now on your current booking(s)\n"
    "       bk run [x|exclusive] COUNT DURATION [booking options] [--wait] -- COMMAND ARGS...\n"
    "                                               book; run here when the booking starts now, else\n"
    "                                               queue it for your worker (--wait: wait here instead)\n"
    "\n"
    "The command runs without a shell in its own process group with CUDA_VISIBLE_DEVICES set to exactly the\n"
    "booked GPUs (UUIDs when known), CUDA_DEVICE_ORDER=PCI_BUS_ID, BK_RESERVED_GPUS and BK_RESERVATION_ID.\n"
    "It gets SIGTERM worker_termination_grace_seconds (5 s) before the booking's current end and SIGKILL at\n"
    "the end (exit 124); a renewal moves that end, a cancel stops it. Ctrl-C is passed on to it.\n"
    "A closed terminal (SIGHUP) does not stop it: it runs on until the booking ends. When it exits, its\n"
    "processes that left its group but still carry its BK_RESERVATION_ID are stopped too.\n"
    "A booking made for the command is given back from the next slot boundary once the command exits\n"
    "(succeeded or failed); --keep holds all of it. A command run on a current booking releases nothing.\n"
    "Its program must be found before anything is booked (PATH, or a path to an executable file).\n"
    "\n"
    "Booking options (the same as `bk COUNT DURATION`, -v and -q too):\n";

// The usage above, then the booking options, from the booking grammar itself.
std::string Help() {
  BookingArgs a;
  ArgSpec spec("bk run", kHelp);
  AddBookingOptions(spec, a, true, true);
  bool flag = false;
  spec.Flag("--keep", &flag, "hold the whole booking after the command exits");
  spec.Flag("--wait", &flag, "a later booking: wait here and run it at the start (no worker)");
  return kHelp + spec.OptionsHelp();
}

bool IsModeWord(const std::string& a) {
  return a == "s" || a == "shared" || a == "auto" || a == "x" || a == "exclusive";
}

void Err(Context& ctx, const std::string& line) {
  std::fprintf(ctx.err, "%s\n", line.c_str());
  std::fflush(ctx.err);
}

// The caller's bookings running now, numbered as `bk g` numbers them.
std::vector<engine::Reservation> Current(const std::vector<engine::Reservation>& mine, engine::Seconds now) {
  std::vector<engine::Reservation> out;
  for (const auto& r : mine)
    if (r.ActiveAt(now) && r.start <= now) out.push_back(r);
  std::sort(out.begin(), out.end(), [](const engine::Reservation& a, const engine::Reservation& b) {
    return std::tie(a.end, a.id) < std::tie(b.end, b.id);
  });
  return out;
}

std::vector<int> UnionGpus(const std::vector<engine::Reservation>& rs) {
  std::vector<int> out;
  for (const auto& r : rs)
    for (int g : r.gpus)
      if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
  return out;
}

std::string ShortIds(const std::vector<engine::Reservation>& rs) {
  std::vector<std::string> ids;
  for (const auto& r : rs) ids.push_back(r.ShortId());
  return Join(ids, ",");
}

// The bookings of `current` that `ref` names (a number as `bk g` numbers
// them, or an ID prefix); all of them without `ref`.
Result<std::vector<engine::Reservation>> Select(const std::vector<engine::Reservation>& current,
                                                const std::optional<std::string>& ref) {
  if (current.empty())
    return Invalid(
        "you have no reservation active now; use `bk run 1 30m -- COMMAND` to book the earliest slot and "
        "run");
  if (!ref) return current;
  std::string r(Trim(*ref));
  BK_ASSIGN_OR_RETURN(engine::ListRef pick,
                      engine::ParseListRef(r, current.size(), "booking active now", "bk g"));
  auto selected = engine::Picked(pick, current, [](const engine::Reservation& c) { return c.id; });
  if (selected.empty())
    return Fail(ErrorKind::kNotFound,
                fmt::format("no booking of yours active now matches {}; `bk g` lists them", Printable(r)));
  if (selected.size() > 1) return Invalid(fmt::format("ambiguous booking ID {}; give more characters", r));
  return selected;
}

std::string Banner(const std::vector<engine::Reservation>& selected) {
  return fmt::format("run: GPU={} from booking(s) {}", JoinInts(UnionGpus(selected)), ShortIds(selected));
}

Result<int> Show(Context& ctx, const std::optional<std::string>& ref) {
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(auto mine, ledger->List(service::ListQuery{}));
  engine::Seconds now = ledger->Now();
  auto current = Current(mine.reservations, now);
  if (!current.empty() || ref) {
    BK_ASSIGN_OR_RETURN(auto selected, Select(current, ref));
    ctx.Print(Banner(selected));
    ctx.Print("example: bk run -- python train.py");
    return 0;
  }
  const engine::Policy& p = ledger->policy();
  service::CreateRequest req;
  req.count = 1;
  req.duration = (1800 + p.slot - 1) / p.slot * p.slot;
  auto rec = ledger->Recommend(req);
  if (rec && rec->available && rec->placement)
    ctx.Print(fmt::format("run: no booking is active now; earliest suggestion is GPU={} at {}",
                          JoinInts(rec->placement->gpus),
                          engine::FormatLocal(rec->placement->start, *ctx.zone)));
  else
    ctx.Print("run: no booking is active now");
  ctx.Print("book and run: bk run 1 30m -- python train.py");
  return 0;
}

Result<int> RunNow(Context& ctx, const std::optional<std::string>& ref,
                   const std::vector<std::string>& command) {
  BK_ASSIGN_OR_RETURN(worker::Settings settings, worker::LoadSettings(ctx.config, config::ProcessEnv()));
  BK_ASSIGN_OR_RETURN(auto clock, worker::LiveClock(ctx.config));
  // A ledger on the live clock: its view of "active" follows real time.
  BK_ASSIGN_OR_RETURN(auto ledger, client::Open(ctx.config, *clock));
  BK_ASSIGN_OR_RETURN(auto mine, ledger->List(service::ListQuery{}));
  engine::Seconds now = ledger->Now();
  auto current = Current(mine.reservations, now);
  BK_ASSIGN_OR_RETURN(std::vector<engine::Reservation> selected, Select(current, ref));
  worker::AdhocRun run;
  run.selected = selected;
  run.argv = command;
  std::vector<int> gpus = UnionGpus(selected);
  run.tokens =
      worker::CudaTokens(gpus, worker::Sampler(ctx.config, *ledger).Sample(ledger->policy().gpu_count));
  // Flushed before the command starts writing to the same stdout.
  ctx.Print(Banner(selected));
  std::fflush(ctx.out);
  return worker::RunAdhoc(*ledger, *clock, settings, run, ctx.err);
}

int ExitFor(store::JobStatus status, std::optional<int> code) {
  using enum store::JobStatus;
  if (status == kSucceeded) return exit_code::kOk;
  if (status == kTimedOut || status == kCancelled || status == kMissed) return exit_code::kTimedOut;
  if (status == kInterrupted) return exit_code::kInterrupted;
  if (code && *code > 0) return *code;
  if (code && *code < 0) return 128 - *code;
  return 2;
}

// A worker already runs: it launches the job; we show its log as it grows.
Result<int> Follow(Context& ctx, client::Ledger& ledger, const worker::Settings& settings,
                   const std::string& id) {
  Err(ctx,
      fmt::format("run: handed to the running worker; following its log (Ctrl-C stops following, not the "
                  "job; `bk jl {}` shows it later)",
                  id.substr(0, 8)));
  worker::StopHandlers handlers;
  std::string path = worker::LogPath(settings.job_dir, id);
  off_t offset = 0;
  bool header_skipped = false;
  auto pump = [&] {
    int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_uid == getuid()) {
      if (st.st_size < offset) offset = 0, header_skipped = false;  // a new segment
      std::string chunk;
      char buf[65536];
      ssize_t n;
      while ((n = pread(fd, buf, sizeof(buf), offset + static_cast<off_t>(chunk.size()))) > 0)
        chunk.append(buf, n);
      if (!header_skipped) {
        auto nl = chunk.find('\n');
        if (nl == std::string::npos)
          chunk.clear();
        else {
          offset += static_cast<off_t>(nl + 1);
          chunk.erase(0, nl + 1);
          header_skipped = true;
        }
      }
      std::fwrite(chunk.data(), 1, chunk.size(), ctx.out);
      std::fflush(ctx.out);
      offset += static_cast<off_t>(chunk.size());
    }
    close(fd);
  };
  while (true) {
    pump();
    auto jobs = ledger.Jobs({false});
    if (jobs) {
      for (const auto& v : *jobs) {
        if (v.reservation.id != id) continue;
        store::JobStatus s = v.job.status;
        if (store::Finished(s)) {
          pump();
          Err(ctx, fmt::format("run: {} {}{}", store::kJobStatusNames.Name(s), id.substr(0, 8),
                               v.job.message.empty() ? "" : " (" + v.job.message + ")"));
          return ExitFor(
              s, v.job.exit_code ? std::optional<int>(static_cast<int>(*v.job.exit_code)) : std::nullopt);
        }
      }
    }
    // The terminal is gone: there is nobody left to show the log to.
    if (worker::HangupSeen()) return 128 + SIGHUP;
    if (worker::StopRequested()) {
      Err(ctx, fmt::format("run: stopped following; the job stays with your worker (`bk jl {}`)",
                           id.substr(0, 8)));
      return 130;
    }
    worker::StopHandlers::Sleep(0.5);
  }
}

// `wait`: stay in the foreground until a later start instead of queueing.
Result<int> RunBooked(Context& ctx, const service::BookingOutcome& o, bool wait) {
  const engine::Reservation& r = o.reservation;
  Err(ctx, BookingLine(o.status, r, ctx.ledger->policy(), *ctx.zone));
  if (!o.job)
    return Invalid(fmt::format(
        "this booking already existed without the command; run it with `bk run {} -- ...`", r.ShortId()));
  BK_ASSIGN_OR_RETURN(worker::Settings settings, worker::LoadSettings(ctx.config, config::ProcessEnv()));
  BK_ASSIGN_OR_RETURN(auto clock, worker::LiveClock(ctx.config));
  if (r.start > clock->Now() && !wait) {
    // The original's answer: a later start is the worker's to launch.
    ctx.Print("run: queued; your worker will launch the command at the reservation start");
    ctx.Print(
        "worker: enable your user service once with `bk service install worker`, then `systemctl --user "
        "enable --now bk-worker.service`");
    ctx.Print("worker: check it with `bk w`; an administrator may enable loginctl linger");
    return 0;
  }
  BK_ASSIGN_OR_RETURN(auto ledger, client::Open(ctx.config, *clock));
  std::string identity = worker::InstanceIdentity(ctx.config);
  if (worker::Inspect(settings.job_dir, identity, getuid(), clock->Now()).running.value_or(false))
    return Follow(ctx, *ledger, settings, r.id);
  if (r.start > clock->Now())
    Err(ctx, fmt::format(
                 "run: waiting for the booking to start at {} (Ctrl-C leaves the job queued for your worker)",
                 engine::FormatLocal(r.start, *ctx.zone)));
  worker::WorkerOptions opts;
  opts.foreground = true;
  opts.only_reservation = r.id;
  opts.poll = settings.poll_seconds;
  opts.max_parallel = 1;
  worker::Worker w(*ledger, *clock, ctx.config, settings, opts, *ctx.zone, ctx.err, ctx.err);
  int rc = w.Run();
  if (rc == exit_code::kBusy) return Follow(ctx, *ledger, settings, r.id);  // a worker started meanwhile
  if (rc == exit_code::kPolicyDrift) return exit_code::kPolicyDrift;
  const worker::ForegroundOutcome& f = w.foreground();
  if (!f.status) {
    if (worker::StopRequested()) {
      Err(ctx,
          fmt::format("run: stopped waiting; the job stays queued for your worker (`bk w start`), or cancel "
                      "the booking with `bk d {}`",
                      r.ShortId()));
      return 130;
    }
    return rc == 0 ? 2 : rc;
  }
  if (f.status != store::JobStatus::kSucceeded)
    Err(ctx, fmt::format("run: {}{}", store::kJobStatusNames.Name(*f.status),
                         f.message.empty() ? "" : " (" + f.message + ")"));
  return ExitFor(*f.status, f.exit_code);
}

}  // namespace

Result<int> RunRun(Context& ctx, const std::vector<std::string>& all) {
  std::vector<std::string> command;
  std::vector<std::string> args = BeforeCommand(all, &command);
  bool with_command = std::find(all.begin(), all.end(), std::string("--")) != all.end();
  for (const auto& a : args)
    if (a == "-h" || a == "--help") {
      std::fputs(Help().c_str(), ctx.out);
      return 0;
    }
  if (with_command && command.empty()) return Invalid("-- must be followed by a job command");
  // Our own lines may outlive the terminal or pipe they go to (a dropped SSH
  // session): a failed write is no reason to die before the job is recorded.
  if (with_command) signal(SIGPIPE, SIG_IGN);
  // --wait is bk run's own booking option: it never reaches the booking grammar.
  bool wait = std::erase(args, std::string("--wait")) > 0;
  // --keep is the booking grammar's (`bk N DUR --keep -- CMD`); without a new
  // booking there is nothing it could keep.
  bool keep = std::find(args.begin(), args.end(), std::string("--keep")) != args.end();
  if (keep && args.size() == 1)
    return Invalid(
        "--keep applies to booking-and-run: `bk run 1 2h --keep -- python train.py`; a command run on a "
        "current booking never releases it");
  if (args.empty() || (args.size() == 1 && args[0][0] != '-' && !IsModeWord(args[0]))) {
    if (wait) return Invalid("--wait applies to booking-and-run: `bk run 1 30m --wait -- python train.py`");
    std::optional<std::string> ref;
    if (!args.empty()) ref = args[0];
    return with_command ? RunNow(ctx, ref, command) : Show(ctx, ref);
  }
  if (!with_command)
    return Invalid(
        "booking-and-run requires a command after --, for example `bk run 1 30m -- python train.py`");
  bool exclusive = false;
  std::vector<std::string> rest = args;
  rest.push_back("--");
  rest.insert(rest.end(), command.begin(), command.end());
  if (IsModeWord(rest[0])) {
    exclusive = rest[0] == "x" || rest[0] == "exclusive";
    rest.erase(rest.begin());
  }
  return RunBookThen(ctx, rest, "bk run", exclusive,
                     [wait](Context& c, const service::BookingOutcome& o) { return RunBooked(c, o, wait); });
}

}  // namespace bk::cli
