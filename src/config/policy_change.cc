#include "config/policy_change.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/strings.h"
#include "config/keys.h"
#include "sys/sha256.h"

namespace bk::config {
namespace {

// The real file system, except that one path reads as `text` (the file as
// read once, or a proposal in its place), loaded as the file itself would be,
// checks of its directory included.
class ProposalFileSystem final : public sys::FileSystem {
 public:
  ProposalFileSystem(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {}
  sys::ErrnoResult<sys::FileInfo> Lstat(const std::string& p) override { return real_.Lstat(p); }
  sys::ErrnoResult<sys::FileInfo> Stat(const std::string& p) override { return real_.Stat(p); }
  sys::ErrnoResult<void> MakeDir(const std::string& p, mode_t m) override { return real_.MakeDir(p, m); }
  sys::ErrnoResult<void> WriteNewFile(const std::string& p, std::string_view c, mode_t m) override {
    return real_.WriteNewFile(p, c, m);
  }
  sys::ErrnoResult<void> Rename(const std::string& a, const std::string& b) override {
    return real_.Rename(a, b);
  }
  sys::ErrnoResult<void> SetMode(const std::string& p, mode_t m) override { return real_.SetMode(p, m); }
  sys::ErrnoResult<void> SetGroup(const std::string& p, gid_t g) override { return real_.SetGroup(p, g); }
  sys::ErrnoResult<void> Access(const std::string& p, int how) override { return real_.Access(p, how); }
  sys::ErrnoResult<std::vector<std::string>> ReadDir(const std::string& p) override {
    return real_.ReadDir(p);
  }
  Result<std::string> ReadFile(const std::string& p, size_t max_bytes) override {
    if (p != path_) return real_.ReadFile(p, max_bytes);
    if (text_.size() > max_bytes) return Invalid(fmt::format("{}: the proposed config is too large", p));
    return text_;
  }
  sys::ErrnoResult<void> Sync(const std::string& p) override { return real_.Sync(p); }
  sys::ErrnoResult<void> RemoveTree(const std::string& p) override { return real_.RemoveTree(p); }

 private:
  sys::FileSystem& real_ = sys::RealFileSystem();
  std::string path_;
  std::string text_;
};

std::string ValueOf(const Config& c, const std::string& key) {
  auto it = c.values.find(key);
  return it == c.values.end() ? "null" : it->second;
}

// The running policy with the live keys taken from `next`; gpu_count and the
// slot stay (bookings already on the grid depend on them).
engine::Policy LivePolicy(const engine::Policy& running, const engine::Policy& next) {
  engine::Policy p = next;
  p.gpu_count = running.gpu_count;
  p.slot = running.slot;
  return p;
}

}  // namespace

const std::vector<std::string>& LivePolicyKeys() {
  static const std::vector<std::string> keys = {"booking_blackouts",
                                                "booking_horizon_days",
                                                "default_booking_cpus",
                                                "default_booking_ram_mb",
                                                "disabled_gpus",
                                                "gpu_priority",
                                                "group_limits",
                                                "host_cpus",
                                                "host_ram_mb",
                                                "max_booking_duration_hours",
                                                "max_shared_users",
                                                "queue_search_hours",
                                                "require_shared_memory",
                                                "shared_memory_reserve_mb",
                                                "user_limits",
                                                "user_max_booking_hours",
                                                "user_max_gpu_hours_24h",
                                                "user_max_gpu_hours_7d",
                                                "user_max_gpus",
                                                "user_max_horizon_days",
                                                "user_max_queued"};
  return keys;
}

Result<PolicyProposal> ProposePolicy(const Config& current, const std::optional<std::string>& text,
                                     const std::string& expect_sha256, const EnvFn& env) {
  if (current.deployment == Deployment::kPrivate || current.server_config.empty())
    return Invalid(
        "this is a private ledger: its policy is its config.json (`bk config --keys` lists the keys); "
        "`bk admin policy` changes a shared server's");
  const std::string& path = current.server_config;
  BK_ASSIGN_OR_RETURN(std::string on_disk, sys::RealFileSystem().ReadFile(path, 1 << 20));
  PolicyProposal out;
  out.sha256 = sys::Sha256Hex(text ? *text : on_disk);
  if (!expect_sha256.empty() && sys::Sha256Hex(on_disk) != expect_sha256)
    return Fail(ErrorKind::kConflict,
                fmt::format("{} changed while this change was prepared; run the command again", path));
  // The content whose checksum was checked is the content parsed: the file
  // is read once, and a proposal takes its place.
  ProposalFileSystem fs(path, text ? *text : on_disk);
  Result<Config> next = LoadServer(path, env, true, fs);
  if (!next) return std::unexpected(next.error());
  out.config = current;
  out.config.policy = LivePolicy(current.policy, next->policy);
  const std::vector<std::string>& live = LivePolicyKeys();
  for (const KeySpec& k : Keys()) {
    std::string key(k.name), before = ValueOf(current, key), after = ValueOf(*next, key);
    // Lab presets are read from the file by each client, never by the
    // daemon: a change takes effect at once, with nothing to reload or restart.
    if (before == after || key == "presets") continue;
    if (std::find(live.begin(), live.end(), key) == live.end()) {
      out.restart.push_back(key);
      continue;
    }
    out.changes.push_back({key, before, after});
    out.config.values[key] = after;
    out.config.sources[key] = next->sources[key];
  }
  if (next->socket_path != current.socket_path) out.restart.push_back("socket");
  if (next->data_dir != current.data_dir) out.restart.push_back("data_dir");
  if (next->owner_uid != current.owner_uid) out.restart.push_back("owner_uid");
  if (next->access != current.access || next->group != current.group) out.restart.push_back("access");
  return out;
}

}  // namespace bk::config
