#pragma once
// Test fixture for src/agent: a private ledger in a fresh directory with
// 8 count-only GPUs and a fixed clock, opened through client::OpenDirect as
// `bk` itself does.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "client/ledger.h"
#include "config/config.h"
#include "engine/civil_time.h"
#include "engine/parse.h"
#include "sys/clock.h"

namespace bk::agent {

class LedgerFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/bk-agent-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    env_ = {{"BK_DATA_DIR", dir_}, {"BK_GPU_COUNT", "8"}};
    for (const auto& [k, v] : extra_env_) env_[k] = v;
    auto cfg = config::Load([this](const std::string& k) -> std::optional<std::string> {
      auto it = env_.find(k);
      if (it == env_.end()) return std::nullopt;
      return it->second;
    });
    ASSERT_TRUE(cfg.has_value()) << cfg.error().message;
    config_ = *cfg;
    auto now = engine::ParseIsoTime("2026-11-29T18:49:00Z", engine::FixedZone(0));
    ASSERT_TRUE(now.has_value());
    clock_ = std::make_unique<sys::FixedClock>(*now);
    auto ledger = client::OpenDirect(config_, *clock_);
    ASSERT_TRUE(ledger.has_value()) << ledger.error().message;
    ledger_ = std::move(*ledger);
  }
  void TearDown() override {
    ledger_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::map<std::string, std::string> extra_env_;  // set before SetUp, e.g. BK_HOST_CPUS
  std::map<std::string, std::string> env_;
  std::string dir_;
  config::Config config_;
  std::unique_ptr<sys::FixedClock> clock_;
  std::unique_ptr<client::Ledger> ledger_;
  engine::FixedZone zone_{0};
};

}  // namespace bk::agent
