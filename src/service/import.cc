// `bk admin data import LEDGER.json`: loads a ledger.json of the Python
// original into an empty ledger. Every record is
// validated before anything is opened for writing; the import is then one
// write transaction, so a refused file leaves the target exactly as it was.
// ImportInto reads only its arguments: the daemon runs it on a worker thread.

#include "service/import.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "base/json_strict.h"
#include "base/strings.h"
#include "engine/civil_time.h"
#include "engine/invariants.h"
#include "engine/parse.h"
#include "service/impl.h"
#include "sys/fs.h"
#include "sys/random.h"

namespace bk::service {
namespace {

using json = nlohmann::json;
using engine::Mode;
using engine::Reservation;
using engine::Seconds;

constexpr int64_t kMaxUid = 4294967294;  // 2^32 - 2
constexpr size_t kMaxGpuIndexes = engine::kMaxGpus;
constexpr int kMaxGpuIndex = 1023;
constexpr size_t kMaxEdits = 256;
constexpr size_t kMaxNotifications = 128;
constexpr size_t kMaxTimestampChars = 64;

// Errors raised while validating carry only the path message ("reservations[3].gpus[1]
// must be an integer"); ImportUpstream wraps it into the refusal.
std::unexpected<Error> Bad(std::string message) { return Invalid(std::move(message)); }

std::string Key(const std::string& base, std::string_view key) { return fmt::format("{}.{}", base, key); }
std::string Index(const std::string& base, size_t i) { return fmt::format("{}[{}]", base, i); }

// A member that is present and not null (null reads as absent).
const json* Field(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

// An optional list member (nullptr when absent) of at most `max` entries.
Result<const json*> OptList(const json& obj, const std::string& base, const char* key, size_t max) {
  const json* list = Field(obj, key);
  if (list && (!list->is_array() || list->size() > max))
    return Bad(fmt::format("{} must be a list of at most {} entries", Key(base, key), max));
  return list;
}

Result<const json*> Need(const json& obj, const std::string& base, const char* key) {
  if (const json* v = Field(obj, key)) return v;
  return Bad(fmt::format("{} is required", Key(base, key)));
}

// JSON integers only: booleans and floats (1.0) are not integers, as upstream.
bool IsInt(const json& v) { return v.is_number_integer(); }
int64_t IntOf(const json& v) {
  if (v.is_number_unsigned() &&
      v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    return std::numeric_limits<int64_t>::max();
  return v.get<int64_t>();
}

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

// "Bounded text": a non-empty string of at most `max` characters, none below U+0020.
Result<std::string> BoundedText(const json& v, const std::string& path, size_t max) {
  if (!v.is_string()) return Bad(fmt::format("{} must be a string", path));
  const std::string& s = v.get_ref<const std::string&>();
  bool control = std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
  if (s.empty() || CodePoints(s) > max || control)
    return Bad(fmt::format("{} must be 1-{} characters without control characters", path, max));
  return s;
}

Result<std::string> NeedText(const json& obj, const std::string& base, const char* key, size_t max) {
  BK_ASSIGN_OR_RETURN(const json* v, Need(obj, base, key));
  return BoundedText(*v, Key(base, key), max);
}

Result<std::optional<std::string>> OptText(const json& obj, const std::string& base, const char* key,
                                           size_t max) {
  const json* v = Field(obj, key);
  if (!v) return std::optional<std::string>();
  BK_ASSIGN_OR_RETURN(std::string s, BoundedText(*v, Key(base, key), max));
  return std::optional(std::move(s));
}

// An integer or a decimal string (upstream accepts both), 0 .. 2^32-2.
Result<uint32_t> UidOf(const json& v, const std::string& path) {
  std::optional<int64_t> n;
  if (IsInt(v))
    n = IntOf(v);
  else if (v.is_string() && v.get_ref<const std::string&>().size() <= 10)
    n = ParseUint(v.get_ref<const std::string&>());
  if (!n || *n < 0 || *n > kMaxUid)
    return Bad(fmt::format("{} must be a UID between 0 and {}", path, kMaxUid));
  return static_cast<uint32_t>(*n);
}

Result<uint32_t> NeedUid(const json& obj, const std::string& base, const char* key) {
  BK_ASSIGN_OR_RETURN(const json* v, Need(obj, base, key));
  return UidOf(*v, Key(base, key));
}

Result<Seconds> TimeOf(const json& v, const std::string& path) {
  static const engine::FixedZone kUtc(0);
  std::string_view text;
  if (v.is_string()) text = v.get_ref<const std::string&>();
  if (!text.empty() && text.size() <= kMaxTimestampChars)
    if (auto t = engine::ParseIsoTime(text, kUtc)) return *t;
  return Bad(fmt::format("{} must be a timestamp such as 2026-11-29T18:45:00Z", path));
}

Result<Seconds> NeedTime(const json& obj, const std::string& base, const char* key) {
  BK_ASSIGN_OR_RETURN(const json* v, Need(obj, base, key));
  return TimeOf(*v, Key(base, key));
}

Result<std::optional<Seconds>> OptTime(const json& obj, const std::string& base, const char* key) {
  const json* v = Field(obj, key);
  if (!v) return std::optional<Seconds>();
  BK_ASSIGN_OR_RETURN(Seconds t, TimeOf(*v, Key(base, key)));
  return std::optional(t);
}

Result<std::optional<int64_t>> OptPositive(const json& obj, const std::string& base, const char* key,
                                           int64_t max) {
  const json* v = Field(obj, key);
  if (!v) return std::optional<int64_t>();
  if (!IsInt(*v) || IntOf(*v) < 1 || IntOf(*v) > max)
    return Bad(fmt::format("{} must be a positive integer", Key(base, key)));
  return std::optional(IntOf(*v));
}

Result<Mode> ModeOf(const json& obj, const std::string& base) {
  BK_ASSIGN_OR_RETURN(const json* v, Need(obj, base, "mode"));
  if (v->is_string() && *v == "shared") return Mode::kShared;
  if (v->is_string() && *v == "exclusive") return Mode::kExclusive;
  return Bad(fmt::format("{} must be \"shared\" or \"exclusive\"", Key(base, "mode")));
}

// A non-empty list of distinct GPU indexes 0..1023, order kept.
Result<std::vector<int>> GpusOf(const json& obj, const std::string& base) {
  std::string path = Key(base, "gpus");
  BK_ASSIGN_OR_RETURN(const json* v, Need(obj, base, "gpus"));
  if (!v->is_array() || v->empty())
    return Bad(fmt::format("{} must be a non-empty list of GPU indexes", path));
  if (v->size() > kMaxGpuIndexes) return Bad(fmt::format("{} lists more than {} GPUs", path, kMaxGpuIndexes));
  std::vector<int> gpus;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& g = (*v)[i];
    if (!IsInt(g)) return Bad(fmt::format("{} must be an integer", Index(path, i)));
    int64_t n = IntOf(g);
    if (n < 0 || n > kMaxGpuIndex)
      return Bad(fmt::format("{} must be between 0 and {}", Index(path, i), kMaxGpuIndex));
    if (std::find(gpus.begin(), gpus.end(), n) != gpus.end())
      return Bad(fmt::format("{} repeats GPU {}", Index(path, i), n));
    gpus.push_back(static_cast<int>(n));
  }
  return gpus;
}

// The schedulable state kept in edit history: {gpus, mode, start_at, end_at,
// expected_memory_mb, share_units}.
struct State {
  std::vector<int> gpus;
  Mode mode = Mode::kShared;
  Seconds start = 0;
  Seconds end = 0;
  std::optional<int64_t> memory_mb;
  std::optional<int64_t> share_units;
};

Result<State> StateOf(const json& obj, const std::string& base, const char* key) {
  BK_ASSIGN_OR_RETURN(const json* v, Need(obj, base, key));
  std::string path = Key(base, key);
  if (!v->is_object()) return Bad(fmt::format("{} must be an object", path));
  State s;
  BK_ASSIGN_OR_RETURN(s.gpus, GpusOf(*v, path));
  BK_ASSIGN_OR_RETURN(s.mode, ModeOf(*v, path));
  BK_ASSIGN_OR_RETURN(s.start, NeedTime(*v, path, "start_at"));
  BK_ASSIGN_OR_RETURN(s.end, NeedTime(*v, path, "end_at"));
  if (s.start >= s.end)
    return Bad(fmt::format("{} must be after {}", Key(path, "end_at"), Key(path, "start_at")));
  BK_ASSIGN_OR_RETURN(s.memory_mb, OptPositive(*v, path, "expected_memory_mb", engine::kMaxSizeMb));
  BK_ASSIGN_OR_RETURN(s.share_units, OptPositive(*v, path, "share_units", std::numeric_limits<int>::max()));
  return s;
}

// What every recorded edit and cancellation carries: its operation and who did it when.
struct OperationIn {
  std::string op_id;
  std::string signature;
  Seconds at = 0;
  uint32_t actor_uid = 0;
  std::string actor_username;
};

struct EditIn : OperationIn {
  State before;
  State after;
};

struct CancelIn : OperationIn {
  bool administrator = false;
  std::string reason;
};

// An edit's or a cancellation's operation fields; `at` defaults to `default_at`.
Result<OperationIn> OperationOf(const json& obj, const std::string& base, Seconds default_at) {
  OperationIn op;
  BK_ASSIGN_OR_RETURN(op.op_id, NeedText(obj, base, "op_id", 128));
  BK_ASSIGN_OR_RETURN(op.signature, NeedText(obj, base, "signature", 128));
  BK_ASSIGN_OR_RETURN(auto when, OptTime(obj, base, "at"));
  op.at = when.value_or(default_at);
  BK_ASSIGN_OR_RETURN(op.actor_uid, NeedUid(obj, base, "actor_uid"));
  BK_ASSIGN_OR_RETURN(auto name, OptText(obj, base, "actor_username", 256));
  op.actor_username = name.value_or(std::to_string(op.actor_uid));
  return op;
}

// One validated record and everything it brings along.
struct Planned {
  Reservation r;
  std::vector<EditIn> edits;
  std::optional<CancelIn> cancel;
  std::vector<store::Notification> notifications;
};

// The largest GPU index anywhere in the records, to suggest a gpu_count.
int HighestGpu(const json& reservations) {
  int high = -1;
  for (const json& rec : reservations) {
    if (!rec.is_object()) continue;
    const json* gpus = Field(rec, "gpus");
    if (!gpus || !gpus->is_array()) continue;
    for (const json& g : *gpus)
      if (IsInt(g) && IntOf(g) >= 0 && IntOf(g) <= kMaxGpuIndex)
        high = std::max(high, static_cast<int>(IntOf(g)));
  }
  return high;
}

class Importer {
 public:
  // `server_config`: the daemon's config file, where a server's settings are
  // changed (empty for a private ledger, configured by the environment).
  // `step` reports progress and says whether to go on.
  using StepFn = std::function<Status(ImportPhase, size_t done, size_t total)>;
  Importer(const engine::Policy& policy, std::string server_config)
      : policy_(policy), server_config_(std::move(server_config)) {}

  // Validates the whole document into a plan; nothing is touched on disk.
  Result<std::vector<Planned>> Plan(const json& doc, const StepFn& step) {
    if (!doc.is_object()) return Bad("the ledger must be a JSON object");
    const json* version = Field(doc, "version");
    if (!version || !IsInt(*version) || IntOf(*version) != 1)
      return Bad(fmt::format("unsupported ledger version {} (this bk imports version 1)",
                             !version ? "(missing)"
                             : version->is_primitive() && version->dump().size() <= 32
                                 ? version->dump()
                                 : version->type_name()));
    BK_TRY(CheckPolicy(doc));
    if (const json* tx = Field(doc, "last_transaction_id"))
      BK_TRY(BoundedText(*tx, "last_transaction_id", 128));
    const json* reservations = Field(doc, "reservations");
    if (!reservations || !reservations->is_array()) return Bad("reservations must be a list");
    needed_gpus_ = HighestGpu(*reservations) + 1;
    std::vector<Planned> plan;
    plan.reserve(reservations->size());
    for (size_t i = 0; i < reservations->size(); ++i) {
      BK_TRY(step(ImportPhase::kValidating, i, reservations->size()));
      BK_ASSIGN_OR_RETURN(Planned p, Record((*reservations)[i], Index("reservations", i)));
      plan.push_back(std::move(p));
    }
    return plan;
  }

 private:
  // The original's bound policy is informational, but the calendar only means
  // the same thing with the same GPUs, slot grid and share slots.
  Status CheckPolicy(const json& doc) {
    const json* pol = Field(doc, "policy");
    if (!pol) return Ok();
    if (!pol->is_object()) return Bad("policy must be an object");
    std::vector<std::string> diffs, settings;
    // `setting` is how to configure bk like the original ("" when there is no such setting).
    auto compare = [&](const char* key, int64_t local, auto setting) -> Status {
      const json* v = Field(*pol, key);
      if (!v) return Ok();
      if (!IsInt(*v)) return Bad(fmt::format("policy.{} must be an integer", key));
      int64_t theirs = IntOf(*v);
      if (theirs == local) return Ok();
      diffs.push_back(fmt::format("policy.{} is {} in ledger.json but {} here", key, theirs, local));
      if (std::string s = setting(theirs); !s.empty()) settings.push_back(std::move(s));
      return Ok();
    };
    BK_TRY(compare("gpu_count", policy_.gpu_count, [&](int64_t v) { return Setting("gpu_count", v); }));
    BK_TRY(compare("granularity_seconds", policy_.slot, [&](int64_t v) {
      return v > 0 && v % 60 == 0 ? Setting("slot_minutes", v / 60) : std::string();
    }));
    BK_TRY(compare("max_shared_reservations_per_gpu", policy_.share_capacity,
                   [&](int64_t v) { return Setting("max_shared_users", v); }));
    if (diffs.empty()) return Ok();
    return Bad(fmt::format("{}; the imported calendar would be inconsistent; {} or edit the file",
                           Join(diffs, "; "),
                           settings.empty() ? "configure bk like the original" : Fix(settings)));
  }

  // How this deployment is configured like the original: the environment of
  // a private ledger, the config file of a server.
  std::string Setting(const std::string& key, int64_t value) const {
    if (!server_config_.empty()) return fmt::format("\"{}\": {}", key, value);
    std::string env = "BK_" + key;
    std::ranges::transform(env, env.begin(), [](unsigned char c) { return std::toupper(c); });
    return fmt::format("{}={}", env, value);
  }
  std::string Fix(const std::vector<std::string>& settings) const {
    if (server_config_.empty()) return fmt::format("import with {}", Join(settings, " "));
    return fmt::format("set {} in {}, restart the daemon", Join(settings, ", "), server_config_);
  }

  // Claims (uid, op_id) for `path`; upstream keeps it unique across creates, edits and cancels.
  Status ClaimOpId(uint32_t uid, const std::string& op_id, const std::string& path) {
    auto [it, fresh] = op_ids_.emplace(std::pair(uid, op_id), path);
    if (fresh) return Ok();
    return Bad(
        fmt::format("{} reuses operation ID {} of UID {} already used by {}; (uid, op_id) must be unique",
                    path, op_id, uid, it->second));
  }

  Result<Planned> Record(const json& rec, const std::string& path) {
    if (!rec.is_object()) return Bad(fmt::format("{} must be an object", path));
    Planned plan;
    Reservation& r = plan.r;
    BK_ASSIGN_OR_RETURN(r.id, NeedText(rec, path, "id", 128));
    if (auto [it, fresh] = ids_.emplace(r.id, path); !fresh)
      return Bad(fmt::format("{} repeats reservation ID {} of {}", Key(path, "id"), r.id, it->second));
    BK_ASSIGN_OR_RETURN(r.uid, NeedUid(rec, path, "uid"));
    BK_ASSIGN_OR_RETURN(auto username, OptText(rec, path, "username", 256));
    r.username = username.value_or(std::to_string(r.uid));
    BK_ASSIGN_OR_RETURN(r.mode, ModeOf(rec, path));
    BK_ASSIGN_OR_RETURN(const json* status, Need(rec, path, "status"));
    auto parsed_status = status->is_string() ? engine::ParseStatus(status->get_ref<const std::string&>())
                                             : std::optional<engine::Status>();
    if (!parsed_status)
      return Bad(fmt::format("{} must be one of active, cancelled, expired", Key(path, "status")));
    r.status = *parsed_status;
    BK_ASSIGN_OR_RETURN(r.gpus, GpusOf(rec, path));
    for (size_t i = 0; i < r.gpus.size(); ++i) {
      if (r.gpus[i] < policy_.gpu_count) continue;
      return Bad(fmt::format("{} is GPU {} but this ledger has {} GPU{}; {} or edit the file",
                             Index(Key(path, "gpus"), i), r.gpus[i], policy_.gpu_count,
                             policy_.gpu_count == 1 ? "" : "s", Fix({Setting("gpu_count", needed_gpus_)})));
    }
    BK_ASSIGN_OR_RETURN(r.start, NeedTime(rec, path, "start_at"));
    BK_ASSIGN_OR_RETURN(r.end, NeedTime(rec, path, "end_at"));
    if (r.start >= r.end)
      return Bad(fmt::format("{} must be after {}", Key(path, "end_at"), Key(path, "start_at")));
    BK_ASSIGN_OR_RETURN(auto created, OptTime(rec, path, "created_at"));
    BK_ASSIGN_OR_RETURN(auto updated, OptTime(rec, path, "updated_at"));
    r.created_at = created.value_or(r.start);
    r.updated_at = updated.value_or(r.created_at);
    BK_ASSIGN_OR_RETURN(r.memory_mb, OptPositive(rec, path, "expected_memory_mb", engine::kMaxSizeMb));
    if (r.mode == Mode::kShared) {
      BK_ASSIGN_OR_RETURN(auto units, OptPositive(rec, path, "share_units", std::numeric_limits<int>::max()));
      r.share_units = static_cast<int>(units.value_or(1));
      if (r.share_units > policy_.share_capacity)
        return Bad(fmt::format("{} is {} but this ledger allows {} share slot{} per GPU; {} or edit the file",
                               Key(path, "share_units"), r.share_units, policy_.share_capacity,
                               policy_.share_capacity == 1 ? "" : "s",
                               Fix({Setting("max_shared_users", r.share_units)})));
    } else {
      r.share_units = policy_.share_capacity;
    }
    if (auto job = rec.find("job"); job != rec.end() && !job->is_null() && !job->is_object())
      return Bad(fmt::format("{} must be an object or null", Key(path, "job")));
    BK_ASSIGN_OR_RETURN(auto op_id, OptText(rec, path, "op_id", 128));
    BK_ASSIGN_OR_RETURN(auto signature, OptText(rec, path, "operation_signature", 128));
    r.op_id = op_id.value_or(sys::NewUuid());
    r.op_signature = signature.value_or("");
    BK_TRY(ClaimOpId(r.uid, r.op_id, Key(path, "op_id")));

    BK_TRY(Edits(rec, path, plan));
    BK_TRY(Cancel(rec, path, plan));
    BK_TRY(Notifications(rec, path, plan));
    return plan;
  }

  Status Edits(const json& rec, const std::string& path, Planned& plan) {
    BK_ASSIGN_OR_RETURN(const json* list, OptList(rec, path, "edit_operations", kMaxEdits));
    if (!list) return Ok();
    std::string base = Key(path, "edit_operations");
    Seconds previous = plan.r.created_at;
    for (size_t i = 0; i < list->size(); ++i) {
      const json& entry = (*list)[i];
      std::string at = Index(base, i);
      if (!entry.is_object()) return Bad(fmt::format("{} must be an object", at));
      BK_ASSIGN_OR_RETURN(OperationIn op, OperationOf(entry, at, previous));
      EditIn e{op};
      previous = e.at;
      BK_ASSIGN_OR_RETURN(e.before, StateOf(entry, at, "before"));
      BK_ASSIGN_OR_RETURN(e.after, StateOf(entry, at, "after"));
      BK_TRY(ClaimOpId(plan.r.uid, e.op_id, Key(at, "op_id")));
      plan.edits.push_back(std::move(e));
    }
    plan.r.edit_count = static_cast<int>(plan.edits.size());
    return Ok();
  }

  Status Cancel(const json& rec, const std::string& path, Planned& plan) {
    const json* v = Field(rec, "cancel_operation");
    if (!v) return Ok();
    std::string base = Key(path, "cancel_operation");
    if (!v->is_object()) return Bad(fmt::format("{} must be an object", base));
    BK_ASSIGN_OR_RETURN(OperationIn op, OperationOf(*v, base, plan.r.updated_at));
    CancelIn c{op};
    BK_ASSIGN_OR_RETURN(const json* kind, Need(*v, base, "kind"));
    auto parsed = kind->is_string() ? engine::kCancelKindNames.Parse(kind->get<std::string>()) : std::nullopt;
    if (!parsed || (*parsed != engine::CancelKind::kOwner && *parsed != engine::CancelKind::kAdministrator))
      return Bad(fmt::format("{} must be \"owner\" or \"administrator\"", Key(base, "kind")));
    c.administrator = *parsed == engine::CancelKind::kAdministrator;
    BK_ASSIGN_OR_RETURN(auto reason, OptText(*v, base, "reason", 512));
    c.reason =
        reason.value_or(c.administrator ? "cancelled by administrator" : "cancelled by reservation owner");
    if (plan.r.status != engine::Status::kCancelled)
      return Bad(fmt::format("{} is present but {} is {}; only a cancelled reservation has a cancellation",
                             base, Key(path, "status"), engine::StatusName(plan.r.status)));
    BK_TRY(ClaimOpId(plan.r.uid, c.op_id, Key(base, "op_id")));
    plan.r.cancellation =
        engine::Cancellation{c.at, *parsed, c.reason, c.actor_uid, c.actor_username, c.op_id};
    plan.cancel = std::move(c);
    return Ok();
  }

  Status Notifications(const json& rec, const std::string& path, Planned& plan) {
    BK_ASSIGN_OR_RETURN(const json* list, OptList(rec, path, "notifications", kMaxNotifications));
    if (!list) return Ok();
    std::string base = Key(path, "notifications");
    for (size_t i = 0; i < list->size(); ++i) {
      const json& entry = (*list)[i];
      std::string at = Index(base, i);
      if (!entry.is_object()) return Bad(fmt::format("{} must be an object", at));
      store::Notification n;
      BK_ASSIGN_OR_RETURN(n.id, NeedText(entry, at, "id", 128));
      if (auto [it, fresh] = notification_ids_.emplace(n.id, Key(at, "id")); !fresh)
        return Bad(fmt::format("{} repeats notification ID {} of {}", Key(at, "id"), n.id, it->second));
      BK_ASSIGN_OR_RETURN(n.type, NeedText(entry, at, "type", 64));
      BK_ASSIGN_OR_RETURN(n.created_at, NeedTime(entry, at, "created_at"));
      BK_ASSIGN_OR_RETURN(n.actor_uid, NeedUid(entry, at, "actor_uid"));
      BK_ASSIGN_OR_RETURN(auto name, OptText(entry, at, "actor_username", 256));
      n.actor_username = name.value_or(std::to_string(n.actor_uid));
      BK_ASSIGN_OR_RETURN(auto reason, OptText(entry, at, "reason", 512));
      n.reason = reason.value_or("");
      BK_ASSIGN_OR_RETURN(auto message, OptText(entry, at, "message", 1024));
      n.message = message.value_or("");
      n.uid = plan.r.uid;
      n.reservation_id = plan.r.id;
      plan.notifications.push_back(std::move(n));
    }
    return Ok();
  }

  const engine::Policy& policy_;
  std::string server_config_;
  int needed_gpus_ = 0;
  std::map<std::string, std::string> ids_;                          // id -> path
  std::map<std::pair<uint32_t, std::string>, std::string> op_ids_;  // (uid, op_id) -> path
  std::map<std::string, std::string> notification_ids_;             // id -> path
};

// The record with one of its historical schedulable states.
Reservation WithState(const Reservation& r, const State& s, int share_capacity) {
  Reservation out = r;
  out.gpus = s.gpus;
  out.mode = s.mode;
  out.start = s.start;
  out.end = s.end;
  out.memory_mb = s.memory_mb;
  out.share_units = s.mode == Mode::kShared ? static_cast<int>(s.share_units.value_or(1)) : share_capacity;
  return out;
}

std::string Refused(const std::string& why) {
  return fmt::format("ledger import refused: {}; nothing was imported", why);
}

Result<int64_t> CountRows(store::LedgerStore& s, const char* sql) {
  BK_ASSIGN_OR_RETURN(store::Stmt st, s.db().Prepare(sql));
  BK_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.Int(0) : 0;
}

// Reports every kProgressEvery items and checks whether to stop.
constexpr size_t kProgressEvery = 256;

Status Step(const ImportSpec& spec, ImportPhase phase, size_t done, size_t total) {
  if (done % kProgressEvery != 0) return Ok();
  if (spec.stop && spec.stop->load(std::memory_order_relaxed))
    return Fail(ErrorKind::kInternal, "the import was stopped: the daemon is shutting down");
  if (spec.progress) spec.progress(phase, static_cast<int64_t>(done), static_cast<int64_t>(total));
  return Ok();
}

// The file's active bookings must fit this policy together, as every
// booking made here does: an over-admitted calendar is refused, naming who.
Status CheckActiveFit(const engine::Policy& p, const std::vector<Planned>& plan, Seconds now) {
  std::vector<engine::Footprint> active;
  std::vector<std::string> names;
  for (const Planned& item : plan) {
    if (item.r.status != engine::Status::kActive || item.r.end <= now) continue;
    active.push_back(item.r.ToFootprint());
    names.push_back(item.r.ShortId());
  }
  if (auto v = engine::CheckInvariants(p, active, &names); !v.empty())
    return Invalid(Refused("the file's active bookings over-admit this host: " + Join(v, "; ")));
  return Ok();
}

// Events are appended in time order so `bk log` reads chronologically; each
// record's own events keep their order (import, edits, cancellation) even
// when the file's times disagree with it.
struct Pending {
  Seconds key;
  size_t record;
  size_t order;
  store::Event event;
};

// Writes the plan's rows into `s` inside the caller's transaction; the
// events it returns are appended afterwards, in time order.
Result<std::vector<Pending>> WriteRecords(store::LedgerStore& s, const ImportSpec& spec,
                                          const std::vector<Planned>& plan, size_t total,
                                          ImportSummary& summary) {
  const engine::Policy& p = *spec.policy;
  std::vector<Pending> pending;
  std::string transaction_id = sys::NewUuid();
  auto event = [&](const std::string& action, const Reservation& state, uint32_t actor_uid,
                   const std::string& actor_name, const std::string& op_id, const std::string& message,
                   Seconds ts) {
    store::Event e = MakeEvent(action, state, Actor{actor_uid, actor_name, false}, op_id, message, ts);
    e.transaction_id = transaction_id;
    return e;
  };

  for (size_t i = 0; i < plan.size(); ++i) {
    BK_TRY(Step(spec, ImportPhase::kWriting, i, total));
    const Planned& item = plan[i];
    const Reservation& r = item.r;
    BK_TRY(s.Insert(r));
    BK_TRY(s.InsertOperation({r.uid, r.op_id, "create", r.id, r.op_signature, r.created_at}));
    ++summary.operations;

    // The import event stands for the original booking: its time and its state before any edit.
    Reservation created = item.edits.empty() ? r : WithState(r, item.edits.front().before, p.share_capacity);
    store::Event imported = event("import", created, spec.actor.uid, spec.actor.username, r.op_id,
                                  "imported from ledger.json", r.created_at);
    imported.after = StateJson(created);
    imported.signature = r.op_signature;
    pending.push_back({r.created_at, i, 0, std::move(imported)});

    for (size_t k = 0; k < item.edits.size(); ++k) {
      const EditIn& edit = item.edits[k];
      BK_TRY(s.InsertOperation({r.uid, edit.op_id, "edit", r.id, edit.signature, edit.at}));
      ++summary.operations;
      Reservation before = WithState(r, edit.before, p.share_capacity);
      Reservation after = WithState(r, edit.after, p.share_capacity);
      store::Event e =
          event("edit", after, edit.actor_uid, edit.actor_username, edit.op_id, "updated", edit.at);
      e.before = StateJson(before);
      e.after = StateJson(after);
      e.signature = edit.signature;
      pending.push_back({edit.at, i, k + 1, std::move(e)});
    }
    summary.edits += static_cast<int>(item.edits.size());

    if (item.cancel) {
      const CancelIn& c = *item.cancel;
      BK_TRY(s.InsertOperation({r.uid, c.op_id, "cancel", r.id, c.signature, c.at}));
      ++summary.operations;
      store::Event e = event(c.administrator ? "admin-cancel" : "cancel", r, c.actor_uid, c.actor_username,
                             c.op_id, c.administrator ? c.reason : "cancelled", c.at);
      e.before = StateJson(r);
      e.signature = c.signature;
      pending.push_back({c.at, i, item.edits.size() + 1, std::move(e)});
    }

    for (const store::Notification& n : item.notifications) BK_TRY(s.InsertNotification(n));
    summary.notifications += static_cast<int>(item.notifications.size());

    ++summary.reservations;
    switch (r.status) {
      case engine::Status::kActive: ++summary.active; break;
      case engine::Status::kCancelled: ++summary.cancelled; break;
      case engine::Status::kExpired: ++summary.expired; break;
    }
  }
  return pending;
}

}  // namespace

Status CheckEmptyForImport(store::LedgerStore& s) {
  BK_ASSIGN_OR_RETURN(int64_t existing, s.CountReservations());
  BK_ASSIGN_OR_RETURN(int64_t events, CountRows(s, "SELECT count(*) FROM events"));
  if (existing > 0)
    return Invalid(fmt::format("ledger import needs an empty ledger; {} already holds {} reservation{}",
                               s.path(), existing, existing == 1 ? "" : "s"));
  if (events > 0)
    return Invalid(fmt::format("ledger import needs an empty ledger; {} already holds {} history event{}",
                               s.path(), events, events == 1 ? "" : "s"));
  return Ok();
}

// One transaction from the first write to the commit; every step before the
// commit may refuse the whole import.
Result<ImportSummary> ImportInto(store::LedgerStore& s, const ImportSpec& spec, std::string_view json_text) {
  const engine::Policy& p = *spec.policy;
  BK_TRY(Step(spec, ImportPhase::kValidating, 0, 0));
  auto parsed = ParseStrictJson(json_text);
  if (!parsed) return Invalid(Refused("the file " + parsed.error().Phrase()));
  json doc = std::move(*parsed);
  Importer importer(p, spec.server_config);
  auto planned = importer.Plan(
      doc, [&](ImportPhase phase, size_t done, size_t total) { return Step(spec, phase, done, total); });
  if (!planned) {
    if (planned.error().kind != ErrorKind::kInvalid) return std::unexpected(planned.error());
    return Invalid(Refused(planned.error().message));
  }
  std::vector<Planned>& plan = *planned;
  doc = json();  // the plan holds everything now: give the document's memory back
  BK_TRY(CheckActiveFit(p, plan, spec.now));

  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s.BeginWrite());
  BK_TRY(CheckEmptyForImport(s));
  BK_TRY(CheckBoundPolicy(s, p, true));

