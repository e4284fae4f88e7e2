#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "engine/parse.h"
#include "service/impl.h"

namespace bk::service {

Status ValidateOpId(const std::string& op_id) {
  if (op_id.empty() || op_id.size() > 128)
    return Invalid("operation ID must contain 1-128 characters, e.g. --op-id experiment-001");
  for (char c : op_id) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == ':' || c == '-';
    if (!ok) return Invalid("operation ID contains unsupported characters; use letters, digits and . _ : -");
  }
  return Ok();
}

namespace {

std::string RangeText(const engine::Policy& p) {
  return p.gpu_count == 1 ? "GPU 0" : fmt::format("GPUs 0-{}", p.gpu_count - 1);
}

Status CheckGpuIndexes(const engine::Policy& p, const std::vector<int>& gpus) {
  for (int g : gpus)
    if (g < 0 || g >= p.gpu_count)
      return Invalid(fmt::format("GPU index {} is out of range; this host has {}", g, RangeText(p)));
  return Ok();
}

}  // namespace

std::vector<int> Eligible(const engine::Policy& p, const std::vector<int>& exclude) {
  std::vector<int> out;
  for (int g : p.EnabledGpus())
    if (std::find(exclude.begin(), exclude.end(), g) == exclude.end()) out.push_back(g);
  return out;
}

namespace {

// How a user writes `mb` back in a request, rounded down so it fits.
std::string RequestSize(int64_t mb) {
  return mb >= 1024 ? fmt::format("{}g", mb / 1024) : fmt::format("{}m", mb);
}

}  // namespace

Status CheckVramCanFit(const engine::Policy& p, const Advice& advice, const CreateRequest& r) {
  if (!r.memory_mb) return Ok();
  bool shared = r.mode == engine::Mode::kShared;
  std::vector<int> candidates = r.gpus.empty() ? Eligible(p, r.exclude) : r.gpus;
  int fits = 0;
  int largest_gpu = -1;
  int64_t largest = 0;
  for (int g : candidates) {
    if (g < 0 || static_cast<size_t>(g) >= advice.views.size() || !advice.views[g].memory_total_mb)
      return Ok();  // a GPU of unknown size might hold it: the calendar decides
    int64_t total = *advice.views[g].memory_total_mb;
    int64_t cap = shared ? p.UsableMemoryMb(total) : total;
    if (cap >= *r.memory_mb) ++fits;
    if (cap > largest) largest = cap, largest_gpu = g;
  }
  if (fits >= r.count || largest_gpu < 0) return Ok();
  std::string want = engine::FormatSizeMb(*r.memory_mb);
  if (fits > 0)
    return Invalid(
        fmt::format("{} of VRAM per GPU fits only {} of the {} eligible GPU(s), and {} were requested; "
                    "ask for {} GPU(s) or less memory",
                    want, fits, candidates.size(), r.count, fits));
  int64_t total = *advice.views[largest_gpu].memory_total_mb;
  std::string where =
      shared ? fmt::format("GPU {} has {}, {} for shared bookings after the {} reserve", largest_gpu,
                           engine::FormatSizeMb(total), engine::FormatSizeMb(largest),
                           engine::FormatSizeMb(p.shared_memory_reserve_mb))
             : fmt::format("GPU {} has {}", largest_gpu, engine::FormatSizeMb(total));
  std::string which = candidates.size() == p.EnabledGpus().size() ? "any GPU here"
                      : candidates.size() == 1                    ? fmt::format("GPU {}", candidates[0])
                                                                  : "any of GPUs " + JoinInts(candidates);
  return Invalid(fmt::format("{} of VRAM per GPU is more than {} can hold ({}); ask for at most {}", want,
                             which, where, RequestSize(largest)));
}

