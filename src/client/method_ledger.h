#pragma once
// Every Ledger call as the protocol method it stands for (rpc/methods.h),
// written once for both ledgers: `Derived::Run(method, request)` runs a
// method, in this process (direct) or over the daemon's socket (remote).
// Include only from .cc files: it brings nlohmann/json.

#include <string>
#include <vector>

#include "client/ledger.h"
#include "rpc/methods.h"

namespace bk::client {

template <class Derived>
class MethodLedger : public Ledger {
 public:
  Result<service::BookingOutcome> Create(const service::CreateRequest& r) override {
    return Run(rpc::methods::kCreate, r);
  }
  Result<service::BookingOutcome> Edit(const service::EditRequest& r) override {
    return Run(rpc::methods::kEdit, r);
  }
  Result<service::BookingOutcome> Renew(const service::RenewRequest& r) override {
    return Run(rpc::methods::kRenew, r);
  }
  Result<service::CancelOutcome> Cancel(const service::CancelRequest& r) override {
    return Run(rpc::methods::kCancel, r);
  }
  Result<service::ReleaseOutcome> Release(const service::ReleaseRequest& r) override {
    return Run(rpc::methods::kRelease, r);
  }
  Result<service::Recommendation> Recommend(const service::CreateRequest& r) override {
    return Run(rpc::methods::kRecommend, r);
  }
  Result<service::SlotsResult> Slots(const service::CreateRequest& r, engine::Seconds from,
                                     int limit) override {
    return Run(rpc::methods::kSlots, {r, from, limit});
  }
  Result<service::ListResult> List(const service::ListQuery& q) override {
    return Run(rpc::methods::kList, q);
  }
  Result<service::HistoryView> History(const std::string& ref) override {
    return Run(rpc::methods::kHistory, {ref});
  }
  Result<std::vector<store::Event>> Log(int limit) override { return Run(rpc::methods::kLog, {limit}); }
  Result<std::vector<store::Notification>> Notifications(int limit) override {
    return Run(rpc::methods::kNotifications, {limit});
  }
  Result<service::UnreadNotifications> UnreadNotifications(int limit) override {
    return Run(rpc::methods::kUnreadNotifications, {limit});
  }
  Result<int64_t> MarkNotificationsRead(const std::vector<std::string>& ids) override {
    BK_ASSIGN_OR_RETURN(rpc::MarkReadReply reply, Run(rpc::methods::kMarkNotificationsRead, {ids}));
    return reply.marked;
  }
  Result<service::OperationView> Operation(const std::string& op_id) override {
    return Run(rpc::methods::kOperation, {op_id});
  }
  Result<service::StatusView> Status(engine::Seconds from, engine::Seconds to,
                                     std::optional<int> mine_limit) override {
    return Run(rpc::methods::kStatus, {from, to, mine_limit});
  }
  Result<service::PolicyStatus> CheckPolicy() override { return Run(rpc::methods::kCheckPolicy, {}); }
  Result<service::FairShareReport> FairShareUse() override { return Run(rpc::methods::kFairShare, {}); }
  Result<uint64_t> ChangeCounter() override {
    BK_ASSIGN_OR_RETURN(rpc::GenerationReply reply, Run(rpc::methods::kChangeCounter, {}));
    return reply.generation;
  }
  Result<service::PolicyChange> ReloadPolicy(const service::PolicyReloadRequest& r) override {
    return Run(rpc::methods::kReloadPolicy, r);
  }
  Result<service::AnnouncementOutcome> Publish(const service::PublishRequest& r) override {
    return Run(rpc::methods::kPublishAnnouncement, r);
  }
  Result<service::AnnouncementOutcome> EditAnnouncement(const service::AnnouncementEdit& r) override {
    return Run(rpc::methods::kEditAnnouncement, r);
  }
  Result<service::AnnouncementOutcome> ArchiveAnnouncement(const std::string& ref) override {
    return Run(rpc::methods::kArchiveAnnouncement, {ref});
  }
  Result<std::vector<store::Announcement>> Announcements(const service::AnnouncementsQuery& q) override {
    return Run(rpc::methods::kAnnouncements, q);
  }
  Result<service::VerifyReport> Verify(const std::string& path) override {
    return Run(rpc::methods::kVerify, {path});
  }
  Result<std::string> Backup(const std::string& path) override {
    BK_ASSIGN_OR_RETURN(rpc::BackupReply reply, Run(rpc::methods::kBackup, {path}));
    return reply.path;
  }
  Result<service::TransferOutcome> Transfer(const service::TransferRequest& r) override {
    return Run(rpc::methods::kTransfer, r);
  }
  Result<service::LedgerSwap> Clear(const std::string& backup_path) override {
    return Run(rpc::methods::kClear, {backup_path});
  }
  Result<service::ImportSummary> ImportUpstream(const std::string& json_text) override {
    return Run(rpc::methods::kImport, {json_text});
  }
  Result<std::vector<service::JobView>> Jobs(const service::JobsQuery& q) override {
    return Run(rpc::methods::kJobs, q);
  }
  Result<service::JobPatchResult> UpdateJob(const service::JobPatch& p) override {
    return Run(rpc::methods::kUpdateJob, p);
  }
  Result<service::JobView> RetryJob(const service::JobRetryRequest& r) override {
    return Run(rpc::methods::kRetryJob, r);
  }

 protected:
  template <class M>
  Result<typename M::Reply> Run(const M& m, const typename M::Request& request) {
    return static_cast<Derived*>(this)->RunMethod(m, request);
  }
};

}  // namespace bk::client