  size_t total = plan.size();
  for (const Planned& item : plan) total += 1 + item.edits.size() + (item.cancel ? 1 : 0);
  ImportSummary summary;
  BK_ASSIGN_OR_RETURN(std::vector<Pending> pending, WriteRecords(s, spec, plan, total, summary));
  for (size_t i = 1; i < pending.size(); ++i)
    if (pending[i].record == pending[i - 1].record)
      pending[i].key = std::max(pending[i].key, pending[i - 1].key);
  std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    return std::tie(a.key, a.record, a.order) < std::tie(b.key, b.record, b.order);
  });
  for (size_t i = 0; i < pending.size(); ++i) {
    BK_TRY(Step(spec, ImportPhase::kWriting, plan.size() + i, total));
    BK_TRY(s.AppendEvent(pending[i].event));
  }
  BK_TRY(txn.Commit());
  return summary;
}

Result<ImportSummary> BookingService::ImportUpstream(const Actor& actor, const std::string& json_text,
                                                     const ImportProgressFn& progress) {
  return impl_->Write([&] { return ImportUpstreamImpl(actor, json_text, progress); });
}

Result<ImportSummary> BookingService::ImportUpstreamImpl(const Actor& actor, const std::string& json_text,
                                                         const ImportProgressFn& progress) {
  if (!actor.admin) return Fail(ErrorKind::kPermission, std::string(kImportNeedsAdmin));
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  return ImportInto(*s, ImportSpecFor(actor, progress), json_text);
}

