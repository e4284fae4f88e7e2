#include "config/config.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/json_strict.h"
#include "base/strings.h"
#include "config/keys.h"
#include "config/original_config.h"
#include "gpu/open_source.h"
#include "sys/fs.h"
#include "sys/trust.h"
#include "sys/users.h"

namespace bk::config {
namespace {

using nlohmann::json;

// Environment values are text; show "4" as 4 and "[1,3]" as a list.
std::string AsJsonText(const std::string& v) {
  try {
    json j = json::parse(v);
    if (!j.is_string()) return j.dump();
  } catch (const json::exception&) {
  }
  return json(v).dump();
}

// Applies `doc`'s known keys (skipping those in `ignore`), refusing unknown ones.
Status ApplyDocument(const json& doc, const std::string& where, Config& c,
                     const std::vector<std::string>& ignore) {
  for (const auto& [key, value] : doc.items()) {
    if (std::find(ignore.begin(), ignore.end(), key) != ignore.end()) continue;
    if (key == "config_version") {
      if (!value.is_number_integer() || value.get<int64_t>() != 1)
        return Invalid(fmt::format("{}: config_version must be 1", where));
      continue;
    }
    const KeySpec* k = FindKey(key);
    if (!k) return Invalid(fmt::format("{}: unknown key {}{}", where, key, Suggest(key)));
    if (auto st = ApplyKey(*k, value, c); !st)
      return Invalid(fmt::format("{}: {}", where, st.error().message));
    c.values[key] = value.dump();
    c.sources[key] = "file";
  }
  return Ok();
}

// Every key at its declared default; gpu_count waits for Finish to detect it.
// A declared default always parses (KeysTest applies each one).
void Defaults(Config& c) {
  for (const auto& k : Keys()) {
    std::string name(k.name);
    c.values[name] = k.default_text;
    c.sources[name] = "default";
    if (k.default_text != "detected") (void)ApplyKey(k, json::parse(k.default_text), c);
  }
}

// BK_<KEY> over the keys `applies` selects, in table order.
template <class Pred>
Status ApplyEnvironment(const EnvFn& env, Config& c, Pred applies) {
  for (const auto& k : Keys()) {
    std::string name(k.name);
    std::string var = EnvName(k);
    auto v = env(var);
    if (!v || !applies(k, c.sources[name])) continue;
    BK_TRY(ApplyKey(k, json(*v), c));
    c.values[name] = AsJsonText(*v);
    c.sources[name] = "environment";
    c.env_overrides.push_back(var);
  }
  return Ok();
}

// The last step of Load in every deployment: the environment variables that
// are not keys, as far as this deployment reads them, and the test clock.
Config Completed(const EnvFn& env, Config& c) {
  for (const auto& var : EnvironmentVariables()) {
    std::string name(var.name);
    // A private deployment ignores BK_CONFIG_FILE: BK_DATA_DIR wins.
    if (c.deployment == Deployment::kPrivate && name == "BK_CONFIG_FILE") continue;
    if (env(name)) c.env_overrides.push_back(name);
  }
  std::sort(c.env_overrides.begin(), c.env_overrides.end());
#ifdef BK_TEST_HOOKS
  c.test_now = env("BK_TEST_NOW");
#endif
  return std::move(c);
}

Status Finish(Config& c, const EnvFn& env) {
  c.gpu_sim_file = env("BK_GPU_SIM_FILE").value_or("");
  if (c.gpu_count_detected) {
    c.policy.gpu_count = gpu::DetectGpuCount(c.gpu_sim_file);
    c.values["gpu_count"] = std::to_string(c.policy.gpu_count);
    c.sources["gpu_count"] = "detected";
  }
  for (int g : c.policy.disabled_gpus)
    if (g >= c.policy.gpu_count)
      return Invalid(fmt::format("disabled_gpus names GPU {} but gpu_count is {}", g, c.policy.gpu_count));
  if (c.policy.EnabledGpus().empty())
    return Invalid("disabled_gpus disables every GPU; leave at least one enabled");
  for (const engine::Blackout& b : c.policy.blackouts)
    for (int g : b.gpus)
      if (g >= c.policy.gpu_count)
        return Invalid(
            fmt::format("booking_blackouts names GPU {} but gpu_count is {}", g, c.policy.gpu_count));
  return Ok();
}

const std::vector<std::string> kServerOnlyKeys = {
    "schema_version", "directory", "owner_uid", "owner", "socket",
    "data_dir",       "access",    "group",     "gid",   "test_now"};

}  // namespace

int EffectiveMaxParallel(const Config& c, std::optional<int> requested) {
  const engine::Policy& p = c.policy;
  int64_t enabled = p.gpu_count - static_cast<int64_t>(p.disabled_gpus.size());
  int64_t slots = std::max<int64_t>(1, enabled) * std::max(1, p.share_capacity);
  return static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(requested.value_or(c.worker.max_parallel), slots)));
}

