#include "tui/fallback.h"

#include <fmt/format.h>

#include "base/strings.h"
#include "surface/text.h"

namespace bk::tui {

std::string FallbackText(const service::StatusView& view, const engine::Policy& policy,
                         const engine::Zone& zone, const std::vector<std::string>& admin_lines,
                         const std::string& why) {
  std::string out =
      fmt::format("GPUBK TUI fallback ({}); bk st and bk tl show the same at any terminal\n", why);
  for (const auto& line : admin_lines) out += line + "\n";
  out += fmt::format("share={} slots/GPU | GPUs={}/{} enabled", policy.share_capacity,
                     policy.EnabledGpus().size(), policy.gpu_count);
  if (!policy.disabled_gpus.empty())
    out += " | disabled by the administrator: " + JoinInts(policy.disabled_gpus, ",");
  out += "\n";
  int shown = 0;
  for (const auto& r : view.reservations) {
    if (r.end <= view.now) continue;
    if (shown++ == 0) out += "active reservations:\n";
    out +=
        fmt::format("- {} {} {} GPU={} {}\n", r.ShortId(), r.username,
                    r.mode == engine::Mode::kShared ? "shared " + surface::SlotsText(r, policy) : "exclusive",
                    JoinInts(r.gpus, ","), surface::RangeText(r.start, r.end, zone));
  }
  if (shown == 0) out += "no active reservations\n";
  return out;
}

}  // namespace bk::tui
