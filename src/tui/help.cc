#include "tui/help.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "engine/parse.h"
#include "surface/text.h"
#include "tui/screen.h"

namespace bk::tui {

std::vector<std::string> HelpLines(const Glyphs& g) {
  auto glyph = [](char32_t c) { return Utf8(c); };
  return {
      "MOVE",
      "  Left/Right h/l      cursor one column in time (Shift: 12 columns)",
      "  Up/Down k/j         GPU (in the list: reservation)",
      "  PgUp/PgDn           a page back or ahead; Home/End: first or last column",
      "  + / -               zoom in or out (5m, 15m, 1h, 6h, 1d per column)",
      "  n                   back to NOW",
      "  Tab                 timeline or reservations list",
      "  mouse click         a cell or a reservation",
      "ACT",
      "  Enter               details of the booking at the cursor (or of the GPU)",
      "  a                   book at the cursor",
      "  e                   edit yours: move, resize, or renew one already running",
      "  d                   cancel yours (asks first)",
      "  u                   your GPU usage        i  who administers this",
      "  /                   show one user's bookings only",
      "  r                   read the ledger again  q/Esc  quit",
      "IN THE EDITOR",
      "  Left/Right          start one slot earlier or later (Shift: an hour)",
      "  [ ]  { }            length one slot (an hour) shorter or longer",
      "  Up/Down, Space      cursor GPU; Space pins it or frees it (auto)",
      "  1-9                 GPU count (the service picks them)",
      "  s / x               shared or exclusive; m VRAM; t start; D length",
      "  Enter / Esc         confirm or leave; READY or BLOCKED says what Enter will do",
      "TIMELINE",
      fmt::format("  {}  free      {}  partly shared   {}  shared full    {}  exclusive", glyph(g.free),
                  glyph(g.partly), glyph(g.full), glyph(g.exclusive)),
      fmt::format("  {}  yours     {}  blackout        {}  NOW            {}/{}  preview ready/blocked",
                  glyph(g.mine), glyph(g.blackout), glyph(g.now), glyph(g.preview), glyph(g.blocked)),
      "  Cap: shared slots in use now out of the maximum (X: exclusive, OFF: disabled)",
      "  Util, Free: live utilisation and free VRAM (GiB) from the monitor",
  };
}

std::vector<std::string> ReservationLines(const engine::Reservation& r, const Data& d,
                                          const engine::Zone& zone) {
  bool mine = r.uid == d.me;
  std::vector<std::string> lines = {
      "ID: " + r.id,
      fmt::format("Owner: {} (UID {}){}", r.username, r.uid,
                  mine ? " - yours: e edits, d cancels" : " - read-only"),
      fmt::format("Status: {}", r.end <= d.live.now     ? "ended"
                                : r.start <= d.live.now ? "running now"
                                                        : "booked"),
      fmt::format("Mode: {}", r.mode == engine::Mode::kShared
                                  ? "shared, " + surface::SlotsText(r, d.policy) + " slots per GPU"
                                  : std::string("exclusive")),
      "GPUs: " + JoinInts(r.gpus, ","),
      "VRAM per GPU: " + (r.memory_mb ? engine::FormatSizeMb(*r.memory_mb) : std::string("automatic")),
      "Start: " + engine::FormatLocal(r.start, zone),
      "End: " + engine::FormatLocal(r.end, zone),
      "Duration: " + surface::ListDuration(r.end - r.start),
  };
  if (r.cpus || r.ram_mb)
    lines.push_back(fmt::format("Host: {} CPUs, {} RAM", r.cpus, engine::FormatSizeMb(r.ram_mb)));
  if (r.edit_count) lines.push_back(fmt::format("Changed {} times", r.edit_count));
  lines.push_back(fmt::format("CLI: bk h {}", r.ShortId()));
  return lines;
}

std::vector<std::string> GpuLines(int gpu, const Data& d, const engine::Zone& zone) {
  std::vector<std::string> lines;
  if (gpu < static_cast<int>(d.live.snapshot.devices.size())) {
    const auto& dev = d.live.snapshot.devices[gpu];
    lines.push_back(fmt::format("Model: {}", dev.name));
    lines.push_back(fmt::format("Utilization: {}", dev.utilization_percent
                                                       ? fmt::format("{}%", *dev.utilization_percent)
                                                       : "unknown"));
    if (dev.memory_used_mb && dev.memory_total_mb)
      lines.push_back(fmt::format("VRAM: {} used of {}", engine::FormatSizeMb(*dev.memory_used_mb),
                                  engine::FormatSizeMb(*dev.memory_total_mb)));
    if (dev.temperature_c) lines.push_back(fmt::format("Temperature: {}C", *dev.temperature_c));
    lines.push_back(fmt::format("Telemetry: {}", gpu::SourceName(dev.source)));
  } else {
    lines.push_back("No live telemetry for this GPU");
  }
  if (!d.policy.GpuEnabled(gpu)) lines.push_back("Disabled by the administrator");
  lines.push_back("RESERVATIONS");
  size_t before = lines.size();
  if (gpu < static_cast<int>(d.by_gpu.size()))
    for (int i : d.by_gpu[gpu]) {
      const auto& r = d.reservations[i];
      if (r.end <= d.live.now) continue;
      lines.push_back(fmt::format("  {} {} {} {}", r.ShortId(), r.username,
                                  r.mode == engine::Mode::kShared ? "shared" : "exclusive",
                                  surface::RangeText(r.start, r.end, zone)));
    }
  if (lines.size() == before) lines.push_back("  none ahead");
  lines.push_back("PROCESSES");
  before = lines.size();
  if (gpu < static_cast<int>(d.live.snapshot.devices.size()))
    for (const auto& p : d.live.snapshot.devices[gpu].processes)
      lines.push_back(fmt::format("  pid {} {} {} {}", p.pid, p.username,
                                  engine::FormatSizeMb(p.gpu_memory_mb), p.command));
  if (lines.size() == before) lines.push_back("  none");
  return lines;
}

}  // namespace bk::tui
