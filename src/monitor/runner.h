#pragma once
// The monitor inside `bk server serve`.
//
// Threads: a sampler thread queries the GPU source every interval and hands
// each RawSample to the event loop through a small queue and an eventfd; the
// loop (the ledger's single writer) ingests it: ledger reads, reclaims and
// usage.db writes all stay on that one thread. Why not sample on the loop
// too: an NVML call can block for a long time when the driver is unhealthy
// (or a GPU falls off the bus), and clients must not wait on that; ingesting
// costs well under a millisecond per sample (bench/monitor_bench.cc).
//
// The sampler needs to know whether an exclusive booking is active before it
// queries (the pause); the loop publishes the exclusive windows to it after
// every sample and after every ledger write.

#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "gpu/open_source.h"
#include "monitor/lock.h"
#include "monitor/metrics_writer.h"
#include "monitor/monitor.h"
#include "service/booking_service.h"
#include "store/usage_store.h"
#include "sys/clock.h"

namespace bk::monitor {

// Samples `source` on its own thread.
class Sampler {
 public:
  struct Options {
    gpu::GpuSource* source = nullptr;
    int gpu_count = 1;
    int64_t interval_ms = 2000;
    bool pause_during_exclusive = false;
    std::function<int64_t()> now_ms;  // the sample timestamp (wall clock, or a test clock)
    std::function<void()> on_pause;   // a pause begins: drop the NVML session
  };
  explicit Sampler(Options options);
  ~Sampler();

  Status Start();
  void Stop();                          // joins the thread; samples already queued stay
  int fd() const { return event_fd_; }  // readable when samples wait
  std::vector<RawSample> Take();        // drains the queue and the eventfd
  void SetWindows(std::vector<Window> windows);

 private:
  void Run();

  Options opt_;
  int event_fd_ = -1;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<Window> windows_;
  std::deque<RawSample> queue_;
};

// The daemon's monitor: usage.db, the sampler and the Monitor, glued to the loop.
class Runner {
 public:
  using LogFn = std::function<void(const std::string&)>;
  // `clock` stamps every sample (the wall clock, or the config's test clock).
  Runner(const config::Config& config, const sys::Clock& clock, LogFn log);
  ~Runner();

  // What the daemon's BookingService samples: the monitor's latest attributed
  // snapshot, so `bk st` never queries the source behind the monitor (nor
  // during a pause), whether that source is NVML or a simulation file.
  gpu::GpuSource* service_source() { return &service_source_; }

  // Opens usage.db beside the ledger and starts sampling.
  Status Start(service::BookingService& service, uid_t owner);
  int fd() const { return sampler_ ? sampler_->fd() : -1; }
  void OnReadable();  // ingest what the sampler delivered (loop thread)
  void OnWrite();     // a ledger write happened: refresh the exclusive windows
  // The daemon's request statistics for the metrics textfile (loop thread).
  void SetRequests(const RequestStats* requests);
  void Stop();  // stop sampling, ingest the rest, write the stopped heartbeat
  // For usage queries over the socket (loop thread only); null before Start.
  store::UsageStore* usage() { return usage_.get(); }
  // Why the last sample could not be recorded; empty once one is again.
  const std::string& not_recording() const { return not_recording_; }
  int64_t NowMs() const { return clock_.NowMs(); }

 private:
  class LatestSource : public gpu::GpuSource {
   public:
    explicit LatestSource(Runner* r) : runner_(r) {}
    gpu::Snapshot Sample(int gpu_count) override;
    std::string Describe() override;

   private:
    Runner* runner_;
  };
  void Publish();
  void Warn(const std::string& line);

  const config::Config& config_;
  const sys::Clock& clock_;
  LogFn log_;
  LatestSource service_source_{this};
  gpu::OpenedSource source_;
  std::string source_description_;  // taken at Start, off the loop's hot path
  std::optional<UsageLock> lock_;
  std::unique_ptr<store::UsageStore> usage_;
  std::unique_ptr<Monitor> monitor_;
  std::unique_ptr<Sampler> sampler_;
  std::optional<MetricsWriter> metrics_;  // when metrics_textfile is set
  const RequestStats* requests_ = nullptr;
  std::string last_warning_;
  std::string not_recording_;
};

// A random 32-hex-digit monitor ID.
std::string NewMonitorId();
// usage.db and usage.lock beside the ledger.
std::string UsagePath(const config::Config& config);
std::string UsageLockPath(const config::Config& config);

}  // namespace bk::monitor
