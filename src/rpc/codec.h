#pragma once
// The JSON forms of BookingService calls on the daemon's socket
// (docs/protocol.md). Requests are decoded strictly: unknown fields and wrong
// types are errors. Include only from .cc files: it brings nlohmann/json.

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "rpc/messages.h"
#include "service/types.h"

namespace bk::rpc {

using nlohmann::json;

// Requests (client -> daemon).
json Encode(const service::CreateRequest& r);
json Encode(const service::EditRequest& r);
json Encode(const service::RenewRequest& r);
json Encode(const service::CancelRequest& r);
json Encode(const service::ReleaseRequest& r);
json Encode(const service::ListQuery& q);
Result<service::CreateRequest> DecodeCreate(const json& j);
Result<service::EditRequest> DecodeEdit(const json& j);
Result<service::RenewRequest> DecodeRenew(const json& j);
Result<service::CancelRequest> DecodeCancel(const json& j);
Result<service::ReleaseRequest> DecodeRelease(const json& j);
Result<service::ListQuery> DecodeList(const json& j);
json Encode(const service::TransferRequest& r);
Result<service::TransferRequest> DecodeTransfer(const json& j);

// Results (daemon -> client).
json Encode(const engine::Reservation& r);
json Encode(const service::BookingOutcome& o);
json Encode(const service::CancelOutcome& o);
json Encode(const service::ReleaseOutcome& o);
json Encode(const service::Recommendation& r);
json Encode(const service::SlotsResult& r);
json Encode(const service::ListResult& r);
json Encode(const service::HistoryView& v);
json Encode(const std::vector<store::Event>& events);
json Encode(const std::vector<store::Notification>& items);
json Encode(const service::UnreadNotifications& u);
json Encode(const service::OperationView& v);
json Encode(const service::StatusView& v);
// The same documents as Encode(...).dump(), written without the tree: the
// replies that carry many reservations.
std::string Write(const service::StatusView& v);
std::string Write(const service::ListResult& r);
std::string Write(const service::BookingOutcome& o);
json Encode(const service::PolicyStatus& s);
json Encode(const service::FairShareReport& r);
json Encode(const service::ImportSummary& s);
json Encode(const service::PolicyReloadRequest& r);
Result<service::PolicyReloadRequest> DecodePolicyReload(const json& j);
json Encode(const service::PolicyChange& r);
Result<service::PolicyChange> DecodePolicyChange(const json& j);
json Encode(const service::VerifyReport& r);
Result<service::VerifyReport> DecodeVerifyReport(const json& j);
json Encode(const service::TransferOutcome& o);
Result<service::TransferOutcome> DecodeTransferOutcome(const json& j);
json Encode(const service::LedgerSwap& s);
Result<service::LedgerSwap> DecodeLedgerSwap(const json& j);
Result<engine::Reservation> DecodeReservation(const json& j);
Result<service::BookingOutcome> DecodeBookingOutcome(const json& j);
Result<service::CancelOutcome> DecodeCancelOutcome(const json& j);
Result<service::ReleaseOutcome> DecodeReleaseOutcome(const json& j);
Result<service::Recommendation> DecodeRecommendation(const json& j);
Result<service::SlotsResult> DecodeSlots(const json& j);
Result<service::ListResult> DecodeListResult(const json& j);
Result<service::HistoryView> DecodeHistory(const json& j);
Result<std::vector<store::Event>> DecodeEvents(const json& j);
Result<std::vector<store::Notification>> DecodeNotifications(const json& j);
Result<service::UnreadNotifications> DecodeUnreadNotifications(const json& j);
Result<service::OperationView> DecodeOperation(const json& j);
Result<service::StatusView> DecodeStatus(const json& j);
Result<service::PolicyStatus> DecodePolicyStatus(const json& j);
Result<service::FairShareReport> DecodeFairShareReport(const json& j);
Result<service::ImportSummary> DecodeImportSummary(const json& j);

// Jobs (job.list, job.update, job.retry).
json Encode(const service::JobsQuery& q);
json Encode(const service::JobPatch& p);
json Encode(const service::JobRetryRequest& r);
Result<service::JobsQuery> DecodeJobsQuery(const json& j);
Result<service::JobPatch> DecodeJobPatch(const json& j);
Result<service::JobRetryRequest> DecodeJobRetry(const json& j);
json Encode(const store::JobRecord& job);
json Encode(const service::JobView& v);
json Encode(const std::vector<service::JobView>& jobs);
json Encode(const service::JobPatchResult& r);
Result<store::JobRecord> DecodeJobRecord(const json& j);
Result<service::JobView> DecodeJobView(const json& j);
Result<std::vector<service::JobView>> DecodeJobViews(const json& j);
Result<service::JobPatchResult> DecodeJobPatchResult(const json& j);

// Announcements (announcement.publish, .edit, .archive, .list).
json Encode(const service::PublishRequest& r);
json Encode(const service::AnnouncementEdit& r);
json Encode(const service::AnnouncementsQuery& q);
json Encode(const AnnouncementRef& r);
Result<service::PublishRequest> DecodePublishRequest(const json& j);
Result<service::AnnouncementEdit> DecodeAnnouncementEdit(const json& j);
Result<service::AnnouncementsQuery> DecodeAnnouncementsQuery(const json& j);
Result<AnnouncementRef> DecodeAnnouncementRef(const json& j);
json Encode(const service::AnnouncementOutcome& o);
json Encode(const std::vector<store::Announcement>& list);
Result<service::AnnouncementOutcome> DecodeAnnouncementOutcome(const json& j);
Result<std::vector<store::Announcement>> DecodeAnnouncements(const json& j);

// Policy as the daemon announces it in server.ping, so clients render with the server's view.
json Encode(const engine::Policy& p);
Result<engine::Policy> DecodePolicy(const json& j);

// The protocol's own requests and replies (rpc/messages.h).
json Encode(const NoParams&);
Result<NoParams> DecodeNoParams(const json& j);
json Encode(const ServerInfo& s);
Result<ServerInfo> DecodeServerInfo(const json& j);
json Encode(const SlotsRequest& r);
Result<SlotsRequest> DecodeSlotsRequest(const json& j);
json Encode(const HistoryRequest& r);
Result<HistoryRequest> DecodeHistoryRequest(const json& j);
json Encode(const LogRequest& r);
Result<LogRequest> DecodeLogRequest(const json& j);
json Encode(const NotificationsRequest& r);
Result<NotificationsRequest> DecodeNotificationsRequest(const json& j);
json Encode(const OperationRequest& r);
Result<OperationRequest> DecodeOperationRequest(const json& j);
json Encode(const StatusRequest& r);
Result<StatusRequest> DecodeStatusRequest(const json& j);
json Encode(const VerifyRequest& r);
Result<VerifyRequest> DecodeVerifyRequest(const json& j);
json Encode(const MarkReadRequest& r);
Result<MarkReadRequest> DecodeMarkReadRequest(const json& j);
json Encode(const MarkReadReply& r);
Result<MarkReadReply> DecodeMarkReadReply(const json& j);
json Encode(const GenerationReply& r);
Result<GenerationReply> DecodeGenerationReply(const json& j);
json Encode(const BackupRequest& r);
Result<BackupRequest> DecodeBackupRequest(const json& j);
json Encode(const BackupReply& r);
Result<BackupReply> DecodeBackupReply(const json& j);
json Encode(const ClearRequest& r);
Result<ClearRequest> DecodeClearRequest(const json& j);
json Encode(const ImportRequest& r);
Result<ImportRequest> DecodeImportRequest(const json& j);
json Encode(const UsageRequest& r);
Result<UsageRequest> DecodeUsageRequest(const json& j);
json Encode(const UsageReply& r);
Result<UsageReply> DecodeUsageReply(const json& j);

// JSON-RPC 2.0 error codes; application errors carry the ErrorKind in data.kind.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kApplicationError = -32000;
json ErrorObject(int code, const std::string& message, std::optional<ErrorKind> kind = std::nullopt);
Error ErrorFromObject(const json& error);

}  // namespace bk::rpc
