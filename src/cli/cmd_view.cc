// bk st, bk g, bk tl, bk slots: read-only views of GPUs and the calendar.

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "base/strings.h"
#include "cli/args.h"
#include "cli/booking_args.h"
#include "cli/context.h"
#include "cli/notices.h"
#include "engine/parse.h"
#include "monitor/classify.h"
#include "surface/documents.h"
#include "surface/text.h"
#include "worker/lease.h"
#include "worker/settings.h"

namespace bk::cli {
namespace {

using engine::Reservation;
using engine::Seconds;

// The width of `bk st`'s Model column: the longest name (at least the
// original's 14), as far as the terminal leaves room beside the other columns.
int ModelWidth(const gpu::Snapshot& snapshot, const std::vector<int>& gpus, int terminal) {
  constexpr int kOtherColumns = 66;  // GPU, Util ... X-free, each with the space before the next
  int longest = 14;
  for (int g : gpus) longest = std::max(longest, surface::DisplayWidth(snapshot.devices[g].name));
  return std::max(14, std::min(longest, terminal - kOtherColumns));
}

bool OnGpu(const Reservation& r, int g) { return std::find(r.gpus.begin(), r.gpus.end(), g) != r.gpus.end(); }

std::string MemText(const service::GpuView& v) {
  if (!v.memory_total_mb) return "-";
  return fmt::format("{:.1f}/{:.1f}G", v.memory_free_mb.value_or(0) / 1024.0, *v.memory_total_mb / 1024.0);
}

std::string FreeText(const service::GpuView& v) {
  if (!v.memory_free_mb) return "free unknown";
  return engine::FormatSizeMb(*v.memory_free_mb) + " free";
}

std::string LiveLine(const service::GpuView& v) {
  std::string util = v.utilization_percent ? fmt::format("{}% util", *v.utilization_percent) : "util unknown";
  return fmt::format("{}, {}, {}", gpu::LiveStatusName(v.live_status), util, FreeText(v));
}

// Why every GPU reads as unknown after a failed sample (driver, simulation file).
std::string TelemetryNote(const gpu::Snapshot& failed) {
  return "telemetry: unavailable: " + Printable(failed.error);
}

// As the original: while a command of the caller's may still launch (its
// booking active, its job pending, claimed or running), the worker line, and
// on stderr why no worker will launch it; "" otherwise.
Result<std::string> WorkerNotice(const Context& ctx, const std::vector<service::JobView>& jobs, Seconds now) {
  bool waiting = std::any_of(jobs.begin(), jobs.end(), [&](const service::JobView& v) {
    using store::JobStatus;
    const JobStatus s = v.job.status;
    return v.reservation.ActiveAt(now) &&
           (s == JobStatus::kPending || s == JobStatus::kClaimed || s == JobStatus::kRunning);
  });
  if (!waiting) return std::string();
  BK_ASSIGN_OR_RETURN(worker::Settings settings, worker::LoadSettings(ctx.config, config::ProcessEnv()));
  worker::WorkerStatus ws =
      worker::Inspect(settings.job_dir, worker::InstanceIdentity(ctx.config), getuid(), now);
  if (auto warning = worker::SchedulingWarning(ws)) ctx.Warn(*warning);
  return worker::StatusLine(ws, *ctx.zone) + "\n";
}

std::string WhenText(Seconds t, Seconds now, const engine::Zone& zone) {
  if (t <= now) return "now";
  if (engine::FormatLocalShort(t, zone).substr(0, 5) == engine::FormatLocalShort(now, zone).substr(0, 5))
    return engine::FormatLocalClock(t, zone);
  return engine::FormatLocalShort(t, zone);
}

Result<std::vector<int>> GpuFilter(const std::optional<std::string>& text, int gpu_count) {
  std::vector<int> out;
  if (!text) {
    for (int g = 0; g < gpu_count; ++g) out.push_back(g);
    return out;
  }
  BK_ASSIGN_OR_RETURN(out, engine::ParseGpuList(*text, "--gpu"));
  for (int g : out)
    if (g >= gpu_count) return Invalid(fmt::format("GPU IDs must be between 0 and {}", gpu_count - 1));
  std::sort(out.begin(), out.end());
  return out;
}

// The cell size of a timeline without --step: one slot while the window fits
// in the cells a timeline may have, else the first zoom level (those of the
// TUI) that fits the terminal, else the first that fits the cell limit.
Seconds ZoomStep(Seconds window, Seconds slot, int max_cells) {
  if (window % slot == 0 && window / slot <= 240) return slot;
  std::vector<Seconds> levels;
  for (Seconds s : {300, 900, 3600, 6 * 3600, 86400})
    if (s > slot && s % slot == 0 && window % s == 0) levels.push_back(s);
  for (Seconds s : levels)
    if (window / s <= max_cells) return s;
  for (Seconds s : levels)
    if (window / s <= 240) return s;
  return slot;  // nothing fits: the window's own checks say why
}

struct TimelineArgs {
  std::optional<std::string> from, window, step;
};

// What a timeline shows: its cells [start, start + cells * step).
struct TimelineShape {
  Seconds start = 0;
  Seconds step = 0;
  Seconds cells = 0;
  Seconds end() const { return start + cells * step; }
};

// The timeline's window and cell size from its options, before anything is
// read: the view then asks only for the reservations it shows.
Result<TimelineShape> ShapeTimeline(const Context& ctx, const engine::Policy& p, const TimelineArgs& a,
                                    Seconds now, Seconds default_window) {
  Seconds window = default_window;
  if (a.window) {
    BK_ASSIGN_OR_RETURN(window, engine::ParseDuration(*a.window));
  }
  int width = surface::TerminalWidth(1, 100);
  Seconds step = p.slot;
  int max_cells = std::min(std::max(12, (width - 6) / 3), 240);
  if (a.step && ToLower(Trim(*a.step)) == "auto") {
    std::set<Seconds> steps;
    for (int m : {1, 2, 3, 4, 6, 12, 24, 48, 96, 144, 288}) steps.insert(p.slot * m);
    for (Seconds s : {300, 600, 900, 1800, 3600, 7200, 14400, 28800, 43200, 86400})
      if (s % p.slot == 0) steps.insert(s);
    bool found = false;
    for (Seconds s : steps)
      if (window % s == 0 && window / s <= max_cells) {
        step = s;
        found = true;
        break;
      }
    if (!found) return Invalid("--window is too large for automatic timeline scaling; give a larger --step");
  } else if (a.step) {
    BK_ASSIGN_OR_RETURN(step, engine::ParseDuration(*a.step));
    if (step % p.slot != 0)
      return Invalid(fmt::format("--step must be a multiple of the configured {}-minute slot", p.slot / 60));
  } else {
    step = ZoomStep(window, p.slot, max_cells);
  }
  if (window % step != 0) return Invalid("--window must be an exact multiple of --step");
  Seconds cells = window / step;
  if (cells > 240)
    return Invalid(fmt::format(
        "timeline would contain {} cells; increase --step or use --step auto (maximum 240)", cells));
  Seconds from = now;
  if (a.from) {
    BK_ASSIGN_OR_RETURN(from, engine::ParseViewTime(*a.from, now, *ctx.zone));
  }
  return TimelineShape{from - ((from % step) + step) % step, step, cells};
}

// Renders the aligned timeline of `bk tl`: day, hour and minute header rows, one row per GPU.
std::string Timeline(const Context& ctx, const service::StatusView& view, uint32_t me,
                     const engine::Policy& p, const TimelineShape& shape, const std::vector<int>& gpus) {
  const Seconds start = shape.start, step = shape.step, cells = shape.cells, end = shape.end();
  int width = surface::TerminalWidth(1, 100);
  // Each GPU's reservations, once: a cell then looks at its own GPU's only.
  std::map<int, std::vector<const Reservation*>> on_gpu;
  for (const auto& r : view.reservations)
    if (r.status != engine::Status::kCancelled && r.start < end && r.end > start)
      for (int g : gpus)
        if (OnGpu(r, g)) on_gpu[g].push_back(&r);

  const engine::Zone& z = *ctx.zone;
  static const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  engine::CivilTime ls = z.ToLocal(start);
  std::string end_text =
      engine::FormatLocalShort(end, z).substr(0, 5) == engine::FormatLocalShort(start, z).substr(0, 5)
          ? engine::FormatLocalClock(end, z)
          : engine::FormatLocalShort(end, z);
  std::string out = fmt::format(
      "Timeline | {} {}->{} | {}/cell | {} cells\n", kDays[engine::Weekday(engine::CivilToEpoch(ls))],
      engine::FormatLocalShort(start, z), end_text, engine::FormatDuration(step), cells);
  int per_block = std::max<int>(12, (width - 6) / 3 / 12 * 12);
  auto rstrip = [](std::string s) {
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
  };
  for (Seconds b0 = 0; b0 < cells; b0 += per_block) {
    Seconds b1 = std::min<Seconds>(cells, b0 + per_block);
    if (b0) out += "\n";
    std::string day = "Day   ", hour = "Hour  ", min = "Min   ";
    std::string prev_day, prev_hour;
    for (Seconds c = b0; c < b1; ++c) {
      engine::CivilTime t = z.ToLocal(start + c * step);
      std::string d = fmt::format("{:02}", t.day), h = fmt::format("{:02}", t.hour);
      day += (c == b0 || d != prev_day) ? d + " " : "   ";
      hour += (c == b0 || h != prev_hour || d != prev_day) ? h + " " : "   ";
      min += fmt::format("{:02} ", t.minute);
      prev_day = d, prev_hour = h;
    }
    out += rstrip(day) + "\n" + rstrip(hour) + "\n" + rstrip(min) + "\n";
    for (int g : gpus) {
      std::string row = fmt::format("{:<6}", fmt::format("G{}", g));
      for (Seconds c = b0; c < b1; ++c) {
        Seconds cs = start + c * step, ce = cs + step;
        std::string cell = "\u00b7\u00b7";
        bool blackout = false;
        for (const auto& bo : p.blackouts)
          if (bo.Covers(g) && bo.start < ce && bo.end > cs) blackout = true;
        bool mine = false, excl_me = false, excl_other = false;
        std::vector<const Reservation*> shared;
        for (const Reservation* r : on_gpu[g]) {
          if (!(r->start < ce && r->end > cs)) continue;
          if (r->mode == engine::Mode::kExclusive) {
            (r->uid == me ? excl_me : excl_other) = true;
          } else {
            shared.push_back(r);
            if (r->uid == me) mine = true;
          }
        }
        int slots = engine::PeakShareUnits(shared, cs);
        if (blackout)
          cell = "##";
        else if (excl_me)
          cell = "MX";
        else if (excl_other)
          cell = "XX";
        else if (slots)
          cell = std::string(mine ? "M" : "S") + (slots >= 10 ? "+" : std::to_string(slots));
        row += cell + " ";
      }
      out += rstrip(row) + "\n";
    }
  }
  out += "Legend: \u00b7\u00b7 free | ## administrator blackout\n";
  out += "        M1-M9 slots in use (peak), includes mine\n";
  out += "        S1-S9 slots in use (peak), others only | MX/XX exclusive\n";
  for (const auto& bo : p.blackouts)
    if (bo.start < end && bo.end > start)
      out += fmt::format("Blackout: {}{} | {}\n", surface::RangeText(bo.start, bo.end, z),
                         bo.gpus.empty() ? "" : " GPU " + JoinInts(bo.gpus, ","), bo.reason);
  out += fmt::format("Control: --from 20:00 --window 8h --step {} | --step auto\n",
                     engine::FormatDuration(p.slot * 3));
  return out;
}

// The VRAM a booking holds per GPU: what it declared, or for a shared one
// without --mem its slots' part of the smallest GPU's VRAM ("auto~"), when the
// monitor knows that; "-" when nothing says.
std::string VramPerGpu(const engine::Reservation& r, const service::StatusView& view,
                       const engine::Policy& p) {
  if (r.memory_mb) return engine::FormatSizeMb(*r.memory_mb);
  if (r.mode == engine::Mode::kExclusive) return "all";
  std::optional<int64_t> smallest;
  for (int g : r.gpus) {
    if (g < 0 || g >= static_cast<int>(view.gpus.size()) || !view.gpus[g].memory_total_mb) return "-";
    smallest = std::min(smallest.value_or(*view.gpus[g].memory_total_mb), *view.gpus[g].memory_total_mb);
  }
  if (!smallest) return "-";
  return "auto~" + engine::FormatSizeMb(p.AutomaticMemoryMb(*smallest, r.share_units));
}

// From this width `bk st` lists your bookings as a table, as the original
// does: slots, owner, VRAM per GPU, job, start, end and duration.
constexpr int kWideStatusColumns = 110;
// How many of your reservations `bk st` lists (`bk l` lists them all).
constexpr int kStatusRows = 8;

std::string WideRows(const std::vector<service::JobView>& jobs, const std::vector<Reservation>& mine,
                     const service::StatusView& view, const engine::Policy& p, const engine::Zone& zone) {
  auto job_of = [&](const std::string& id) -> std::string {
    for (const auto& v : jobs)
      if (v.reservation.id == id) return std::string(store::kJobStatusNames.Name(v.job.status));
    return "-";
  };
  std::vector<std::vector<std::string>> rows = {
      {"#", "ID", "Mode", "Slots", "GPU", "User", "VRAM/GPU", "Job", "Start", "End", "Dur"}};
  for (size_t i = 0; i < mine.size() && std::cmp_less(i, kStatusRows); ++i) {
    const auto& r = mine[i];
    surface::ShortRange range = surface::ShortRangeText(r.start, r.end, zone);
    rows.push_back({std::to_string(i + 1), r.ShortId(), std::string(engine::ModeName(r.mode)),
                    surface::SlotsText(r, p), JoinInts(r.gpus), Printable(r.username), VramPerGpu(r, view, p),
                    job_of(r.id), range.start, range.end, surface::ListDuration(r.end - r.start)});
  }
  return surface::AlignRows(rows, "rllrllrlllr", "   ");
}

}  // namespace

// Long on purpose: the options of `bk st`, one read, then the sections of the
// page (GPUs, processes, reservations, the timeline) in the order they print.
Result<int> RunStatus(Context& ctx, const std::vector<std::string>& args) {
  return StatusPage(ctx, args, false);
}

Result<int> StatusPage(Context& ctx, const std::vector<std::string>& args, bool with_info) {
  TimelineArgs ta;
  std::optional<std::string> gpu;
  bool timeline = false, verbose = false;
  ArgSpec spec("bk status", "Live GPU status and your reservations.");
  spec.Option("-f,--from", &ta.from, "timeline start (with -t)", "TIME");
  spec.Option("-w,--window", &ta.window, "timeline window (with -t)", "DUR");
  spec.Option("-s,--step", &ta.step, "timeline cell size or auto (with -t)", "STEP");
  spec.Option("-g,--gpu", &gpu, "only these GPUs", "LIST");
  spec.Flag("-t,--timeline", &timeline, "add the timeline");
  spec.Flag("-v,--verbose", &verbose, "processes and other users' reservations");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  const engine::Policy& p = ledger->policy();
  BK_ASSIGN_OR_RETURN(std::vector<int> gpus, GpuFilter(gpu, p.gpu_count));
  Seconds now = ledger->Now();
  // Plain `bk st` needs only what covers now and the first of your
  // reservations it lists; the timeline and -v need more.
  Seconds from = now, to = now + 1;
  if (verbose) to = now + p.horizon + p.max_duration;
  std::optional<TimelineShape> shape;
  if (timeline) {
    BK_ASSIGN_OR_RETURN(shape, ShapeTimeline(ctx, p, ta, now, ctx.config.timeline_hours * 3600));
    from = std::min(from, shape->start);
    to = std::max(to, shape->end());
  }
  BK_ASSIGN_OR_RETURN(service::StatusView view, ledger->Status(from, to, kStatusRows));
  uint32_t me = ledger->actor().uid;
  int width = surface::TerminalWidth(1, 100);
  bool model = width >= 88;
  int model_w = ModelWidth(view.snapshot, gpus, width);
  // What the monitor would call each process (`-v`): whose booking covers it now.
  std::vector<monitor::ActiveBooking> bookings_now;
  for (const auto& r : view.reservations)
    if (verbose && r.ActiveAt(now))
      bookings_now.push_back(
          {r.id, r.uid, r.username, r.gpus, r.mode == engine::Mode::kExclusive, r.start, r.end});
  std::string out = "GPU status\n";
  out += model ? fmt::format("{:<4} {:<{}} {:>5} {:>16} {:>4} {:<10} {:>4} {:>3} {:<11}\n", "GPU", "Model",
                             model_w, "Util", "VRAM free/total", "Proc", "State", "Used", "Max", "X-free")
               : fmt::format("{:<4} {:>5} {:>16} {:>4} {:<10} {:>4} {:>3} {:<11}\n", "GPU", "Util",
                             "VRAM free/total", "Proc", "State", "Used", "Max", "X-free");
  for (int g : gpus) {
    const service::GpuView& v = view.gpus[g];
    const gpu::DeviceSample& d = view.snapshot.devices[g];
    const service::GpuUsage& u = view.usage[g];
    std::set<uint32_t> owners(u.owners_now.begin(), u.owners_now.end());
    int used = u.used_units;
    bool excl = u.exclusive;
    std::string state(gpu::LiveStatusName(v.live_status));
    int procs = 0;
    for (const auto& pr : d.processes) {
      if (gpu::IsSystemProcess(pr.command)) continue;
      ++procs;
      if (!pr.uid || !owners.count(*pr.uid)) state = "unreserved";
    }
    std::string name = surface::FitWords(d.name, model_w);
    name += std::string(model_w - surface::DisplayWidth(name), ' ');
    std::string util = v.utilization_percent ? fmt::format("{}%", *v.utilization_percent) : "-";
    std::string used_text = excl ? "X" : std::to_string(used);
    std::string xfree = WhenText(u.next_free, now, *ctx.zone);
    if (model)
      out += fmt::format("{:<4} {} {:>5} {:>16} {:>4} {:<10} {:>4} {:>3} {:<11}\n", g, name, util, MemText(v),
                         procs, state, used_text, p.share_capacity, xfree);
    else
      out += fmt::format("{:<4} {:>5} {:>16} {:>4} {:<10} {:>4} {:>3} {:<11}\n", g, util, MemText(v), procs,
                         state, used_text, p.share_capacity, xfree);
    if (verbose)
      for (const auto& pr : d.processes)
        out += fmt::format("     pid={} uid={} user={} sm={} mem={}MiB state={} cmd={}\n", pr.pid,
                           pr.uid ? std::to_string(*pr.uid) : "?", Printable(pr.username),
                           pr.sm_utilization_percent ? fmt::format("{}%", *pr.sm_utilization_percent) : "-",
                           pr.gpu_memory_mb, monitor::Classify(pr, g, bookings_now).status,
                           Printable(pr.command.substr(0, 60)));
  }
  if (!view.snapshot.ok()) out += TelemetryNote(view.snapshot) + "\n";
  std::vector<Reservation> active;
  for (const auto& r : view.reservations)
    if (r.ActiveAt(now)) active.push_back(r);
  const std::vector<Reservation>& mine = view.mine;
  out += fmt::format("Reservations: {} active, {} yours | `bk l` details | `bk tl` timeline\n",
                     view.active_count, view.mine_total);
  // Your jobs, read once: the wide table's Job column and the worker line.
  BK_ASSIGN_OR_RETURN(auto jobs, ledger->Jobs({true}));
  if (width >= kWideStatusColumns && !mine.empty()) out += WideRows(jobs, mine, view, p, *ctx.zone);
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < mine.size() && std::cmp_less(i, kStatusRows) && width < kWideStatusColumns; ++i) {
    const auto& r = mine[i];
    surface::ShortRange range = surface::ShortRangeText(r.start, r.end, *ctx.zone);
    if (!range.offsets) range.end = WhenText(r.end, r.start, *ctx.zone);
    rows.push_back({std::to_string(i + 1), r.ShortId(), std::string(engine::ModeName(r.mode)), "slots",
                    surface::SlotsText(r, p), "GPU", JoinInts(r.gpus), range.start + "->" + range.end});
  }
  out += surface::AlignRows(rows, "rlllrlll", "   ");
  if (view.mine_total > kStatusRows)
    out += fmt::format("  +{} more; use `bk l` for details\n", view.mine_total - kStatusRows);
  BK_ASSIGN_OR_RETURN(std::string worker_line, WorkerNotice(ctx, jobs, now));
  out += worker_line;
  if (verbose) {
    std::vector<std::vector<std::string>> others;
    for (const auto& r : active)
      if (r.uid != me)
        others.push_back({r.ShortId(), std::string(engine::ModeName(r.mode)), "slots",
                          surface::SlotsText(r, p), "GPU", JoinInts(r.gpus), Printable(r.username),
                          surface::RangeText(r.start, r.end, *ctx.zone)});
    if (!others.empty()) out += "Other reservations\n" + surface::AlignRows(others, "lllrllll", "  ");
  }
  // The administrators' warnings head the page: they may change what the reader does next.
  const std::vector<store::Announcement> announcements = ActiveAnnouncements(ctx);
  PrintAnnouncementLines(ctx, announcements, store::AnnouncementLevel::kWarning);
  std::fputs(out.c_str(), ctx.out);
  PrintUnreadNotice(ctx);
  if (shape) std::fputs(("\n" + Timeline(ctx, view, me, p, *shape, gpus)).c_str(), ctx.out);
  if (with_info)
    PrintAnnouncementLines(ctx, announcements, store::AnnouncementLevel::kInfo,
                           store::AnnouncementLevel::kInfo);
  return 0;
}

