// Direct mode: the BookingService runs in this process; identity is getuid().

#include <memory>

#include "client/ledger.h"
#include "gpu/open_source.h"
#include "service/booking_service.h"
#include "sys/local_zone.h"
#include "sys/users.h"

namespace bk::client {
namespace {

class DirectLedger : public Ledger {
 public:
  DirectLedger(const config::Config& config, const sys::Clock& clock)
      : config_(config),
        clock_(clock),
        source_(gpu::OpenSource(config.gpu_sim_file).source),
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
  std::string Telemetry() override { return service_.TelemetrySource(); }

  Result<service::BookingOutcome> Create(const service::CreateRequest& r) override {
    return service_.Create(actor_, r);
  }
  Result<service::BookingOutcome> Edit(const service::EditRequest& r) override {
    return service_.Edit(actor_, r);
  }
  Result<service::BookingOutcome> Renew(const service::RenewRequest& r) override {
    return service_.Renew(actor_, r);
  }
  Result<service::CancelOutcome> Cancel(const service::CancelRequest& r) override {
    return service_.Cancel(actor_, r);
  }
  Result<service::Recommendation> Recommend(const service::CreateRequest& r) override {
    return service_.Recommend(actor_, r);
  }
  Result<service::SlotsResult> Slots(const service::CreateRequest& r, engine::Seconds from,
                                     int limit) override {
    return service_.Slots(actor_, r, from, limit);
  }
  Result<service::ListResult> List(const service::ListQuery& q) override { return service_.List(actor_, q); }
  Result<service::HistoryView> History(const std::string& ref) override {
    return service_.History(actor_, ref);
  }
  Result<std::vector<store::Event>> Log(int limit) override { return service_.Log(actor_, limit); }
  Result<std::vector<store::Notification>> Notifications(int limit) override {
    return service_.Notifications(actor_, limit);
  }
  Result<service::OperationView> Operation(const std::string& op_id) override {
    return service_.Operation(actor_, op_id);
  }
  Result<service::StatusView> Status(engine::Seconds from, engine::Seconds to) override {
    return service_.Status(actor_, from, to);
  }
  Result<service::PolicyStatus> CheckPolicy() override { return service_.CheckPolicy(); }
  Result<std::string> Usage(const monitor::UsageQuery& q, bool text) override {
    static const sys::LocalZone zone;
    return monitor::ReadUsage(config_, actor_.uid, q, text, clock_.NowMs(), zone);
  }
  Result<service::VerifyReport> Verify(const std::string& path) override {
    return service_.Verify(actor_, path);
  }
  Result<std::string> Backup(const std::string& path) override { return service_.Backup(actor_, path); }
  Result<service::ImportSummary> ImportUpstream(const std::string& json_text) override {
    return service_.ImportUpstream(actor_, json_text);
  }
  Result<std::vector<service::JobView>> Jobs(const service::JobsQuery& q) override {
    return service_.Jobs(actor_, q);
  }
  Result<service::JobPatchResult> UpdateJob(const service::JobPatch& p) override {
    return service_.UpdateJob(actor_, p);
  }
  Result<service::JobView> RetryJob(const service::JobRetryRequest& r) override {
    return service_.RetryJob(actor_, r);
  }

 private:
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
