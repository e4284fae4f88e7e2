#pragma once
// client::Ledger: what every surface (CLI, TUI, MCP, shell hook) talks to.
// Direct runs the BookingService in this process on the private ledger; a
// remote ledger sends the same calls to `bk server serve` over its socket.

#include <functional>
#include <memory>
#include <string>

#include "config/config.h"
#include "monitor/usage_view.h"
#include "service/types.h"
#include "sys/clock.h"
#include "sys/unique_fd.h"

namespace bk::client {

// The largest ledger.json `bk admin data import` opens (a server takes less:
// its refusal names its own limit).
inline constexpr size_t kMaxImportBytes = size_t{256} << 20;

class Ledger {
 public:
  virtual ~Ledger() = default;
  virtual std::string Transport() const = 0;  // "direct" | "socket"
  virtual const service::Actor& actor() const = 0;
  virtual const engine::Policy& policy() const = 0;
  virtual engine::Seconds Now() const = 0;
  // Where live GPU state comes from: this process's source, or what the
  // daemon says its monitor samples.
  virtual std::string Telemetry() = 0;

  virtual Result<service::BookingOutcome> Create(const service::CreateRequest& r) = 0;
  virtual Result<service::BookingOutcome> Edit(const service::EditRequest& r) = 0;
  virtual Result<service::BookingOutcome> Renew(const service::RenewRequest& r) = 0;
  virtual Result<service::CancelOutcome> Cancel(const service::CancelRequest& r) = 0;
  // Gives back the rest of the caller's booking once its command has exited.
  virtual Result<service::ReleaseOutcome> Release(const service::ReleaseRequest& r) = 0;

  virtual Result<service::Recommendation> Recommend(const service::CreateRequest& r) = 0;
  virtual Result<service::SlotsResult> Slots(const service::CreateRequest& r, engine::Seconds from,
                                             int limit) = 0;
  virtual Result<service::ListResult> List(const service::ListQuery& q) = 0;
  virtual Result<service::HistoryView> History(const std::string& ref) = 0;
  virtual Result<std::vector<store::Event>> Log(int limit) = 0;
  virtual Result<std::vector<store::Notification>> Notifications(int limit) = 0;
  // Not yet read with `bk n`: how many and the newest `limit` of them.
  // Each scope's use of the fair-share limits (`bk u limits`).
  virtual Result<service::FairShareReport> FairShareUse() = 0;
  virtual Result<service::UnreadNotifications> UnreadNotifications(int limit) = 0;
  // `bk n` showed these; returns how many were unread.
  virtual Result<int64_t> MarkNotificationsRead(const std::vector<std::string>& ids) = 0;
  virtual Result<service::OperationView> Operation(const std::string& op_id) = 0;
  // Live state, the reservations overlapping [from, to) and the first
  // `mine_limit` of yours (all when absent): ask for what the view shows.
  virtual Result<service::StatusView> Status(engine::Seconds from, engine::Seconds to,
                                             std::optional<int> mine_limit) = 0;
  virtual Result<service::PolicyStatus> CheckPolicy() = 0;
  // A number that has moved whenever anyone committed a write to the ledger
  // since the last call (other users, the server's monitor, an
  // administrator; this process too): poll it and read again only once it
  // moved. It may move without a write, never stays put after one.
  virtual Result<uint64_t> ChangeCounter() = 0;
  // Announcements: administrators publish, edit and archive them; anyone
  // lists the active ones (administrators every one with `all`).
  virtual Result<service::AnnouncementOutcome> Publish(const service::PublishRequest& r) = 0;
  virtual Result<service::AnnouncementOutcome> EditAnnouncement(const service::AnnouncementEdit& r) = 0;
  virtual Result<service::AnnouncementOutcome> ArchiveAnnouncement(const std::string& ref) = 0;
  virtual Result<std::vector<store::Announcement>> Announcements(const service::AnnouncementsQuery& q) = 0;
  virtual Result<service::ImportSummary> ImportUpstream(const std::string& json_text) = 0;
  // Imports the open ledger.json `file` (named `path` in messages);
  // `progress`, when set, hears how far it is. A server gets the descriptor
  // itself over its socket, so a large file never travels as one request.
  virtual Result<service::ImportSummary> ImportFile(const std::string& path, sys::UniqueFd file,
                                                    const service::ImportProgressFn& progress) = 0;
  // The server's daemon reads its config file again (or checks a proposal).
  virtual Result<service::PolicyChange> ReloadPolicy(const service::PolicyReloadRequest& r) = 0;
  virtual Result<service::VerifyReport> Verify(const std::string& path) = 0;
  virtual Result<std::string> Backup(const std::string& path) = 0;
  // Administrators: give a booking to another account; put the backup open
  // as `file` (named `path` in messages) in place of the ledger's content;
  // empty the ledger once a verified backup is in `backup_path` (empty: one
  // beside the ledger). A server gets the backup's descriptor itself.
  virtual Result<service::TransferOutcome> Transfer(const service::TransferRequest& r) = 0;
  virtual Result<service::LedgerSwap> Restore(const std::string& path, sys::UniqueFd file) = 0;
  virtual Result<service::LedgerSwap> Clear(const std::string& backup_path) = 0;
  // Usage history rendered by the server's monitor (remote ledgers only: in
  // private mode `bk u` reads usage.db itself).
  virtual Result<std::string> Usage(const monitor::UsageQuery& q, bool text) {
    (void)q, (void)text;
    return Fail(ErrorKind::kUnavailable, "usage history is read from usage.db directly in private mode");
  }

  // Jobs bound to the caller's bookings (managed launches). Defaults keep
  // other Ledger implementations (test fakes) compiling.
  virtual Result<std::vector<service::JobView>> Jobs(const service::JobsQuery& q) {
    (void)q;
    return Fail(ErrorKind::kUnavailable, "this ledger does not support jobs");
  }
  virtual Result<service::JobPatchResult> UpdateJob(const service::JobPatch& p) {
    (void)p;
    return Fail(ErrorKind::kUnavailable, "this ledger does not support jobs");
  }
  virtual Result<service::JobView> RetryJob(const service::JobRetryRequest& r) {
    (void)r;
    return Fail(ErrorKind::kUnavailable, "this ledger does not support jobs");
  }
};

// Told who holds the private ledger's write lock once a write has waited half
// a second (a person at a terminal should hear why it pauses).
using LockWaitNotice = std::function<void(const std::string& holder)>;

// The private ledger of this user, identity from getuid().
Result<std::unique_ptr<Ledger>> OpenDirect(const config::Config& config, const sys::Clock& clock,
                                           LockWaitNotice notice = {});
// A server's daemon over its Unix socket; fails when it is not running.
Result<std::unique_ptr<Ledger>> OpenRemote(const config::Config& config, const sys::Clock& clock);
// Whichever the configuration names.
Result<std::unique_ptr<Ledger>> Open(const config::Config& config, const sys::Clock& clock,
                                     LockWaitNotice notice = {});

}  // namespace bk::client
