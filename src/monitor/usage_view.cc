#include "monitor/usage_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "base/strings.h"
#include "engine/parse.h"
#include "monitor/runner.h"
#include "sys/fs.h"
#include "sys/node.h"

namespace bk::monitor {

namespace {

using nlohmann::json;

constexpr const char* kNotes[] = {
    "Observed time counts samples x interval; missing history means not sampled, never zero use.",
    "Whole-device utilization is not divided between users sharing a GPU.",
    "Reserved time is time a booking was active and sampled; idle reserved time had no process of its owner.",
};

double Secs(int64_t ms) { return static_cast<double>(ms) / 1000.0; }
double Round3(double v) { return std::round(v * 1000.0) / 1000.0; }
std::string IsoMs(int64_t ms) { return engine::FormatIsoUtc(ms / 1000); }

json CollectorJson(const Collector& c) {
  json j = {{"state", c.state},
            {"fresh", c.fresh},
            {"age_seconds", c.age_ms ? json(Secs(*c.age_ms)) : json()},
            {"stale_after_seconds", Secs(c.stale_after_ms)}};
  if (!c.not_recording.empty()) j["not_recording"] = c.not_recording;
  if (c.row) {
    j["reported_status"] = c.row->status;
    j["sampled_at"] = IsoMs(c.row->sampled_ms);
    j["written_at"] = IsoMs(c.row->written_ms);
    j["stopped_at"] = c.row->stopped_ms ? json(IsoMs(*c.row->stopped_ms)) : json();
    j["sample_interval_seconds"] = Secs(c.row->interval_ms);
    j["detail"] = c.row->detail;
    j["pid"] = c.row->pid;
  }
  return j;
}

json UserJson(const store::UserUsage& u) {
  return {{"uid", u.uid},
          {"username", u.username},
          {"sampled_gpu_seconds", Secs(u.sampled_ms)},
          {"active_gpu_seconds", Secs(u.active_ms)},
          {"reserved_gpu_seconds", Secs(u.reserved_ms)},
          {"idle_reserved_gpu_seconds", Secs(u.idle_reserved_ms)},
          {"unbooked_gpu_seconds", Secs(u.unbooked_ms)},
          {"verified_gpu_seconds", Secs(u.active_ms - u.inferred_ms)},
          {"inferred_gpu_seconds", Secs(u.inferred_ms)},
          {"avg_sm_percent", u.avg_sm_percent ? json(Round3(*u.avg_sm_percent)) : json()},
          {"max_sm_percent", u.max_sm_percent},
          {"max_gpu_memory_mb", u.max_memory_mb},
          {"gpus", u.gpus}};
}

// Rollups merged into windows of `resolution` seconds (a multiple of theirs):
// sums and counts add up, maxima take the largest; the order stays by window.
std::vector<store::RollupRow> Regroup(const std::vector<store::RollupRow>& rows, int64_t resolution) {
  std::map<std::tuple<int64_t, int, uint32_t, std::string>, store::RollupRow> merged;
  for (const auto& r : rows) {
    int64_t window = r.window_start - r.window_start % resolution;
    auto [it, fresh] = merged.try_emplace({window, r.gpu, r.uid, r.status}, r);
    store::RollupRow& m = it->second;
    m.window_start = window;
    m.resolution = resolution;
    if (fresh) continue;
    m.samples += r.samples;
    m.active_samples += r.active_samples;
    m.observed_ms += r.observed_ms;
    m.active_ms += r.active_ms;
    m.inferred_ms += r.inferred_ms;
    m.process_sum += r.process_sum;
    m.process_max = std::max(m.process_max, r.process_max);
    m.sm_sum += r.sm_sum;
    m.sm_count += r.sm_count;
    m.sm_max = std::max(m.sm_max, r.sm_max);
    m.memory_sum_mb += r.memory_sum_mb;
    m.memory_max_mb = std::max(m.memory_max_mb, r.memory_max_mb);
    m.util_sum += r.util_sum;
    m.util_count += r.util_count;
    m.util_max = std::max(m.util_max, r.util_max);
  }
  std::vector<store::RollupRow> out;
  out.reserve(merged.size());
  for (auto& [key, row] : merged) out.push_back(std::move(row));
  return out;
}

// The rollups of `q` at its resolution, at most `limit` + 1 of them (so a
// caller sees that more exist): stored ones, or merged from the finer stored
// kind (minutes for 5m and 10m, hours for a day). Merging reads every finer
// row of the window, so that no merged window is cut short.
Result<std::vector<store::RollupRow>> Samples(store::UsageStore& store, const UsageQuery& q, int64_t limit) {
  const int64_t base = q.resolution < 3600 ? 60 : 3600;
  const bool merge = q.resolution != base;
  constexpr int kEveryRow = std::numeric_limits<int>::max();
  store::RollupQuery rq{q.from, q.to, base, q.uid, q.gpu, merge ? kEveryRow : static_cast<int>(limit + 1)};
  BK_ASSIGN_OR_RETURN(auto rows, store.Rollups(rq));
  if (!merge) return rows;
  auto merged = Regroup(rows, q.resolution);
  if (static_cast<int64_t>(merged.size()) > limit + 1) merged.resize(limit + 1);
  return merged;
}

json RollupJson(const store::RollupRow& r) {
  auto avg = [](int64_t sum, int64_t n) {
    return n > 0 ? json(Round3(static_cast<double>(sum) / n)) : json();
  };
  return {{"window_start", engine::FormatIsoUtc(r.window_start)},
          {"window_end", engine::FormatIsoUtc(r.window_start + r.resolution)},
          {"resolution_seconds", r.resolution},
          {"gpu", r.gpu},
          {"uid", r.uid},
          {"username", r.username},
          {"status", r.status},
          {"sample_count", r.samples},
          {"observed_seconds", Secs(r.observed_ms)},
          {"active_sample_count", r.active_samples},
          {"active_observed_seconds", Secs(r.active_ms)},
          {"inferred_observed_seconds", Secs(r.inferred_ms)},
          {"avg_process_count", avg(r.process_sum, r.samples)},
          {"max_process_count", r.process_max},
          {"sm_sample_count", r.sm_count},
          {"avg_sm_percent", avg(r.sm_sum, r.sm_count)},
          {"max_sm_percent", r.sm_count > 0 ? json(r.sm_max) : json()},
          {"avg_gpu_memory_mb", avg(r.memory_sum_mb, r.samples)},
          {"max_gpu_memory_mb", r.memory_max_mb},
          {"device_util_sample_count", r.util_count},
          {"avg_device_util_percent", avg(r.util_sum, r.util_count)},
          {"max_device_util_percent", r.util_count > 0 ? json(r.util_max) : json()}};
}

json EventJson(const store::UsageEvent& e) {
  auto opt = [](const auto& v) { return v ? json(*v) : json(); };
  return {{"seq", e.seq},           {"timestamp", IsoMs(e.ts_ms)},
          {"event", e.kind},        {"gpu", opt(e.gpu)},
          {"pid", opt(e.pid)},      {"uid", opt(e.uid)},
          {"username", e.username}, {"identity_source", e.identity_source},
          {"status", e.status},     {"reservation_id", e.reservation_id},
          {"message", e.message}};
}

Result<Collector> ReadCollector(store::UsageStore* store, int64_t now_ms, const std::string& not_recording) {
  Collector c;
  if (store) {
    BK_ASSIGN_OR_RETURN(auto row, store->Heartbeat());
    c = ClassifyHeartbeat(row, now_ms);
  }
  if (!not_recording.empty()) {
    c.state = "not-recording";
    c.not_recording = not_recording;
  }
  return c;
}

std::string Mem(int64_t mb) {
  return mb <= 0 ? "-" : fmt::format("{:.1f}G", static_cast<double>(mb) / 1024.0);
}
std::string Dur(int64_t ms) { return DurationText(ms / 1000); }
std::string Clip(const std::string& s, size_t n) {
  std::string p = Printable(s);
  return p.size() <= n ? p : p.substr(0, n - 1) + "+";
}

}  // namespace

const char* UsageKindName(UsageKind k) {
  switch (k) {
    case UsageKind::kMe: return "me";
    case UsageKind::kUsers: return "users";
    case UsageKind::kEvents: return "events";
    case UsageKind::kSamples: return "samples";
  }
  return "me";
}

Result<std::string> UsageJson(store::UsageStore* store, const UsageQuery& q, int64_t now_ms,
                              const std::string& not_recording) {
  BK_ASSIGN_OR_RETURN(Collector collector, ReadCollector(store, now_ms, not_recording));
  json query = {{"start_at", engine::FormatIsoUtc(q.from)},
                {"end_at", engine::FormatIsoUtc(q.to)},
                {"uid", q.uid ? json(*q.uid) : json()},
                {"gpu", q.gpu ? json(*q.gpu) : json()},
                {"limit", q.limit}};
  for (const auto& r : kResolutions)
    if (r.seconds == q.resolution) query["resolution"] = r.name;
  const sys::NodeIdentity& node = sys::LocalNode();
  json warnings = json::array();
  if (!not_recording.empty()) warnings.push_back("the monitor samples but does not record: " + not_recording);
  json doc = {{"schema_version", "gpubk.usage.v1"},
              {"generated_at", IsoMs(now_ms)},
              {"node", {{"schema", 1}, {"id", node.id}, {"hostname", node.hostname}}},
              {"warnings", warnings},
              {"collector", CollectorJson(collector)},
              {"usage_db", store ? json(store->path()) : json()}};
  bool truncated = false;
  switch (q.kind) {
    case UsageKind::kMe:
    case UsageKind::kUsers: {
      doc["kind"] = "usage-users";
      json users = json::array();
      if (store) {
        BK_ASSIGN_OR_RETURN(auto rows, store->Users(q.from, q.to, q.uid));
        for (const auto& u : rows) {
          if (static_cast<int>(users.size()) >= q.limit) {
            truncated = true;
            break;
          }
          users.push_back(UserJson(u));
        }
      }
      doc["users"] = users;
      doc["notes"] = kNotes;
      break;
    }
    case UsageKind::kSamples: {
      doc["kind"] = "usage-samples";
      query["resolution_seconds"] = q.resolution;
      json records = json::array();
      if (store) {
        BK_ASSIGN_OR_RETURN(auto rows, Samples(*store, q, q.limit));
        truncated = static_cast<int>(rows.size()) > q.limit;
        if (truncated) rows.resize(q.limit);
        for (const auto& r : rows) records.push_back(RollupJson(r));
      }
      doc["records"] = records;
      break;
    }
    case UsageKind::kEvents: {
      doc["kind"] = "usage-events";
      json records = json::array();
      if (store) {
        store::EventQuery eq{q.from * 1000, q.to * 1000, q.uid, q.gpu, q.limit + 1};
        BK_ASSIGN_OR_RETURN(auto rows, store->Events(eq));
        truncated = static_cast<int>(rows.size()) > q.limit;
        if (truncated) rows.erase(rows.begin());  // keep the newest `limit`
        for (const auto& e : rows) records.push_back(EventJson(e));
      }
      doc["records"] = records;
      break;
    }
  }
  doc["query"] = query;
  doc["truncated"] = truncated;
  return doc.dump(2, ' ', false, json::error_handler_t::replace);
}

Result<std::string> UsageText(store::UsageStore* store, const UsageQuery& q, int64_t now_ms,
                              const engine::Zone& zone, const std::string& not_recording) {
  BK_ASSIGN_OR_RETURN(Collector collector, ReadCollector(store, now_ms, not_recording));
  std::string out = CollectorLine(collector) + "\n";
  if (!store) return out + "no usage history yet: the monitor records it (`bk m`, or `bk server serve`)\n";
  out += fmt::format("history: {} -> {} (sampled past only)\n", engine::FormatLocal(q.from, zone),
                     engine::FormatLocal(q.to, zone));
  switch (q.kind) {
    case UsageKind::kMe: {
      BK_ASSIGN_OR_RETURN(auto rows, store->Users(q.from, q.to, q.uid));
      if (rows.empty()) return out + "no usage records for you in this interval\n";
      const store::UserUsage& u = rows[0];
      double use = u.reserved_ms > 0 ? std::min(1.0, static_cast<double>(u.active_ms) / u.reserved_ms) : 0.0;
      out += "YOUR GPU USE\n";
      out += fmt::format("  ACTIVE {:>8}   RESERVED {:>8}   USE {:.1f}%\n", Dur(u.active_ms),
                         Dur(u.reserved_ms), 100.0 * use);
      out += fmt::format("  IDLE RESERVED {}   UNBOOKED {}   INFERRED {}\n", Dur(u.idle_reserved_ms),
                         Dur(u.unbooked_ms), Dur(u.inferred_ms));
      out += fmt::format("  PEAK VRAM {}   AVG SM {}   GPUS {}\n", Mem(u.max_memory_mb),
                         u.avg_sm_percent ? fmt::format("{:.1f}%", *u.avg_sm_percent) : "-",
                         u.gpus.empty() ? "-" : JoinInts(u.gpus));
      return out;
    }
    case UsageKind::kUsers: {
      BK_ASSIGN_OR_RETURN(auto rows, store->Users(q.from, q.to, q.uid));
      if (rows.empty()) return out + "no user usage records in this interval\n";
      out += fmt::format("{:>6} {:<12} {:>8} {:>8} {:>8} {:>8} {:>7} {:>6} {}\n", "UID", "User", "Active",
                         "Reserved", "Idle", "Unbooked", "PeakMem", "AvgSM", "GPUs");
      int n = 0;
      for (const auto& u : rows) {
        if (n++ >= q.limit) break;
        out +=
            fmt::format("{:>6} {:<12} {:>8} {:>8} {:>8} {:>8} {:>7} {:>6} {}\n", u.uid, Clip(u.username, 12),
                        Dur(u.active_ms), Dur(u.reserved_ms), Dur(u.idle_reserved_ms), Dur(u.unbooked_ms),
                        Mem(u.max_memory_mb),
                        u.avg_sm_percent ? fmt::format("{:.1f}%", *u.avg_sm_percent) : "-", JoinInts(u.gpus));
      }
      return out;
    }
    case UsageKind::kSamples: {
      BK_ASSIGN_OR_RETURN(auto rows, Samples(*store, q, q.limit - 1));
      if (rows.empty()) return out + "no usage samples in this interval\n";
      out += fmt::format("{:<16} {:>4} {:>6} {:<12} {:<10} {:>7} {:>8} {:>6} {:>7} {:>5}\n", "Start", "GPU",
                         "UID", "User", "State", "Samples", "Active", "AvgSM", "PeakMem", "Util");
      for (const auto& r : rows) {
        std::string sm =
            r.sm_count > 0 ? fmt::format("{:.0f}%", static_cast<double>(r.sm_sum) / r.sm_count) : "-";
        std::string util =
            r.util_count > 0 ? fmt::format("{:.0f}%", static_cast<double>(r.util_sum) / r.util_count) : "-";
        out += fmt::format("{:<16} {:>4} {:>6} {:<12} {:<10} {:>7} {:>8} {:>6} {:>7} {:>5}\n",
                           engine::FormatLocalShort(r.window_start, zone), r.gpu, r.uid, Clip(r.username, 12),
                           r.status, r.samples, Dur(r.active_ms), sm, Mem(r.memory_max_mb), util);
      }
      return out;
    }
    case UsageKind::kEvents: {
      store::EventQuery eq{q.from * 1000, q.to * 1000, q.uid, q.gpu, q.limit};
      BK_ASSIGN_OR_RETURN(auto rows, store->Events(eq));
      if (rows.empty()) return out + "no usage events in this interval\n";
      out += fmt::format("{:<16} {:>3} {:>8} {:<12} {:<20} {:<10} {}\n", "Time", "GPU", "PID", "User",
                         "Event", "State", "Detail");
      for (const auto& e : rows) {
        out +=
            fmt::format("{:<16} {:>3} {:>8} {:<12} {:<20} {:<10} {}\n",
                        engine::FormatLocalShort(e.ts_ms / 1000, zone), e.gpu ? std::to_string(*e.gpu) : "-",
                        e.pid ? std::to_string(*e.pid) : "-", e.uid ? Clip(e.username, 12) : std::string("-"),
                        e.kind, e.status.empty() ? "-" : e.status, Printable(e.message));
      }
      return out;
    }
  }
  return out;
}

Result<std::string> ReadUsage(const config::Config& config, uid_t owner, const UsageQuery& q, bool text,
                              int64_t now_ms, const engine::Zone& zone) {
  // Only the owner opens usage.db: even a read-only SQLite reader of a WAL file
  // creates -wal/-shm files, which the monitor could not use if another
  // account owned them. Everyone else asks the daemon (usage.query).
  std::unique_ptr<store::UsageStore> usage;
  const std::string path = UsagePath(config);
  if (sys::Exists(path)) {
    store::UsageOpenOptions uo{path, false, owner, static_cast<int>(config.lock_timeout_seconds * 1000)};
    auto opened = store::UsageStore::Open(uo);
    if (!opened && opened.error().kind != ErrorKind::kNotFound) return std::unexpected(opened.error());
    if (opened) usage = std::move(*opened);
  }
  if (text) return UsageText(usage.get(), q, now_ms, zone);
  return UsageJson(usage.get(), q, now_ms);
}

bool IsResolution(int64_t seconds) {
  for (const auto& r : kResolutions)
    if (r.seconds == seconds) return true;
  return false;
}

Result<int64_t> ParseResolution(std::string_view text, int64_t span) {
  std::string r(Trim(text));
  if (r == "auto") {
    if (span <= 2 * 86400) return 60;
    return span <= 90 * 86400 ? 3600 : 86400;
  }
  for (const auto& res : kResolutions)
    if (r == res.name || r == std::to_string(res.seconds)) return res.seconds;
  return Invalid(fmt::format("resolution must be auto, 1m, 5m, 10m, 1h or 1d (not {})", Printable(r)));
}

}  // namespace bk::monitor
