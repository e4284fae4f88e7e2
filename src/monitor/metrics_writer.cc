#include "monitor/metrics_writer.h"

#include <sys/stat.h>

#include "sys/fs.h"

namespace bk::monitor {
namespace {

// The ledger's bytes on disk: the database and its write-ahead log.
std::optional<int64_t> LedgerBytes(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return std::nullopt;
  int64_t bytes = st.st_size;
  if (stat((path + "-wal").c_str(), &st) == 0) bytes += st.st_size;
  return bytes;
}

}  // namespace

MetricsWriter::MetricsWriter(const config::Config& config, service::BookingService& service,
                             service::Actor reader)
    : config_(config), service_(service), reader_(std::move(reader)) {}

Status MetricsWriter::Write(const TickReport& report, int64_t samples) {
  for (const ReclaimDecision& d : report.decisions) reclaims_ += d.reclaimed ? 1 : 0;
  MetricsInput in;
  in.at_ms = report.at_ms;
  in.snapshot = &report.snapshot;
  in.gpu_count = config_.policy.gpu_count;
  in.now = report.at_ms / 1000;
  in.decisions = report.decisions;
  in.reclaim_after_ms = config_.reclaim_after_seconds * 1000;
  in.reclaims_total = reclaims_;
  in.samples_total = samples;
  in.sample_ok = !report.failed;
  in.paused = report.paused;
  in.requests = requests_;
  in.ledger_bytes = LedgerBytes(config_.ledger_path);
  BK_ASSIGN_OR_RETURN(uint64_t changes, service_.ChangeCounter());
  const std::pair<uint64_t, int64_t> mark{changes, in.now / config_.policy.slot};
  if (listed_ != mark) {
    BK_ASSIGN_OR_RETURN(service::ListResult active, service_.List(reader_, {.everyone = true}));
    bookings_ = std::move(active.reservations);
    listed_ = mark;
  }
  // Lent to the input for the render, not copied: there may be thousands.
  in.bookings = std::move(bookings_);
  std::string text = RenderMetrics(in);
  bookings_ = std::move(in.bookings);
  // Readable by node_exporter's account, whatever our umask; like every file
  // bk replaces, never through a symbolic link.
  return sys::WriteFileAtomic(config_.metrics_textfile, text, 0644);
}

}  // namespace bk::monitor
