#pragma once
// One worker per user and data directory: two kernel
// flock leases in the private job directory, worker.lock (any worker of this
// user) and worker.instance.<hash>.lock (this data directory or server). The
// metadata in worker.lock is diagnostics only; the locks decide.

#include <sys/types.h>

#include <optional>
#include <string>

#include "base/result.h"
#include "engine/civil_time.h"
#include "engine/types.h"
#include "service/types.h"

namespace bk::worker {

struct LeaseInfo {
  std::string worker_id;
  int64_t pid = 0;
  int64_t uid = 0;
  std::string hostname;
  engine::Seconds acquired_at = 0;
  std::string instance_id;
};

// What `bk w`, `bk j` and a booking report about the worker.
struct WorkerStatus {
  std::string state = "not-seen";  // not-seen | stopped | running | other-instance | invalid
  std::optional<bool> running = false;
  bool lease_present = false;
  std::optional<bool> lease_held, instance_lease_held, metadata_valid, instance_match;
  std::optional<LeaseInfo> lease;
  std::string warning;
  engine::Seconds checked_at = 0;
};

// sha256("gpubk.worker.instance.v1\0" + identity), hex.
std::string InstanceId(const std::string& identity);

class Lease {
 public:
  // Takes both leases (3 non-blocking tries 10 ms apart each) and records the
  // metadata. kBusy: "another worker is active for <root>".
  static Result<Lease> Acquire(const std::string& root, const std::string& identity,
                               const std::string& worker_id, engine::Seconds now);
  Lease(Lease&& o) noexcept : global_(o.global_), instance_(o.instance_) { o.global_ = o.instance_ = -1; }
  Lease(const Lease&) = delete;
  ~Lease();

 private:
  Lease(int global, int instance) : global_(global), instance_(instance) {}
  int global_ = -1;
  int instance_ = -1;
};

// Probes the leases without creating or changing anything.
WorkerStatus Inspect(const std::string& root, const std::string& identity, uid_t uid, engine::Seconds now);

// "worker: running (lease held) recorded-pid=4743 host=vm since=2026-11-29 18:53 +0000"
std::string StatusLine(const WorkerStatus& s, const engine::Zone& zone);
// Why this user's scheduled commands may never launch, in the original's
// words (booking, `bk st`); nullopt while a worker runs.
std::optional<std::string> SchedulingWarning(const WorkerStatus& s);
// A booking with a command, for its document: the original lists that
// warning in `warnings[]` with the others.
service::BookingOutcome WithSchedulingWarning(service::BookingOutcome o, const WorkerStatus& s);
// The gpubk.worker.v1 document, compact.
std::string StatusJson(const WorkerStatus& s, const std::string& username);

}  // namespace bk::worker
