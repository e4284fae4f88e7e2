#pragma once
// Turns one JSON-RPC 2.0 request line into one response line by calling the
// BookingService as the peer the kernel identified. The methods and their
// strict decoders are those of rpc/methods.h; unknown fields are errors.

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "rpc/messages.h"
#include "service/booking_service.h"

namespace bk::server {

class Dispatcher {
 public:
  // The read cache never holds more than this many bytes of keys and answers.
  static constexpr size_t kDefaultCacheBytes = size_t{4} << 20;

  Dispatcher(service::BookingService& service, const config::Config& config,
             size_t cache_max_bytes = kDefaultCacheBytes);
  // nullopt for a notification (no id): nothing is sent back.
  std::optional<std::string> Handle(const service::Actor& actor, const std::string& line);
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
  // What the read cache holds now, counted as it is bounded.
  size_t cache_bytes() const { return cache_bytes_; }
  size_t cache_entries() const { return cache_.size(); }

 private:
  std::optional<std::string> HandleUnchecked(const service::Actor& actor, const std::string& line);
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
  uint64_t cache_generation_ = 0;
  int64_t cache_now_ = 0;
  size_t cache_bytes_ = 0;
  size_t cache_max_bytes_;
};

}  // namespace bk::server
