#include "service/fingerprint.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/json_opt.h"
#include "engine/parse.h"
#include "sys/sha256.h"

namespace bk::service {
namespace {

using nlohmann::json;

json SortedOrNull(std::vector<int> v) {
  if (v.empty()) return json();
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

json Sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string Hash(const json& j) { return sys::Sha256Hex(j.dump(-1, ' ', true)); }

}  // namespace

std::string CreateSignature(const CreateRequest& r, engine::Mode mode, int share_units) {
  json j = {{"kind", "create"},
            {"count", r.count},
            {"duration_seconds", r.duration},
            {"start_at", r.start ? json(engine::FormatIsoUtc(*r.start)) : json()},
            {"mode", engine::ModeName(mode)},
            {"preferred_gpus", SortedOrNull(r.gpus)},
            {"allow_queue", !r.start.has_value()},
            {"expected_memory_mb", OptJson(r.memory_mb)},
            {"share_units", mode == engine::Mode::kShared ? json(share_units) : json()},
            {"excluded_gpus", Sorted(r.exclude)},
            {"job_summary", json()}};
  // Host budgets are the fork's: present only when declared, so requests
  // without them hash exactly as the original's (imported op-ids replay).
  if (r.cpus) j["cpus"] = *r.cpus;
  if (r.ram_mb) j["ram_mb"] = *r.ram_mb;
  return Hash(j);
}

std::string EditSignature(const EditRequest& r, const std::string& reservation_id) {
  // `end` is ours: present only when given, so other edits hash as the original's.
  json j = {{"kind", "edit"},
            {"reservation_id", reservation_id},
            {"start_at", r.start ? json(engine::FormatIsoUtc(*r.start)) : json()},
            {"duration_seconds", OptJson(r.duration)},
            {"mode", r.mode ? json(engine::ModeName(*r.mode)) : json()},
            {"preferred_gpus", SortedOrNull(r.gpus)},
            {"count", OptJson(r.count)},
            {"allow_queue", r.allow_queue},
            {"expected_memory_mb", OptJson(r.memory_mb)},
            {"update_expected_memory", r.update_memory},
            {"share_units", OptJson(r.share_units)},
            {"update_share_units", r.share_units.has_value()},
            {"excluded_gpus", Sorted(r.exclude)}};
  if (r.cpus) j["cpus"] = *r.cpus;
  if (r.ram_mb) j["ram_mb"] = *r.ram_mb;
  if (r.end) j["end_at"] = engine::FormatIsoUtc(*r.end);
  return Hash(j);
}

std::string RenewSignature(const RenewRequest& r, const std::string& reservation_id) {
  return Hash(json{{"kind", "renew"}, {"reservation_id", reservation_id}, {"extend_seconds", r.extend_by}});
}

std::string CancelSignature(const std::string& reservation_id) {
  return Hash(json{{"kind", "cancel"}, {"reservation_id", reservation_id}});
}

std::string TransferSignature(const std::string& reservation_id, uint32_t to_uid) {
  return Hash(json{{"kind", "transfer"}, {"reservation_id", reservation_id}, {"to_uid", to_uid}});
}

}  // namespace bk::service
