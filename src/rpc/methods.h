#pragma once
// Every method of the daemon's protocol, described once: its name, request
// and reply types with their codec functions, whether it writes, whether its
// answer may be cached, who may call it, and the BookingService call it
// stands for. The daemon's dispatcher, the remote ledger and the direct
// ledger are all built from these descriptors, so a method cannot be wired
// one way on one side and another way on the other. A new method is its
// service call, a descriptor here listed in kAll (and codec functions for a
// new type), and a one-line member on each Ledger. Include only from .cc
// files: it brings nlohmann/json.

#include <string_view>
#include <tuple>

#include "base/version.h"
#include "rpc/codec.h"
#include "service/booking_service.h"

namespace bk::rpc {

// Who may call a method. The BookingService enforces it (a direct ledger has
// no daemon in front); this says what it enforces.
enum class Caller { kAnyone, kAdmin };

// What one call runs against.
struct Context {
  service::BookingService& service;
  const service::Actor& actor;
  const config::Config& config;
  const UsageFn* usage = nullptr;  // null: no monitor records usage here
  int file = -1;                   // the descriptor passed with the request (a restore's backup); -1: none
};

template <class Req, class Rep>
struct Method {
  using Request = Req;
  using Reply = Rep;
  std::string_view name;
  bool write;
  bool cacheable;  // a pure function of (caller, params, ledger generation, second)
  Caller caller;
  json (*encode_request)(const Req&);
  Result<Req> (*decode_request)(const json&);
  json (*encode_reply)(const Rep&);
  Result<Rep> (*decode_reply)(const json&);
  Result<Rep> (*run)(const Context&, const Req&);
  // The reply's JSON text written directly (replies that carry many
  // reservations); null: encode_reply's tree, dumped.
  std::string (*write_reply)(const Rep&) = nullptr;
};

namespace methods {

using namespace service;
constexpr bool kRead = false, kWrite = true, kFresh = false, kCacheable = true;

// clang-format off
// Laid out as a table: what the method is, its codec, the service call it makes.

inline constexpr Method<NoParams, ServerInfo> kPing{
    "server.ping", kRead, kFresh, Caller::kAnyone,
    &Encode, &DecodeNoParams, &Encode, &DecodeServerInfo,
    [](const Context& c, const NoParams&) -> Result<ServerInfo> {
      return ServerInfo{kVersion, config::DeploymentName(c.config.deployment), c.config.owner_uid,
                        c.config.owner, c.actor, c.service.Now(), c.service.policy(),
                        c.service.TelemetrySource()};
    }};

inline constexpr Method<CreateRequest, BookingOutcome> kCreate{
    "booking.create", kWrite, kFresh, Caller::kAnyone,
    &Encode, &DecodeCreate, &Encode, &DecodeBookingOutcome,
    [](const Context& c, const CreateRequest& r) { return c.service.Create(c.actor, r); },
    &Write};

inline constexpr Method<EditRequest, BookingOutcome> kEdit{
    "booking.edit", kWrite, kFresh, Caller::kAnyone,
    &Encode, &DecodeEdit, &Encode, &DecodeBookingOutcome,
    [](const Context& c, const EditRequest& r) { return c.service.Edit(c.actor, r); },
    &Write};

inline constexpr Method<RenewRequest, BookingOutcome> kRenew{
    "booking.renew", kWrite, kFresh, Caller::kAnyone,
    &Encode, &DecodeRenew, &Encode, &DecodeBookingOutcome,
    [](const Context& c, const RenewRequest& r) { return c.service.Renew(c.actor, r); },
    &Write};

inline constexpr Method<CancelRequest, CancelOutcome> kCancel{
    "booking.cancel", kWrite, kFresh, Caller::kAnyone,
    &Encode, &DecodeCancel, &Encode, &DecodeCancelOutcome,
    [](const Context& c, const CancelRequest& r) { return c.service.Cancel(c.actor, r); }};

// Anyone may ask; the service releases only the caller's own booking.
inline constexpr Method<ReleaseRequest, ReleaseOutcome> kRelease{
    "booking.release", kWrite, kFresh, Caller::kAnyone,
    &Encode, &DecodeRelease, &Encode, &DecodeReleaseOutcome,
    [](const Context& c, const ReleaseRequest& r) { return c.service.Release(c.actor, r); }};

inline constexpr Method<CreateRequest, Recommendation> kRecommend{
    "placement.recommend", kRead, kFresh, Caller::kAnyone,
    &Encode, &DecodeCreate, &Encode, &DecodeRecommendation,
    [](const Context& c, const CreateRequest& r) { return c.service.Recommend(c.actor, r); }};

inline constexpr Method<SlotsRequest, SlotsResult> kSlots{
    "placement.slots", kRead, kFresh, Caller::kAnyone,
    &Encode, &DecodeSlotsRequest, &Encode, &DecodeSlots,
    [](const Context& c, const SlotsRequest& r) {
      return c.service.Slots(c.actor, r.request, r.from.value_or(c.service.Now()), r.limit);
    }};

inline constexpr Method<ListQuery, ListResult> kList{
    "reservations.list", kRead, kCacheable, Caller::kAnyone,
    &Encode, &DecodeList, &Encode, &DecodeListResult,
    [](const Context& c, const ListQuery& q) { return c.service.List(c.actor, q); },
    &Write};

inline constexpr Method<HistoryRequest, HistoryView> kHistory{
    "reservation.history", kRead, kCacheable, Caller::kAnyone,
    &Encode, &DecodeHistoryRequest, &Encode, &DecodeHistory,
    [](const Context& c, const HistoryRequest& r) { return c.service.History(c.actor, r.ref); }};

inline constexpr Method<LogRequest, std::vector<store::Event>> kLog{
    "audit.log", kRead, kCacheable, Caller::kAnyone,
    &Encode, &DecodeLogRequest, &Encode, &DecodeEvents,
    [](const Context& c, const LogRequest& r) { return c.service.Log(c.actor, r.limit); }};

inline constexpr Method<NotificationsRequest, std::vector<store::Notification>> kNotifications{
    "notifications.list", kRead, kCacheable, Caller::kAnyone,
    &Encode, &DecodeNotificationsRequest, &Encode, &DecodeNotifications,
    [](const Context& c, const NotificationsRequest& r) {
      return c.service.Notifications(c.actor, r.limit);
    }};

// What the caller has not read yet: the count every summary shows, and the
// newest few (`bk n`). One indexed count, cheap enough for the shell hook.
inline constexpr Method<NotificationsRequest, UnreadNotifications> kUnreadNotifications{
    "notifications.unread", kRead, kCacheable, Caller::kAnyone,
    &Encode, &DecodeNotificationsRequest, &Encode, &DecodeUnreadNotifications,
    [](const Context& c, const NotificationsRequest& r) { return c.service.Unread(c.actor, r.limit); }};

// Anyone may ask; the service marks only the caller's own notifications.
inline constexpr Method<MarkReadRequest, MarkReadReply> kMarkNotificationsRead{
    "notifications.mark_read", kWrite, kFresh, Caller::kAnyone,
    &Encode, &DecodeMarkReadRequest, &Encode, &DecodeMarkReadReply,
    [](const Context& c, const MarkReadRequest& r) -> Result<MarkReadReply> {
      BK_ASSIGN_OR_RETURN(int64_t marked, c.service.MarkNotificationsRead(c.actor, r.ids));
      return MarkReadReply{marked};
    }};

inline constexpr Method<OperationRequest, OperationView> kOperation{
    "operation.get", kRead, kCacheable, Caller::kAnyone,
    &Encode, &DecodeOperationRequest, &Encode, &DecodeOperation,
    [](const Context& c, const OperationRequest& r) { return c.service.Operation(c.actor, r.op_id); }};

inline constexpr Method<StatusRequest, StatusView> kStatus{
    "status.get", kRead, kFresh, Caller::kAnyone,
    &Encode, &DecodeStatusRequest, &Encode, &DecodeStatus,
    [](const Context& c, const StatusRequest& r) {
      engine::Seconds now = c.service.Now();
      return c.service.Status(c.actor, r.from.value_or(now), r.to.value_or(now + engine::kDay), r.mine_limit);
    },
    &Write};

// Whether anything was written since a client last asked: a number that moves
// with every commit (anyone's, the monitor's reclaims, an administrator's).
// Polled often, so it is answered from memory and never cached.
inline constexpr Method<NoParams, GenerationReply> kChangeCounter{
    "ledger.generation", kRead, kFresh, Caller::kAnyone,
    &Encode, &DecodeNoParams, &Encode, &DecodeGenerationReply,
    [](const Context& c, const NoParams&) -> Result<GenerationReply> {
      BK_ASSIGN_OR_RETURN(uint64_t generation, c.service.ChangeCounter());
      return GenerationReply{generation};
    }};

inline constexpr Method<NoParams, PolicyStatus> kCheckPolicy{
    "policy.check", kRead, kCacheable, Caller::kAnyone,
    &Encode, &DecodeNoParams, &Encode, &DecodePolicyStatus,
    [](const Context& c, const NoParams&) { return c.service.CheckPolicy(); }};

inline constexpr Method<NoParams, FairShareReport> kFairShare{
    "limits.use", kRead, kCacheable, Caller::kAnyone,
    &Encode, &DecodeNoParams, &Encode, &DecodeFairShareReport,
    [](const Context& c, const NoParams&) { return c.service.FairShareUse(c.actor); }};

inline constexpr Method<JobsQuery, std::vector<JobView>> kJobs{
    "job.list", kRead, kFresh, Caller::kAnyone,
    &Encode, &DecodeJobsQuery, &Encode, &DecodeJobViews,
    [](const Context& c, const JobsQuery& q) { return c.service.Jobs(c.actor, q); }};

// Anyone may ask; the service applies it only for the booking's owner.
inline constexpr Method<JobPatch, JobPatchResult> kUpdateJob{
    "job.update", kWrite, kFresh, Caller::kAnyone,
    &Encode, &DecodeJobPatch, &Encode, &DecodeJobPatchResult,
    [](const Context& c, const JobPatch& p) { return c.service.UpdateJob(c.actor, p); }};

inline constexpr Method<JobRetryRequest, JobView> kRetryJob{
    "job.retry", kWrite, kFresh, Caller::kAnyone,
    &Encode, &DecodeJobRetry, &Encode, &DecodeJobView,
    [](const Context& c, const JobRetryRequest& r) { return c.service.RetryJob(c.actor, r); }};

// The daemon reads its config file again (or checks a proposal) and admits
// by the policy in it from then on.
inline constexpr Method<PolicyReloadRequest, PolicyChange> kReloadPolicy{
    "admin.policy_reload", kWrite, kFresh, Caller::kAdmin,
    &Encode, &DecodePolicyReload, &Encode, &DecodePolicyChange,
    [](const Context& c, const PolicyReloadRequest& r) { return c.service.ChangePolicy(c.actor, r); }};

inline constexpr Method<VerifyRequest, VerifyReport> kVerify{
    "admin.verify", kRead, kFresh, Caller::kAdmin,
    &Encode, &DecodeVerifyRequest, &Encode, &DecodeVerifyReport,
    [](const Context& c, const VerifyRequest& r) { return c.service.Verify(c.actor, r.path); }};

inline constexpr Method<BackupRequest, BackupReply> kBackup{
    "admin.backup", kRead, kFresh, Caller::kAdmin,
    &Encode, &DecodeBackupRequest, &Encode, &DecodeBackupReply,
    [](const Context& c, const BackupRequest& r) -> Result<BackupReply> {
      BK_ASSIGN_OR_RETURN(std::string done, c.service.Backup(c.actor, r.path));
      return BackupReply{done};
    }};

inline constexpr Method<ImportRequest, ImportSummary> kImport{
    "admin.import", kWrite, kFresh, Caller::kAdmin,
    &Encode, &DecodeImportRequest, &Encode, &DecodeImportSummary,
    [](const Context& c, const ImportRequest& r) {
      return c.service.ImportUpstream(c.actor, r.ledger_json);
    }};

// An administrator gives a booking to another account.
inline constexpr Method<TransferRequest, TransferOutcome> kTransfer{
    "booking.transfer", kWrite, kFresh, Caller::kAdmin,
    &Encode, &DecodeTransfer, &Encode, &DecodeTransferOutcome,
    [](const Context& c, const TransferRequest& r) { return c.service.Transfer(c.actor, r); }};

// The backup is the descriptor passed with the request line (the daemon
// reads what the administrator could open, never a path of its own).
inline constexpr Method<RestoreRequest, LedgerSwap> kRestore{
    "admin.restore", kWrite, kFresh, Caller::kAdmin,
    &Encode, &DecodeBackupRequest, &Encode, &DecodeLedgerSwap,
    [](const Context& c, const RestoreRequest& r) { return c.service.Restore(c.actor, c.file, r.path); }};

inline constexpr Method<ClearRequest, LedgerSwap> kClear{
    "admin.clear", kWrite, kFresh, Caller::kAdmin,
    &Encode, &DecodeClearRequest, &Encode, &DecodeLedgerSwap,
    [](const Context& c, const ClearRequest& r) { return c.service.Clear(c.actor, r.backup_path); }};

// The notification an import from a descriptor sends while it runs:
// {"id": <the request's id>, "phase": reading|validating|writing, "done", "total"}.
inline constexpr std::string_view kImportProgress = "import.progress";

inline constexpr Method<UsageRequest, UsageReply> kUsage{
    "usage.query", kRead, kFresh, Caller::kAnyone,
    &Encode, &DecodeUsageRequest, &Encode, &DecodeUsageReply,
    [](const Context& c, const UsageRequest& r) -> Result<UsageReply> {
      if (!c.usage)
        return Fail(ErrorKind::kUnavailable, "this daemon records no usage (its monitor is not running)");
      monitor::UsageQuery q = r.query;
      if (!r.to_given) {
        q.to = c.service.Now() + 1;
        if (q.from >= q.to) return Invalid("from must be before to");
      }
      if (q.kind == monitor::UsageKind::kMe) q.uid = c.actor.uid;
      BK_ASSIGN_OR_RETURN(q, monitor::UsageVisibleTo(q, c.config.usage_visibility, c.actor.uid, c.actor.admin));
      BK_ASSIGN_OR_RETURN(std::string document, (*c.usage)(q, r.text));
      return UsageReply{document};
    }};

// Announcements: administrators write; anyone lists the active ones.
inline constexpr Method<PublishRequest, AnnouncementOutcome> kPublishAnnouncement{
    "announcement.publish", kWrite, kFresh, Caller::kAdmin,
    &Encode, &DecodePublishRequest, &Encode, &DecodeAnnouncementOutcome,
    [](const Context& c, const PublishRequest& r) { return c.service.Publish(c.actor, r); }};

inline constexpr Method<AnnouncementEdit, AnnouncementOutcome> kEditAnnouncement{
    "announcement.edit", kWrite, kFresh, Caller::kAdmin,
    &Encode, &DecodeAnnouncementEdit, &Encode, &DecodeAnnouncementOutcome,
    [](const Context& c, const AnnouncementEdit& r) { return c.service.EditAnnouncement(c.actor, r); }};

inline constexpr Method<AnnouncementRef, AnnouncementOutcome> kArchiveAnnouncement{
    "announcement.archive", kWrite, kFresh, Caller::kAdmin,
    &Encode, &DecodeAnnouncementRef, &Encode, &DecodeAnnouncementOutcome,
    [](const Context& c, const AnnouncementRef& r) { return c.service.ArchiveAnnouncement(c.actor, r.ref); }};

inline constexpr Method<AnnouncementsQuery, std::vector<store::Announcement>> kAnnouncements{
    "announcement.list", kRead, kCacheable, Caller::kAnyone,
    &Encode, &DecodeAnnouncementsQuery, &Encode, &DecodeAnnouncements,
    [](const Context& c, const AnnouncementsQuery& q) { return c.service.Announcements(c.actor, q); }};

// clang-format on

// Every method the daemon answers.
// clang-format off
inline constexpr std::tuple kAll{kPing,      kCreate, kEdit,        kRenew,   kCancel,    kRelease,
                                 kRecommend, kSlots,  kList,        kHistory, kLog,       kNotifications,
                                 kUnreadNotifications,  kMarkNotificationsRead,
                                 kOperation, kStatus, kCheckPolicy, kFairShare, kJobs,    kUpdateJob, kRetryJob,
                                 kVerify,    kBackup, kImport,      kUsage,   kReloadPolicy,
                                 kPublishAnnouncement, kEditAnnouncement, kArchiveAnnouncement, kAnnouncements,
                                 kTransfer,  kRestore, kClear, kChangeCounter};
// clang-format on

}  // namespace methods

}  // namespace bk::rpc
