#pragma once
// The metrics textfile after each monitor sample (metrics_textfile): the
// sample's telemetry and no-show verdicts, every user's bookings as the
// service holds them, and, in the daemon, its request counts and latencies.
// Runs where the sample is ingested (the daemon's event loop, or `bk m`), so
// it reads the ledger as the single writer sees it.

#include <cstdint>
#include <string>

#include "base/result.h"
#include "config/config.h"
#include "monitor/metrics.h"
#include "monitor/monitor.h"
#include "service/booking_service.h"

namespace bk::monitor {

class MetricsWriter {
 public:
  // `reader` lists every user's bookings (the monitor's administrator actor).
  MetricsWriter(const config::Config& config, service::BookingService& service, service::Actor reader);
  // The daemon's request statistics, read at each write; none in `bk m`.
  void SetRequests(const RequestStats* requests) { requests_ = requests; }
  // Renders the sample `report` (the `samples`-th) and replaces the file. A
  // failure is the caller's to report: the next sample writes it again.
  Status Write(const TickReport& report, int64_t samples);

 private:
  const config::Config& config_;
  service::BookingService& service_;
  service::Actor reader_;
  const RequestStats* requests_ = nullptr;
  int64_t reclaims_ = 0;  // since this process started
};

}  // namespace bk::monitor