ImportSpec BookingService::ImportSpecFor(const Actor& actor, ImportProgressFn progress) const {
  return ImportSpec{.policy = &impl_->policy(),
                    .server_config = impl_->deps.config->server_config,
                    .actor = actor,
                    .now = impl_->Now(),
                    .progress = std::move(progress)};
}

Result<BookingService::StagedImport> BookingService::PrepareImport(const Actor& actor) {
  if (!actor.admin) return Fail(ErrorKind::kPermission, std::string(kImportNeedsAdmin));
  BK_ASSIGN_OR_RETURN(store::LedgerStore * live, impl_->Writer());
  BK_TRY(CheckEmptyForImport(*live));
  BK_TRY(impl_->CheckPolicy(*live, false));
  // The staging ledger is made like the live one: same directory, owner, modes and VFS.
  store::OpenOptions staging = impl_->StoreOptions(true);
  staging.path = StagingPath(staging.path);
  staging.on_lock_wait = nullptr;
  return StagedImport{ImportSpecFor(actor, {}), std::move(staging)};
}

::bk::Status BookingService::AdoptImport(const std::string& staging) {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * live, impl_->Writer());
  BK_TRY(CheckEmptyForImport(*live));
  impl_->store.reset();  // closing checkpoints SQLite's log into the file and removes it
  ::bk::Status replaced = ReplaceLedger(sys::RealFileSystem(), staging, impl_->deps.config->ledger_path);
  // Reopened either way: the daemon serves on, with the imported ledger or the untouched one.
  BK_TRY(impl_->Writer());
  ++impl_->generation;
  return replaced;
}

std::string StagingPath(const std::string& ledger_path) { return ledger_path + ".import"; }

void RemoveStaging(sys::FileSystem& fs, const std::string& staging) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) (void)fs.RemoveTree(staging + suffix);
}

Status ReplaceLedger(sys::FileSystem& fs, const std::string& staging, const std::string& ledger) {
  for (const std::string& log : {ledger + "-wal", staging + "-wal"})
    if (fs.Lstat(log))
      return Fail(ErrorKind::kIo,
                  fmt::format("{} is still there after its ledger was closed; nothing was imported", log));
  if (auto moved = fs.Rename(staging, ledger); !moved)
    return Fail(ErrorKind::kIo, fmt::format("cannot rename {} to {}: {}; nothing was imported", staging,
                                            ledger, std::strerror(moved.error())));
  std::string dir = sys::Dirname(ledger);
  if (auto synced = fs.Sync(dir); !synced)
    return Fail(ErrorKind::kIo, fmt::format("the import is in {} but syncing {} failed: {}", ledger, dir,
                                            std::strerror(synced.error())));
  return Ok();
}

}  // namespace bk::service
