#pragma once
// The metrics textfile after each monitor sample (metrics_textfile): the
// sample's telemetry and no-show verdicts, every user's bookings as the
// service holds them, and, in the daemon, its request counts and latencies.
// Runs where the sample is ingested (the daemon's event loop, or `bk m`), so
// it reads the ledger as the single writer sees it.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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
  // Every user's active bookings, listed again only when the ledger changed
  // or a slot boundary passed (bookings start and end on the grid): on a
  // server with thousands of bookings, listing them costs far more than a
  // sample, and a sample comes every few seconds.
  std::vector<engine::Reservation> bookings_;
  std::optional<std::pair<uint64_t, int64_t>> listed_;  // (change counter, slot) they were listed at
};

}  // namespace bk::monitor
