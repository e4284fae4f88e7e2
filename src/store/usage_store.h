#pragma once
// usage.db: what the monitor observed, beside ledger.db.
// Written only by the monitor (one writer: `bk server serve`, or `bk m` under
// usage.lock); read by `bk u`. Same file rules as the ledger: 0600, directory
// 0700, symlinks and foreign owners refused, WAL.
//
// Tables (schema in usage_store.cc):
//   devices    one row per GPU per sample (state, utilisation, VRAM, process count)
//   rollups    per-user/GPU/status aggregates in two tiers, 60 s and 3600 s; a
//              flush ADDS into a row, so partial windows from several runs merge
//   events     process start/stop, unbooked use, telemetry gaps, pauses, reclaims
//   processes  the live process state, so a restarted monitor diffs against it
//   evidence   per booking, the no-show streak (reclaim.h), so `bk m --once`
//              runs in a row count as consecutive samples when no gap separates them
//   gpus       each GPU's identity (UUID, name, total memory) as last sampled
//   heartbeat  one row: what the monitor last did, for readers to classify
// Retention is by age (UsageRetention), applied by Prune.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "store/sqlite.h"

namespace bk::store {

struct UsageOpenOptions {
  std::string path;     // .../usage.db
  bool create = false;  // create when missing (the monitor); readers never create
  uid_t owner = 0;
  int busy_timeout_ms = 10000;
  std::string vfs;  // as in OpenOptions: empty is SQLite's default
};

// One GPU in one sample.
struct DeviceRow {
  int64_t ts_ms = 0;
  int gpu = 0;
  std::string state;   // ok | failed | paused | no-telemetry
  std::string source;  // nvml | simulation | none
  std::optional<int64_t> utilization_percent;
  std::optional<int64_t> memory_used_mb;
  std::optional<int64_t> memory_total_mb;
  int64_t process_count = 0;
};

// Usage of one GPU by one user with one status over a window.
struct RollupRow {
  int64_t window_start = 0;  // epoch seconds, a multiple of resolution
  int64_t resolution = 60;   // 60 or 3600
  int gpu = 0;
  uint32_t uid = 0;
  std::string username;
  std::string status;  // ok (booked) | unreserved | wrong-gpu
  int64_t samples = 0;
  int64_t active_samples = 0;  // samples with at least one process
  int64_t observed_ms = 0;     // samples x interval
  int64_t active_ms = 0;
  int64_t inferred_ms = 0;  // active time from container processes inferred to this user
  int64_t process_sum = 0;
  int64_t process_max = 0;
  int64_t sm_sum = 0;  // per-sample sums of per-process SM%, over samples that had one
  int64_t sm_count = 0;
  int64_t sm_max = 0;
  int64_t memory_sum_mb = 0;
  int64_t memory_max_mb = 0;
  int64_t util_sum = 0;  // whole-device utilisation, not divided between users
  int64_t util_count = 0;
  int64_t util_max = 0;
};

struct UsageEvent {
  int64_t seq = 0;
  int64_t ts_ms = 0;
  // process-start | process-stop | authorization-change | unbooked-use | reclaim |
  // telemetry-failed | telemetry-restored | paused | resumed | monitor-start | monitor-stop
  std::string kind;
  std::optional<int> gpu;
  std::optional<int64_t> pid;
  std::optional<uint32_t> uid;
  std::string username;
  std::string identity_source;  // host | container-reservation | container-ambiguous | ""
  std::string status;           // ok | unreserved | wrong-gpu | unknown | system | ""
  std::string reservation_id;
  std::string message;
};

struct TrackedProcess {
  int gpu = 0;
  int64_t pid = 0;
  std::string token;  // PID-reuse token ("" when the source has none)
  std::optional<uint32_t> uid;
  std::string username;
  std::string identity_source;
  std::string status;
  std::string reservation_id;
  int64_t first_seen_ms = 0;
};

// A booking's no-show streak (monitor/reclaim.h).
struct EvidenceRow {
  std::string reservation_id;
  std::optional<int64_t> since_ms;  // start of the current run of trustworthy no-use samples
  std::optional<int64_t> last_ms;   // the last sample that judged this booking
  std::optional<int64_t> used_ms;   // when the owner was first seen using it (then never reclaimed)
};

struct HeartbeatRow {
  std::string monitor_id;
  int64_t pid = 0;
  uint32_t uid = 0;
  std::string status;  // running | degraded | paused | stopped
  int64_t interval_ms = 2000;
  int64_t started_ms = 0;
  int64_t sampled_ms = 0;
  int64_t written_ms = 0;
  std::optional<int64_t> stopped_ms;
  int64_t samples = 0;              // samples taken by this monitor run
  std::string detail;               // why degraded or paused, "" when running
  std::string sample_state = "ok";  // the last sample: ok | failed | paused (for transition events)
};

// A GPU's stable identity as last sampled: kept for paused windows, when the
// GPU is not queried.
struct GpuIdentity {
  int gpu = 0;
  std::string uuid;
  std::string name;
  std::optional<int64_t> memory_total_mb;
  int64_t seen_ms = 0;
};

struct UsageRetention {
  int64_t device_days = 2;   // per-sample device rows
  int64_t minute_days = 35;  // 60 s rollups
  int64_t hour_days = 400;   // 3600 s rollups
  int64_t event_days = 365;
};

// Per-user totals over a time range (`bk u users`).
struct UserUsage {
  uint32_t uid = 0;
  std::string username;
  int64_t sampled_ms = 0;        // all observed time
  int64_t active_ms = 0;         // with a process
  int64_t reserved_ms = 0;       // observed while booked (status ok)
  int64_t idle_reserved_ms = 0;  // booked, no process
  int64_t unbooked_ms = 0;       // active without a booking on that GPU (unreserved, wrong-gpu)
  int64_t inferred_ms = 0;       // active time attributed through container inference
  std::optional<double> avg_sm_percent;
  int64_t max_sm_percent = 0;
  int64_t max_memory_mb = 0;
  std::vector<int> gpus;
};

struct RollupQuery {
  int64_t from = 0;  // epoch seconds, inclusive (window_start >= from)
  int64_t to = 0;    // exclusive
  int64_t resolution = 60;
  std::optional<uint32_t> uid;
  std::optional<int> gpu;
  int limit = 1000;
};

// What usage.db holds, for `bk u storage`: rows per table, and the time
// span of each kind of history (epoch seconds; none while it is empty).
struct UsageTableStats {
  std::string name;  // devices | rollups | events | processes | evidence | gpus | heartbeat
  int64_t rows = 0;
};
struct UsageSpan {
  std::string name;  // devices (per sample) | minute | hourly (rollup tiers) | events
  int64_t rows = 0;
  std::optional<int64_t> oldest;
  std::optional<int64_t> newest;
};
struct UsageStats {
  std::string format;        // the meta table's format name
  std::string journal_mode;  // wal
  int64_t page_size = 0;
  int64_t page_count = 0;
  int64_t free_pages = 0;  // pages SQLite reuses before the file grows
  std::vector<UsageTableStats> tables;
  std::vector<UsageSpan> spans;
};

struct EventQuery {
  int64_t from_ms = 0;
  int64_t to_ms = 0;  // exclusive
  std::optional<uint32_t> uid;
  std::optional<int> gpu;
  int limit = 1000;  // the newest `limit`, returned oldest first
};

class UsageStore {
 public:
  static Result<std::unique_ptr<UsageStore>> Open(const UsageOpenOptions& options);
  static constexpr int kSchemaVersion = 1;
  ~UsageStore();

