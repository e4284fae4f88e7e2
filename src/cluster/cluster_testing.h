#pragma once
// A Runner that answers from a script instead of running ssh: each call is
// recorded, and the reply is the next one queued for the first matching
// remote argument (the bk subcommand), so tests can drop a reply after a
// commit, hang a host or answer as another host.

#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/runner.h"

namespace bk::cluster {

class FakeRunner : public Runner {
 public:
  // What one call returns; `match` is a substring of the joined argv.
  void Queue(const std::string& match, RunResult r) {
    std::lock_guard lock(mu_);
    replies_[match].push_back(std::move(r));
  }
  // The reply when nothing queued matches.
  std::function<RunResult(const RunSpec&)> fallback = [](const RunSpec&) {
    RunResult r;
    r.end = RunResult::End::kExited;
    r.code = 255;
    r.err = "ssh: connect to host: Connection refused\n";
    return r;
  };
  RunResult Run(const RunSpec& spec) override {
    std::string joined;
    for (const auto& a : spec.argv) joined += a + " ";
    std::lock_guard lock(mu_);
    calls.push_back(spec.argv);
    for (auto& [match, queue] : replies_) {
      if (joined.find(match) == std::string::npos || queue.empty()) continue;
      RunResult r = queue.front();
      queue.pop_front();
      return r;
    }
    return fallback(spec);
  }
  std::vector<std::vector<std::string>> calls;

 private:
  std::mutex mu_;
  std::map<std::string, std::deque<RunResult>> replies_;
};

inline RunResult JsonReply(const nlohmann::json& doc, int code = 0) {
  RunResult r;
  r.end = RunResult::End::kExited;
  r.code = code;
  r.out = doc.dump() + "\n";
  return r;
}

inline RunResult Dropped() {
  RunResult r;
  r.end = RunResult::End::kExited;
  r.code = 255;
  r.err = "Connection to 10.0.0.2 closed by remote host.\n";
  return r;
}

}  // namespace bk::cluster
