#include "cluster/usage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "cluster/reply_fields.h"

namespace bk::cluster {
namespace {

using nlohmann::json;

constexpr const char* kSummed[] = {"active_gpu_seconds", "reserved_gpu_seconds", "idle_reserved_gpu_seconds",
                                   "sampled_gpu_seconds"};

double Number(const json& u, const char* key) {
  if (!u.contains(key) || !u[key].is_number()) return 0;
  double v = u[key].get<double>();
  return std::isfinite(v) && v > 0 ? v : 0;
}

std::string PrincipalOf(const Catalog& c, const std::string& node_id, int64_t uid) {
  for (const auto& p : c.principals)
    for (const auto& m : p.members)
      if (m.node_id == node_id && m.uid == uid) return p.id;
  return "";
}

}  // namespace

json AggregateUsage(const Catalog& catalog, const std::vector<NodeReply>& replies) {
  struct Sum {
    json totals = json::object();
    double max_memory = 0, sm_weighted = 0, sm_seconds = 0;
    std::vector<std::string> nodes;
    json members = json::array();
    bool mapped = false;
  };
  std::map<std::string, Sum> by_id;
  for (const auto& r : replies) {
    if (!r.result || !r.result->doc.contains("users") || !r.result->doc["users"].is_array()) continue;
    for (const auto& u : r.result->doc["users"]) {
      if (!u.is_object() || !u.contains("uid") || !u["uid"].is_number_integer()) continue;
      int64_t uid = u["uid"].get<int64_t>();
      std::string principal = PrincipalOf(catalog, r.node.node_id, uid);
      std::string id = principal.empty() ? fmt::format("{}:{}", r.node.node_id, uid) : principal;
      Sum& s = by_id[id];
      s.mapped = !principal.empty();
      for (const char* k : kSummed) s.totals[k] = s.totals.value(k, 0.0) + Number(u, k);
      s.max_memory = std::max(s.max_memory, Number(u, "max_gpu_memory_mb"));
      double sampled = Number(u, "sampled_gpu_seconds");
      if (u.contains("avg_sm_percent") && u["avg_sm_percent"].is_number()) {
        s.sm_weighted += Number(u, "avg_sm_percent") * sampled;
        s.sm_seconds += sampled;
      }
      if (std::find(s.nodes.begin(), s.nodes.end(), r.node.name) == s.nodes.end())
        s.nodes.push_back(r.node.name);
      s.members.push_back({{"node", r.node.name},
                           {"node_id", r.node.node_id},
                           {"uid", uid},
                           {"username", Field(u, "username")}});
    }
  }
  json out = json::array();
  for (auto& [id, s] : by_id) {
    json p = {{"id", id}, {"mapped", s.mapped}, {"nodes", s.nodes}, {"members", s.members}};
    for (const char* k : kSummed) p[k] = s.totals.value(k, 0.0);
    p["max_gpu_memory_mb"] = s.max_memory;
    p["avg_sm_percent"] =
        s.sm_seconds > 0 ? json(std::round(s.sm_weighted / s.sm_seconds * 1000) / 1000) : json();
    out.push_back(std::move(p));
  }
  std::stable_sort(out.begin(), out.end(), [](const json& a, const json& b) {
    double x = a["active_gpu_seconds"].get<double>(), y = b["active_gpu_seconds"].get<double>();
    if (x != y) return x > y;
    return a["id"].get<std::string>() < b["id"].get<std::string>();
  });
  return out;
}

}  // namespace bk::cluster
