// Direct mode: the BookingService runs in this process; identity is getuid().

#include <time.h>

#include <memory>

#include "client/ledger.h"
#include "gpu/select.h"
#include "rpc/methods.h"
#include "service/booking_service.h"
#include "sys/local_zone.h"
#include "sys/users.h"

namespace bk::client {
namespace {

namespace methods = rpc::methods;

class DirectLedger : public Ledger {
 public:
  DirectLedger(const config::Config& config, const sys::Clock& clock)
      : config_(config),
        clock_(clock),
        source_(gpu::DefaultSource()),
        service_({&config, &clock, source_.get(), sys::CurrentUid(), false}) {
    actor_.uid = sys::CurrentUid();
    actor_.username = sys::UserName(actor_.uid);
    // The private ledger belongs to this user, who administers it.
    actor_.admin = true;
  }

  std::string Transport() const override { return "direct"; }
  const service::Actor& actor() const override { return actor_; }
  const engine::Policy& policy() const override { return service_.policy(); }
  engine::Seconds Now() const override { return service_.Now(); }

  Result<service::BookingOutcome> Create(const service::CreateRequest& r) override {
    return Run(methods::kCreate, r);
  }
  Result<service::BookingOutcome> Edit(const service::EditRequest& r) override {
    return Run(methods::kEdit, r);
  }
  Result<service::BookingOutcome> Renew(const service::RenewRequest& r) override {
    return Run(methods::kRenew, r);
  }
  Result<service::CancelOutcome> Cancel(const service::CancelRequest& r) override {
    return Run(methods::kCancel, r);
  }
  Result<service::Recommendation> Recommend(const service::CreateRequest& r) override {
    return Run(methods::kRecommend, r);
  }
  Result<service::SlotsResult> Slots(const service::CreateRequest& r, engine::Seconds from,
                                     int limit) override {
    return Run(methods::kSlots, {r, from, limit});
  }
  Result<service::ListResult> List(const service::ListQuery& q) override { return Run(methods::kList, q); }
  Result<service::HistoryView> History(const std::string& ref) override {
    return Run(methods::kHistory, {ref});
  }
  Result<std::vector<store::Event>> Log(int limit) override { return Run(methods::kLog, {limit}); }
  Result<std::vector<store::Notification>> Notifications(int limit) override {
    return Run(methods::kNotifications, {limit});
  }
  Result<service::OperationView> Operation(const std::string& op_id) override {
    return Run(methods::kOperation, {op_id});
  }
  Result<service::StatusView> Status(engine::Seconds from, engine::Seconds to) override {
    return Run(methods::kStatus, {from, to});
  }
  Result<service::PolicyStatus> CheckPolicy() override { return Run(methods::kCheckPolicy, {}); }
  Result<std::string> Usage(const monitor::UsageQuery& q, bool text) override {
    // The heartbeat's age in milliseconds: a test clock has whole seconds only.
    int64_t now_ms = clock_.Now() * 1000;
    if (!config_.test_now) {
      timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts);
      now_ms = static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
    }
    static const sys::LocalZone zone;
    return monitor::ReadUsage(config_, actor_.uid, q, text, now_ms, zone);
  }
  Result<service::VerifyReport> Verify(const std::string& path) override {
    return Run(methods::kVerify, {path});
  }
  Result<std::string> Backup(const std::string& path) override {
    BK_ASSIGN_OR_RETURN(rpc::BackupReply reply, Run(methods::kBackup, {path}));
    return reply.path;
  }
  Result<service::ImportSummary> ImportUpstream(const std::string& json_text) override {
    return Run(methods::kImport, {json_text});
  }
  Result<std::vector<service::JobView>> Jobs(const service::JobsQuery& q) override {
    return Run(methods::kJobs, q);
  }
  Result<service::JobPatchResult> UpdateJob(const service::JobPatch& p) override {
    return Run(methods::kUpdateJob, p);
  }
  Result<service::JobView> RetryJob(const service::JobRetryRequest& r) override {
    return Run(methods::kRetryJob, r);
  }

 private:
  // The same service call the daemon makes for the method, without the wire.
  template <class M>
  Result<typename M::Reply> Run(const M& m, const typename M::Request& request) {
    return m.run(rpc::Context{service_, actor_, config_}, request);
  }

  const config::Config& config_;
  const sys::Clock& clock_;
  std::unique_ptr<gpu::GpuSource> source_;
  service::BookingService service_;
  service::Actor actor_;
};

}  // namespace

Result<std::unique_ptr<Ledger>> OpenDirect(const config::Config& config, const sys::Clock& clock) {
  return std::unique_ptr<Ledger>(std::make_unique<DirectLedger>(config, clock));
}

}  // namespace bk::client
