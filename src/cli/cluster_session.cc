#include "cli/cluster_session.h"

#include <fmt/format.h>

#include "cluster/catalog_file.h"
#include "engine/parse.h"
#include "surface/text.h"

namespace bk::cli {

using nlohmann::json;

const cluster::Node* ClusterSession::Find(const std::string& name) const {
  for (const auto& n : catalog.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

std::string ClusterSession::Principal(const std::string& node_id, int64_t uid) const {
  for (const auto& p : catalog.principals)
    for (const auto& m : p.members)
      if (m.node_id == node_id && m.uid == uid) return p.id;
  return "";
}

std::vector<cluster::NodeReply> ClusterSession::Contexts() const {
  return cluster::FanOut(catalog.nodes, [&](const cluster::Node& n) {
    return remote->Call(n, {"agent", "context", "--compact"});
  });
}

Result<std::unique_ptr<ClusterSession>> OpenCluster() {
  auto s = std::make_unique<ClusterSession>();
  BK_ASSIGN_OR_RETURN(s->catalog, cluster::RequireCatalog(&s->path));
  cluster::RemoteOptions o;
  o.control_dir = "auto";
  o.self_exe = cluster::SelfExecutable();
  s->remote = std::make_unique<cluster::Remote>(s->runner, o);
  return s;
}

Result<NodeRef> ParseNodeRef(const ClusterSession& s, const std::string& text) {
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size())
    return Invalid(fmt::format("use a node-qualified reservation ID such as gpu-a/1a2b3c, not '{}'", text));
  std::string name = text.substr(0, slash);
  const cluster::Node* n = s.Find(name);
  if (!n) return Fail(ErrorKind::kNotFound, fmt::format("no cluster node named '{}' in {}", name, s.path));
  if (!n->enabled)
    return Fail(ErrorKind::kUnavailable,
                fmt::format("cluster node '{}' is disabled by the administrator", name));
  return NodeRef{n, text.substr(slash + 1)};
}

json NodeHeader(const cluster::NodeReply& r) {
  return {{"name", r.node.name},
          {"node_id", r.node.node_id},
          {"priority", r.node.priority},
          {"enabled", r.node.enabled},
          {"available", r.result.has_value()},
          {"error", r.result ? json() : json(r.result.error().message)}};
}

void PrintRemoteWarnings(const Context& ctx, const std::string& node, const json& doc) {
  if (!doc.is_object() || !doc.contains("warnings") || !doc["warnings"].is_array()) return;
  std::vector<std::string> seen;
  for (const auto& w : doc["warnings"]) {
    if (!w.is_string()) continue;
    std::string text = cluster::Sanitize(w.get<std::string>(), 400);
    if (text.empty() || std::find(seen.begin(), seen.end(), text) != seen.end()) continue;
    seen.push_back(text);
    std::fprintf(ctx.err, "warning [%s]: %s\n", node.c_str(), ctx.Local(text).c_str());
  }
}

std::string LocalIso(const Context& ctx, const json& iso) {
  if (!iso.is_string()) return "-";
  auto t = engine::ParseIsoTime(iso.get<std::string>(), engine::FixedZone(0));
  if (!t) return "-";
  return engine::FormatLocalShort(*t, *ctx.zone);
}

void PrintClusterDoc(const Context& ctx, const json& doc, bool compact) {
  std::string text = compact ? doc.dump(-1, ' ', false, json::error_handler_t::replace)
                             : doc.dump(2, ' ', false, json::error_handler_t::replace);
  std::fprintf(ctx.out, "%s\n", text.c_str());
}

}  // namespace bk::cli
