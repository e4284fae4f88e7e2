#pragma once
// Rows of the ledger besides reservations: the audit history, operation IDs,
// notifications and administrators' announcements.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/enum_names.h"
#include "engine/types.h"

namespace bk::store {

// One append-only audit record. For edits `before`/`after` hold the
// schedulable state as JSON.
struct Event {
  int64_t seq = 0;
  std::string event_id;
  std::string transaction_id;
  engine::Seconds ts = 0;
  uint32_t uid = 0;  // the reservation's owner
  std::string username;
  uint32_t actor_uid = 0;  // who acted (owner, administrator, monitor)
  std::string actor_username;
  std::string action;  // add | edit | renew | cancel | admin-cancel | reclaim | import
  std::string reservation_id;
  std::string op_id;
  std::vector<int> gpus;
  std::string mode;
  std::optional<int64_t> share_units;
  engine::Seconds start = 0;
  engine::Seconds end = 0;
  std::string result = "ok";
  std::string message;
  std::string before;  // JSON or ""
  std::string after;   // JSON or ""
  std::string signature;
};

// A retry-safe write: (uid, op_id) is unique across creates, edits and cancels.
struct Operation {
  uint32_t uid = 0;
  std::string op_id;
  std::string action;  // create | edit | renew | cancel
  std::string reservation_id;
  std::string signature;  // SHA-256 of the canonical request
  engine::Seconds created_at = 0;
};

struct Notification {
  std::string id;
  uint32_t uid = 0;  // recipient
  std::string reservation_id;
  std::string type;  // reservation-admin-cancelled | reservation-reclaimed
  engine::Seconds created_at = 0;
  uint32_t actor_uid = 0;
  std::string actor_username;
  std::string reason;
  std::string message;
};

// How loud an announcement is; also the order surfaces list them in
// (critical first).
enum class AnnouncementLevel { kInfo, kWarning, kCritical };
inline constexpr auto kAnnouncementLevelNames =
    MakeEnumNames<AnnouncementLevel>(std::pair{AnnouncementLevel::kInfo, std::string_view("info")},
                                     std::pair{AnnouncementLevel::kWarning, std::string_view("warning")},
                                     std::pair{AnnouncementLevel::kCritical, std::string_view("critical")});
constexpr const auto& EnumNamesOf(AnnouncementLevel) { return kAnnouncementLevelNames; }

// An administrator's message to every user of the deployment (schema v4),
// shown while starts_at <= now < expires_at. Archived rather than deleted:
// the archive fields are set once and the row stays.
struct Announcement {
  std::string id;  // UUID
  AnnouncementLevel level = AnnouncementLevel::kWarning;
  std::string message;
  engine::Seconds created_at = 0;
  engine::Seconds starts_at = 0;
  engine::Seconds expires_at = 0;
  uint32_t actor_uid = 0;  // who published it
  std::string actor_username;
  std::optional<engine::Seconds> updated_at;  // the last edit
  std::optional<engine::Seconds> archived_at;
  std::optional<uint32_t> archived_by_uid;
  std::optional<std::string> archived_by_username;

  bool ActiveAt(engine::Seconds now) const { return !archived_at && starts_at <= now && now < expires_at; }
};

// Where a bound command stands. pending, claimed and running are open; the
// rest are outcomes (uncertain until a worker settles it).
enum class JobStatus {
  kPending,
  kClaimed,
  kRunning,
  kSucceeded,
  kFailed,
  kCancelled,
  kMissed,
  kTimedOut,
  kInterrupted,
  kUncertain,
};
// The names stored in the ledger and sent on the socket.
inline constexpr auto kJobStatusNames =
    MakeEnumNames<JobStatus>(std::pair{JobStatus::kPending, std::string_view("pending")},
                             std::pair{JobStatus::kClaimed, std::string_view("claimed")},
                             std::pair{JobStatus::kRunning, std::string_view("running")},
                             std::pair{JobStatus::kSucceeded, std::string_view("succeeded")},
                             std::pair{JobStatus::kFailed, std::string_view("failed")},
                             std::pair{JobStatus::kCancelled, std::string_view("cancelled")},
                             std::pair{JobStatus::kMissed, std::string_view("missed")},
                             std::pair{JobStatus::kTimedOut, std::string_view("timed-out")},
                             std::pair{JobStatus::kInterrupted, std::string_view("interrupted")},
                             std::pair{JobStatus::kUncertain, std::string_view("uncertain")});
constexpr const auto& EnumNamesOf(JobStatus) { return kJobStatusNames; }

// Not yet launched or still running: anything else is how the job ended.
constexpr bool Finished(JobStatus s) {
  return s != JobStatus::kPending && s != JobStatus::kClaimed && s != JobStatus::kRunning;
}

// A command bound to a reservation (schema v2). The command itself stays in the
// owner's private spec file; the ledger keeps its digest and a short summary.
// Optional times are unset until they happen.
struct JobRecord {
  std::string reservation_id;
  uint32_t uid = 0;
  std::string spec_id;
  std::string digest;   // SHA-256 hex of the canonical spec
  std::string summary;  // "python train.py (+2 args)"
  JobStatus status = JobStatus::kPending;
  engine::Seconds submitted_at = 0;
  engine::Seconds updated_at = 0;
  std::optional<engine::Seconds> claimed_at, started_at, finished_at, waiting_since, cancel_requested_at,
      recovered_at;
  std::optional<int64_t> exit_code;   // negative: killed by that signal
  std::optional<int64_t> runner_pid;  // the worker while claimed, the command once running
  std::string runner_host;
  std::string worker_id;    // the lease that claimed it
  std::string claim_token;  // compare-and-swap token of the current attempt
  std::string message;
  std::string launch_guard_state;  // "" | waiting
  std::string launch_guard_key;
  std::string recovery_state;  // "" | terminating | terminated | not-found | ...
  std::string recovery_worker_id;
  std::string log_warning;
  bool log_rotated = false;
};

}  // namespace bk::store