Result<int> RunTimeline(Context& ctx, const std::vector<std::string>& args) {
  TimelineArgs ta;
  std::optional<std::string> gpu, window_arg;
  ArgSpec spec("bk timeline", "Aligned reservation timeline: M = includes yours, S = others, X = exclusive.");
  spec.Positional("window", &window_arg, "window length, e.g. 8h (default timeline_hours)");
  spec.Option("-f,--from", &ta.from, "start (friendly time; the past is allowed)", "TIME");
  spec.Option("-w,--window", &ta.window, "window length", "DUR");
  spec.Option("-s,--step", &ta.step,
              "cell size (a slot multiple) or auto; default one slot, or a zoom level (5m, 15m, 1h, 6h, 1d) "
              "that fits the terminal when the window is longer",
              "STEP");
  spec.Option("-g,--gpu", &gpu, "only these GPUs", "LIST");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  if (!ta.window) ta.window = window_arg;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  const engine::Policy& p = ledger->policy();
  BK_ASSIGN_OR_RETURN(std::vector<int> gpus, GpuFilter(gpu, p.gpu_count));
  BK_ASSIGN_OR_RETURN(TimelineShape shape,
                      ShapeTimeline(ctx, p, ta, ledger->Now(), ctx.config.timeline_hours * 3600));
  BK_ASSIGN_OR_RETURN(service::StatusView view, ledger->Status(shape.start, shape.end(), 0));
  std::fputs(Timeline(ctx, view, ledger->actor().uid, p, shape, gpus).c_str(), ctx.out);
  return 0;
}