  // One transaction per sample: the monitor's writes are batched so a sample
  // costs one commit (WAL, synchronous=NORMAL: no fsync per sample).
  Status Begin();
  Status Commit();
  void Rollback();

  Status AddDevices(std::span<const DeviceRow> rows);
  // Adds each row into its window in both tiers (60 s as given, and the hour).
  Status AddRollups(std::span<const RollupRow> rows);
  Status AddEvents(std::span<const UsageEvent> events);
  Status PutHeartbeat(const HeartbeatRow& h);
  Status PutProcess(const TrackedProcess& p);
  Status DeleteProcess(int gpu, int64_t pid, const std::string& token);
  Status PutEvidence(const EvidenceRow& e);
  Status DeleteEvidence(const std::string& reservation_id);
  Status PutGpu(const GpuIdentity& g);
  // Removes what is older than the retention allows, relative to now_ms.
  Status Prune(int64_t now_ms, const UsageRetention& retention);
  // `bk reset`: every recorded row (samples, rollups, events, tracked
  // processes, no-show evidence, GPU identities, the heartbeat) in one
  // transaction; the file and its format marker stay. Returns the events and
  // rollups that were there. The caller holds usage.lock.
  struct Cleared {
    int64_t events = 0;
    int64_t rollups = 0;
  };
  Result<Cleared> Clear();

  Result<std::optional<HeartbeatRow>> Heartbeat();
  Result<std::vector<TrackedProcess>> Processes();
  Result<std::vector<EvidenceRow>> Evidence();
  Result<std::vector<GpuIdentity>> Gpus();

  Result<std::vector<RollupRow>> Rollups(const RollupQuery& q);
  // Totals per user over [from, to) (epoch seconds): whole hours from the hour
  // tier, the partial hours at either end from the minute tier.
  Result<std::vector<UserUsage>> Users(int64_t from, int64_t to, std::optional<uint32_t> uid);
  Result<std::vector<UsageEvent>> Events(const EventQuery& q);
  Result<std::vector<DeviceRow>> Devices(int64_t from_ms, int64_t to_ms, int limit);
  Result<UsageStats> Stats();

  const std::string& path() const { return path_; }
  Db& db() { return *db_; }

 private:
  UsageStore(std::unique_ptr<Db> db, std::string path);
  Status Migrate();
  Result<Stmt*> Cached(int slot, const char* sql);
  Status UpsertRollup(const RollupRow& r, int64_t resolution, int64_t window_start);
  Status SumRange(int64_t resolution, int64_t from, int64_t to, std::optional<uint32_t> uid,
                  std::vector<RollupRow>& out);

  std::unique_ptr<Db> db_;
  std::string path_;
  bool in_txn_ = false;
  std::vector<std::unique_ptr<Stmt>> cache_;  // prepared once: the per-sample writes are hot
};

}  // namespace bk::store
