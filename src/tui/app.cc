#include "tui/app.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "base/strings.h"
#include "engine/parse.h"
#include "surface/text.h"
#include "tui/help.h"

namespace bk::tui {
namespace {

using engine::Mode;
using engine::Reservation;

int64_t MonotonicMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Seconds of steady time, for the poll intervals: the ledger's clock may be
// pinned (BK_TEST_NOW) and must not stop the polling.
Seconds Tick() { return MonotonicMs() / 1000; }

constexpr Seconds kPollEvery = 1;     // the change counter
constexpr Seconds kLiveEvery = 5;     // live GPU state, where there is telemetry
constexpr Seconds kCountsEvery = 60;  // without it only the slots in use now move
constexpr Seconds kStatesEvery = 10;  // monitor and worker state
constexpr int kWaitMs = 250;

}  // namespace

App::App(Deps deps, Terminal& terminal, Glyphs glyphs)
    : deps_(std::move(deps)), terminal_(terminal), glyphs_(glyphs) {
  data_.policy = deps_.ledger.policy();
  data_.me = deps_.ledger.actor().uid;
  data_.deployment = deps_.deployment;
  levels_ = ZoomLevels(data_.policy.slot);
  view_.step = levels_.size() > 1 && levels_[0] < 300 ? levels_[1] : levels_[0];
  view_.now = deps_.ledger.Now();
  GoLive(view_, TimelineColumns(terminal_.width()), deps_.zone.OffsetAt(view_.now));
}

int App::Run() {
  while (!done_) {
    Event e = terminal_.Next(dirty_ ? 0 : kWaitMs);
    Step(e);
  }
  return 0;
}

void App::Step(const Event& event) {
  switch (event.kind) {
    case Event::Kind::kInterrupt: done_ = true; return;
    case Event::Kind::kResize: dirty_ = true; break;
    case Event::Kind::kKey: HandleKey(event.key), dirty_ = true; break;
    case Event::Kind::kClick: HandleClick(event.x, event.y), dirty_ = true; break;
    case Event::Kind::kNone: break;
  }
  if (done_) return;
  Poll();
  // Keys first: a preview or a frame is worth computing only once the
  // keys typed ahead are handled.
  if (terminal_.Pending()) return;
  if (view_.editor && !view_.editor->checked) Preview(), dirty_ = true;
  if (dirty_) Draw();
}

void App::Poll() {
  Seconds tick = Tick();
  view_.now = deps_.ledger.Now();
  int columns = TimelineColumns(terminal_.width());
  if (view_.live) {
    Seconds before = view_.origin;
    GoLive(view_, columns, deps_.zone.OffsetAt(view_.now));
    if (view_.origin != before) dirty_ = true;
  }
  if (view_.now / 60 != drawn_minute_) dirty_ = true;
  if (tick - last_states_ >= kStatesEvery) {
    last_states_ = tick;
    if (deps_.monitor_state) data_.monitor = deps_.monitor_state();
    if (deps_.worker_state) data_.worker = deps_.worker_state();
  }
  bool reload = !loaded_;
  if (tick != last_poll_ && tick - last_poll_ >= kPollEvery) {
    last_poll_ = tick;
    auto counter = deps_.ledger.ChangeCounter();
    if (!counter) {
      if (!unreachable_) Say("cannot reach the ledger: " + counter.error().message, true);
      unreachable_ = true;
    } else if (unreachable_) {
      // Back (a restarted daemon counts from zero again): read everything.
      unreachable_ = false;
      counter_ = *counter, have_counter_ = true;
      reload = true;
      Say("the ledger answers again");
    } else if (!have_counter_ || *counter != counter_) {
      reload = reload || have_counter_;
      counter_ = *counter, have_counter_ = true;
    }
  }
  // The window left the range read last time: read the new one.
  Seconds span = columns * view_.step;
  if (view_.origin < data_.from || view_.origin + span > data_.to) reload = true;
  if (reload) {
    Reload();
    last_live_ = tick;
  } else if (tick - last_live_ >= (Telemetry() ? live_every_ : kCountsEvery)) {
    last_live_ = tick;
    // A read that takes long (a private ledger of thousands of bookings
    // builds its occupancy for it) is spaced out to cost at most a quarter
    // of a percent of a core.
    int64_t t0 = MonotonicMs();
    RefreshLive();
    live_every_ = std::max<Seconds>(kLiveEvery, (MonotonicMs() - t0) * 400 / 1000);
  }
}

void App::Reload() {
  int columns = TimelineColumns(terminal_.width());
  Seconds span = columns * view_.step;
  // A window either side: panning a page reads nothing.
  Seconds from = view_.origin - span, to = view_.origin + 2 * span;
  auto status = deps_.ledger.Status(from, to, 0);
  if (!status) {
    Say("cannot read the ledger: " + status.error().message, true);
    return;
  }
  std::string selected_id;
  if (view_.selected >= 0 && view_.selected < static_cast<int>(rows_.size()))
    selected_id = data_.reservations[rows_[view_.selected]].id;
  data_.reservations = std::move(status->reservations);
  std::sort(data_.reservations.begin(), data_.reservations.end(),
            [](const Reservation& a, const Reservation& b) {
              return std::tie(a.start, a.id) < std::tie(b.start, b.id);
            });
  data_.live = std::move(*status);
  data_.from = from, data_.to = to;
  data_.policy = deps_.ledger.policy();
  data_.Index();
  auto announcements = deps_.ledger.Announcements({});
  if (announcements) data_.announcements = std::move(*announcements);
  rows_ = PanelRows(data_, view_.filter);
  // The selection follows its reservation when rows move.
  view_.selected = -1;
  for (size_t i = 0; i < rows_.size(); ++i)
    if (data_.reservations[rows_[i]].id == selected_id) view_.selected = static_cast<int>(i);
  if (view_.focus == Focus::kReservations && view_.selected < 0 && !rows_.empty()) view_.selected = 0;
  if (view_.editor) view_.editor->checked = false;  // the calendar moved under the preview
  loaded_ = true;
  dirty_ = true;
}

bool App::Telemetry() const {
  const auto& devices = data_.live.snapshot.devices;
  return std::any_of(devices.begin(), devices.end(),
                     [](const auto& d) { return d.source != gpu::Source::kNone; });
}

void App::RefreshLive() {
  auto status = deps_.ledger.Status(view_.now, view_.now, 0);
  if (!status) return;
  data_.live.now = status->now;
  data_.live.snapshot = std::move(status->snapshot);
  data_.live.gpus = std::move(status->gpus);
  data_.live.usage = std::move(status->usage);
  dirty_ = true;
}

void App::Draw() {
  Screen screen(terminal_.width(), terminal_.height());
  Frame frame{data_, view_, rows_, glyphs_, deps_.zone};
  layout_ = Render(frame, screen);
  terminal_.Draw(screen);
  drawn_minute_ = view_.now / 60;
  dirty_ = false;
}

void App::Say(std::string text, bool error) {
  view_.message = surface::LocalTimes(text, deps_.zone);
  view_.message_error = error;
  dirty_ = true;
}

void App::HandleKey(int key) {
  if (key == kKeyCtrlC) {
    done_ = true;
    return;
  }
  if (view_.prompt) return HandlePromptKey(key);
  if (view_.dialog) return HandleDialogKey(key);
  if (view_.editor) return HandleEditorKey(key);
  HandleMainKey(key);
}

int App::Target() const {
  if (view_.focus == Focus::kReservations)
    return view_.selected >= 0 && view_.selected < static_cast<int>(rows_.size()) ? rows_[view_.selected]
                                                                                  : -1;
  return ReservationAt(data_, view_.gpu, view_.cursor, view_.cursor + view_.step);
}

void App::KeepCursorVisible() {
  int columns = TimelineColumns(terminal_.width());
  MoveCursor(view_, 0, columns);
}

void App::HandleMainKey(int key) {
  const int columns = TimelineColumns(terminal_.width());
  const int64_t offset = deps_.zone.OffsetAt(view_.cursor);
  const int gpus = data_.policy.gpu_count;
  bool on_list = view_.focus == Focus::kReservations;
  view_.message.clear();
  switch (key) {
    case 'q':
    case 'Q':
    case kKeyEscape: done_ = true; break;
    case kKeyLeft:
    case 'h': MoveCursor(view_, -1, columns); break;
    case kKeyRight:
    case 'l': MoveCursor(view_, 1, columns); break;
    case kKeyShiftLeft:
    case 'H': MoveCursor(view_, -12, columns); break;
    case kKeyShiftRight:
    case 'L': MoveCursor(view_, 12, columns); break;
    case kKeyPageUp: Pan(view_, -columns); break;
    case kKeyPageDown: Pan(view_, columns); break;
    case kKeyHome: MoveCursor(view_, -(view_.cursor - view_.origin) / view_.step, columns); break;
    case kKeyEnd: MoveCursor(view_, columns - 1 - (view_.cursor - view_.origin) / view_.step, columns); break;
    case kKeyUp:
    case 'k':
      if (on_list)
        view_.selected = std::max(0, view_.selected - 1);
      else
        view_.gpu = std::max(0, view_.gpu - 1);
      break;
    case kKeyDown:
    case 'j':
      if (on_list)
        view_.selected = std::min(static_cast<int>(rows_.size()) - 1, view_.selected + 1);
      else
        view_.gpu = std::min(gpus - 1, view_.gpu + 1);
      break;
    case '+':
    case '=':
      if (Zoom(view_, levels_, true, columns, offset))
        Say(fmt::format("zoom {}/col", engine::FormatDuration(view_.step)));
      break;
    case '-':
    case '_':
      if (Zoom(view_, levels_, false, columns, offset))
        Say(fmt::format("zoom {}/col", engine::FormatDuration(view_.step)));
      break;
    case 'n':
    case 'N':
      GoLive(view_, columns, deps_.zone.OffsetAt(view_.now));
      Say("live NOW window");
      break;
    case kKeyTab:
    case kKeyBackTab:
      view_.focus = on_list ? Focus::kTimeline : Focus::kReservations;
      if (!on_list && view_.selected < 0 && !rows_.empty()) view_.selected = 0;
      if (on_list && view_.selected >= 0 && view_.selected < static_cast<int>(rows_.size())) {
        // Back on the timeline at the reservation that was selected.
        const Reservation& r = data_.reservations[rows_[view_.selected]];
        if (!r.gpus.empty()) view_.gpu = r.gpus[0];
        view_.cursor = AlignDown(std::max(r.start, view_.now), view_.step, offset);
        KeepCursorVisible();
      }
      break;
    case kKeyEnter: ShowDetails(); break;
    case 'a':
    case 'A': OpenAdd(); break;
    case 'e':
    case 'E': OpenEdit(); break;
    case 'd':
    case 'D': AskCancel(); break;
    case 'u':
    case 'U': ShowUsage(); break;
    case 'r':
    case 'R':
      loaded_ = false;
      Say("refreshed");
      break;
    case '?': ShowHelp(); break;
    case 'i':
    case 'I':
      if (deps_.admin_lines)
        view_.dialog = Dialog{Dialog::Kind::kText, "GPUBK administrator", deps_.admin_lines()};
      break;
    case '/':
      view_.prompt = Prompt{Prompt::Purpose::kFilter, "show only user (empty: everyone): ", view_.filter};
      break;
    default: break;
  }
  if (view_.gpu >= gpus) view_.gpu = std::max(0, gpus - 1);
}

void App::HandleClick(int x, int y) {
  if (view_.dialog || view_.prompt || layout_.too_small || y < 0 ||
      y >= static_cast<int>(layout_.gpu_at_row.size()))
    return;
  if (int gpu = layout_.gpu_at_row[y]; gpu >= 0) {
    view_.gpu = gpu;
    if (x >= layout_.timeline_x && x < layout_.timeline_x + layout_.columns) {
      if (view_.editor) {
        view_.editor->start = std::max(view_.origin + (x - layout_.timeline_x) * view_.step,
                                       engine::SlotGrid(data_.policy.slot).Floor(view_.now));
        view_.editor->checked = false;
      }
      view_.cursor = view_.origin + (x - layout_.timeline_x) * view_.step;
      view_.live = false;
    }
    if (view_.editor && view_.editor->gpus.size() == 1)
      view_.editor->gpus = {gpu}, view_.editor->checked = false;
    view_.focus = Focus::kTimeline;
  } else if (int row = layout_.panel_at_row[y]; row >= 0 && !view_.editor) {
    view_.focus = Focus::kReservations;
    view_.selected = row;
  }
}

void App::HandleDialogKey(int key) {
  Dialog& d = *view_.dialog;
  if (d.kind == Dialog::Kind::kConfirmCancel) {
    std::string id = d.target;
    view_.dialog.reset();
    if (key == 'y' || key == 'Y')
      DoCancel(id);
    else
      Say("kept; nothing cancelled");
    return;
  }
  int page = std::max(1, terminal_.height() - 8);
  int last = std::max(0, static_cast<int>(d.lines.size()) - page);
  switch (key) {
    case kKeyUp:
    case 'k': d.scroll = std::max(0, d.scroll - 1); break;
    case kKeyDown:
    case 'j': d.scroll = std::min(last, d.scroll + 1); break;
    case kKeyPageUp: d.scroll = std::max(0, d.scroll - page); break;
    case kKeyPageDown: d.scroll = std::min(last, d.scroll + page); break;
    case kKeyHome: d.scroll = 0; break;
    case kKeyEnd: d.scroll = last; break;
    default: view_.dialog.reset(); break;
  }
}

void App::HandlePromptKey(int key) {
  Prompt& p = *view_.prompt;
  if (key == kKeyEscape) {
    view_.prompt.reset();
    return;
  }
  if (key == kKeyEnter) return SubmitPrompt();
  if (key == kKeyBackspace || key == 263) {
    // Whole UTF-8 characters.
    while (!p.text.empty() && (static_cast<unsigned char>(p.text.back()) & 0xc0) == 0x80) p.text.pop_back();
    if (!p.text.empty()) p.text.pop_back();
    return;
  }
  if (key >= 0x20 && key < 0x10000 && key != 0x7f && p.text.size() < 64)
    p.text += Utf8(static_cast<char32_t>(key));
}

void App::SubmitPrompt() {
  Prompt p = *view_.prompt;
  view_.prompt.reset();
  std::string text(Trim(p.text));
  if (p.purpose == Prompt::Purpose::kFilter) {
    view_.filter = text;
    rows_ = PanelRows(data_, view_.filter);
    view_.selected = rows_.empty() ? -1 : 0;
    Say(text.empty() ? "showing every user's bookings"
                     : "showing " + text + "'s bookings; / and Enter clears");
    return;
  }
  if (!view_.editor) return;
  Editor& e = *view_.editor;
  switch (p.purpose) {
    case Prompt::Purpose::kMemory: {
      if (text.empty() || text == "-" || text == "auto") {
        e.memory_mb.reset();
      } else if (auto mb = engine::ParseSizeMb(text); mb) {
        e.memory_mb = *mb;
      } else {
        return Say(mb.error().message + "; e.g. 12g, or - for automatic", true);
      }
      break;
    }
    case Prompt::Purpose::kDuration: {
      auto d = engine::ParseDuration(text);
      if (!d) return Say(d.error().message, true);
      if (e.end_only && e.start + *d <= view_.now) return Say("the new end must be after now", true);
      e.duration = *d;
      break;
    }
    case Prompt::Purpose::kStart: {
      auto t = engine::ParseStart(text, view_.now, data_.policy.grid(), deps_.zone);
      if (!t) return Say(t.error().message, true);
      e.start = *t;
      view_.cursor = AlignDown(e.start, view_.step, deps_.zone.OffsetAt(e.start));
      KeepCursorVisible();
      break;
    }
    case Prompt::Purpose::kFilter: break;
  }
  e.checked = false;
}

}  // namespace bk::tui
