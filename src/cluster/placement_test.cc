#include "cluster/placement.h"

#include <gtest/gtest.h>

#include "engine/parse.h"

namespace bk::cluster {
namespace {

using nlohmann::json;

constexpr engine::Seconds kNow = 1'796'000'000;  // the client's clock

json Caps(bool writable = true) {
  json c = {{"federated_node_identity", true},     {"idempotent_booking", true}, {"operation_status", true},
            {"preflight_idempotent_replay", true}, {"idempotent_edit", true},    {"idempotent_cancel", true}};
  if (!writable) c.erase("idempotent_booking");
  return c;
}

// A host's recommendation: start `wait` seconds after its own clock, which
// is `offset` seconds off the client's.
NodeReply Rec(const std::string& name, engine::Seconds wait, engine::Seconds offset = 0, int64_t priority = 0,
              const std::string& confidence = "high", bool writable = true) {
  engine::Seconds host_now = kNow + offset;
  json d = {
      {"kind", "recommendation"},
      {"generated_at", engine::FormatIsoUtc(host_now)},
      {"available", true},
      {"recommendation",
       {{"gpus", {0, 1}},
        {"start_at", engine::FormatIsoUtc(host_now + wait)},
        {"end_at", engine::FormatIsoUtc(host_now + wait + 3600)},
        {"confidence", confidence}}},
      {"request", {{"count", 2}, {"duration_seconds", 3600}, {"mode", "shared"}, {"allow_queue", true}}},
      {"capabilities", Caps(writable)}};
  Node n{.name = name, .node_id = std::string(20, 'a'), .priority = priority};
  return {n, Reply{0, d}};
}

Intent TwoForAnHour() { return {.count = 2, .duration_seconds = 3600}; }

std::vector<std::string> Order(const Ranking& r) {
  std::vector<std::string> names;
  for (const auto& c : r.nodes) names.push_back(c.reply.node.name);
  return names;
}

TEST(Rank, EarliestWaitWinsWhateverTheHostClocksSay) {
  // gpu-a's clock runs 10 minutes ahead: its start looks later but it waits less.
  Ranking r = Rank(TwoForAnHour(), {Rec("gpu-b", 1800), Rec("gpu-a", 300, 600)}, kNow, false);
  EXPECT_EQ(Order(r), (std::vector<std::string>{"gpu-a", "gpu-b"}));
  ASSERT_TRUE(r.selected);
  EXPECT_EQ(*r.selected, 0u);
  EXPECT_EQ(r.nodes[0].ranked_start, kNow + 300);
}

TEST(Rank, TiesGoToPriorityThenConfidenceThenName) {
  Ranking r = Rank(TwoForAnHour(),
                   {Rec("gpu-d", 0, 0, 5), Rec("gpu-c", 0, 0, 0, "low"), Rec("gpu-b", 0, 0, 0, "high"),
                    Rec("gpu-a", 0, 0, 0, "high")},
                   kNow, false);
  EXPECT_EQ(Order(r), (std::vector<std::string>{"gpu-a", "gpu-b", "gpu-c", "gpu-d"}));
}

TEST(Rank, TheBestWritableHostIsSelected) {
  Ranking r = Rank(TwoForAnHour(), {Rec("old", 0, 0, 0, "high", false), Rec("new", 600)}, kNow, false);
  ASSERT_TRUE(r.selected);
  EXPECT_EQ(r.nodes[*r.selected].reply.node.name, "new");
  EXPECT_EQ(r.nodes[0].missing, (std::vector<std::string>{"idempotent_booking"}));
}

TEST(Rank, RejectsAnswersToAnotherQuestion) {
  NodeReply wrong_count = Rec("a", 0);
  wrong_count.result->doc["recommendation"]["gpus"] = {0};
  NodeReply wrong_duration = Rec("b", 0);
  wrong_duration.result->doc["recommendation"]["end_at"] = engine::FormatIsoUtc(kNow + 60);
  NodeReply echoed_other = Rec("c", 0);
  echoed_other.result->doc["request"]["mode"] = "exclusive";
  NodeReply unavailable = Rec("d", 0);
  unavailable.result->doc["available"] = false;
  unavailable.result->doc["reason"] = "every GPU is disabled";
  NodeReply offline{Node{.name = "e"}, std::unexpected(NodeError{FailClass::kTimeout, "timed out after 8s"})};
  Ranking r =
      Rank(TwoForAnHour(), {wrong_count, wrong_duration, echoed_other, unavailable, offline}, kNow, false);
  EXPECT_FALSE(r.selected);
  ASSERT_EQ(r.nodes.size(), 5u);
  EXPECT_EQ(r.nodes[0].rejected_reason, "invalid recommendation: wrong GPUs");
  EXPECT_EQ(r.nodes[1].rejected_reason, "invalid recommendation: wrong duration");
  EXPECT_EQ(r.nodes[2].rejected_reason, "answered for another mode");
  EXPECT_EQ(r.nodes[3].rejected_reason, "no legal slot: every GPU is disabled");
  EXPECT_EQ(r.nodes[4].rejected_reason, "");  // offline: its error says why
}

TEST(Rank, ExactStartsNeedACloseClockAndTheSameStart) {
  Intent i = TwoForAnHour();
  i.start = kNow + 3600;
  auto at = [&](const std::string& name, engine::Seconds offset, engine::Seconds start) {
    NodeReply r = Rec(name, 0, offset);
    r.result->doc["recommendation"]["start_at"] = engine::FormatIsoUtc(start);
    r.result->doc["recommendation"]["end_at"] = engine::FormatIsoUtc(start + 3600);
    r.result->doc["request"]["allow_queue"] = false;
    r.result->doc["request"]["start_at"] = engine::FormatIsoUtc(*i.start);
    return r;
  };
  Ranking r = Rank(i, {at("skewed", 45, *i.start), at("moved", 0, *i.start + 300), at("good", 5, *i.start)},
                   kNow, false);
  EXPECT_EQ(Order(r), (std::vector<std::string>{"good", "skewed", "moved"}));
  EXPECT_EQ(r.nodes[1].rejected_reason, "clock skew is 45s");
  EXPECT_EQ(r.nodes[2].rejected_reason, "answered for another start");
}

TEST(Rank, AJobNeedsTheJobCapabilities) {
  Ranking r = Rank(TwoForAnHour(), {Rec("a", 0)}, kNow, true);
  EXPECT_EQ(r.nodes[0].missing,
            (std::vector<std::string>{"scheduled_jobs", "scheduled_job_path_snapshot", "private_job_specs"}));
}

TEST(Args, FriendlyValuesReachTheHostsCanonical) {
  Intent i{.count = 1,
           .duration_seconds = 5400,
           .exclusive = true,
           .start = kNow,
           .gpus = {3, 1},
           .memory_mb = 12288};
  EXPECT_EQ(RecommendArgs(i), (std::vector<std::string>{"agent", "recommend", "1", "1h30m", "--mode",
                                                        "exclusive", "--start", engine::FormatIsoUtc(kNow),
                                                        "--gpu", "3,1", "--mem", "12288m", "--compact"}));
  EXPECT_EQ(BookArgs(i, "op-1", {"python", "-c", "x; y"}),
            (std::vector<std::string>{"x", "1", "1h30m", "--start", engine::FormatIsoUtc(kNow), "--gpu",
                                      "3,1", "--mem", "12288m", "--op-id", "op-1", "--json", "--", "python",
                                      "-c", "x; y"}));
}

}  // namespace
}  // namespace bk::cluster
