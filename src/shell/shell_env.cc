#include "shell/shell_env.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "engine/parse.h"

namespace bk::shell {
namespace {

using nlohmann::json;

bool ActiveNow(const engine::Reservation& r, engine::Seconds now) {
  return r.ActiveAt(now) && r.start <= now;
}

std::vector<std::string> Tokens(const std::vector<int>& gpus, const gpu::Snapshot& snap) {
  std::vector<std::string> uuids, indexes;
  bool all = true;
  for (int g : gpus) {
    indexes.push_back(std::to_string(g));
    auto it = std::find_if(snap.devices.begin(), snap.devices.end(),
                           [&](const gpu::DeviceSample& d) { return d.index == g; });
    if (it != snap.devices.end() && gpu::IsValidDeviceUuid(it->uuid))
      uuids.push_back(it->uuid);
    else
      all = false;
  }
  return all ? uuids : indexes;
}

}  // namespace

bool NeedsSnapshot(const std::vector<engine::Reservation>& mine, engine::Seconds now) {
  return std::any_of(mine.begin(), mine.end(),
                     [&](const engine::Reservation& r) { return ActiveNow(r, now); });
}

ShellEnv ComputeShellEnv(const std::vector<engine::Reservation>& mine, engine::Seconds now,
                         const gpu::Snapshot& snapshot,
                         const std::function<std::string(engine::Seconds)>& clock_text) {
  ShellEnv e;
  e.now = now;
  std::vector<engine::Reservation> sorted = mine;
  std::sort(sorted.begin(), sorted.end(), [](const engine::Reservation& a, const engine::Reservation& b) {
    return std::tie(a.start, a.id) < std::tie(b.start, b.id);
  });
  for (const auto& r : sorted) {
    if (!r.ActiveAt(now)) continue;  // cancelled or ended: neither visible nor a boundary
    engine::Seconds boundary = r.start > now ? r.start : r.end;
    e.next_boundary = e.next_boundary ? std::min(*e.next_boundary, boundary) : boundary;
    if (r.start > now) continue;
    e.reservation_ids.push_back(r.id);
    e.until = e.until ? std::min(*e.until, r.end) : r.end;
    for (int g : r.gpus)
      if (std::find(e.gpus.begin(), e.gpus.end(), g) == e.gpus.end()) e.gpus.push_back(g);
  }
  if (e.gpus.empty()) {
    e.state = "none";
    e.notice = "bk: no GPU booked for you now; CUDA_VISIBLE_DEVICES is empty (`bk 1 30m` books one)";
    return e;
  }
  e.state = "ok";
  e.tokens = Tokens(e.gpus, snapshot);
  e.notice =
      fmt::format("bk: this shell now sees GPU {} (booked until {})", JoinInts(e.gpus), clock_text(*e.until));
  return e;
}

ShellEnv Unreachable(engine::Seconds now, const std::string& why) {
  ShellEnv e;
  e.state = "unreachable";
  e.now = now;
  e.next_boundary = now + kUnreachableRetry;
  std::string reason(why.substr(0, why.find(';')));
  e.notice = fmt::format("bk: GPU booking service unreachable; CUDA_VISIBLE_DEVICES is empty ({})",
                         Printable(reason));
  return e;
}

ShellEnv Misconfigured(engine::Seconds now, const std::string& why) {
  ShellEnv e = Unreachable(now, why);
  e.notice =
      fmt::format("bk: GPUBK configuration is broken; CUDA_VISIBLE_DEVICES is empty until it is fixed ({})",
                  Printable(why));
  return e;
}

std::string RenderPlain(const ShellEnv& e) {
  // Values never hold newlines: IDs, tokens and a Printable() notice.
  return fmt::format(
      "BK_SHELL_STATE={}\nCUDA_VISIBLE_DEVICES={}\nBK_RESERVED_GPUS={}\nBK_RESERVATION_IDS={}\nBK_NEXT_"
      "BOUNDARY={}\n"
      "BK_SHELL_NOTICE={}\nBK_UNREAD_NOTICE={}\n",
      e.state, Join(e.tokens, ","), JoinInts(e.gpus), Join(e.reservation_ids, ","),
      e.next_boundary ? std::to_string(*e.next_boundary) : "", Printable(e.notice), Printable(e.unread));
}

std::string RenderJson(const ShellEnv& e) {
  auto when = [](const std::optional<engine::Seconds>& t) {
    return t ? json(engine::FormatIsoUtc(*t)) : json();
  };
  json j = {{"schema_version", "gpubk.shell-env.v1"},
            {"state", e.state},
            {"now", e.now},
            {"cuda_visible_devices", Join(e.tokens, ",")},
            {"cuda_device_order", "PCI_BUS_ID"},
            {"gpus", e.gpus},
            {"reservation_ids", e.reservation_ids},
            {"next_boundary", e.next_boundary ? json(*e.next_boundary) : json()},
            {"next_boundary_at", when(e.next_boundary)},
            {"until", when(e.until)},
            {"notice", e.notice},
            {"unread_notice", e.unread}};
  return j.dump();
}

}  // namespace bk::shell
