// bk N DUR [MEM], bk book, bk s|shared, bk x|exclusive.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "base/strings.h"
#include "cli/booking_args.h"
#include "engine/parse.h"
#include "service/booking_service.h"
#include "surface/documents.h"
#include "surface/text.h"
#include "worker/lease.h"
#include "worker/spec.h"
#include "worker/submit.h"

namespace bk::cli {

std::string BookingLine(const std::string& status, const engine::Reservation& r, const engine::Policy& p,
                        const engine::Zone& zone) {
  std::string host;
  if (r.cpus || r.ram_mb)
    host = fmt::format("cpus={} ram={} ", r.cpus, r.ram_mb ? engine::FormatSizeMb(r.ram_mb) : "-");
  return fmt::format("{}: {} mode={} {}{}gpu={} {}", status, r.ShortId(), engine::ModeName(r.mode),
                     surface::ShareText(r, p), host, JoinInts(r.gpus),
                     surface::RangeText(r.start, r.end, zone));
}

namespace {

// What the VRAM telemetry says about a booking: its GPUs' free memory and
// budgets, and the memory assumed for a shared booking without --mem.
void PrintVram(const Context& ctx, const service::BookingOutcome& o, const service::CreateRequest& req,
               const engine::Policy& p) {
  bool shared = o.reservation.mode == engine::Mode::kShared;
  if (!o.memory_telemetry) {
    if (shared && !req.memory_mb && !o.selected.empty())
      ctx.Print("note: GPU memory telemetry unavailable; shared admission used integer slots only");
    return;
  }
  std::vector<std::string> parts;
  for (const auto& v : o.selected) {
    std::string part =
        fmt::format("GPU {} physical-free-now={}", v.gpu, engine::FormatSizeMb(v.memory_free_mb.value_or(0)));
    if (shared && v.budget_after_mb)
      part += fmt::format(", reservation-budget-after={}",
                          engine::FormatSizeMb(std::max<int64_t>(0, *v.budget_after_mb)));
    parts.push_back(part);
  }
  if (!parts.empty()) ctx.Print("VRAM: " + Join(parts, "; "));
  if (shared && !req.memory_mb && o.assumed_memory_mb) {
    int u = o.reservation.share_units;
    ctx.Print(fmt::format(
        "assumption: --mem omitted; budgeted this reservation at {}/GPU (based on {} slot{} (max {}))",
        engine::FormatSizeMb(*o.assumed_memory_mb), u, u == 1 ? "" : "s", p.share_capacity));
  }
}

// The details behind a booking, shown with -v: the result line alone is
// what most bookings need.
void PrintDetails(const Context& ctx, const service::BookingOutcome& o, const service::CreateRequest& req,
                  const engine::Policy& p) {
  if (o.replayed) {
    ctx.Print("note: committed operation replayed; live GPU state and allocator were not rerun");
  } else {
    for (const auto& busy : o.avoided_busy) ctx.Print("note: avoided currently busy " + busy);
    PrintVram(ctx, o, req, p);
  }
  for (const auto& v : o.selected)
    ctx.Print(fmt::format("selection: GPU {} score={:.1f} now={} pressure={:.1f} priority={}", v.gpu,
                          v.load_score, gpu::LiveStatusName(v.live_status), v.pressure, v.priority));
}

// The booking's warnings on stderr, each once: the service's busy warning is
// said with the GPUs and processes it concerns.
void PrintWarnings(const Context& ctx, const service::BookingOutcome& o) {
  for (const auto& w : o.warnings) {
    if (w != service::kSelectedBusyWarning) {
      ctx.Warn(w);
      continue;
    }
    for (const auto& busy : o.selected_busy) ctx.Warn("selected GPU currently busy: " + busy);
  }
}

}  // namespace

Result<int> RunBook(Context& ctx, const std::vector<std::string>& all, const std::string& prog,
                    bool exclusive) {
  return RunBookThen(ctx, all, prog, exclusive, nullptr);
}

Result<int> RunBookThen(Context& ctx, const std::vector<std::string>& all, const std::string& prog,
                        bool exclusive, const AfterBooking& after, const BookingArgs* preset) {
  std::vector<std::string> command;
  std::vector<std::string> args = BeforeCommand(all, &command);
  BookingArgs a;
  ArgSpec spec(prog, exclusive ? "Book GPUs exclusively at the earliest legal slot."
                               : "Book shared GPU slots at the earliest legal slot.");
  AddBookingOptions(spec, a, true, true);
  spec.Flag("-v,--verbose", &a.verbose, "also show VRAM budgets, notes and why each GPU was chosen");
  spec.Flag("-q,--quiet", &a.quiet, "print only the result line");
  bool keep = false;
  spec.Flag("--keep", &keep, "with -- COMMAND: hold the whole booking after the command exits");
  spec.Footer(
      "Examples:\n  bk 1 30m\n  bk 2 1h 12g\n  bk x 1 2h --gpu 1 -t 20:00\n  bk 1 2h --gpu 1 --mem 24g "
      "--cpus 4 --ram 32g "
      "--op-id experiment-001 --json\n  bk x 1 2h --gpu 1 -- python train.py   (your worker starts it at the "
      "booking's "
      "start; `bk run ...` runs it here)");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (preset) FillFromPreset(a, *preset);
  bool with_command = std::find(all.begin(), all.end(), std::string("--")) != all.end();
  if (with_command && command.empty()) return Invalid("-- must be followed by a job command");
  if (keep && !with_command)
    return Invalid(
        "--keep applies to a booking for a command, e.g. `bk 1 2h --keep -- python train.py`; a booking "
        "without one is never released");
  BK_ASSIGN_OR_RETURN(service::CreateRequest req, ToRequest(ctx, a, exclusive));
  // The command goes to a private spec before the booking; the ledger only
  // gets its digest and summary, and an unused spec is withdrawn.
  std::optional<worker::Submission> submission;
  std::optional<worker::Settings> settings;
  if (with_command) {
    BK_ASSIGN_OR_RETURN(settings, worker::LoadSettings(ctx.config, config::ProcessEnv()));
    BK_ASSIGN_OR_RETURN(submission, worker::Submit(*settings, command, getuid(), ctx.clock->Now(), "", keep));
    req.job = submission->binding;
  }
  auto ledger_or = ctx.Ledger();
  Result<service::BookingOutcome> booked =
      ledger_or ? (*ledger_or)->Create(req)
                : Result<service::BookingOutcome>(std::unexpected(ledger_or.error()));
  if (submission) worker::Withdraw(*submission, booked ? &*booked : nullptr, getuid());
  if (!booked) {
    Error e = booked.error();
    // A refusal that names a nearest slot also says how to take it.
    if (e.kind == ErrorKind::kConflict && ledger_or && !a.json && !a.compact &&
        e.message.find("nearest available") != std::string::npos) {
      auto nearest = (*ledger_or)->Slots(req, req.start.value_or((*ledger_or)->Now()), 1);
      if (nearest && !nearest->options.empty())
        e.message += "; book it with: " +
                     BookCommand(a, req, nearest->options[0].gpus, nearest->options[0].start, *ctx.zone);
    }
    return std::unexpected(e);
  }
  client::Ledger* ledger = *ledger_or;
  const service::BookingOutcome& o = *booked;
  if (after) return after(ctx, o);
  const engine::Policy& p = ledger->policy();
  std::optional<worker::WorkerStatus> worker_status;
  if (with_command)
    worker_status =
        worker::Inspect(settings->job_dir, worker::InstanceIdentity(ctx.config), getuid(), ledger->Now());
  if (a.json || a.compact) {
    if (worker_status)
      ctx.PrintDoc(surface::BookingResultDoc(worker::WithSchedulingWarning(o, *worker_status),
                                             ledger->actor().uid, p, ledger->Now(),
                                             worker::StatusJson(*worker_status, ledger->actor().username)));
    else
      ctx.PrintDoc(surface::BookingResultDoc(o, ledger->actor().uid, p, ledger->Now()));
    return 0;
  }
  ctx.Print(BookingLine(o.status, o.reservation, p, *ctx.zone));
  if (!a.quiet && !o.queued_reason.empty()) ctx.Print("why queued: " + ctx.Local(o.queued_reason));
  if (!a.quiet && a.verbose) PrintDetails(ctx, o, req, p);
  if (with_command) {
    if (o.job) {
      ctx.Print(
          fmt::format("job: {} command={}", store::kJobStatusNames.Name(o.job->status), o.job->summary));
      ctx.Print(worker::StatusLine(*worker_status, *ctx.zone));
      if (auto warning = worker::SchedulingWarning(*worker_status)) ctx.Warn(*warning);
    } else {
      ctx.Warn(
          "this booking already existed, so the command was not attached; `bk run ID -- COMMAND` runs it "
          "there");
    }
  }
  PrintWarnings(ctx, o);
  return 0;
}

}  // namespace bk::cli
