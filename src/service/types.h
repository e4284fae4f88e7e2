#pragma once
// Requests and results of the BookingService: the vocabulary every surface
// (CLI, MCP, daemon protocol) speaks through client::Ledger.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/enum_names.h"
#include "config/policy_change.h"
#include "engine/calendar.h"
#include "engine/reservation.h"
#include "gpu/snapshot.h"
#include "store/records.h"

namespace bk::service {

// Who is asking. Built from the kernel only: getuid() or SO_PEERCRED.
struct Actor {
  uint32_t uid = 0;
  std::string username;
  bool admin = false;  // UID 0 or the deployment's owner
};

// The ledger side of `bk N DUR -- CMD`: the private spec's identity and a
// short summary. The command itself never reaches the ledger.
struct JobBinding {
  std::string spec_id;  // UUID of the owner's private spec file
  std::string digest;   // 64 lowercase hex
  std::string summary;  // at most 200 printable characters
};

struct CreateRequest {
  int count = 1;
  engine::Seconds duration = 0;
  engine::Mode mode = engine::Mode::kShared;
  std::optional<int> share_units;
  std::optional<int64_t> memory_mb;  // per GPU
  std::optional<int64_t> cpus;
  std::optional<int64_t> ram_mb;
  std::optional<engine::Seconds> start;  // exact when set; queued from now otherwise
  std::vector<int> gpus;                 // pinned (any order); empty = automatic
  std::vector<int> exclude;
  std::optional<std::string> op_id;
  std::optional<JobBinding> job;  // a command to launch at the start
  // An administrator's reason to book beyond the fair-share limits (audited);
  // refused from anyone else.
  std::optional<std::string> override_reason;
};

struct EditRequest {
  std::string ref;  // list number, ID prefix or full ID
  std::optional<std::string> op_id;
  std::optional<engine::Seconds> duration;  // new total duration
  std::optional<engine::Seconds> end;       // or the new end (the duration follows from the start)
  std::optional<engine::Seconds> start;
  std::optional<engine::Mode> mode;
  std::vector<int> gpus;  // pinned
  std::vector<int> exclude;
  std::optional<int> count;
  bool update_memory = false;
  std::optional<int64_t> memory_mb;  // with update_memory: nullopt clears
  std::optional<int> share_units;
  std::optional<int64_t> cpus;
  std::optional<int64_t> ram_mb;
  bool allow_queue = false;  // move to the next legal slot on conflict
  // Admit the edit as it would be made and answer what it would be, writing
  // nothing (no change, operation ID, event or generation).
  bool dry_run = false;
  std::optional<std::string> override_reason;  // as CreateRequest's
};

struct RenewRequest {
  std::string ref;
  engine::Seconds extend_by = 0;
  std::optional<std::string> op_id;
  bool dry_run = false;                        // as EditRequest's: the answer of the renewal, nothing written
  std::optional<std::string> override_reason;  // as CreateRequest's
};

struct CancelRequest {
  std::string ref;
  std::optional<std::string> op_id;
  std::optional<std::string> reason;  // administrators cancelling another user's booking
};

// Live state of one GPU as placement saw it.
struct GpuView {
  int gpu = 0;
  gpu::LiveStatus live_status = gpu::LiveStatus::kUnknown;
  std::string live_reason = "live state unavailable";
  double load_score = 45.0;
  std::optional<int64_t> memory_total_mb;
  std::optional<int64_t> memory_free_mb;
  std::optional<int> utilization_percent;
  int priority = 0;
  double pressure = 0;
  std::optional<int64_t> budget_after_mb;  // shared VRAM headroom after this booking
};

struct BookingOutcome {
  std::string status;  // created | queued | exists | updated
  engine::Reservation reservation;
  bool replayed = false;                     // an operation ID replay: nothing was rerun
  bool dry_run = false;                      // the answer to a dry run: nothing was written
  std::string allocator_source;              // builtin | fixed-gpu | idempotent-replay
  std::vector<GpuView> selected;             // in reservation GPU order
  bool memory_telemetry = false;             // VRAM capacity known for the chosen GPUs
  std::optional<int64_t> assumed_memory_mb;  // automatic budget when --mem was omitted
  std::vector<std::string> avoided_busy;     // "GPU 1 (user=alice pid=4242)"
  std::vector<std::string> selected_busy;
  std::vector<std::string> warnings;
  std::string message;                  // audit message: created, queued, updated, ...
  std::string queued_reason;            // queued: why the requested start was refused
  std::optional<store::JobRecord> job;  // the bound command, when there is one
};

struct CancelOutcome {
  engine::Reservation reservation;
  bool replayed = false;
};

// An administrator gives an active booking to another local account.
struct TransferRequest {
  std::string ref;
  std::string to;      // the new owner's login name
  std::string reason;  // told to both owners and kept in the history
};

struct TransferOutcome {
  engine::Reservation reservation;  // as it is now: owned by the new owner
  uint32_t from_uid = 0;
  std::string from_username;
};

// The rest of a booking given back once the command it was booked for has
// exited (bk run, worker jobs).
struct ReleaseRequest {
  std::string reservation_id;  // the full ID
};

struct ReleaseOutcome {
  engine::Reservation reservation;  // as it stands afterwards
  engine::Seconds from = 0;         // where the given-back time begins
  engine::Seconds given_back = 0;   // 0: nothing was left to give back
};

struct Recommendation {
  bool available = false;
  std::optional<engine::Placement> placement;
  std::optional<engine::Placement> nearest;
  std::string reason;  // why not, when unavailable
  std::vector<GpuView> selected;
  std::vector<std::string> warnings;
  std::string confidence = "low";  // high | medium | low
  CreateRequest request;           // normalised
  engine::Seconds start = 0;       // normalised request start
  bool allow_queue = true;
};

struct SlotOption {
  std::vector<int> gpus;
  engine::Seconds start = 0;
  engine::Seconds end = 0;
  gpu::LiveStatus live = gpu::LiveStatus::kUnknown;
  std::optional<int64_t> free_now_mb;
};

struct SlotsResult {
  std::vector<SlotOption> options;
  bool truncated_combinations = false;
};

struct ListQuery {
  bool history = false;  // every status, newest first
  std::optional<int> limit;
  bool everyone = false;  // all users' active reservations
};

struct ListResult {
  std::vector<engine::Reservation> reservations;
  int total = 0;
  bool truncated = false;
  std::vector<store::JobRecord> jobs;  // the caller's jobs bound to the listed reservations
};

// One of the caller's jobs with its reservation as it stands now.
struct JobView {
  engine::Reservation reservation;
  store::JobRecord job;
};

// A worker's change to one of its owner's jobs (job.update). Preconditions make
// it a compare-and-swap: when they do not hold nothing changes and the current
// state comes back. Times (claimed_at, started_at, finished_at, waiting_since,
// recovered_at) are stamped by the service from the status change.
struct JobPatch {
  std::string reservation_id;               // full ID
  std::vector<store::JobStatus> if_status;  // current status must be one of these (empty: any)
  std::optional<std::string> if_claim_token;
  std::optional<store::JobStatus> status;
  std::optional<std::string> claim_token;  // "" clears
  std::optional<std::string> worker_id;
  std::optional<std::string> runner_host;
  std::optional<int64_t> runner_pid;
  std::optional<int64_t> exit_code;
  std::optional<std::string> message;             // "" clears
  std::optional<std::string> launch_guard_state;  // "waiting" | ""
  std::optional<std::string> launch_guard_key;
  std::optional<std::string> recovery_state;
  std::optional<std::string> log_warning;
  std::optional<bool> log_rotated;
  bool expire_reservation = false;  // mark an ended active reservation expired
  std::string audit_action;         // job-[a-z-]+ ("" writes no event)
  std::string audit_message;
};

struct JobPatchResult {
  bool applied = false;
  std::string reason;  // why not, when not applied
  JobView current;     // the state after the call
};

struct JobsQuery {
  bool open_only = false;  // pending, claimed, running and uncertain only (what a worker polls)
};

struct JobRetryRequest {
  std::string ref;  // list number (bk j), ID prefix or full ID
  bool accept_duplicate_risk = false;
};

struct HistoryView {
  engine::Reservation reservation;
  std::vector<store::Event> events;
  std::vector<store::Notification> notifications;
};

// What the caller has not yet read with `bk n`: how many, and the newest of
// them (at most the limit asked for).
struct UnreadNotifications {
  int64_t count = 0;
  std::vector<store::Notification> newest;
};

struct OperationView {
  bool found = false;
  std::string action;
  std::optional<engine::Reservation> reservation;
};

// Announcements (`bk admin notice`). Levels and times are checked by the
// service, so every surface gets the same refusals.
struct PublishRequest {
  std::string message;
  std::string level = "warning";             // info | warning | critical
  std::optional<engine::Seconds> starts_at;  // now when absent
  // The expiry, or the lifetime from the start (from now once started); 24
  // hours when neither is given.
  std::optional<engine::Seconds> expires_at;
  std::optional<engine::Seconds> lifetime;
};

// Changes to an announcement that is not archived; unset fields stay.
struct AnnouncementEdit {
  std::string ref;  // full ID or a unique prefix
  std::optional<std::string> message;
  std::optional<std::string> level;
  std::optional<engine::Seconds> starts_at;
  std::optional<engine::Seconds> expires_at;
  std::optional<engine::Seconds> lifetime;
};

struct AnnouncementsQuery {
  // Every announcement, archived and expired ones too, newest first
  // (administrators only; others get the active ones whatever they ask).
  bool all = false;
};

struct AnnouncementOutcome {
  store::Announcement announcement;
  bool changed = true;  // false: archiving one already archived
};

// Calendar facts per GPU, computed from every active reservation.
struct GpuUsage {
  int used_units = 0;                // shared slots taken now
  bool exclusive = false;            // an exclusive reservation covers now
  engine::Seconds next_free = 0;     // when no reservation covers the GPU any more
  std::vector<uint32_t> owners_now;  // UIDs holding it now
};

// Everything `bk st`, `bk g` and `bk tl` draw.
struct StatusView {
  engine::Seconds now = 0;
  gpu::Snapshot snapshot;
  std::vector<GpuView> gpus;
  std::vector<GpuUsage> usage;            // per GPU
  int active_count = 0;                   // active reservations of everyone
  std::vector<engine::Reservation> mine;  // the caller's active reservations (the first, when limited)
  int mine_total = 0;                     // how many active reservations the caller holds
  std::vector<engine::Reservation> reservations;  // overlapping the window (all users), not cancelled
};

// Whether the ledger's bound policy fits this configuration.
enum class PolicyState { kUnbound, kMatch, kMismatch };
inline constexpr auto kPolicyStateNames =
    MakeEnumNames<PolicyState>(std::pair{PolicyState::kUnbound, std::string_view("unbound")},
                               std::pair{PolicyState::kMatch, std::string_view("match")},
                               std::pair{PolicyState::kMismatch, std::string_view("mismatch")});

// The fair-share limits and each scope's use of them (`bk u limits`): the
// caller and their groups, or every user with bookings of the last week and
// every limited group for an administrator or where usage_visibility is lab.
struct FairShareRow {
  std::string name;  // login name, or the group's
  bool group = false;
  engine::Limits limits;  // what applies (a user's own entry over the defaults)
  engine::LimitUse use;
};
struct FairShareReport {
  bool configured = false;  // any limit is set
  engine::Seconds now = 0;
  std::vector<FairShareRow> rows;  // users by name, then groups by name
};

struct PolicyStatus {
  PolicyState state = PolicyState::kUnbound;
  std::string message;  // what differs, for a mismatch
  std::string_view name() const { return kPolicyStateNames.Name(state); }
};

// An administrator's change of a running server's policy (`bk admin policy`,
// `bk admin blackout`): the daemon reads its config file again, or checks
// `config_text` in its place without changing anything.
struct PolicyReloadRequest {
  std::optional<std::string> config_text;  // a proposal: checked, never applied
  std::string expect_sha256;               // the file must hold this content ("" = any)
  bool force = false;                      // keep bookings the change makes illegal; owners are told
  bool cancel_conflicting = false;         // cancel them instead (an administrator cancel)
  std::optional<std::string> reason;       // needed by force and cancel_conflicting
};

// A booking the new policy would not have admitted, and why.
struct PolicyConflictItem {
  engine::Reservation reservation;
  std::string why;
};

struct PolicyChange {
  std::string status;  // unchanged | checked | refused | applied
  std::vector<config::KeyChange> changes;
  std::vector<std::string> restart;  // keys that differ but apply only after a restart
  std::vector<PolicyConflictItem> conflicts;
  int64_t notified = 0;   // owners told (force)
  int64_t cancelled = 0;  // bookings cancelled (cancel_conflicting)
};

// `bk admin data verify`: SQLite's own check plus the calendar's invariants.
struct VerifyReport {
  std::string path;
  std::string integrity;                // "ok" when healthy
  std::vector<std::string> violations;  // over-admitted instants; empty when healthy
  int64_t reservations = 0;
  int64_t active = 0;
  bool ok() const { return integrity == "ok" && violations.empty(); }
};

// `bk admin data restore` and `clear`: the ledger as it was is kept in
// `kept` (restore: beside it; clear: the verified backup), and `checked` is
// the verification of what was put in place (restore: the backup) or of
// what was kept (clear).
struct LedgerSwap {
  std::string kept;
  VerifyReport checked;
};

// How far an import is: bytes while reading, records afterwards.
enum class ImportPhase { kReading, kValidating, kWriting };
inline constexpr auto kImportPhaseNames =
    MakeEnumNames<ImportPhase>(std::pair{ImportPhase::kReading, std::string_view("reading")},
                               std::pair{ImportPhase::kValidating, std::string_view("validating")},
                               std::pair{ImportPhase::kWriting, std::string_view("writing")});
inline const auto& EnumNamesOf(ImportPhase) { return kImportPhaseNames; }
// Told often (every few hundred records); the callee throttles what it shows.
using ImportProgressFn = std::function<void(ImportPhase phase, int64_t done, int64_t total)>;

struct ImportSummary {
  int reservations = 0;
  int active = 0;
  int cancelled = 0;
  int expired = 0;
  int edits = 0;
  int notifications = 0;
  int operations = 0;
};

}  // namespace bk::service