std::string OriginalLedger(const Config& c, const EnvFn& env) {
  if (c.deployment != Deployment::kPrivate) return "";
  std::vector<std::string> candidates = {sys::JoinPath(c.data_dir, "ledger.json")};
  if (!env("BK_DATA_DIR")) {
    auto xdg = env("XDG_DATA_HOME");
    std::string base = (xdg && StartsWith(*xdg, "/")) ? *xdg : sys::HomeDir() + "/.local/share";
    candidates.push_back(base + "/bk/ledger.json");
  }
  for (const auto& p : candidates)
    if (sys::Exists(p)) return p;
  return "";
}

std::string OriginalJobLogs(const EnvFn& env) {
  auto xdg = env("XDG_STATE_HOME");
  std::string dir = ((xdg && StartsWith(*xdg, "/")) ? *xdg : sys::HomeDir() + "/.local/state") + "/bk/jobs";
  std::error_code ec;
  return std::filesystem::is_directory(dir, ec) && !std::filesystem::is_empty(dir, ec) && !ec ? dir : "";
}

Status ApplyConfigText(std::string_view text, const std::string& path, Config& c) {
  auto doc = ParseStrictJson(text);
  if (!doc && doc.error().problem == JsonProblem::kSyntax)
    return Invalid(fmt::format("config file {} is not valid JSON; fix or remove it", path));
  if (!doc) return Invalid(fmt::format("config file {} {}", path, doc.error().Phrase()));
  if (!doc->is_object()) return Invalid(fmt::format("config file {} must hold a JSON object", path));
  return ApplyDocument(*doc, path, c, {});
}

Result<std::string> ParseConnection(std::string_view text, const std::string& path) {
  auto parsed = ParseStrictJson(text);
  if (!parsed)
    return Invalid(
        fmt::format("{} {}; run `bk server disconnect` and connect again", path, parsed.error().Phrase()));
  const json& j = *parsed;
  if (!j.is_object() || !j.contains("config") || !j["config"].is_string())
    return Invalid(
        fmt::format("{} does not name a server config; run `bk server connect CONFIG` again", path));
  return j["config"].get<std::string>();
}

namespace {
// $XDG_CONFIG_HOME/gpubk, or ~/.config/gpubk when it is unset or relative.
std::string UserConfigDir(const EnvFn& env) {
  auto xdg = env("XDG_CONFIG_HOME");
  std::string base = (xdg && StartsWith(*xdg, "/")) ? *xdg : sys::HomeDir() + "/.config";
  return base + "/gpubk";
}
}  // namespace

std::string ConnectionFile(const EnvFn& env) { return UserConfigDir(env) + "/server.json"; }

std::string PresetsFile(const EnvFn& env) { return UserConfigDir(env) + "/presets.json"; }

