#pragma once
// Choosing the host for one booking from every host's own recommendation.
// Each host's daemon is the only authority on its calendar; the client only
// compares their answers, after checking each answers the question asked
// (a host that echoes another count or start is not a candidate), and books
// on exactly one. Implicit starts compare waiting times (start minus the
// host's own clock), so a host whose clock runs ahead gains nothing.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cluster/fanout.h"
#include "engine/civil_time.h"

namespace bk::cluster {

inline constexpr int64_t kMaxClockSkewSeconds = 30;

// What the user asked for, resolved once on the client (a friendly start is
// already an instant here, so every host is asked the same thing).
struct Intent {
  int64_t count = 1;
  int64_t duration_seconds = 0;
  bool exclusive = false;
  std::optional<engine::Seconds> start;  // exact start; none = earliest
  std::vector<int> gpus, exclude;
  std::optional<int64_t> memory_mb;
  std::optional<int64_t> share;
  std::optional<int64_t> cpus, ram_mb;  // host budgets, where the host has them
};

// The arguments of `bk agent recommend` on a host for this intent.
std::vector<std::string> RecommendArgs(const Intent& i);
// The arguments of a booking on a host: `[x] N DUR [...] --op-id OP --json [-- argv]`.
std::vector<std::string> BookArgs(const Intent& i, const std::string& op_id,
                                  const std::vector<std::string>& job);

struct Candidate {
  NodeReply reply;
  bool candidate = false;       // answered, available, and answered this request
  std::string rejected_reason;  // why not, when it answered
  engine::Seconds ranked_start = 0;
  std::vector<std::string> missing;  // write capabilities the host lacks
  bool write_compatible() const { return candidate && missing.empty(); }
};

struct Ranking {
  std::vector<Candidate> nodes;    // candidates best first, then the rest in routing order
  std::optional<size_t> selected;  // the best candidate (writable if any is)
};

// Judges and orders the hosts' replies to RecommendArgs(intent). `need_job`
// adds the capabilities a booking with a command needs.
Ranking Rank(const Intent& intent, std::vector<NodeReply> replies, engine::Seconds client_now, bool need_job);

// The write capabilities a host's document lacks for an action: "book",
// "book-job", "edit", "renew", "cancel" (each must be exactly true).
std::vector<std::string> MissingCapabilities(const nlohmann::json& doc, const std::string& action);

}  // namespace bk::cluster
