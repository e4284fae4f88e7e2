// bk a|add: a booking asked for one question at a time at a terminal, shown
// with where it would land and the command it amounts to, then booked as
// that command would book it.

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

#include "base/strings.h"
#include "cli/guided.h"
#include "engine/parse.h"

namespace bk::cli {
namespace {

constexpr const char* kNoTerminal =
    "bk add asks its questions at a terminal; without one, book with flags: bk [x] COUNT DURATION "
    "[--gpu LIST] [--mem SIZE] [--at TIME]";

// `ended`: the input ended (Ctrl-D) where an answer was being typed.
int Cancelled(const Context& ctx, bool ended) {
  if (ended) std::fputc('\n', ctx.out);
  ctx.Print("cancelled; nothing booked");
  return 1;
}

// Where the booking would land, or why it cannot (the nearest slot included).
void PrintPlacement(const Context& ctx, const service::Recommendation& rec) {
  if (!rec.available || !rec.placement) {
    ctx.Print("cannot be placed: " + ctx.Local(rec.reason));
    return;
  }
  const engine::Placement& pl = *rec.placement;
  ctx.Print(fmt::format("GPUs:    {}", JoinInts(pl.gpus)));
  ctx.Print(fmt::format("start:   {}{}", engine::FormatLocal(pl.start, *ctx.zone),
                        pl.queued ? " (the earliest the GPUs are free)" : ""));
  ctx.Print(fmt::format("end:     {}", engine::FormatLocal(pl.end, *ctx.zone)));
}

}  // namespace

Result<int> RunAdd(Context& ctx, const std::vector<std::string>& args) {
  ArgSpec spec("bk add",
               "Book by answering questions (count, duration, mode, GPUs, VRAM, start), then see where it "
               "lands and the `bk COUNT DURATION ...` command it amounts to before it is booked.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) return Invalid(kNoTerminal);
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  const engine::Policy& p = ledger->policy();
  auto request = [&](const GuidedBooking& b) { return ToRequest(ctx, ToBookingArgs(b), false); };
  auto check = [&](const GuidedBooking& b) -> Status {
    BK_ASSIGN_OR_RETURN(service::CreateRequest req, request(b));
    BK_TRY(ledger->Recommend(req));
    return Ok();
  };
  // A terminal may give more after an earlier Ctrl-D (at the bk> prompt).
  std::cin.clear();
  std::unique_ptr<LineReader> in = PlainLineReader(std::cin, ctx.out);
  ctx.Print("Answer each question; Enter keeps the value in brackets, Ctrl-D cancels.");
  GuidedBooking b = GuidedDefaults(p);
  while (true) {
    BK_ASSIGN_OR_RETURN(bool answered, AskBooking(*in, ctx.out, p, check, &b));
    if (!answered) return Cancelled(ctx, true);
    BK_ASSIGN_OR_RETURN(service::CreateRequest req, request(b));
    BK_ASSIGN_OR_RETURN(service::Recommendation rec, ledger->Recommend(req));
    std::vector<std::string> words = BookingWords(b);
    PrintPlacement(ctx, rec);
    ctx.Print("command: " + CommandLine(words));
    if (rec.available) {
      std::optional<std::string> yes = in->Read("book it? [y/N] ");
      if (!yes) return Cancelled(ctx, true);
      if (ToLower(Trim(*yes)) != "y" && ToLower(Trim(*yes)) != "yes") return Cancelled(ctx, false);
      // Booked as the command line books, on the ledger as it is now.
      ctx.ledger.reset();
      return Dispatch(ctx, words);
    }
    ctx.Print("Change what does not fit (Enter keeps an answer), or Ctrl-D to cancel.");
  }
}

}  // namespace bk::cli
