// Direct mode: the BookingService runs in this process; identity is getuid().

#include <memory>

#include "client/method_ledger.h"
#include "gpu/open_source.h"
#include "service/booking_service.h"
#include "sys/fs.h"
#include "sys/local_zone.h"
#include "sys/users.h"

namespace bk::client {
namespace {

class DirectLedger : public MethodLedger<DirectLedger> {
 public:
  DirectLedger(const config::Config& config, const sys::Clock& clock, LockWaitNotice notice)
      : config_(config),
        clock_(clock),
        source_(gpu::OpenSource(config.gpu_sim_file).source),
        service_({&config, &clock, source_.get(), sys::CurrentUid(), false, 0, "", std::move(notice)}) {
    actor_.uid = sys::CurrentUid();
    actor_.username = sys::UserName(actor_.uid);
    // The private ledger belongs to this user (its data owner), who administers it.
    actor_.admin = sys::IsAdministrator(actor_.uid, sys::CurrentUid(), config.admin_group);
  }

  std::string Transport() const override { return "direct"; }
  const service::Actor& actor() const override { return actor_; }
  const engine::Policy& policy() const override { return service_.policy(); }
  engine::Seconds Now() const override { return service_.Now(); }
  std::string Telemetry() override { return service_.TelemetrySource(); }

  // In process, on the live ledger, as the inline form.
  Result<service::ImportSummary> ImportFile(const std::string& path, sys::UniqueFd file,
                                            const service::ImportProgressFn& progress) override {
    auto text = sys::ReadOpenFile(file.get(), path, kMaxImportBytes);
    if (!text) return Invalid(text.error().message);
    return service_.ImportUpstream(actor_, *text, progress);
  }

  // The open backup goes to the service as the daemon's dispatcher passes it.
  Result<service::LedgerSwap> Restore(const std::string& path, sys::UniqueFd file) override {
    rpc::Context c{service_, actor_, config_};
    c.file = file.get();
    return rpc::methods::kRestore.run(c, {path});
  }

  Result<std::string> Usage(const monitor::UsageQuery& q, bool text) override {
    static const sys::LocalZone zone;
    return monitor::ReadUsage(config_, actor_.uid, q, text, clock_.NowMs(), zone);
  }

 private:
  friend class MethodLedger<DirectLedger>;
  // The same service call the daemon makes for the method, without the wire.
  template <class M>
  Result<typename M::Reply> RunMethod(const M& m, const typename M::Request& request) {
    return m.run(rpc::Context{service_, actor_, config_}, request);
  }

  const config::Config& config_;
  const sys::Clock& clock_;
  std::unique_ptr<gpu::GpuSource> source_;
  service::BookingService service_;
  service::Actor actor_;
};

}  // namespace

Result<std::unique_ptr<Ledger>> OpenDirect(const config::Config& config, const sys::Clock& clock,
                                           LockWaitNotice notice) {
  return std::unique_ptr<Ledger>(std::make_unique<DirectLedger>(config, clock, std::move(notice)));
}

}  // namespace bk::client