Status ValidateCreate(const engine::Policy& p, CreateRequest& r, std::vector<std::string>* warnings) {
  if (r.count < 1 || r.count > p.gpu_count)
    return Invalid(fmt::format("GPU count must be between 1 and {}", p.gpu_count));
  int slot_min = static_cast<int>(p.slot / 60);
  if (r.duration <= 0 || r.duration % p.slot != 0)
    return Invalid(fmt::format("duration must be a positive multiple of {} minutes", slot_min));
  if (r.mode == engine::Mode::kExclusive) {
    if (r.share_units) return Invalid("--share applies only to shared reservations; drop it or book shared");
  } else {
    int u = r.share_units.value_or(1);
    if (u < 1 || u > p.share_capacity)
      return Invalid(fmt::format("share slots must be between 1 and {}", p.share_capacity));
    r.share_units = u;
  }
  if (r.memory_mb && *r.memory_mb <= 0) return Invalid("memory must be positive");
  // The same bounds as the CLI's parsers, for requests that arrive as JSON.
  constexpr int64_t kMaxMb = int64_t{1} << 40;
  if (r.memory_mb && *r.memory_mb > kMaxMb) return Invalid("memory must be at most 1073741824g");
  if (r.ram_mb && *r.ram_mb > kMaxMb) return Invalid("--ram must be at most 1073741824g");
  if (r.cpus && *r.cpus > 1000000) return Invalid("--cpus must be at most 1000000");
  if (!r.gpus.empty() && !r.exclude.empty()) return Invalid("--gpu and --exclude-gpu cannot be combined");
  BK_TRY(CheckGpuIndexes(p, r.gpus));
  BK_TRY(CheckGpuIndexes(p, r.exclude));
  if (!r.gpus.empty()) {
    std::vector<int> sorted = r.gpus;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return Invalid("--gpu must not contain repeated GPU indexes");
    if (static_cast<int>(sorted.size()) != r.count)
      return Invalid(
          fmt::format("--gpu lists {} GPU(s) but the request is for {}; the first number is a GPU count, "
                      "--gpu names devices (bk {} DUR --gpu {})",
                      sorted.size(), r.count, sorted.size(), JoinInts(sorted)));
    for (int g : sorted)
      if (!p.GpuEnabled(g)) return Invalid(fmt::format("GPU {} is disabled by the administrator", g));
    r.gpus = sorted;
  } else {
    std::vector<int> eligible = Eligible(p, r.exclude);
    if (static_cast<int>(eligible.size()) < r.count) {
      std::string disabled = p.disabled_gpus.empty() ? "none" : JoinInts(p.disabled_gpus);
      std::string excluded = r.exclude.empty() ? "none" : JoinInts(r.exclude);
      return Invalid(
          fmt::format("requested {} GPU(s), but only {} are eligible (administrator-disabled={}; "
                      "request-excluded={})",
                      r.count, eligible.size(), disabled, excluded));
    }
  }
  if (r.op_id) BK_TRY(ValidateOpId(*r.op_id));
  if (r.cpus && *r.cpus < 1) return Invalid("--cpus must be a whole number of CPUs such as 4");
  if (r.ram_mb && *r.ram_mb < 1) return Invalid("--ram must be positive");
  if (p.host_cpus && r.cpus && *r.cpus > *p.host_cpus)
    return Invalid(fmt::format("--cpus {} exceeds this host's budget of {} CPUs", *r.cpus, *p.host_cpus));
  if (p.host_ram_mb && r.ram_mb && *r.ram_mb > *p.host_ram_mb)
    return Invalid(fmt::format("--ram {} exceeds this host's budget of {}", engine::FormatSizeMb(*r.ram_mb),
                               engine::FormatSizeMb(*p.host_ram_mb)));
  if (warnings && !p.host_cpus && r.cpus)
    warnings->push_back("this host declares no CPU budget; --cpus is recorded but not enforced");
  if (warnings && !p.host_ram_mb && r.ram_mb)
    warnings->push_back("this host declares no RAM budget; --ram is recorded but not enforced");
  // Host budget declarations default to the policy's when budgets are on.
  if (p.host_cpus && !r.cpus) r.cpus = p.default_booking_cpus;
  if (p.host_ram_mb && !r.ram_mb) r.ram_mb = p.default_booking_ram_mb;
  return Ok();
}

engine::PlacementRequest ToPlacement(const CreateRequest& r, engine::Seconds start, bool allow_queue,
                                     const engine::StartRule* rule) {
  engine::PlacementRequest p;
  p.count = r.count;
  p.duration = r.duration;
  p.mode = r.mode;
  p.share_units = r.share_units.value_or(1);
  p.memory_mb = r.memory_mb;
  p.cpus = r.cpus.value_or(0);
  p.ram_mb = r.ram_mb.value_or(0);
  p.start = start;
  p.allow_queue = allow_queue;
  p.pinned = r.gpus;
  p.excluded = r.exclude;
  p.rule = rule;
  return p;
}

}  // namespace bk::service
