#include "monitor/usage_view.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>
#include <vector>

#include "base/strings.h"
#include "engine/parse.h"
#include "monitor/rollup.h"
#include "monitor/runner.h"
#include "monitor/usage_trend.h"
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

// usage.db and the files SQLite keeps beside it, with their sizes (0 when
// absent: -wal and -shm exist only while a connection has the file open).
std::vector<std::pair<std::string, int64_t>> StoreFiles(const std::string& path) {
  std::vector<std::pair<std::string, int64_t>> files;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    struct stat st {};
    const std::string p = path + suffix;
    files.emplace_back(sys::Basename(p), ::lstat(p.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0);
  }
  return files;
}

// How long each kind of history is kept, by the name Stats() gives it.
int64_t RetentionDays(const std::string& span) {
  const store::UsageRetention r;
  if (span == "devices") return r.device_days;
  if (span == "minute") return r.minute_days;
  if (span == "hourly") return r.hour_days;
  return r.event_days;
}

json RetentionJson() {
  const store::UsageRetention r;
  return {{"device_days", r.device_days},
          {"minute_days", r.minute_days},
          {"hourly_days", r.hour_days},
          {"event_days", r.event_days},
          {"zero_days_means", "unlimited"}};
}

// The usage-storage document: the original's envelope (schema, kind,
// storage) around what SQLite can say about usage.db.
Result<std::string> StorageJson(store::UsageStore* store, const Collector& collector) {
  json storage = {{"path", store ? json(store->path()) : json()}, {"retention", RetentionJson()}};
  if (store) {
    BK_ASSIGN_OR_RETURN(store::UsageStats st, store->Stats());
    int64_t total = 0;
    json files = json::object();
    for (const auto& [name, bytes] : StoreFiles(store->path())) {
      files[name] = bytes;
      total += bytes;
    }
    json tables = json::object(), tiers = json::object();
    for (const auto& t : st.tables) tables[t.name] = t.rows;
    for (const auto& sp : st.spans)
      tiers[sp.name] = {{"rows", sp.rows},
                        {"oldest", sp.oldest ? json(engine::FormatIsoUtc(*sp.oldest)) : json()},
                        {"newest", sp.newest ? json(engine::FormatIsoUtc(*sp.newest)) : json()}};
    storage["format"] = {{"engine", "sqlite"},
                         {"format", st.format},
                         {"schema_version", store::UsageStore::kSchemaVersion},
                         {"journal_mode", st.journal_mode}};
    storage["bytes"] = total;
    storage["files"] = files;
    storage["pages"] = {
        {"page_size", st.page_size}, {"page_count", st.page_count}, {"free_pages", st.free_pages}};
    storage["tables"] = tables;
    storage["tiers"] = tiers;
  } else {
    storage["format"] = json();
  }
  storage["warnings"] = json::array();
  storage["collector"] = CollectorJson(collector);
  json doc = {{"schema_version", "gpubk.usage.v1"}, {"kind", "usage-storage"}, {"storage", storage}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace);
}

std::string Bytes(int64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < 1024 * 1024) return fmt::format("{:.1f} KiB", n / 1024.0);
  return fmt::format("{:.1f} MiB", n / (1024.0 * 1024.0));
}

// 2026-11-29 18:49, local: the year matters for history kept 400 days.
std::string Minute(int64_t t, const engine::Zone& zone) {
  engine::CivilTime c = zone.ToLocal(t);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}", c.year, c.month, c.day, c.hour, c.minute);
}

std::string Rows(int64_t n) { return fmt::format("{} row{}", n, n == 1 ? "" : "s"); }

// `bk u storage` as text, one item per line.
Result<std::string> StorageText(store::UsageStore& store, const engine::Zone& zone) {
  BK_ASSIGN_OR_RETURN(store::UsageStats st, store.Stats());
  std::string out = "path: " + Printable(store.path()) + "\n";
  int64_t total = 0;
  std::string parts;
  for (const auto& [name, bytes] : StoreFiles(store.path())) {
    total += bytes;
    // "usage.db 56.0 KiB, -wal 0 B, -shm 32.0 KiB"
    parts += parts.empty() ? fmt::format("{} {}", name, Bytes(bytes))
                           : fmt::format(", {} {}", name.substr(name.rfind('-')), Bytes(bytes));
  }
  out += fmt::format("size: {} on disk ({})\n", Bytes(total), parts);
  out += fmt::format("pages: {} of {} bytes, {} free\n", st.page_count, st.page_size, st.free_pages);
  out += fmt::format("format: {} schema {} (SQLite, journal {})\n", Printable(st.format),
                     store::UsageStore::kSchemaVersion, Printable(st.journal_mode));
  for (const auto& sp : st.spans) {
    std::string name = sp.name == "minute" || sp.name == "hourly" ? sp.name + " rollups" : sp.name;
    std::string span = sp.oldest && sp.newest
                           ? fmt::format(", {} -> {}", Minute(*sp.oldest, zone), Minute(*sp.newest, zone))
                           : "";
    out += fmt::format("{}: {}{}, kept {} days\n", name, Rows(sp.rows), span, RetentionDays(sp.name));
  }
  for (const auto& t : st.tables)
    if (t.name != "devices" && t.name != "rollups" && t.name != "events")
      out += fmt::format("{}: {}\n", t.name, Rows(t.rows));
  return out;
}
// `bk u me`: the dashboard of your totals over the query's range, then
// (q.chart) the activity trend of the weeks before its end, from the hourly
// rollups: the same records every other view reads.
Result<std::string> MeText(store::UsageStore& store, const UsageQuery& q, const engine::Zone& zone) {
  BK_ASSIGN_OR_RETURN(auto rows, store.Users(q.from, q.to, q.uid));
  std::string out;
  if (rows.empty()) {
    out = "no usage records for you in this interval\n";
  } else {
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
  }
  if (!q.chart || !q.uid) return out;
  const int64_t end = q.to - 1;  // `to` is exclusive
  const int64_t start = TrendStart(end, zone);
  store::RollupQuery rq{start - start % 3600,           q.to, 3600, q.uid, std::nullopt,
                        std::numeric_limits<int>::max()};
  BK_ASSIGN_OR_RETURN(auto hourly, store.Rollups(rq));
  return out + "\n" + TrendText(BuildActivityTrend(hourly, end, zone));
}

}  // namespace

