// The booking editor of the terminal UI: `a` books at the cursor, `e` moves,
// resizes or (for a started booking) renews one of the caller's. Every change
// is checked by the service itself (recommend, or a dry-run edit or renew):
// the preview says what `Enter` will do.

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/parse.h"
#include "surface/text.h"
#include "tui/app.h"

namespace bk::tui {

using engine::Mode;
using engine::Reservation;

namespace {

service::CreateRequest CreateFor(const Editor& e) {
  service::CreateRequest r;
  r.count = e.count;
  r.duration = e.duration;
  r.mode = e.mode;
  r.memory_mb = e.memory_mb;
  r.start = e.start;
  r.gpus = e.gpus;
  return r;
}

// A started booking whose end moves later is renewed; any other change is an edit.
bool Renews(const Editor& e) { return e.end_only && e.end() > e.original.end; }

bool Changed(const Editor& e) {
  const Reservation& o = e.original;
  std::vector<int> gpus = o.gpus;
  std::sort(gpus.begin(), gpus.end());
  return e.start != o.start || e.end() != o.end || e.mode != o.mode || e.memory_mb != o.memory_mb ||
         e.count != static_cast<int>(o.gpus.size()) || (!e.gpus.empty() && e.gpus != gpus);
}

// The change as the service takes it, as a dry run (the preview) or for real.
Result<service::BookingOutcome> Change(client::Ledger& ledger, const Editor& e, bool dry_run) {
  const Reservation& o = e.original;
  if (Renews(e)) {
    service::RenewRequest r{.ref = o.id, .extend_by = e.end() - o.end};
    r.dry_run = dry_run;
    return ledger.Renew(r);
  }
  service::EditRequest r;
  r.ref = o.id;
  r.dry_run = dry_run;
  if (e.end_only) {
    r.end = e.end();
    return ledger.Edit(r);
  }
  if (e.start != o.start) r.start = e.start;
  if (e.end() - e.start != o.end - o.start) r.duration = e.duration;
  if (e.mode != o.mode) r.mode = e.mode;
  if (e.memory_mb != o.memory_mb) r.update_memory = true, r.memory_mb = e.memory_mb;
  if (!e.gpus.empty())
    r.gpus = e.gpus;
  else
    r.count = e.count;
  return ledger.Edit(r);
}

}  // namespace

void App::OpenAdd() {
  const engine::Policy& p = data_.policy;
  if (p.EnabledGpus().empty()) return Say("every GPU is disabled by the administrator", true);
  Editor e;
  e.kind = Editor::Kind::kAdd;
  engine::SlotGrid grid = p.grid();
  e.start = std::max(grid.Floor(view_.cursor), grid.Floor(view_.now));
  e.duration = std::min(last_duration_, p.max_duration);
  if (p.GpuEnabled(view_.gpu)) e.gpus = {view_.gpu};
  view_.editor = e;
  view_.focus = Focus::kTimeline;
  Say("book: arrows move it, [ ] set its length, Space pins or frees the GPU, Enter books");
}

void App::OpenEdit() {
  int target = Target();
  if (target < 0)
    return Say("no reservation here: move the cursor onto one of yours, or Tab to the list", true);
  const Reservation& r = data_.reservations[target];
  if (r.uid != data_.me)
    return Say(fmt::format("{} is {}'s: only its owner can edit it", r.ShortId(), r.username), true);
  if (r.end <= view_.now) return Say("that reservation has ended", true);
  Editor e;
  e.kind = Editor::Kind::kEdit;
  e.original = r;
  e.end_only = r.Started(view_.now);
  e.count = static_cast<int>(r.gpus.size());
  e.start = r.start;
  e.duration = r.end - r.start;
  e.mode = r.mode;
  e.gpus = r.gpus;
  std::sort(e.gpus.begin(), e.gpus.end());
  e.memory_mb = r.memory_mb;
  view_.editor = e;
  view_.focus = Focus::kTimeline;
  if (!r.gpus.empty()) view_.gpu = r.gpus[0];
  view_.cursor = AlignDown(std::max(r.start, view_.now), view_.step, deps_.zone.OffsetAt(r.start));
  KeepCursorVisible();
  Say(e.end_only ? "running booking: [ ] move its end (later renews it), Enter saves"
                 : "edit: arrows move it, [ ] resize it, Enter saves");
}

void App::HandleEditorKey(int key) {
  Editor& e = *view_.editor;
  const engine::Policy& p = data_.policy;
  const Seconds slot = p.slot;
  const Seconds earliest = p.grid().Floor(view_.now);
  const int columns = TimelineColumns(terminal_.width());
  auto move = [&](Seconds by) {
    if (e.end_only) return Say("a started booking keeps its start: [ ] move its end", true);
    e.start = std::max(earliest, e.start + by);
    view_.cursor = AlignDown(e.start, view_.step, deps_.zone.OffsetAt(e.start));
    KeepCursorVisible();
  };
  auto resize = [&](Seconds by) {
    Seconds d = e.duration + by;
    Seconds floor = e.end_only ? std::max(slot, p.grid().Ceil(view_.now + 1) - e.start) : slot;
    e.duration = std::max(d, floor);
  };
  auto pin_follows = [&] {
    if (e.gpus.size() == 1 && !e.end_only) e.gpus = {view_.gpu};
  };
  bool changed = true;
  switch (key) {
    case kKeyEscape:
    case 'q':
    case 'Q':
      view_.editor.reset();
      Say(e.kind == Editor::Kind::kAdd ? "nothing booked" : "nothing changed");
      return;
    case kKeyEnter: Submit(); return;
    case kKeyLeft:
    case 'h': move(-slot); break;
    case kKeyRight:
    case 'l': move(slot); break;
    case kKeyShiftLeft:
    case 'H': move(-3600); break;
    case kKeyShiftRight:
    case 'L': move(3600); break;
    case '[': resize(-slot); break;
    case ']': resize(slot); break;
    case '{': resize(-3600); break;
    case '}': resize(3600); break;
    case kKeyUp:
    case 'k': view_.gpu = std::max(0, view_.gpu - 1), pin_follows(); break;
    case kKeyDown:
    case 'j': view_.gpu = std::min(p.gpu_count - 1, view_.gpu + 1), pin_follows(); break;
    case ' ': {
      if (e.end_only) return Say("a started booking keeps its GPUs", true);
      auto it = std::find(e.gpus.begin(), e.gpus.end(), view_.gpu);
      if (it != e.gpus.end()) {
        e.gpus.erase(it);
      } else if (!p.GpuEnabled(view_.gpu)) {
        return Say(fmt::format("GPU {} is disabled by the administrator", view_.gpu), true);
      } else {
        e.gpus.push_back(view_.gpu);
        std::sort(e.gpus.begin(), e.gpus.end());
      }
      if (!e.gpus.empty()) e.count = static_cast<int>(e.gpus.size());
      Say(e.gpus.empty() ? "GPU: automatic (the service picks the best)"
                         : "GPU pinned: " + JoinInts(e.gpus, ","));
      break;
    }
    case 's':
    case 'x':
      if (e.end_only) return Say("a started booking keeps its mode", true);
      e.mode = key == 's' ? Mode::kShared : Mode::kExclusive;
      break;
    case 'm':
    case 'M':
      if (e.end_only) return Say("a started booking keeps its VRAM", true);
      view_.prompt = Prompt{Prompt::Purpose::kMemory, "VRAM per GPU (12g, 4096m, - for automatic): ", ""};
      changed = false;
      break;
    case 't':
    case 'T':
      if (e.end_only) return Say("a started booking keeps its start", true);
      view_.prompt = Prompt{Prompt::Purpose::kStart, "start (now, +30m, 14:00, tomorrow 9): ", ""};
      changed = false;
      break;
    case 'D':
      view_.prompt =
          Prompt{Prompt::Purpose::kDuration, "length (30m, 2h, 1d): ", engine::FormatDuration(e.duration)};
      changed = false;
      break;
    case '+':
    case '=':
    case '-':
    case '_':
      Zoom(view_, levels_, key == '+' || key == '=', columns, deps_.zone.OffsetAt(view_.cursor));
      changed = false;
      break;
    case '?':
      ShowHelp();
      changed = false;
      break;
    default:
      if (key >= '1' && key <= '9' && !e.end_only) {
        e.count = key - '0';
        if (static_cast<int>(e.gpus.size()) != e.count) e.gpus.clear();  // the service picks them
        break;
      }
      changed = false;
      break;
  }
  if (changed) e.checked = false;
}

void App::Preview() {
  Editor& e = *view_.editor;
  e.checked = true;
  e.ready = false;
  e.placed.clear();
  auto blocked = [&](std::string why) { e.verdict = surface::LocalTimes(why, deps_.zone); };
  if (e.kind == Editor::Kind::kAdd) {
    auto rec = deps_.ledger.Recommend(CreateFor(e));
    if (!rec) return blocked(rec.error().message);
    if (!rec->available || !rec->placement || rec->placement->start != e.start) {
      std::string why = rec->reason.empty() ? "not free at this start" : rec->reason;
      if (rec->nearest && why.find("nearest") == std::string::npos)
        why += fmt::format(" (nearest: GPU {} at {})", JoinInts(rec->nearest->gpus, ","),
                           engine::FormatLocalShort(rec->nearest->start, deps_.zone));
      return blocked(why);
    }
    e.ready = true;
    e.placed = rec->placement->gpus;
    std::sort(e.placed.begin(), e.placed.end());
    e.placed_start = rec->placement->start, e.placed_end = rec->placement->end;
    e.verdict.clear();
    return;
  }
  if (!Changed(e)) {
    e.verdict = "unchanged: move or resize it";
    return;
  }
  auto out = Change(deps_.ledger, e, true);
  if (!out) return blocked(out.error().message);
  if (out->status == "queued") return blocked("not free then: " + out->queued_reason);
  e.ready = true;
  e.placed = out->reservation.gpus;
  std::sort(e.placed.begin(), e.placed.end());
  e.placed_start = out->reservation.start, e.placed_end = out->reservation.end;
  e.verdict = Renews(e) ? "renews it" : "";
}

void App::Submit() {
  Editor e = *view_.editor;
  if (!e.checked) Preview();
  if (!view_.editor->ready) return Say("blocked: " + view_.editor->verdict, true);
  e = *view_.editor;
  std::string id;
  if (e.kind == Editor::Kind::kAdd) {
    auto out = deps_.ledger.Create(CreateFor(e));
    if (!out) return Say(out.error().message, true);
    id = out->reservation.id;
    last_duration_ = e.duration;
    Say(fmt::format("booked {} on GPU {}, {}", out->reservation.ShortId(),
                    JoinInts(out->reservation.gpus, ","),
                    surface::RangeText(out->reservation.start, out->reservation.end, deps_.zone)));
  } else {
    auto out = Change(deps_.ledger, e, false);
    if (!out) return Say(out.error().message, true);
    id = out->reservation.id;
    Say(fmt::format("{} {}: GPU {}, {}", Renews(e) ? "renewed" : "updated", out->reservation.ShortId(),
                    JoinInts(out->reservation.gpus, ","),
                    surface::RangeText(out->reservation.start, out->reservation.end, deps_.zone)));
  }
  view_.editor.reset();
  Reload();
  view_.focus = Focus::kReservations;
  for (size_t i = 0; i < rows_.size(); ++i)
    if (data_.reservations[rows_[i]].id == id) view_.selected = static_cast<int>(i);
}

}  // namespace bk::tui
