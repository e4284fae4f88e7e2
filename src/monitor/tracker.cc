#include "monitor/tracker.h"

#include <fmt/format.h>

#include <set>

namespace bk::monitor {

namespace {

store::UsageEvent EventOf(const std::string& kind, int64_t at_ms, const store::TrackedProcess& p) {
  store::UsageEvent e;
  e.ts_ms = at_ms;
  e.kind = kind;
  e.gpu = p.gpu;
  e.pid = p.pid;
  e.uid = p.uid;
  e.username = p.username;
  e.identity_source = p.identity_source;
  e.status = p.status;
  e.reservation_id = p.reservation_id;
  return e;
}

// (gpu, uid) pairs that use a GPU without a booking.
std::set<std::pair<int, uint32_t>> UnbookedPairs(
    const std::map<std::tuple<int, int64_t, std::string>, store::TrackedProcess>& state) {
  std::set<std::pair<int, uint32_t>> out;
  for (const auto& [k, p] : state)
    if (p.uid && Unbooked(p.status)) out.insert({p.gpu, *p.uid});
  return out;
}

}  // namespace

void ProcessTracker::Load(std::vector<store::TrackedProcess> state) {
  state_.clear();
  for (auto& p : state) state_[Key{p.gpu, p.pid, p.token}] = std::move(p);
}

ProcessTracker::Changes ProcessTracker::Update(int64_t at_ms, const gpu::Snapshot& snapshot,
                                               const std::vector<std::vector<Classified>>& classified) {
  Changes out;
  const auto unbooked_before = UnbookedPairs(state_);
  std::map<Key, store::TrackedProcess> next;
  std::vector<bool> observed(snapshot.devices.size(), false);
  for (size_t i = 0; i < snapshot.devices.size(); ++i) {
    const gpu::DeviceSample& d = snapshot.devices[i];
    if (!snapshot.ok() || d.source == gpu::Source::kNone || !d.process_telemetry) continue;
    observed[i] = true;
    for (size_t j = 0; j < d.processes.size(); ++j) {
      const gpu::ProcessSample& p = d.processes[j];
      store::TrackedProcess t;
      t.gpu = static_cast<int>(i);
      t.pid = p.pid;
      t.token = p.host_start_id;
      t.uid = p.uid;
      t.username = p.username;
      t.identity_source = p.identity_source;
      t.status = j < classified[i].size() ? classified[i][j].status : "unknown";
      t.reservation_id = j < classified[i].size() ? classified[i][j].reservation_id : "";
      t.first_seen_ms = at_ms;
      Key key{t.gpu, t.pid, t.token};
      auto old = state_.find(key);
      if (old == state_.end()) {
        if (t.status != "system") out.events.push_back(EventOf("process-start", at_ms, t));
        out.upserts.push_back(t);
      } else {
        t.first_seen_ms = old->second.first_seen_ms;
        bool changed = old->second.status != t.status || old->second.uid != t.uid ||
                       old->second.reservation_id != t.reservation_id ||
                       old->second.identity_source != t.identity_source || old->second.username != t.username;
        if (changed) {
          if (old->second.status != t.status && t.status != "system") {
            store::UsageEvent e = EventOf("authorization-change", at_ms, t);
            e.message = fmt::format("{} -> {}", old->second.status, t.status);
            out.events.push_back(std::move(e));
          }
          out.upserts.push_back(t);
        }
      }
      next[key] = std::move(t);
    }
  }
  for (auto& [key, p] : state_) {
    const int gpu = std::get<0>(key);
    const bool preserved = gpu < 0 || static_cast<size_t>(gpu) >= observed.size() || !observed[gpu];
    if (preserved) {
      next.emplace(key, p);
    } else if (!next.count(key)) {
      if (p.status != "system") out.events.push_back(EventOf("process-stop", at_ms, p));
      out.removed.push_back(p);
    }
  }
  state_ = std::move(next);
  for (const auto& pair : UnbookedPairs(state_)) {
    if (unbooked_before.count(pair)) continue;
    // Name the first such process, for a readable event.
    for (const auto& [k, p] : state_) {
      if (p.gpu != pair.first || p.uid != pair.second || !Unbooked(p.status)) continue;
      store::UsageEvent e = EventOf("unbooked-use", at_ms, p);
      e.message =
          p.status == "wrong-gpu"
              ? fmt::format("{} uses GPU {} but holds a booking on other GPUs only", p.username, p.gpu)
              : fmt::format("{} uses GPU {} without a booking", p.username, p.gpu);
      out.events.push_back(std::move(e));
      break;
    }
  }
  return out;
}

}  // namespace bk::monitor