// Long on purpose: the options of `bk slots` (the booking grammar's), then one
// search and its rendering, with the line that books each suggestion.
Result<int> RunSlots(Context& ctx, const std::vector<std::string>& args) {
  BookingArgs a;
  std::optional<std::string> mode_word, from, limit;
  std::vector<std::string> rest = args;
  bool exclusive = false;
  if (!rest.empty()) {
    if (auto m = engine::ParseMode(rest[0]); m && !AllDigits(rest[0])) {
      exclusive = *m == engine::Mode::kExclusive;
      rest.erase(rest.begin());
    }
  }
  ArgSpec spec("bk slots", "Read-only: the earliest legal options for a request, best first.");
  AddBookingOptions(spec, a, false, false);
  spec.Option("--mode", &a.mode, "s, shared, x or exclusive", "MODE");
  spec.Option("-f,--from", &from, "search from this time (default now)", "TIME");
  spec.Option("--limit", &limit, "how many options (1-20, default 5)", "N");
  if (auto done = ParseOrHelp(ctx, spec, rest)) return *done;
  BK_ASSIGN_OR_RETURN(int n, WholeNumberOption(limit, 1, 20, 5, "--limit must be between 1 and 20"));
  BK_ASSIGN_OR_RETURN(service::CreateRequest req, ToRequest(ctx, a, exclusive));
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  const engine::Policy& p = ledger->policy();
  Seconds now = ledger->Now();
  Seconds start = now;
  if (from) {
    BK_ASSIGN_OR_RETURN(start, engine::ParseViewTime(*from, now, *ctx.zone));
  }
  BK_ASSIGN_OR_RETURN(service::SlotsResult r, ledger->Slots(req, start, n));
  std::string mode = engine::ModeName(req.mode) == std::string("shared") ? "shared" : "exclusive";
  if (a.json || a.compact) {
    std::string doc = surface::SlotsDoc(r, req);
    ctx.Print(a.compact ? doc : surface::Dump(doc, surface::JsonStyle::kPretty));
    return r.options.empty() ? 3 : 0;
  }
  if (r.options.empty()) {
    ctx.Print(fmt::format("No legal {} slot found in the next {}h.", mode, p.queue_search / 3600));
    return 3;
  }
  std::string share = req.mode == engine::Mode::kShared
                          ? fmt::format(" | slots {}/{}", req.share_units.value_or(1), p.share_capacity)
                          : "";
  ctx.Print(fmt::format("Earliest {} options | {} GPU | {}{} | local time | read-only", mode, req.count,
                        engine::FormatDuration(req.duration), share));
  bool wide = surface::TerminalWidth(1, 100) >= 88;
  if (wide)
    ctx.Print(
        fmt::format(" # {:<12} {:<22} {:<22} {:<8} {:>10}", "GPUs", "Start", "End", "Live", "Free now"));
  else
    ctx.Print(fmt::format(" # {:<8} {:<11} {:<11} {:<8} {:>8}", "GPUs", "Start", "End", "Live", "Free"));
  for (size_t i = 0; i < r.options.size(); ++i) {
    const auto& o = r.options[i];
    std::string free = o.free_now_mb ? engine::FormatSizeMb(*o.free_now_mb) : "unknown";
    if (wide)
      ctx.Print(fmt::format("{:>2} {:<12} {:<22} {:<22} {:<8} {:>10}", i + 1, JoinInts(o.gpus),
                            engine::FormatLocal(o.start, *ctx.zone), engine::FormatLocal(o.end, *ctx.zone),
                            gpu::LiveStatusName(o.live), free));
    else
      ctx.Print(fmt::format("{:>2} {:<8} {:<11} {:<11} {:<8} {:>8}", i + 1, JoinInts(o.gpus),
                            engine::FormatLocalShort(o.start, *ctx.zone),
                            engine::FormatLocalShort(o.end, *ctx.zone), gpu::LiveStatusName(o.live), free));
  }
  if (r.truncated_combinations) ctx.Print("note: evaluated the best 2048 GPU combinations");
  const auto& best = r.options[0];
  ctx.Print("Book option 1: " + BookCommand(a, req, best.gpus, best.start, *ctx.zone));
  return 0;
}

