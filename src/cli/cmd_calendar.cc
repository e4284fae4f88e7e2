// `bk cal`: your bookings (everyone's with --all) as an iCalendar, on stdout
// or written atomically to a file that a calendar app or a lab web server
// serves.

#include <fmt/format.h>
#include <sys/stat.h>

#include "cli/args.h"
#include "cli/context.h"
#include "surface/icalendar.h"
#include "sys/fs.h"
#include "sys/node.h"
#include "sys/users.h"

namespace bk::cli {

Result<int> RunCalendar(Context& ctx, const std::vector<std::string>& args) {
  bool all = false;
  std::optional<std::string> days_text, output;
  ArgSpec spec("bk cal",
               "Your bookings as an RFC 5545 iCalendar (one event per booking, its ID as the event's UID; an "
               "edit raises SEQUENCE, a cancelled booking stays as STATUS:CANCELLED), for the calendar you "
               "already use.");
  spec.Flag("--all", &all, "every user's bookings (who, which GPUs, when; never a job's command)");
  spec.Option("--days", &days_text, "also bookings that ended in the last N days (1-3650, default 30)", "N");
  spec.Option("-o,--output", &output, "write the calendar to FILE atomically instead of stdout", "FILE");
  spec.Footer(
      "Upcoming and running bookings are always in it. Subscribe to a file that a web server serves, or "
      "import it once; `bk cal -o ~/public_html/gpus.ics` again updates every event in place.");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(int64_t days,
                      WholeNumberOption(days_text, 1, 3650, 30, "--days must be between 1 and 3650"));
  if (output) {
    if (output->empty() || output->back() == '/')
      return Invalid("--output needs a file name, e.g. -o gpus.ics");
    struct stat st {};
    if (lstat(output->c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return Invalid(
          fmt::format("{} exists and is not a regular file (a link is never followed); give another "
                      "path",
                      *output));
  }
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  BK_ASSIGN_OR_RETURN(service::ListResult list, ledger->List({.history = true, .everyone = all}));
  std::string host = sys::LocalNode().hostname;
  std::string who = all ? "everyone" : sys::UserName(sys::CurrentUid());
  surface::BookingCalendar cal =
      surface::BookingsCalendar(std::move(list.reservations), who, host, ctx.clock->Now() - days * kDay);
  const std::string& text = cal.text;
  if (!output) {
    std::fwrite(text.data(), 1, text.size(), ctx.out);
    return 0;
  }
  // Readable by whoever the file is for: a calendar app of this account or
  // the lab's web server; the directory decides who reaches it.
  BK_TRY(sys::WriteFileAtomic(*output, text, 0644));
  ctx.Print(fmt::format("wrote {} booking(s) to {}", cal.events, *output));
  return 0;
}

}  // namespace bk::cli
