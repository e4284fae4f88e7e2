#pragma once
// Turns one JSON-RPC 2.0 request line into one response line by calling the
// BookingService as the peer the kernel identified. Every parameter is
// validated here; unknown fields are errors.

#include <functional>

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "monitor/usage_view.h"
#include "service/booking_service.h"

namespace bk::server {

class Dispatcher {
 public:
  Dispatcher(service::BookingService& service, const config::Config& config);
  // nullopt for a notification (no id): nothing is sent back.
  std::optional<std::string> Handle(const service::Actor& actor, const std::string& line);
  // Answers usage.query: the rendered gpubk.usage.v1 document or text table.
  using UsageFn = std::function<Result<std::string>(const monitor::UsageQuery&, bool text)>;
  void SetUsage(UsageFn fn) { usage_ = std::move(fn); }

  // Whether the last handled request was a write (the daemon counts them).
  bool last_was_write() const { return last_write_; }

 private:
  Result<std::string> Usage(const service::Actor& actor, const nlohmann::json& params);
  std::optional<std::string> HandleUnchecked(const service::Actor& actor, const std::string& line);
  service::BookingService& service_;
  const config::Config& config_;
  bool last_write_ = false;
  // Answers of pure reads, valid for one ledger generation and one second of
  // the clock: repeated `bk l` between writes is served from memory.
  std::unordered_map<std::string, std::string> cache_;
  UsageFn usage_;
  uint64_t cache_generation_ = 0;
};

}  // namespace bk::server
