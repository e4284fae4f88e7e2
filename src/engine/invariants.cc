#include "engine/invariants.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "engine/civil_time.h"

namespace bk::engine {
namespace {

std::string Iso(Seconds t) {
  CivilTime c = EpochToCivil(t);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", c.year, c.month, c.day, c.hour, c.minute,
                     c.second);
}

// Sweeps +/- deltas in time order; reports the first instant a limit is broken.
struct Sweep {
  std::map<Seconds, std::vector<int64_t>> deltas;  // time -> per-dimension delta
  void Add(Seconds s, Seconds e, std::vector<int64_t> amount) {
    auto& a = deltas[s];
    auto& b = deltas[e];
    a.resize(amount.size());
    b.resize(amount.size());
    for (size_t i = 0; i < amount.size(); ++i) a[i] += amount[i], b[i] -= amount[i];
  }
};

}  // namespace

std::vector<std::string> CheckInvariants(const Policy& p, const std::vector<Footprint>& active,
                                         const std::vector<std::string>* names) {
  std::vector<std::string> out;
  // " (a, b)": the named footprints on `gpu` (every one when -1) at instant t.
  auto holders = [&](int gpu, Seconds t) {
    if (!names) return std::string();
    std::string list;
    for (size_t i = 0; i < active.size() && i < names->size(); ++i) {
      const Footprint& f = active[i];
      bool on = gpu < 0 || std::find(f.gpus.begin(), f.gpus.end(), gpu) != f.gpus.end();
      if (on && f.start <= t && t < f.end) list += (list.empty() ? "" : ", ") + (*names)[i];
    }
    return " (" + list + ")";
  };
  // Per GPU: [shared units, exclusive holds, any holds].
  std::vector<Sweep> gpus(p.gpu_count);
  Sweep host;
  for (const auto& f : active) {
    if (f.end <= f.start) {
      out.push_back(fmt::format("a reservation ends before it starts ({} -> {})", Iso(f.start), Iso(f.end)));
      continue;
    }
    for (int g : f.gpus) {
      if (g < 0 || g >= p.gpu_count) {
        out.push_back(fmt::format("a reservation names GPU {} but this host has {}", g, p.gpu_count));
        continue;
      }
      bool excl = f.mode == Mode::kExclusive;
      gpus[g].Add(f.start, f.end, {excl ? 0 : f.share_units, excl ? 1 : 0, 1});
    }
    host.Add(f.start, f.end, {f.cpus, f.ram_mb});
  }
  for (int g = 0; g < p.gpu_count; ++g) {
    std::vector<int64_t> level(3, 0);
    for (const auto& [t, d] : gpus[g].deltas) {
      for (size_t i = 0; i < d.size(); ++i) level[i] += d[i];
      if (level[0] > p.share_capacity) {
        out.push_back(fmt::format("GPU {} shared slots over capacity ({}/{}) at {}{}", g, level[0],
                                  p.share_capacity, Iso(t), holders(g, t)));
        break;
      }
      if (level[1] > 0 && level[2] > 1) {
        out.push_back(
            fmt::format("GPU {} exclusive reservation overlaps another at {}{}", g, Iso(t), holders(g, t)));
        break;
      }
    }
  }
  std::vector<int64_t> level(2, 0);
  for (const auto& [t, d] : host.deltas) {
    for (size_t i = 0; i < d.size(); ++i) level[i] += d[i];
    if (p.host_cpus && level[0] > *p.host_cpus) {
      out.push_back(fmt::format("host CPU budget over ({}/{}) at {}{}", level[0], *p.host_cpus, Iso(t),
                                holders(-1, t)));
      break;
    }
    if (p.host_ram_mb && level[1] > *p.host_ram_mb) {
      out.push_back(fmt::format("host RAM budget over ({}/{} MiB) at {}{}", level[1], *p.host_ram_mb, Iso(t),
                                holders(-1, t)));
      break;
    }
  }
  return out;
}

}  // namespace bk::engine
