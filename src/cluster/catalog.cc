#include "cluster/catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "base/json_strict.h"

namespace bk::cluster {
namespace {

using nlohmann::json;

bool Alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

bool LowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string TargetProblem(std::string_view t) {
  // The target becomes one argument of ssh: a leading '-' would be read as an
  // option, and spaces, quotes or controls have no place in a host name.
  if (t.empty() || t.size() > 255 || !Alnum(t[0]))
    return "must start with a letter or digit and be at most 255 characters";
  for (char c : t)
    if (!Alnum(c) && std::string_view("_.@:[]-").find(c) == std::string_view::npos)
      return "may hold only letters, digits and _ . @ : [ ] -";
  return "";
}

bool Controls(std::string_view s) {
  return std::any_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

std::string NodeLabel(size_t i, const Node& n) {
  return n.name.empty() ? fmt::format("nodes[{}]", i) : fmt::format("nodes[{}] ({})", i, n.name);
}

// Reads a JSON object's members with the catalog's rules: each key known,
// each of its type; errors name the member.
class Fields {
 public:
  Fields(const json& j, std::string where) : j_(j), where_(std::move(where)) {}
  Status Only(std::initializer_list<std::string_view> allowed) const {
    for (const auto& [key, _] : j_.items())
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        return Invalid(fmt::format("{}: unknown key {}", where_, json(key).dump()));
    return Ok();
  }
  Result<std::optional<std::string>> String(const char* key) const {
    if (!j_.contains(key)) return std::nullopt;
    if (!j_[key].is_string()) return Invalid(fmt::format("{}: {} must be a string", where_, key));
    return j_[key].get<std::string>();
  }
  Result<std::optional<int64_t>> Integer(const char* key) const {
    if (!j_.contains(key)) return std::nullopt;
    if (!j_[key].is_number_integer())
      return Invalid(fmt::format("{}: {} must be a whole number", where_, key));
    return j_[key].get<int64_t>();
  }
  Result<std::optional<double>> Number(const char* key) const {
    if (!j_.contains(key)) return std::nullopt;
    if (!j_[key].is_number()) return Invalid(fmt::format("{}: {} must be a number", where_, key));
    return j_[key].get<double>();
  }
  Result<std::optional<bool>> Bool(const char* key) const {
    if (!j_.contains(key)) return std::nullopt;
    if (!j_[key].is_boolean()) return Invalid(fmt::format("{}: {} must be true or false", where_, key));
    return j_[key].get<bool>();
  }
  const std::string& where() const { return where_; }

 private:
  const json& j_;
  std::string where_;
};

Result<Node> NodeFrom(const json& j, size_t i) {
  if (!j.is_object()) return Invalid(fmt::format("nodes[{}] must be an object", i));
  Node n;
  if (j.contains("name") && j["name"].is_string()) n.name = j["name"].get<std::string>();
  Fields f(j, NodeLabel(i, n));
  BK_TRY(f.Only(
      {"name", "node_id", "transport", "target", "executable", "priority", "timeout_seconds", "enabled"}));
  BK_ASSIGN_OR_RETURN(auto name, f.String("name"));
  BK_ASSIGN_OR_RETURN(auto id, f.String("node_id"));
  BK_ASSIGN_OR_RETURN(auto transport, f.String("transport"));
  BK_ASSIGN_OR_RETURN(auto target, f.String("target"));
  BK_ASSIGN_OR_RETURN(auto executable, f.String("executable"));
  BK_ASSIGN_OR_RETURN(auto priority, f.Integer("priority"));
  BK_ASSIGN_OR_RETURN(auto timeout, f.Number("timeout_seconds"));
  BK_ASSIGN_OR_RETURN(auto enabled, f.Bool("enabled"));
  if (!name) return Invalid(f.where() + ": name is missing");
  if (!id) return Invalid(f.where() + ": node_id is missing");
  if (!transport) return Invalid(f.where() + ": transport is missing (local or ssh)");
  if (*transport != "local" && *transport != "ssh")
    return Invalid(
        fmt::format("{}: transport must be local or ssh, not {}", f.where(), json(*transport).dump()));
  n.node_id = *id;
  n.transport = *transport == "local" ? Transport::kLocal : Transport::kSsh;
  if (target) n.target = *target;
  if (target && target->empty()) return Invalid(f.where() + ": target must not be empty");
  if (executable) n.executable = *executable;
  if (priority) n.priority = *priority;
  if (timeout) n.timeout_seconds = *timeout;
  if (enabled) n.enabled = *enabled;
  return n;
}

Result<Principal> PrincipalFrom(const json& j, size_t i) {
  std::string where = fmt::format("principals[{}]", i);
  if (!j.is_object()) return Invalid(where + " must be an object");
  Fields f(j, where);
  BK_TRY(f.Only({"id", "members"}));
  BK_ASSIGN_OR_RETURN(auto id, f.String("id"));
  if (!id) return Invalid(where + ": id is missing");
  if (!j.contains("members") || !j["members"].is_array()) return Invalid(where + ": members must be a list");
  Principal p{*id, {}};
  for (size_t k = 0; k < j["members"].size(); ++k) {
    const json& m = j["members"][k];
    std::string at = fmt::format("{}.members[{}]", where, k);
    if (!m.is_object()) return Invalid(at + " must be an object");
    Fields mf(m, at);
    BK_TRY(mf.Only({"node_id", "uid"}));
    BK_ASSIGN_OR_RETURN(auto node_id, mf.String("node_id"));
    BK_ASSIGN_OR_RETURN(auto uid, mf.Integer("uid"));
    if (!node_id || !uid) return Invalid(at + " needs node_id and uid");
    p.members.push_back({*node_id, *uid});
  }
  return p;
}

Status CheckNode(const Node& n, size_t i) {
  std::string where = NodeLabel(i, n);
  if (auto why = NameProblem(n.name); !why.empty()) return Invalid(fmt::format("{}: name {}", where, why));
  if (n.node_id.size() != 20 || !LowerHex(n.node_id))
    return Invalid(where + ": node_id must be 20 lowercase hex digits (bk c probe prints it)");
  if (n.transport == Transport::kSsh) {
    if (n.target.empty()) return Invalid(where + ": an ssh node needs a target (host or ssh_config alias)");
    if (auto why = TargetProblem(n.target); !why.empty())
      return Invalid(fmt::format("{}: target {}", where, why));
  } else if (!n.target.empty()) {
    return Invalid(where + ": a local node has no target");
  }
  if (n.executable.empty() || n.executable[0] != '/' || Controls(n.executable) || n.executable.size() > 4096)
    return Invalid(where + ": executable must be an absolute path");
  if (n.priority < 0 || n.priority > 1'000'000) return Invalid(where + ": priority must be 0-1000000");
  if (!(n.timeout_seconds >= 1 && n.timeout_seconds <= 300))
    return Invalid(where + ": timeout_seconds must be 1-300");
  return Ok();
}

}  // namespace

std::string NameProblem(std::string_view name) {
  if (name.empty() || name.size() > 63 || !Alnum(name[0]))
    return "must start with a letter or digit and be at most 63 characters";
  for (char c : name)
    if (!Alnum(c) && c != '_' && c != '.' && c != '-') return "may hold only letters, digits, _ . and -";
  return "";
}

Status Check(const Catalog& c) {
  if (c.nodes.empty() || c.nodes.size() > kMaxNodes)
    return Invalid(fmt::format("nodes must list 1-{} GPU hosts", kMaxNodes));
  std::set<std::string> names, ids;
  int local = 0;
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    const Node& n = c.nodes[i];
    BK_TRY(CheckNode(n, i));
    if (!names.insert(n.name).second)
      return Invalid(fmt::format("{}: name is listed twice", NodeLabel(i, n)));
    if (!ids.insert(n.node_id).second)
      return Invalid(fmt::format("{}: node_id {} is listed twice", NodeLabel(i, n), n.node_id));
    if (n.transport == Transport::kLocal && ++local > 1) return Invalid("at most one node may be local");
  }
  std::set<std::string> principal_ids;
  std::map<std::pair<std::string, int64_t>, std::string> owner;
  for (size_t i = 0; i < c.principals.size(); ++i) {
    const Principal& p = c.principals[i];
    std::string where = fmt::format("principals[{}]", i);
    if (auto why = NameProblem(p.id); !why.empty()) return Invalid(fmt::format("{}: id {}", where, why));
    if (!principal_ids.insert(p.id).second)
      return Invalid(fmt::format("{}: id {} is listed twice", where, p.id));
    if (p.members.empty()) return Invalid(where + ": members must not be empty");
    for (const Member& m : p.members) {
      if (!ids.contains(m.node_id))
        return Invalid(fmt::format("{}: node_id {} is not a node", where, m.node_id));
      if (m.uid < 0 || m.uid > 0xffffffffLL)
        return Invalid(fmt::format("{}: uid {} is out of range", where, m.uid));
      auto [it, fresh] = owner.emplace(std::pair{m.node_id, m.uid}, p.id);
      if (!fresh)
        return Invalid(
            fmt::format("{}: uid {} on {} already belongs to {}", where, m.uid, m.node_id, it->second));
    }
  }
  if (c.history_root && (c.history_root->empty() || (*c.history_root)[0] != '/' || Controls(*c.history_root)))
    return Invalid("history_root must be an absolute path");
  return Ok();
}

Result<Catalog> ParseCatalog(std::string_view text, const std::string& path) {
  auto prefixed = [&](const Error& e) { return std::unexpected(Error{e.kind, path + ": " + e.message}); };
  if (text.size() > kMaxCatalogBytes) return Invalid(fmt::format("{}: larger than 1 MiB", path));
  auto parsed = ParseStrictJson(text);
  if (!parsed) return Invalid(fmt::format("{} {}", path, parsed.error().Phrase()));
  const json& j = *parsed;
  if (!j.is_object()) return Invalid(path + ": must be a JSON object");
  Fields top(j, path);
  BK_TRY(top.Only({"schema_version", "nodes", "principals", "history_root"}));
  if (!j.contains("schema_version") || j["schema_version"] != kCatalogSchema)
    return Invalid(fmt::format("{}: schema_version must be \"{}\"", path, kCatalogSchema));
  if (!j.contains("nodes") || !j["nodes"].is_array()) return Invalid(path + ": nodes must be a list");
  Catalog c;
  for (size_t i = 0; i < j["nodes"].size(); ++i) {
    auto node = NodeFrom(j["nodes"][i], i);
    if (!node) return prefixed(node.error());
    c.nodes.push_back(std::move(*node));
  }
  if (j.contains("principals")) {
    if (!j["principals"].is_array()) return Invalid(path + ": principals must be a list");
    for (size_t i = 0; i < j["principals"].size(); ++i) {
      auto p = PrincipalFrom(j["principals"][i], i);
      if (!p) return prefixed(p.error());
      c.principals.push_back(std::move(*p));
    }
  }
  BK_ASSIGN_OR_RETURN(c.history_root, top.String("history_root"));
  if (auto ok = Check(c); !ok) return prefixed(ok.error());
  return c;
}

std::string Render(const Catalog& c) {
  json nodes = json::array();
  for (const Node& n : c.nodes) {
    json o = {{"name", n.name},
              {"node_id", n.node_id},
              {"transport", n.transport == Transport::kLocal ? "local" : "ssh"}};
    if (!n.target.empty()) o["target"] = n.target;
    if (n.executable != kDefaultExecutable) o["executable"] = n.executable;
    if (n.priority != 0) o["priority"] = n.priority;
    if (n.timeout_seconds != kDefaultTimeoutSeconds) o["timeout_seconds"] = n.timeout_seconds;
    if (!n.enabled) o["enabled"] = false;
    nodes.push_back(std::move(o));
  }
  json doc = {{"schema_version", kCatalogSchema}, {"nodes", nodes}};
  if (!c.principals.empty()) {
    json principals = json::array();
    for (const Principal& p : c.principals) {
      json members = json::array();
      for (const Member& m : p.members) members.push_back({{"node_id", m.node_id}, {"uid", m.uid}});
      principals.push_back({{"id", p.id}, {"members", members}});
    }
    doc["principals"] = principals;
  }
  if (c.history_root) doc["history_root"] = *c.history_root;
  return doc.dump(2) + "\n";
}

}  // namespace bk::cluster
