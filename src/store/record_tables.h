#pragma once
// The ledger's tables (table.h), one line per field in column order. The
// reservation, operation, event and notification tables are schema version 1,
// jobs version 2, announcements version 4 (see LedgerStore::Migrate).

#include "engine/reservation.h"
#include "store/records.h"
#include "store/table.h"

namespace bk::store {

// Reservation columns that are not one member as it is.
namespace reservation_columns {
using engine::Reservation;
struct Mode {
  static void Bind(Stmt& st, int i, const Reservation& r) { st.Bind(i, engine::ModeName(r.mode)); }
  static void Read(const Stmt& s, int i, Reservation& r) {
    r.mode = s.Text(i) == "exclusive" ? engine::Mode::kExclusive : engine::Mode::kShared;
  }
};
struct ShareUnits {  // NULL for an exclusive booking
  static void Bind(Stmt& st, int i, const Reservation& r) {
    if (r.mode == engine::Mode::kShared)
      st.Bind(i, int64_t{r.share_units});
    else
      st.BindNull(i);
  }
  static void Read(const Stmt& s, int i, Reservation& r) {
    r.share_units = static_cast<int>(s.OptInt(i).value_or(1));
  }
};
struct Status {
  static void Bind(Stmt& st, int i, const Reservation& r) { st.Bind(i, engine::StatusName(r.status)); }
  static void Read(const Stmt& s, int i, Reservation& r) {
    r.status = engine::ParseStatus(s.Text(i)).value_or(engine::Status::kActive);
  }
};
// One member of the cancellation, NULL while there is none. The first column
// read (kOpens) decides whether there is one.
template <auto M, bool kOpens = false>
struct Cancel {
  using Sql = SqlValue<typename MemberOf<decltype(M)>::Type>;
  static void Bind(Stmt& st, int i, const Reservation& r) {
    if (r.cancellation)
      Sql::Bind(st, i, (*r.cancellation).*M);
    else
      st.BindNull(i);
  }
  static void Read(const Stmt& s, int i, Reservation& r) {
    if (kOpens && !s.IsNull(i)) r.cancellation.emplace();
    if (r.cancellation) (*r.cancellation).*M = Sql::Read(s, i);
  }
};
template <class Codec>
using Col = Column<Reservation, Codec>;
using C = engine::Cancellation;
}  // namespace reservation_columns

// clang-format off
inline constexpr auto kReservationTable = [] {
  using namespace reservation_columns;
  using R = engine::Reservation;
  return MakeTable(
      TableInfo{"reservations"},
      Field<&R::id>{"id", "TEXT PRIMARY KEY"},
      Field<&R::uid>{"uid", "INTEGER NOT NULL"},
      Field<&R::username>{"username", "TEXT NOT NULL"},
      Col<Mode>{"mode", "TEXT NOT NULL CHECK (mode IN ('shared', 'exclusive'))"},
      Field<&R::gpus>{"gpus", "TEXT NOT NULL"},
      Col<ShareUnits>{"share_units", "INTEGER"},
      Field<&R::memory_mb>{"memory_mb", "INTEGER"},
      Field<&R::cpus>{"cpus", "INTEGER NOT NULL DEFAULT 0"},
      Field<&R::ram_mb>{"ram_mb", "INTEGER NOT NULL DEFAULT 0"},
      Field<&R::start>{"start_at", "INTEGER NOT NULL"},
      Field<&R::end>{"end_at", "INTEGER NOT NULL CHECK (end_at > start_at)"},
      Col<Status>{"status", "TEXT NOT NULL CHECK (status IN ('active', 'cancelled', 'expired'))"},
      Field<&R::created_at>{"created_at", "INTEGER NOT NULL"},
      Field<&R::updated_at>{"updated_at", "INTEGER NOT NULL"},
      Field<&R::op_id>{"op_id", "TEXT NOT NULL"},
      Field<&R::op_signature>{"op_signature", "TEXT NOT NULL DEFAULT ''"},
      Field<&R::edit_count>{"edit_count", "INTEGER NOT NULL DEFAULT 0"},
      Col<Cancel<&C::at, true>>{"cancel_at", "INTEGER"},
      Col<Cancel<&C::kind>>{"cancel_kind", "TEXT"},
      Col<Cancel<&C::reason>>{"cancel_reason", "TEXT"},
      Col<Cancel<&C::actor_uid>>{"cancel_actor_uid", "INTEGER"},
      Col<Cancel<&C::actor_username>>{"cancel_actor_username", "TEXT"},
      Col<Cancel<&C::op_id>>{"cancel_op_id", "TEXT"});
}();
// clang-format on

// clang-format off
inline constexpr auto kOperationTable = [] {
  using O = Operation;
  return MakeTable(TableInfo{"operations", "uid, op_id"},
                   Field<&O::uid>{"uid", "INTEGER NOT NULL"},
                   Field<&O::op_id>{"op_id", "TEXT NOT NULL"},
                   Field<&O::action>{"action", "TEXT NOT NULL"},
                   Field<&O::reservation_id>{"reservation_id", "TEXT NOT NULL"},
                   Field<&O::signature>{"signature", "TEXT NOT NULL"},
                   Field<&O::created_at>{"created_at", "INTEGER NOT NULL"});
}();
// clang-format on

// Sent as JSON too (history): keys as the columns but "start" and "end".
// clang-format off
inline constexpr auto kEventTable = [] {
  using E = Event;
  return MakeTable(TableInfo{"events"},
                   Field<&E::seq>{"seq", "INTEGER PRIMARY KEY AUTOINCREMENT"},
                   Field<&E::event_id>{"event_id", "TEXT NOT NULL UNIQUE"},
                   Field<&E::transaction_id>{"transaction_id", "TEXT NOT NULL"},
                   Field<&E::ts>{"ts", "INTEGER NOT NULL"},
                   Field<&E::uid>{"uid", "INTEGER NOT NULL"},
                   Field<&E::username>{"username", "TEXT NOT NULL"},
                   Field<&E::actor_uid>{"actor_uid", "INTEGER NOT NULL"},
                   Field<&E::actor_username>{"actor_username", "TEXT NOT NULL"},
                   Field<&E::action>{"action", "TEXT NOT NULL"},
                   Field<&E::reservation_id>{"reservation_id", "TEXT NOT NULL"},
                   Field<&E::op_id>{"op_id", "TEXT NOT NULL"},
                   Field<&E::gpus>{"gpus", "TEXT NOT NULL"},
                   Field<&E::mode>{"mode", "TEXT NOT NULL"},
                   Field<&E::share_units>{"share_units", "INTEGER"},
                   Field<&E::start>{"start_at", "INTEGER NOT NULL", "start"},
                   Field<&E::end>{"end_at", "INTEGER NOT NULL", "end"},
                   Field<&E::result>{"result", "TEXT NOT NULL"},
                   Field<&E::message>{"message", "TEXT NOT NULL"},
                   Field<&E::before, EmptyAsNull>{"before", "TEXT"},
                   Field<&E::after, EmptyAsNull>{"after", "TEXT"},
                   Field<&E::signature>{"signature", "TEXT NOT NULL DEFAULT ''"});
}();
// clang-format on

// Sent as JSON too (history), keys as the columns.
// clang-format off
inline constexpr auto kNotificationTable = [] {
  using N = Notification;
  return MakeTable(TableInfo{"notifications"},
                   Field<&N::id>{"id", "TEXT PRIMARY KEY"},
                   Field<&N::uid>{"uid", "INTEGER NOT NULL"},
                   Field<&N::reservation_id>{"reservation_id", "TEXT NOT NULL"},
                   Field<&N::type>{"type", "TEXT NOT NULL"},
                   Field<&N::created_at>{"created_at", "INTEGER NOT NULL"},
                   Field<&N::actor_uid>{"actor_uid", "INTEGER NOT NULL"},
                   Field<&N::actor_username>{"actor_username", "TEXT NOT NULL"},
                   Field<&N::reason>{"reason", "TEXT NOT NULL"},
                   Field<&N::message>{"message", "TEXT NOT NULL"});
}();
// clang-format on

// Sent as JSON too (job.list and friends), keys as the columns.
// clang-format off
inline constexpr auto kJobTable = [] {
  using J = JobRecord;
  return MakeTable(
      TableInfo{"jobs"},
      Field<&J::reservation_id>{"reservation_id", "TEXT PRIMARY KEY REFERENCES reservations(id)"},
      Field<&J::uid>{"uid", "INTEGER NOT NULL"},
      Field<&J::spec_id>{"spec_id", "TEXT NOT NULL"},
      Field<&J::digest>{"digest", "TEXT NOT NULL"},
      Field<&J::summary>{"summary", "TEXT NOT NULL"},
      Field<&J::status>{"status", "TEXT NOT NULL CHECK (status IN ('pending', 'claimed', 'running', 'succeeded', 'failed', 'cancelled',\n"
                                  "                                         'missed', 'timed-out', 'interrupted', 'uncertain'))"},
      Field<&J::submitted_at>{"submitted_at", "INTEGER NOT NULL"},
      Field<&J::updated_at>{"updated_at", "INTEGER NOT NULL"},
      Field<&J::claimed_at>{"claimed_at", "INTEGER"},
      Field<&J::started_at>{"started_at", "INTEGER"},
      Field<&J::finished_at>{"finished_at", "INTEGER"},
      Field<&J::waiting_since>{"waiting_since", "INTEGER"},
      Field<&J::cancel_requested_at>{"cancel_requested_at", "INTEGER"},
      Field<&J::recovered_at>{"recovered_at", "INTEGER"},
      Field<&J::exit_code>{"exit_code", "INTEGER"},
      Field<&J::runner_pid>{"runner_pid", "INTEGER"},
      Field<&J::runner_host>{"runner_host", "TEXT NOT NULL DEFAULT ''"},
      Field<&J::worker_id>{"worker_id", "TEXT NOT NULL DEFAULT ''"},
      Field<&J::claim_token>{"claim_token", "TEXT NOT NULL DEFAULT ''"},
      Field<&J::message>{"message", "TEXT NOT NULL DEFAULT ''"},
      Field<&J::launch_guard_state>{"launch_guard_state", "TEXT NOT NULL DEFAULT ''"},
      Field<&J::launch_guard_key>{"launch_guard_key", "TEXT NOT NULL DEFAULT ''"},
      Field<&J::recovery_state>{"recovery_state", "TEXT NOT NULL DEFAULT ''"},
      Field<&J::recovery_worker_id>{"recovery_worker_id", "TEXT NOT NULL DEFAULT ''"},
      Field<&J::log_warning>{"log_warning", "TEXT NOT NULL DEFAULT ''"},
      Field<&J::log_rotated>{"log_rotated", "INTEGER NOT NULL DEFAULT 0"});
}();
// clang-format on

// Sent as JSON too (announcement.*), keys as the columns.
// clang-format off
inline constexpr auto kAnnouncementTable = [] {
  using A = Announcement;
  return MakeTable(
      TableInfo{"announcements"},
      Field<&A::id>{"id", "TEXT PRIMARY KEY"},
      Field<&A::level>{"level", "TEXT NOT NULL CHECK (level IN ('info', 'warning', 'critical'))"},
      Field<&A::message>{"message", "TEXT NOT NULL CHECK (length(message) BETWEEN 1 AND 1024)"},
      Field<&A::created_at>{"created_at", "INTEGER NOT NULL"},
      Field<&A::starts_at>{"starts_at", "INTEGER NOT NULL"},
      Field<&A::expires_at>{"expires_at", "INTEGER NOT NULL CHECK (expires_at > starts_at)"},
      Field<&A::actor_uid>{"actor_uid", "INTEGER NOT NULL"},
      Field<&A::actor_username>{"actor_username", "TEXT NOT NULL"},
      Field<&A::updated_at>{"updated_at", "INTEGER"},
      Field<&A::archived_at>{"archived_at", "INTEGER"},
      Field<&A::archived_by_uid>{"archived_by_uid", "INTEGER"},
      Field<&A::archived_by_username>{"archived_by_username", "TEXT"});
}();
// clang-format on

}  // namespace bk::store