Result<Config> LoadServer(const std::string& path, const EnvFn& env, bool trusted, sys::FileSystem& fs) {
  Config c;
  Defaults(c);
  c.server_config = path;
  c.config_file = path;
  if (!StartsWith(path, "/")) return Invalid(fmt::format("server config {} must be an absolute path", path));
  if (auto st = fs.Lstat(path); !st) {
    if (st.error() == EACCES)
      return Fail(
          ErrorKind::kPermission,
          fmt::format("permission denied reading server config {}; the server is limited to a group: ask its "
                      "owner to add you to it (then log in again)",
                      path));
    return Invalid(
        fmt::format("server config {} does not exist; check the path or run `bk server init`", path));
  }
  auto text = fs.ReadFile(path, 1 << 20);
  if (!text) return Invalid(fmt::format("cannot read server config {}: {}", path, text.error().message));
  auto parsed = ParseStrictJson(*text);
  if (!parsed && parsed.error().problem == JsonProblem::kSyntax)
    return Invalid(fmt::format("server config {} is not valid JSON", path));
  if (!parsed) return Invalid(fmt::format("server config {} {}", path, parsed.error().Phrase()));
  json doc = std::move(*parsed);
  // A string key, `absent` when missing, nothing when of another type
  // (json::value() would throw on a number there).
  auto str_or = [&](const char* key, const char* absent) -> std::optional<std::string> {
    if (!doc.contains(key)) return absent;
    if (!doc[key].is_string()) return std::nullopt;
    return doc[key].get<std::string>();
  };
  if (IsOriginalConfig(doc)) {
    BK_ASSIGN_OR_RETURN(OriginalConfig original, TranslateOriginalConfig(doc, path));
    doc = std::move(original.server);
    c.original_format = true;
    c.original_honoured = std::move(original.honoured);
    c.original_dropped = std::move(original.dropped);
  }
  if (!doc.is_object() || str_or("schema_version", "") != "gpubk.server.v1")
    return Invalid(fmt::format("{} is not a GPUBK server config (schema_version gpubk.server.v1)", path));
  auto str = [&](const char* key) -> Result<std::string> {
    if (!doc.contains(key) || !doc[key].is_string() || doc[key].get<std::string>().empty())
      return Invalid(fmt::format("{}: {} must be a non-empty string", path, key));
    return doc[key].get<std::string>();
  };
  // A UID is below 2^32 - 1 ((uid_t)-1 means "none"); anything larger would
  // wrap to some other user's UID.
  auto id = [&](const char* key) {
    return doc[key].is_number_unsigned() && doc[key].get<uint64_t>() < UINT32_MAX;
  };
  if (!doc.contains("owner_uid") || !id("owner_uid"))
    return Invalid(fmt::format("{}: owner_uid must be a UID", path));
  c.owner_uid = doc["owner_uid"].get<uint32_t>();
  c.owner = sys::UserName(c.owner_uid);
  if (trusted) BK_TRY(sys::CheckTrustedFile(path, c.owner_uid));
  BK_ASSIGN_OR_RETURN(c.socket_path, str("socket"));
  // Checked on every load, not only at connect: a few lstat calls.
  BK_TRY(sys::CheckSocketDirectory(c.socket_path, c.owner_uid));
  BK_ASSIGN_OR_RETURN(c.data_dir, str("data_dir"));
  auto access = str_or("access", "world");
  if (!access || (*access != "world" && *access != "group"))
    return Invalid(fmt::format("{}: access must be world or group", path));
  c.access = *access;
  auto group = str_or("group", "");
  if (!group) return Invalid(fmt::format("{}: group must be a group name", path));
  c.group = *group;
  if (doc.contains("gid") && !id("gid")) return Invalid(fmt::format("{}: gid must be a GID", path));
  if (doc.contains("gid")) c.gid = doc["gid"].get<uint32_t>();
#ifdef BK_TEST_HOOKS
  if (doc.contains("test_now") && doc["test_now"].is_string())
    c.server_test_now = doc["test_now"].get<std::string>();
#endif
  c.ledger_path = sys::JoinPath(c.data_dir, "ledger.db");
  c.deployment = path == "/etc/gpubk/config.json" ? Deployment::kSystem : Deployment::kServer;
  c.pause_sampling_during_exclusive = true;
  c.values["pause_sampling_during_exclusive"] = "true";
  c.gpu_count_detected = true;
  BK_TRY(ApplyDocument(doc, path, c, kServerOnlyKeys));
  c.config_file_present = true;
  BK_TRY(Finish(c, env));
  return c;
}

std::string ServerSocketPath(const std::string& directory) { return directory + "/run/broker.sock"; }

std::string RenderServerConfig(const ServerSpec& s) {
  json j = {{"schema_version", "gpubk.server.v1"},
            {"config_version", 1},
            {"directory", s.directory},
            {"owner_uid", s.owner_uid},
            {"owner", s.owner},
            {"socket", s.socket.empty() ? ServerSocketPath(s.directory) : s.socket},
            {"data_dir", s.data_dir.empty() ? s.directory + "/data" : s.data_dir},
            {"access", s.access},
            {"gpu_count", s.gpu_count},
            {"slot_minutes", s.slot_minutes},
            {"max_shared_users", s.max_shared},
            {"pause_sampling_during_exclusive", true}};
  if (s.host_cpus) j["host_cpus"] = *s.host_cpus;
  if (s.host_ram_mb) j["host_ram_mb"] = *s.host_ram_mb;
  if (s.access == "group") {
    j["group"] = s.group;
    if (s.gid) j["gid"] = *s.gid;
  }
  return j.dump(2) + "\n";
}

