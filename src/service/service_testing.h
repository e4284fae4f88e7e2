#pragma once
// For tests over a BookingService: a private ledger under a fresh directory,
// a fixed clock, and the service built over them as a `bk` process builds it.
// A derived fixture adjusts config_ or the clock in its constructor, before
// SetUp builds the service.

#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string_view>

#include "base/temp_dir_testing.h"
#include "config/config.h"
#include "engine/parse_testing.h"
#include "service/booking_service.h"
#include "sys/clock.h"

namespace bk::service {

class ServiceTest : public TempDirTest {
 protected:
  ServiceTest() {
    config_.data_dir = Path("data");  // does not exist yet
    config_.ledger_path = config_.data_dir + "/ledger.db";
    config_.policy.gpu_count = 4;
  }
  void SetUp() override { Restart(); }
  void TearDown() override { service_.reset(); }

  // A fresh service over the same files, as a new bk process would build it.
  void Restart() {
    service_.reset();
    service_ = std::make_unique<BookingService>(BookingService::Deps{
        &config_, clock_.get(), nullptr, static_cast<uid_t>(getuid()), exclusive_store_});
  }

  config::Config config_;
  std::unique_ptr<sys::FixedClock> clock_ =
      std::make_unique<sys::FixedClock>(engine::T("2026-11-29T18:52:00Z"));
  bool exclusive_store_ = false;  // true: as the daemon holds the ledger
  std::unique_ptr<BookingService> service_;
};

}  // namespace bk::service
