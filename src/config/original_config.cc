#include "config/original_config.h"

#include <fmt/format.h>

#include <array>
#include <optional>
#include <string_view>

#include "config/keys.h"

namespace bk::config {
namespace {

using nlohmann::json;

// The original's keys that only its broker and file storage read, with what
// replaces each here.
struct Replacement {
  std::string_view key;
  std::string_view how;
};
constexpr std::array kReplaced = {
    Replacement{"file_mode", "remove it: the daemon writes its files 0600 and clients never touch them"},
    Replacement{"dir_mode", "remove it: the daemon keeps its data directory 0700"},
    Replacement{"storage_gid", "remove it: clients reach the ledger through the daemon, not shared files"},
    Replacement{"monitor_uid", "remove it: the daemon runs the monitor as the service account"},
    Replacement{"backup_keep",
                "remove it: make backups with `bk admin data backup` and keep them with your backup tool"},
    Replacement{"allocator_command",
                "remove it: placement is earliest start, then gpu_priority, then load; steer it with "
                "gpu_priority or disabled_gpus"},
    Replacement{"allocator_timeout_seconds", "remove it with allocator_command"},
    Replacement{"allocator_weight", "remove it with allocator_command"},
    Replacement{"usage_load_window_minutes", "remove it: placement reads the monitor's latest samples"},
    Replacement{"usage_minute_retention_days", "remove it: the monitor keeps its own fixed retention"},
    Replacement{"usage_five_minute_retention_days", "remove it: the monitor keeps its own fixed retention"},
    Replacement{"usage_ten_minute_retention_days", "remove it: the monitor keeps its own fixed retention"},
    Replacement{"usage_hourly_retention_days", "remove it: the monitor keeps its own fixed retention"},
    Replacement{"usage_daily_retention_days", "remove it: the monitor keeps its own fixed retention"},
    Replacement{"usage_event_retention_days", "remove it: the monitor keeps its own fixed retention"},
    Replacement{"monitor_rollup_seconds", "remove it: the monitor rolls samples up on its own schedule"},
    Replacement{"tui_refresh_seconds", "remove it: there is no terminal UI in this version"},
    Replacement{"job_log_dir",
                "remove it: job logs live in each user's state directory (set BK_JOB_LOG_DIR per user)"},
    Replacement{"job_log_total_max_mb", "remove it: job_log_max_mb bounds each job's log"},
    Replacement{"container_attribution_groups",
                "remove it: processes in containers are attributed by their host PID and UID"},
    Replacement{"broker_socket_mode", "remove it: access (world or group) decides the socket's mode"},
};

// The original's broker keys, which become the server's own fields.
constexpr std::array<std::string_view, 5> kBrokerKeys = {"broker_socket", "broker_uid", "broker_gid",
                                                         "broker_socket_mode", "data_dir"};

bool IsBrokerKey(std::string_view key) {
  for (auto k : kBrokerKeys)
    if (k == key) return true;
  return false;
}

bool IsId(const json& v) { return v.is_number_unsigned() && v.get<uint64_t>() < UINT32_MAX; }

// "0666", "0o666", "666" or the integer 438.
std::optional<int> Mode(const json& v) {
  if (v.is_number_unsigned()) return static_cast<int>(v.get<uint64_t>() & 07777);
  if (!v.is_string()) return std::nullopt;
  std::string s = v.get<std::string>();
  if (s.starts_with("0o")) s = s.substr(2);
  if (s.empty() || s.size() > 5 || s.find_first_not_of("01234567") != std::string::npos) return std::nullopt;
  return std::stoi(s, nullptr, 8);
}

// The broker's socket, owner and access as the server config says them.
Status TranslateBroker(const json& doc, const std::string& path, json& server) {
  auto need = [&](std::string_view what) {
    return Invalid(fmt::format(
        "{} is GPUBK 0.2.8's configuration without {}: this bk serves a shared host only through its daemon, "
        "so add broker_socket, broker_uid and data_dir (the daemon's socket, service account UID and data "
        "directory), or set up a server with `bk server init`",
        path, what));
  };
  if (!doc.contains("broker_socket") || !doc["broker_socket"].is_string()) return need("broker_socket");
  if (!doc.contains("broker_uid") || !IsId(doc["broker_uid"])) return need("broker_uid");
  if (!doc.contains("data_dir") || !doc["data_dir"].is_string()) return need("data_dir");
  server["socket"] = doc["broker_socket"];
  server["owner_uid"] = doc["broker_uid"];
  server["data_dir"] = doc["data_dir"];
  if (doc.contains("broker_gid")) {
    if (!IsId(doc["broker_gid"])) return Invalid(fmt::format("{}: broker_gid must be a GID", path));
    server["access"] = "group";
    server["gid"] = doc["broker_gid"];
  } else {
    server["access"] = "world";
  }
  if (doc.contains("broker_socket_mode")) {
    auto mode = Mode(doc["broker_socket_mode"]);
    int want = doc.contains("broker_gid") ? 0660 : 0666;
    if (!mode || *mode != want)
      return Invalid(
          fmt::format("{}: broker_socket_mode must be {:04o} {} broker_gid, as GPUBK 0.2.8 requires", path,
                      want, doc.contains("broker_gid") ? "with" : "without"));
  }
  return Ok();
}

}  // namespace

bool IsOriginalConfig(const json& doc) {
  if (!doc.is_object() || doc.contains("schema_version")) return false;
  return doc.contains("config_version") || doc.contains("broker_socket") || doc.contains("broker_uid");
}

Result<OriginalConfig> TranslateOriginalConfig(const json& doc, const std::string& path) {
  OriginalConfig out;
  out.server = {{"schema_version", "gpubk.server.v1"}};
  BK_TRY(TranslateBroker(doc, path, out.server));
  for (const auto& [key, value] : doc.items()) {
    if (key == "config_version") {
      if (!value.is_number_integer() || value.get<int64_t>() != 1)
        return Invalid(fmt::format("{}: config_version must be 1", path));
      continue;
    }
    if (IsBrokerKey(key) && key != "broker_socket_mode") {
      out.honoured.push_back(key);
      continue;
    }
    if (FindKey(key)) {
      out.server[key] = value;
      out.honoured.push_back(key);
      continue;
    }
    std::string how = "remove it: this bk has no such setting";
    for (const auto& r : kReplaced)
      if (r.key == key) how = r.how;
    out.dropped.push_back({key, how});
  }
  return out;
}

}  // namespace bk::config
