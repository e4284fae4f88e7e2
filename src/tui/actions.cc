// The TUI's actions outside the editor: cancel (after a yes), details,
// help and usage dialogs.

#include <fmt/format.h>

#include "base/strings.h"
#include "surface/text.h"
#include "tui/app.h"
#include "tui/help.h"

namespace bk::tui {

void App::AskCancel() {
  int target = Target();
  if (target < 0)
    return Say("no reservation here: move the cursor onto one of yours, or Tab to the list", true);
  const engine::Reservation& r = data_.reservations[target];
  if (r.uid != data_.me)
    return Say(
        fmt::format("{} is {}'s: only its owner (or an administrator, with bk admin cancel) can cancel it",
                    r.ShortId(), r.username),
        true);
  if (r.end <= view_.now) return Say("that reservation has ended", true);
  view_.dialog =
      Dialog{Dialog::Kind::kConfirmCancel,
             "Cancel booking",
             {fmt::format("Cancel {} on GPU {}?", r.ShortId(), JoinInts(r.gpus, ",")),
              surface::RangeText(r.start, r.end, deps_.zone), "", "y cancels it; any other key keeps it"},
             0,
             r.id};
}

void App::DoCancel(const std::string& id) {
  auto out = deps_.ledger.Cancel({.ref = id});
  if (!out) return Say(out.error().message, true);
  Say(fmt::format("cancelled {}", out->reservation.ShortId()));
  Reload();
}

void App::ShowDetails() {
  int target = Target();
  if (target >= 0) {
    const engine::Reservation& r = data_.reservations[target];
    view_.dialog =
        Dialog{Dialog::Kind::kText, "Reservation " + r.ShortId(), ReservationLines(r, data_, deps_.zone)};
    return;
  }
  view_.dialog =
      Dialog{Dialog::Kind::kText, fmt::format("GPU {}", view_.gpu), GpuLines(view_.gpu, data_, deps_.zone)};
}

void App::ShowHelp() {
  view_.dialog = Dialog{Dialog::Kind::kText, "GPUBK help (any key closes)", HelpLines(glyphs_)};
}

void App::ShowUsage() {
  if (!deps_.usage_text) return Say("usage history is not available here", true);
  auto text = deps_.usage_text();
  if (!text) return Say(text.error().message, true);
  std::vector<std::string> lines = Split(surface::LocalTimes(*text, deps_.zone), '\n');
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  view_.dialog = Dialog{Dialog::Kind::kText, "My GPU use", lines};
}

}  // namespace bk::tui