// Long on purpose: `bk g` is one short page (exclusive holds to avoid, your
// bookings now, what to run), each part printed from the same read.
Result<int> RunGpu(Context& ctx, const std::vector<std::string>& args) {
  std::optional<std::string> count_text;
  ArgSpec spec("bk gpu", "Which GPU you can use now, or a read-only suggestion for COUNT GPUs.");
  spec.Positional("count", &count_text, "suggest this many GPUs together");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(client::Ledger * ledger, ctx.Ledger());
  const engine::Policy& p = ledger->policy();
  BK_ASSIGN_OR_RETURN(int count,
                      WholeNumberOption(count_text, 1, p.gpu_count, 1,
                                        fmt::format("count must be between 1 and {}", p.gpu_count)));
  Seconds now = ledger->Now();
  // What runs now is all this page shows.
  BK_ASSIGN_OR_RETURN(service::StatusView view, ledger->Status(now, now + 1, 0));
  uint32_t me = ledger->actor().uid;
  // Other users' running exclusive reservations first: stay off those GPUs.
  int shown = 0, more = 0;
  for (const auto& r : view.reservations) {
    if (r.uid == me || !r.ActiveAt(now) || r.start > now || r.mode != engine::Mode::kExclusive) continue;
    if (shown < 3) {
      ctx.Print(fmt::format("avoid GPU {}: exclusive to {} until {} ({} left)", JoinInts(r.gpus), r.username,
                            engine::FormatLocalClock(r.end, *ctx.zone), engine::FormatDuration(r.end - now)));
      ++shown;
    } else {
      ++more;
    }
  }
  if (more) ctx.Print(fmt::format("+{} more exclusive reservations; use `bk st`", more));
  std::vector<Reservation> running;
  for (const auto& r : view.reservations)
    if (r.uid == me && r.ActiveAt(now) && r.start <= now) running.push_back(r);
  std::sort(running.begin(), running.end(), [](const Reservation& a, const Reservation& b) {
    return std::tie(a.end, a.id) < std::tie(b.end, b.id);
  });
  if (!count_text && !running.empty()) {
    std::set<int> all;
    for (const auto& r : running) all.insert(r.gpus.begin(), r.gpus.end());
    ctx.Print(fmt::format("GPU {} | yours now | {} active reservation{}", JoinInts({all.begin(), all.end()}),
                          running.size(), running.size() == 1 ? "" : "s"));
    ctx.Print(fmt::format("{:>4} {:<8} {:<9} {:>5} {:<10} {:<8} {:>6} {:>12}", "#", "ID", "Mode", "Slots",
                          "GPU", "Until", "Left", "VRAM/GPU"));
    for (size_t i = 0; i < running.size() && i < 8; ++i) {
      const auto& r = running[i];
      ctx.Print(fmt::format("{:>4} {:<8} {:<9} {:>5} {:<10} {:<8} {:>6} {:>12}", i + 1, r.ShortId(),
                            engine::ModeName(r.mode), surface::SlotsText(r, p), JoinInts(r.gpus),
                            engine::FormatLocalClock(r.end, *ctx.zone), engine::FormatDuration(r.end - now),
                            VramPerGpu(r, view, p)));
    }
    if (running.size() > 8) ctx.Print(fmt::format("  +{} more; use `bk l`", running.size() - 8));
    ctx.Print("Live GPU state");
    for (int g : all) ctx.Print(fmt::format("  GPU {}: {}", g, LiveLine(view.gpus[g])));
    if (!view.snapshot.ok()) ctx.Print(TelemetryNote(view.snapshot));
    // How to use them, numbered as above (the numbers `bk run NUMBER` takes).
    if (running.size() == 1) {
      ctx.Print("run: bk run -- COMMAND");
    } else {
      ctx.Print("run one: bk run NUMBER -- COMMAND");
      ctx.Print(fmt::format("run all: bk run -- COMMAND (stops when the earliest reservation ends at {})",
                            engine::FormatLocalClock(running[0].end, *ctx.zone)));
    }
    return 0;
  }
  service::CreateRequest req;
  req.count = count;
  req.duration = std::max<Seconds>(Seconds{30 * 60} / p.slot * p.slot, p.slot);
  BK_ASSIGN_OR_RETURN(service::Recommendation rec, ledger->Recommend(req));
  std::string dur = engine::FormatDuration(req.duration);
  if (!rec.available || !rec.placement) {
    ctx.Print(count == 1 ? fmt::format("GPU - | no legal {} slot in the next {}h", dur, p.queue_search / 3600)
                         : fmt::format("GPU - | no legal {}-GPU {} slot in the next {}h", count, dur,
                                       p.queue_search / 3600));
    return 3;
  }
  const auto& pl = *rec.placement;
  std::string when = pl.start <= now ? "now" : "suggested " + engine::FormatLocal(pl.start, *ctx.zone);
  std::string at = pl.start <= p.grid().Floor(now)
                       ? ""
                       : fmt::format(" --at \"{}\"", engine::FormatLocalShort(pl.start, *ctx.zone));
  if (count == 1) {
    ctx.Print(fmt::format("GPU {} | {} | {}", pl.gpus[0], pl.start <= now ? "suggested now" : when,
                          LiveLine(view.gpus[pl.gpus[0]])));
  } else {
    ctx.Print(
        fmt::format("{} GPUs | {} | {}", count, pl.start <= now ? "suggested now" : when, JoinInts(pl.gpus)));
    for (int g : pl.gpus) ctx.Print(fmt::format("  GPU {}: {}", g, LiveLine(view.gpus[g])));
  }
  if (!view.snapshot.ok()) ctx.Print(TelemetryNote(view.snapshot));
  ctx.Print(fmt::format("book: bk {} {} --gpu {}{}", count, dur, JoinInts(pl.gpus), at));
  return 0;
}

}  // namespace bk::cli
