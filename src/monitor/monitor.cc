#include "monitor/monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "base/strings.h"
#include "engine/parse.h"
#include "gpu/procfs.h"
#include "gpu/source.h"

namespace bk::monitor {

namespace {

constexpr int64_t kPruneEveryMs = int64_t{3600} * 1000;

bool SameStreak(const Streak& a, const Streak& b) {
  return a.since_ms == b.since_ms && a.used_ms == b.used_ms;
}

std::string DeviceState(const TickReport& r, const gpu::DeviceSample& d) {
  if (r.paused) return "paused";
  if (r.failed) return "failed";
  if (d.source == gpu::Source::kNone || !d.process_telemetry) return "no-telemetry";
  return "ok";
}

store::UsageEvent MonitorEvent(const std::string& kind, int64_t at_ms, const std::string& message) {
  store::UsageEvent e;
  e.ts_ms = at_ms;
  e.kind = kind;
  e.message = std::move(message);
  return e;
}

}  // namespace

bool Inside(const std::vector<Window>& windows, int64_t at_ms) {
  const int64_t at_s = at_ms / 1000;
  for (const Window& w : windows)
    if (w.start <= at_s && at_s < w.end) return true;
  return false;
}

Monitor::Monitor(Options options) : opt_(std::move(options)) {
  latest_ = gpu::UnknownSnapshot(opt_.config->policy.gpu_count);
}

Status Monitor::Start(int64_t now_ms) {
  started_ms_ = now_ms;
  BK_ASSIGN_OR_RETURN(auto processes, opt_.usage->Processes());
  tracker_.Load(std::move(processes));
  BK_ASSIGN_OR_RETURN(auto heartbeat, opt_.usage->Heartbeat());
  BK_ASSIGN_OR_RETURN(auto evidence, opt_.usage->Evidence());
  // Each stored streak was judged by the previous run's last sample (rows of
  // bookings a sample did not judge are deleted), so that sample's time is
  // the streak's previous sample: a restart within 2 x interval continues it,
  // a longer pause is a gap.
  for (const store::EvidenceRow& e : evidence) {
    Streak s{e.since_ms, heartbeat ? std::optional(heartbeat->sampled_ms) : e.last_ms, e.used_ms};
    streaks_[e.reservation_id] = s;
    stored_streaks_[e.reservation_id] = s;
  }
  // Transition events (paused, telemetry-failed, ...) continue from the last
  // run's state, so repeated `bk m --once` runs do not repeat them.
  if (heartbeat) last_state_ = heartbeat->sample_state;
  // Identities survive restarts, so even a first sample inside an exclusive
  // window (a fresh `bk m --once`) shows which GPU is which.
  BK_ASSIGN_OR_RETURN(auto gpus, opt_.usage->Gpus());
  for (const store::GpuIdentity& g : gpus) {
    if (g.gpu < 0 || g.gpu >= opt_.config->policy.gpu_count) continue;
    if (identities_.size() <= static_cast<size_t>(g.gpu)) identities_.resize(g.gpu + 1);
    gpu::DeviceSample& id = identities_[g.gpu];
    id.index = g.gpu;
    id.uuid = g.uuid;
    id.name = g.name;
    id.memory_total_mb = g.memory_total_mb;
  }
  BK_TRY(opt_.usage->Begin());
  store::UsageEvent e = MonitorEvent(
      "monitor-start", now_ms,
      fmt::format("interval={}s reclaim_after={}s pause_during_exclusive={}", opt_.interval_ms / 1000.0,
                  opt_.reclaim_after_ms / 1000, opt_.pause_during_exclusive ? "true" : "false"));
  if (auto st = opt_.usage->AddEvents({&e, 1}); !st) {
    opt_.usage->Rollback();
    return st;
  }
  return opt_.usage->Commit();
}

Result<std::vector<ActiveBooking>> Monitor::ActiveAt(int64_t now_s) {
  BK_ASSIGN_OR_RETURN(std::vector<engine::Reservation> running, opt_.service->Running(now_s));
  std::vector<ActiveBooking> out;
  for (const engine::Reservation& r : running) {
    if (!r.ActiveAt(now_s) || !r.Started(now_s)) continue;
    out.push_back({r.id, r.uid, r.username, r.gpus, r.mode == engine::Mode::kExclusive, r.start, r.end});
  }
  return out;
}

Result<std::vector<Window>> Monitor::ExclusiveWindows() {
  std::vector<Window> out;
  if (!opt_.pause_during_exclusive) return out;
  BK_ASSIGN_OR_RETURN(auto windows, opt_.service->ExclusiveWindows());
  for (const auto& w : windows) out.push_back({w.start, w.end});
  return out;
}

void Monitor::Remember(const gpu::Snapshot& snapshot) {
  if (identities_.size() < snapshot.devices.size()) identities_.resize(snapshot.devices.size());
  for (size_t i = 0; i < snapshot.devices.size(); ++i) {
    const gpu::DeviceSample& d = snapshot.devices[i];
    if (d.source == gpu::Source::kNone) continue;
    gpu::DeviceSample& id = identities_[i];
    gpu::DeviceSample before = id;
    id.index = static_cast<int>(i);
    if (!d.uuid.empty()) id.uuid = d.uuid;
    id.name = d.name;
    if (d.memory_total_mb) id.memory_total_mb = d.memory_total_mb;
    if (id.uuid != before.uuid || id.name != before.name || id.memory_total_mb != before.memory_total_mb)
      changed_identities_.push_back(static_cast<int>(i));
  }
}

gpu::Snapshot Monitor::PausedSnapshot() const {
  gpu::Snapshot s = gpu::UnknownSnapshot(opt_.config->policy.gpu_count);
  for (size_t i = 0; i < s.devices.size() && i < identities_.size(); ++i) {
    if (identities_[i].uuid.empty() && identities_[i].name == "unknown") continue;
    s.devices[i].uuid = identities_[i].uuid;
    s.devices[i].name = identities_[i].name;
    s.devices[i].memory_total_mb = identities_[i].memory_total_mb;
  }
  return s;
}

std::vector<ReclaimDecision> Monitor::Reclaims(const RawSample& s, const gpu::Snapshot& attributed,
                                               const std::vector<ActiveBooking>& bookings,
                                               std::vector<store::UsageEvent>& events,
                                               std::vector<std::string>& warnings) {
  std::vector<ReclaimDecision> out;
  Rules rules{opt_.reclaim_after_ms, opt_.interval_ms};
  SampleView view{s.at_ms, s.paused, !s.paused && !attributed.ok(), &attributed};
  std::set<std::string> judged;
  for (const ActiveBooking& b : bookings) {
    BookingRef ref{b.id, b.uid, b.gpus, b.start * 1000, b.end * 1000};
    const Streak before = streaks_[b.id];
    Step step = Advance(before, ref, view, rules);
    ReclaimDecision d;
    d.reservation_id = b.id;
    d.uid = b.uid;
    d.username = b.username;
    d.gpus = b.gpus;
    d.verdict = VerdictName(step.judgement.verdict);
    d.why = step.judgement.why;
    d.gap = step.gap;
    d.since_ms = step.next.since_ms;
    d.streak_ms = step.next.since_ms ? s.at_ms - *step.next.since_ms : 0;
    d.threshold_ms = rules.reclaim_after_ms;
    d.used = step.next.used_ms.has_value();
    if (step.reclaim) {
      d.reason = ReclaimReason(ref, b.username, step.next, s.at_ms, rules);
      auto done = opt_.service->Reclaim(b.id, d.reason);
      if (done) {
        d.reclaimed = true;
        store::UsageEvent e = MonitorEvent("reclaim", s.at_ms, d.reason);
        e.uid = b.uid;
        e.username = b.username;
        e.reservation_id = b.id;
        events.push_back(std::move(e));
        streaks_.erase(b.id);
        out.push_back(std::move(d));
        continue;
      }
      d.error = done.error().message;
      warnings.push_back(fmt::format("reclaim of {} failed: {}", b.id.substr(0, 8), d.error));
    }
    judged.insert(b.id);
    streaks_[b.id] = step.next;
    out.push_back(std::move(d));
  }
  std::erase_if(streaks_, [&](const auto& kv) { return !judged.count(kv.first); });
  return out;
}

store::HeartbeatRow Monitor::Heartbeat(const TickReport& r, const std::string& state) const {
  store::HeartbeatRow h;
  h.monitor_id = opt_.monitor_id;
  h.pid = opt_.pid;
  h.uid = opt_.uid;
  h.interval_ms = opt_.interval_ms;
  h.started_ms = started_ms_;
  h.sampled_ms = r.at_ms;
  h.written_ms = std::max(r.at_ms, started_ms_);
  h.samples = samples_ + 1;
  h.sample_state = state;
  if (state == "paused") {
    h.status = "paused";
    h.detail = "an exclusive booking is active; GPUs are not queried";
  } else if (state == "failed") {
    h.status = "degraded";
    h.detail = "sample failed: " + Printable(r.snapshot.error);
  } else {
    std::vector<int> no_telemetry, unattributed;
    for (size_t i = 0; i < r.snapshot.devices.size(); ++i) {
      const gpu::DeviceSample& d = r.snapshot.devices[i];
      if (d.source == gpu::Source::kNone || !d.process_telemetry) {
        no_telemetry.push_back(static_cast<int>(i));
        continue;
      }
      for (const gpu::ProcessSample& p : d.processes)
        if (!p.uid || p.identity_source == "container-ambiguous") {
          unattributed.push_back(static_cast<int>(i));
          break;
        }
    }
    std::vector<std::string> parts;
    if (!no_telemetry.empty()) parts.push_back("no process telemetry on GPU " + JoinInts(no_telemetry));
    if (!unattributed.empty()) parts.push_back("unattributed processes on GPU " + JoinInts(unattributed));
    h.status = parts.empty() ? "running" : "degraded";
    h.detail = Join(parts, "; ");
  }
  return h;
}

Result<TickReport> Monitor::Ingest(RawSample s) {
  TickReport r;
  r.at_ms = s.at_ms;
  r.paused = s.paused;
  BK_ASSIGN_OR_RETURN(std::vector<ActiveBooking> bookings, ActiveAt(s.at_ms / 1000));
  std::string state;
  if (s.paused) {
    r.snapshot = PausedSnapshot();
    state = "paused";
  } else {
    r.snapshot = std::move(s.snapshot);
    r.failed = !r.snapshot.ok();
    state = r.failed ? "failed" : "ok";
    if (!r.failed) {
      for (size_t i = 0; i < r.snapshot.devices.size(); ++i) {
        auto on = BookingsOn(static_cast<int>(i), bookings);
        if (!on.empty()) gpu::Attribute(r.snapshot.devices[i].processes, on);
      }
      Remember(r.snapshot);
    }
  }
  r.classified.resize(r.snapshot.devices.size());
  for (size_t i = 0; i < r.snapshot.devices.size(); ++i) {
    const auto& procs = r.snapshot.devices[i].processes;
    r.classified[i].reserve(procs.size());
    for (const gpu::ProcessSample& p : procs)
      r.classified[i].push_back(Classify(p, static_cast<int>(i), bookings));
  }

  if (state != last_state_) {
    if (state == "paused") {
      r.events.push_back(MonitorEvent("paused", s.at_ms, "an exclusive booking is active; sampling paused"));
    } else if (state == "failed") {
      r.events.push_back(MonitorEvent("telemetry-failed", s.at_ms, Printable(r.snapshot.error)));
    } else if (last_state_ == "paused") {
      r.events.push_back(
          MonitorEvent("resumed", s.at_ms, "no exclusive booking is active; sampling resumed"));
    } else if (last_state_ == "failed") {
      r.events.push_back(MonitorEvent("telemetry-restored", s.at_ms, "sampling works again"));
    }
  }
  ProcessTracker::Changes changes;
  if (state == "ok") {
    changes = tracker_.Update(s.at_ms, r.snapshot, r.classified);
    for (auto& e : changes.events) r.events.push_back(std::move(e));
    changes.events.clear();
    rollups_.Add(s.at_ms, opt_.interval_ms, r.snapshot, r.classified, bookings);
  }
  RawSample view{s.at_ms, s.paused, {}};
  r.decisions = Reclaims(view, r.snapshot, bookings, r.events, r.warnings);
  r.heartbeat = Heartbeat(r, state);
  std::vector<store::RollupRow> closed = rollups_.TakeClosed(s.at_ms);
  BK_TRY(Write(r, changes, closed));
  latest_ = r.snapshot;
  last_state_ = state;
  last_ms_ = s.at_ms;
  ++samples_;
  return r;
}

Status Monitor::Write(TickReport& r, const ProcessTracker::Changes& changes,
                      const std::vector<store::RollupRow>& rollups) {
  store::UsageStore& u = *opt_.usage;
  std::vector<store::DeviceRow> devices;
  devices.reserve(r.snapshot.devices.size());
  for (size_t i = 0; i < r.snapshot.devices.size(); ++i) {
    const gpu::DeviceSample& d = r.snapshot.devices[i];
    store::DeviceRow row;
    row.ts_ms = r.at_ms;
    row.gpu = static_cast<int>(i);
    row.state = DeviceState(r, d);
    row.source = r.paused ? "none" : gpu::SourceName(d.source);
    if (d.utilization_percent) row.utilization_percent = *d.utilization_percent;
    row.memory_used_mb = d.memory_used_mb;
    row.memory_total_mb = d.memory_total_mb;
    row.process_count = static_cast<int64_t>(d.processes.size());
    devices.push_back(std::move(row));
  }
  BK_TRY(u.Begin());
  auto body = [&]() -> Status {
    BK_TRY(u.AddDevices(devices));
    BK_TRY(u.AddEvents(r.events));
    BK_TRY(u.AddRollups(rollups));
    for (const auto& p : changes.upserts) BK_TRY(u.PutProcess(p));
    for (const auto& p : changes.removed) BK_TRY(u.DeleteProcess(p.gpu, p.pid, p.token));
    for (const auto& [id, streak] : streaks_) {
      auto old = stored_streaks_.find(id);
      if (old != stored_streaks_.end() && SameStreak(old->second, streak)) continue;
      BK_TRY(u.PutEvidence({id, streak.since_ms, streak.last_ms, streak.used_ms}));
    }
    for (const auto& [id, streak] : stored_streaks_)
      if (!streaks_.count(id)) BK_TRY(u.DeleteEvidence(id));
    for (int g : changed_identities_) {
      const gpu::DeviceSample& id = identities_[g];
      BK_TRY(u.PutGpu({g, id.uuid, id.name, id.memory_total_mb, r.at_ms}));
    }
    BK_TRY(u.PutHeartbeat(r.heartbeat));
    if (r.at_ms >= next_prune_ms_) {
      BK_TRY(u.Prune(r.at_ms, opt_.retention));
      next_prune_ms_ = r.at_ms + kPruneEveryMs;
    }
    return Ok();
  };
  if (auto st = body(); !st) {
    u.Rollback();
    return st;
  }
  BK_TRY(u.Commit());
  stored_streaks_ = streaks_;
  changed_identities_.clear();
  return Ok();
}

Status Monitor::Stop(int64_t now_ms) {
  store::UsageStore& u = *opt_.usage;
  std::vector<store::RollupRow> rows = rollups_.TakeAll();
  store::HeartbeatRow h;
  if (samples_ > 0) {
    TickReport last;
    last.at_ms = last_ms_;
    last.snapshot = latest_;
    h = Heartbeat(last, last_state_.empty() ? "ok" : last_state_);
    h.samples = samples_;
  } else {
    h.monitor_id = opt_.monitor_id;
    h.pid = opt_.pid;
    h.uid = opt_.uid;
    h.interval_ms = opt_.interval_ms;
    h.started_ms = started_ms_;
    h.sampled_ms = started_ms_;
    h.sample_state = last_state_.empty() ? "ok" : last_state_;
  }
  h.status = "stopped";
  h.stopped_ms = std::max(now_ms, std::max(last_ms_, started_ms_));
  h.written_ms = *h.stopped_ms;
  store::UsageEvent e = MonitorEvent("monitor-stop", *h.stopped_ms, fmt::format("samples={}", samples_));
  BK_TRY(u.Begin());
  auto body = [&]() -> Status {
    BK_TRY(u.AddRollups(rows));
    BK_TRY(u.AddEvents({&e, 1}));
    BK_TRY(u.PutHeartbeat(h));
    return Ok();
  };
  if (auto st = body(); !st) {
    u.Rollback();
    return st;
  }
  return u.Commit();
}

}  // namespace bk::monitor