const char* UsageKindName(UsageKind k) {
  switch (k) {
    case UsageKind::kMe: return "me";
    case UsageKind::kUsers: return "users";
    case UsageKind::kEvents: return "events";
    case UsageKind::kSamples: return "samples";
    case UsageKind::kStorage: return "storage";
  }
  return "me";
}

std::string UsageCapabilitiesJson(int64_t now_ms) {
  json resolutions = json::object();
  for (const auto& r : kResolutions) resolutions[std::string(r.name)] = r.seconds;
  const sys::NodeIdentity& node = sys::LocalNode();
  json doc = {{"schema_version", "gpubk.usage.v1"},
              {"kind", "usage-capabilities"},
              {"generated_at", IsoMs(now_ms)},
              {"node", {{"schema", 1}, {"id", node.id}, {"hostname", node.hostname}}},
              {"storage_format", "gpubk.usage.sqlite"},
              {"views", {"me", "users", "events", "samples", "storage", "capabilities"}},
              {"resolutions", resolutions},
              // What usage.db keeps; the other resolutions are merged from these when read.
              {"stored_resolutions", {RollupAggregator::kWindowSeconds, 3600}},
              {"rollup_seconds", RollupAggregator::kWindowSeconds},
              {"activity_trend",
               {{"view", "me"}, {"days", kTrendDays}, {"weeks", kTrendWeeks}, {"resolution", "1h"}}},
              {"retention", RetentionJson()},
              {"interfaces", {{"json_cli", "bk usage ... --json"}, {"mcp", "get_my_gpu_usage"}}},
              {"durability", {{"single_writer_lock", true}, {"transaction_per_sample", true}}}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace);
}

std::string UsageCapabilitiesText() {
  const store::UsageRetention r;
  std::string names;
  for (const auto& res : kResolutions) names += (names.empty() ? "" : ", ") + std::string(res.name);
  std::string out = "views: me, users, events, samples, storage, capabilities\n";
  out += fmt::format("resolutions: {} (1m and 1h stored, the others merged)\n", names);
  out += fmt::format("rollup: {}s\n", RollupAggregator::kWindowSeconds);
  out += fmt::format("activity trend: bk u me, {} days and {} weeks (--no-chart omits it)\n", kTrendDays,
                     kTrendWeeks);
  out += fmt::format("retention: devices {}d, minute rollups {}d, hourly {}d, events {}d\n", r.device_days,
                     r.minute_days, r.hour_days, r.event_days);
  out += "storage: SQLite gpubk.usage.sqlite, one writer, a transaction per sample\n";
  return out;
}

Result<UsageQuery> UsageVisibleTo(UsageQuery q, const std::string& visibility, uint32_t caller, bool admin) {
  bool per_user =
      q.kind == UsageKind::kUsers || q.kind == UsageKind::kEvents || q.kind == UsageKind::kSamples;
  if (visibility == "lab" || admin || !per_user) return q;
  if (q.uid && *q.uid != caller)
    return Fail(ErrorKind::kPermission,
                "this server shows each user only their own usage (usage_visibility is self); its owner sees "
                "everyone's or can set usage_visibility to lab");
  q.uid = caller;
  q.own_rows_only = true;
  return q;
}

Result<std::string> UsageJson(store::UsageStore* store, const UsageQuery& q, int64_t now_ms,
                              const std::string& not_recording) {
  BK_ASSIGN_OR_RETURN(Collector collector, ReadCollector(store, now_ms, not_recording));
  if (q.kind == UsageKind::kStorage) return StorageJson(store, collector);
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
    case UsageKind::kStorage: break;  // its own document, above
  }
  if (q.own_rows_only) doc["visibility"] = "self";
  doc["query"] = query;
  doc["truncated"] = truncated;
  return doc.dump(2, ' ', false, json::error_handler_t::replace);
}

Result<std::string> UsageText(store::UsageStore* store, const UsageQuery& q, int64_t now_ms,
                              const engine::Zone& zone, const std::string& not_recording) {
  BK_ASSIGN_OR_RETURN(Collector collector, ReadCollector(store, now_ms, not_recording));
  std::string out = CollectorLine(collector) + "\n";
  if (!store) return out + "no usage history yet: the monitor records it (`bk m`, or `bk server serve`)\n";
  if (q.kind == UsageKind::kStorage) {
    BK_ASSIGN_OR_RETURN(std::string items, StorageText(*store, zone));
    return out + items;
  }
  out += fmt::format("history: {} -> {} (sampled past only)\n", engine::FormatLocal(q.from, zone),
                     engine::FormatLocal(q.to, zone));
  if (q.own_rows_only)
    out +=
        "visibility: your own rows only (this server's usage_visibility is self; its owner sees "
        "everyone's)\n";
  switch (q.kind) {
    case UsageKind::kMe: {
      BK_ASSIGN_OR_RETURN(std::string me, MeText(*store, q, zone));
      return out + me;
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
    case UsageKind::kStorage: break;  // answered above
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