const char* DeploymentName(Deployment d) {
  switch (d) {
    case Deployment::kPrivate: return "private";
    case Deployment::kServer: return "server";
    case Deployment::kSystem: return "system";
  }
  return "private";
}

EnvFn ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

Result<Config> Load(const EnvFn& env, sys::FileSystem& fs) {
  uid_t uid = sys::CurrentUid();
  // Shared deployments: BK_CONFIG_FILE > the server this user connected to > /etc/gpubk.
  if (!env("BK_DATA_DIR")) {
    std::string why;
    std::string server;
    if (auto f = env("BK_CONFIG_FILE"); f && !f->empty()) {
      server = *f;
      why = "BK_CONFIG_FILE is set";
    } else if (std::string conn = ConnectionFile(env); fs.Lstat(conn)) {
      auto text = fs.ReadFile(conn, 64 * 1024);
      BK_ASSIGN_OR_RETURN(server, ParseConnection(text.value_or(""), conn));
      why = fmt::format("connected with `bk server connect` ({})", conn);
    } else if (fs.Lstat("/etc/gpubk/config.json")) {
      server = "/etc/gpubk/config.json";
      why = "system deployment /etc/gpubk/config.json";
    }
    if (!server.empty()) {
      BK_ASSIGN_OR_RETURN(Config c, LoadServer(server, env, false, fs));
      c.why = why;
      // Each user runs their own worker: their BK_<KEY> fills what the server's file leaves unset.
      BK_TRY(ApplyEnvironment(env, c, [](const KeySpec& k, const std::string& source) {
        return k.scope == KeyScope::kUser && source == "default";
      }));
      return Completed(env, c);
    }
  }

  Config c;
  if (auto dir = env("BK_DATA_DIR")) {
    if (dir->empty() || dir->size() > 4096 || dir->find('\0') != std::string::npos)
      return Invalid("BK_DATA_DIR must be a non-empty path of at most 4096 characters");
    c.data_dir = *dir;
    if (StartsWith(c.data_dir, "~/")) c.data_dir = sys::HomeDir() + c.data_dir.substr(1);
    c.why = "BK_DATA_DIR is set";
  } else {
    auto xdg = env("XDG_DATA_HOME");
    std::string base = (xdg && StartsWith(*xdg, "/")) ? *xdg : sys::HomeDir() + "/.local/share";
    c.data_dir = base + "/gpubk";
    c.why = "no server configured; using your private ledger";
  }
  c.deployment = Deployment::kPrivate;
  c.ledger_path = sys::JoinPath(c.data_dir, "ledger.db");
  c.config_file = sys::JoinPath(c.data_dir, "config.json");
  c.gpu_count_detected = true;
  c.owner_uid = uid;
  c.owner = sys::UserName(uid);
  Defaults(c);

  if (fs.Lstat(c.config_file)) {
    c.config_file_present = true;
    BK_TRY(sys::CheckDataFile(c.config_file, uid));
    BK_ASSIGN_OR_RETURN(std::string text, fs.ReadFile(c.config_file, 1 << 20));
    BK_TRY(ApplyConfigText(text, c.config_file, c));
  }
  BK_TRY(ApplyEnvironment(env, c, [](const KeySpec&, const std::string&) { return true; }));
  BK_TRY(Finish(c, env));
  return Completed(env, c);
}

std::string BoundPolicyJson(const engine::Policy& p) {
  json j = {{"version", 1},
            {"gpu_count", p.gpu_count},
            {"granularity_seconds", p.slot},
            {"max_shared_reservations_per_gpu", p.share_capacity},
            {"require_shared_memory", p.require_shared_memory},
            {"shared_memory_reserve_mb", p.shared_memory_reserve_mb},
            {"host_cpus", p.host_cpus ? json(*p.host_cpus) : json()},
            {"host_ram_mb", p.host_ram_mb ? json(*p.host_ram_mb) : json()}};
  return j.dump();
}

std::string ComparePolicy(const std::string& ledger_json, const std::string& local_json) {
  json a, b;
  try {
    a = json::parse(ledger_json);
    b = json::parse(local_json);
  } catch (const json::exception&) {
    return "policy: ledger=unreadable local=" + local_json;
  }
  std::vector<std::string> diffs;
  for (const auto& [key, value] : b.items()) {
    json other = a.contains(key) ? a[key] : json();
    if (other != value)
      diffs.push_back(fmt::format("{}: ledger={} local={}", key, other.dump(), value.dump()));
  }
  return Join(diffs, "; ");
}

}  // namespace bk::config
