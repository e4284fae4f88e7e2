#include "cluster/placement.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "base/strings.h"
#include "cluster/reply_fields.h"
#include "engine/parse.h"

namespace bk::cluster {
namespace {

using nlohmann::json;

int ConfidenceRank(const json& rec) {
  std::string c = rec.is_object() ? StrField(rec, "confidence") : "";
  if (c == "high") return 0;
  if (c == "medium") return 1;
  if (c == "low") return 2;
  return 3;
}

// Why the host's echo of the request is not what was asked; "" when it is.
std::string RequestMismatch(const Intent& i, const json& req) {
  if (!req.is_object()) return "";
  auto int_is = [&](const char* key, int64_t want) {
    return !req.contains(key) || (req[key].is_number_integer() && req[key].get<int64_t>() == want);
  };
  if (!int_is("count", i.count)) return "answered for another GPU count";
  if (!int_is("duration_seconds", i.duration_seconds)) return "answered for another duration";
  if (req.contains("mode") && req["mode"] != (i.exclusive ? "exclusive" : "shared"))
    return "answered for another mode";
  if (req.contains("allow_queue") && req["allow_queue"] != !i.start.has_value())
    return "answered for another queueing rule";
  if (i.start && InstantField(req, "start_at") != i.start) return "answered for another start";
  if (req.contains("preferred_gpus")) {
    std::vector<int> want = i.gpus;
    if (!(req["preferred_gpus"].is_null() ? want.empty() : IntsField(req, "preferred_gpus") == want))
      return "answered for other GPUs";
  }
  if (req.contains("excluded_gpus") && IntsField(req, "excluded_gpus") != i.exclude)
    return "answered for other excluded GPUs";
  if (req.contains("expected_memory_mb_per_gpu")) {
    const json& m = req["expected_memory_mb_per_gpu"];
    if (i.memory_mb ? !(m.is_number_integer() && m.get<int64_t>() == *i.memory_mb) : !m.is_null())
      return "answered for another memory size";
  }
  if (!i.exclusive && i.share && !int_is("share_units_per_gpu", *i.share))
    return "answered for another share";
  return "";
}

// The options both a recommendation and a booking carry, canonical: the
// start as a UTC instant, sizes in MiB.
void AddPlacementOptions(const Intent& i, std::vector<std::string>& a) {
  if (i.start) a.insert(a.end(), {"--start", engine::FormatIsoUtc(*i.start)});
  if (!i.gpus.empty()) a.insert(a.end(), {"--gpu", JoinInts(i.gpus)});
  if (!i.exclude.empty()) a.insert(a.end(), {"--exclude-gpu", JoinInts(i.exclude)});
  if (i.memory_mb) a.insert(a.end(), {"--mem", fmt::format("{}m", *i.memory_mb)});
  if (i.share && !i.exclusive) a.insert(a.end(), {"--share", std::to_string(*i.share)});
  if (i.cpus) a.insert(a.end(), {"--cpus", std::to_string(*i.cpus)});
  if (i.ram_mb) a.insert(a.end(), {"--ram", fmt::format("{}m", *i.ram_mb)});
}

}  // namespace

std::vector<std::string> RecommendArgs(const Intent& i) {
  std::vector<std::string> a = {"agent",
                                "recommend",
                                std::to_string(i.count),
                                engine::FormatDuration(i.duration_seconds),
                                "--mode",
                                i.exclusive ? "exclusive" : "shared"};
  AddPlacementOptions(i, a);
  a.push_back("--compact");
  return a;
}

std::vector<std::string> BookArgs(const Intent& i, const std::string& op_id,
                                  const std::vector<std::string>& job) {
  std::vector<std::string> a;
  if (i.exclusive) a.push_back("x");
  a.insert(a.end(), {std::to_string(i.count), engine::FormatDuration(i.duration_seconds)});
  AddPlacementOptions(i, a);
  a.insert(a.end(), {"--op-id", op_id, "--json"});
  if (!job.empty()) {
    a.push_back("--");
    a.insert(a.end(), job.begin(), job.end());
  }
  return a;
}

std::vector<std::string> MissingCapabilities(const json& doc, const std::string& action) {
  std::vector<std::string> need;
  if (action == "book" || action == "book-job")
    need = {"federated_node_identity", "idempotent_booking", "operation_status",
            "preflight_idempotent_replay"};
  if (action == "book-job")
    need.insert(need.end(), {"scheduled_jobs", "scheduled_job_path_snapshot", "private_job_specs"});
  if (action == "edit") need = {"federated_node_identity", "idempotent_edit", "operation_status"};
  if (action == "renew") need = {"federated_node_identity", "idempotent_renew", "operation_status"};
  if (action == "cancel") need = {"federated_node_identity", "idempotent_cancel", "operation_status"};
  const json* caps = doc.is_object() && doc.contains("capabilities") ? &doc["capabilities"] : nullptr;
  std::vector<std::string> missing;
  for (const auto& c : need)
    if (!caps || !caps->is_object() || !caps->contains(c) || (*caps)[c] != true) missing.push_back(c);
  return missing;
}

Ranking Rank(const Intent& intent, std::vector<NodeReply> replies, engine::Seconds client_now,
             bool need_job) {
  Ranking out;
  std::vector<Candidate> good, rest;
  for (NodeReply& r : replies) {
    Candidate c{std::move(r)};
    auto judge = [&]() -> std::string {
      if (!c.reply.result) return "";  // offline: shown with its error
      const json& doc = c.reply.result->doc;
      if (!BoolField(doc, "available", false)) {
        std::string why =
            doc.contains("reason") && doc["reason"].is_string() ? doc["reason"].get<std::string>() : "";
        return why.empty() ? "no legal slot" : "no legal slot: " + Sanitize(why, 200);
      }
      const json& rec = doc.contains("recommendation") ? doc["recommendation"] : json();
      auto generated = InstantField(doc, "generated_at");
      auto start = InstantField(rec, "start_at");
      auto end = InstantField(rec, "end_at");
      if (!rec.is_object() || !generated || !start || !end) return "invalid recommendation";
      if (intent.start && std::llabs(client_now - *generated) > kMaxClockSkewSeconds)
        return fmt::format("clock skew is {}s", std::llabs(client_now - *generated));
      std::vector<int> gpus = IntsField(rec, "gpus");
      std::set<int> distinct(gpus.begin(), gpus.end());
      if (static_cast<int64_t>(gpus.size()) != intent.count || distinct.size() != gpus.size() ||
          (!gpus.empty() && *distinct.begin() < 0))
        return "invalid recommendation: wrong GPUs";
      if (*end - *start != intent.duration_seconds) return "invalid recommendation: wrong duration";
      if (intent.start && *start != *intent.start) return "answered for another start";
      if (std::string why = RequestMismatch(intent, Field(doc, "request")); !why.empty()) return why;
      c.ranked_start = intent.start ? *start : client_now + std::max<engine::Seconds>(0, *start - *generated);
      return "ok";
    };
    std::string verdict = judge();
    if (verdict == "ok") {
      c.candidate = true;
      c.missing = MissingCapabilities(c.reply.result->doc, need_job ? "book-job" : "book");
      good.push_back(std::move(c));
    } else {
      c.rejected_reason = verdict;
      rest.push_back(std::move(c));
    }
  }
  std::stable_sort(good.begin(), good.end(), [](const Candidate& a, const Candidate& b) {
    if (a.ranked_start != b.ranked_start) return a.ranked_start < b.ranked_start;
    if (a.reply.node.priority != b.reply.node.priority) return a.reply.node.priority < b.reply.node.priority;
    int ca = ConfidenceRank(Field(a.reply.result->doc, "recommendation"));
    int cb = ConfidenceRank(Field(b.reply.result->doc, "recommendation"));
    if (ca != cb) return ca < cb;
    return a.reply.node.name < b.reply.node.name;
  });
  for (size_t k = 0; k < good.size(); ++k)
    if (good[k].write_compatible()) {
      out.selected = k;
      break;
    }
  if (!out.selected && !good.empty()) out.selected = 0;
  out.nodes = std::move(good);
  for (auto& c : rest) out.nodes.push_back(std::move(c));
  return out;
}

}  // namespace bk::cluster
