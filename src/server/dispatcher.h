#pragma once
// Turns one JSON-RPC 2.0 request line into one response line by calling the
// BookingService as the peer the kernel identified. The methods and their
// strict decoders are those of rpc/methods.h; unknown fields are errors.

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "monitor/metrics.h"
#include "rpc/messages.h"
#include "service/booking_service.h"
#include "sys/unique_fd.h"

namespace bk::server {

class Dispatcher {
 public:
  // The read cache never holds more than this many bytes of keys and answers.
  static constexpr size_t kDefaultCacheBytes = size_t{4} << 20;

  Dispatcher(service::BookingService& service, const config::Config& config,
             size_t cache_max_bytes = kDefaultCacheBytes);
  // nullopt for a notification (no id), or for an import started as a job:
  // nothing is sent back now. `passed` is the descriptor that came with the
  // line, if any: an import from a descriptor takes it, a restore reads it,
  // and it is closed once the request is answered.
  std::optional<std::string> Handle(const service::Actor& actor, const std::string& line,
                                    sys::UniqueFd passed = {});
  // Starts admin.import with {"descriptor": true}: the ledger.json is the
  // passed descriptor, read by a job of the daemon. `id` is the request's id
  // as JSON text. Ok: the job answers later (ImportAnswer); an error is the
  // answer now. Unset, such an import is refused.
  using StartImportFn =
      std::function<::bk::Status(const service::Actor&, const std::string& id, sys::UniqueFd file)>;
  void SetStartImport(StartImportFn fn) { start_import_ = std::move(fn); }
  // While not empty, every write is refused at once with this (kind busy).
  void RefuseWrites(std::string why) { refuse_writes_ = std::move(why); }
  // The lines an import job sends: its answer to request `id`, and a
  // notification of how far it is.
  static std::string ImportAnswer(const std::string& id, const Result<service::ImportSummary>& result);
  static std::string ImportProgress(const std::string& id, service::ImportPhase phase, int64_t done,
                                    int64_t total);
  // Answers usage.query: the rendered gpubk.usage.v1 document or text table.
  using UsageFn = rpc::UsageFn;
  void SetUsage(UsageFn fn) { usage_ = std::move(fn); }

  // Told whether a request writes just before it runs, once its method is
  // known: the daemon opens its group commit for a write and makes the group
  // durable before a read, so no answer shows what is not yet on disk.
  using BeforeRun = std::function<void(bool write)>;
  void SetBeforeRun(BeforeRun fn) { before_run_ = std::move(fn); }
  // The answer to the write answered by `reply` once the ledger could not
  // keep it: `error`, under the same request id.
  static std::string Unwritten(const std::string& reply, const Error& error);

  // Whether the last handled request was a write (the daemon counts them).
  bool last_was_write() const { return last_write_; }
  // Requests answered so far by method: counts and latencies (the metrics).
  const monitor::RequestStats& stats() const { return stats_; }
  // What the read cache holds now, counted as it is bounded.
  size_t cache_bytes() const { return cache_bytes_; }
  size_t cache_entries() const { return cache_.size(); }

 private:
  std::optional<std::string> HandleUnchecked(const service::Actor& actor, const std::string& line,
                                             sys::UniqueFd passed);
  const std::string* Cached(const std::string& key);
  void Remember(std::string key, const std::string& answer);
  service::BookingService& service_;
  const config::Config& config_;
  bool last_write_ = false;
  // Answers of pure reads, valid for one ledger generation and one second of
  // the clock: repeated `bk l` between writes is served from memory. Bounded
  // in bytes, so distinct large reads cannot grow the daemon.
  std::unordered_map<std::string, std::string> cache_;
  UsageFn usage_;
  BeforeRun before_run_;
  StartImportFn start_import_;
  std::string refuse_writes_;
  uint64_t cache_generation_ = 0;
  int64_t cache_now_ = 0;
  size_t cache_bytes_ = 0;
  size_t cache_max_bytes_;
  monitor::RequestStats stats_;
};

}  // namespace bk::server
