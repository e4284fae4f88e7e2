#pragma once
// The booking grammar shared by `bk N DUR [MEM]`, `bk x`, `bk slots` and
// `bk agent recommend`: positionals COUNT DURATION [MEMORY] and the options.

#include <optional>
#include <string>

#include "cli/args.h"
#include "cli/context.h"
#include "service/types.h"

namespace bk::cli {

struct BookingArgs {
  std::optional<std::string> count, duration, memory;
  std::optional<std::string> start, at, gpu, exclude, mem, share, cpus, ram, op_id, mode;
  std::optional<std::string> reason;  // an administrator's, to book beyond the fair-share limits
  bool json = false, compact = false, verbose = false, quiet = false;
};

// A preset's options under the ones typed: each fills what `a` leaves unset,
// and a typed -g or -e replaces the preset's placement (both of its lists),
// a typed memory (positional or --mem) its memory.
void FillFromPreset(BookingArgs& a, const BookingArgs& preset);

// with_start: --start/-t; with_op_id: --op-id and --reason (the commands that book).
void AddBookingOptions(ArgSpec& spec, BookingArgs& a, bool with_start, bool with_op_id);
// Validates the text and builds a request (exclusive from the command or --mode).
Result<service::CreateRequest> ToRequest(const Context& ctx, const BookingArgs& a, bool exclusive);
// The command that books `req` on `gpus` at `start`, as a user pastes it:
// the mode and every option that shapes the booking, the time local.
std::string BookCommand(const BookingArgs& a, const service::CreateRequest& req, const std::vector<int>& gpus,
                        engine::Seconds start, const engine::Zone& zone);
// The edit grammar shared by `bk e` and `bk agent edit`.
struct EditArgs {
  std::optional<std::string> ref, duration, end, start, at, gpu, exclude, count, mode, mem, share, cpus, ram,
      op_id, reason;
  bool queue = false;
  bool any_change() const {
    return duration || end || start || at || gpu || exclude || count || mode || mem || share || cpus || ram;
  }
};
void AddEditOptions(ArgSpec& spec, EditArgs& a);
Result<service::EditRequest> ToEditRequest(const Context& ctx, const EditArgs& a);

// The renewal shared by `bk renew` and `bk agent renew`: REF extended by DURATION.
Result<service::RenewRequest> ToRenewRequest(const std::string& ref, const std::string& duration,
                                             const std::optional<std::string>& op_id);

// Splits argv at the first `--`; the tail is a command to launch.
std::vector<std::string> BeforeCommand(const std::vector<std::string>& args,
                                       std::vector<std::string>* command);

}  // namespace bk::cli
