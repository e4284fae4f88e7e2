#include "rpc/codec.h"

#include <fmt/format.h>

#include <climits>
#include <set>
#include <stdexcept>

#include "base/json_writer.h"
#include "base/strings.h"
#include "engine/limit_fields.h"
#include "rpc/records.h"

namespace bk::rpc {
namespace {

using engine::Seconds;

// Strict reader of request params: every field typed, unknown ones refused.
class Fields {
 public:
  explicit Fields(const json& j) : j_(j) {}

  Status Object() const {
    if (!j_.is_object()) return Invalid("params must be a JSON object");
    return Ok();
  }
  Result<std::optional<int64_t>> Int(const char* key) {
    used_.insert(key);
    if (!j_.contains(key) || j_[key].is_null()) return std::optional<int64_t>();
    if (!j_[key].is_number_integer()) return Invalid(fmt::format("{} must be an integer", key));
    if (j_[key].is_number_unsigned() && j_[key].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
      return Invalid(fmt::format("{} is out of range", key));
    return std::optional(j_[key].get<int64_t>());
  }
  // An integer in [lo, hi], or nullopt when absent.
  Result<std::optional<int64_t>> IntIn(const char* key, int64_t lo, int64_t hi) {
    used_.insert(key);
    if (!j_.contains(key) || j_[key].is_null()) return std::optional<int64_t>();
    if (!j_[key].is_number_integer()) return Invalid(fmt::format("{} must be an integer", key));
    bool huge = j_[key].is_number_unsigned() && j_[key].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX);
    int64_t v = huge ? INT64_MAX : j_[key].get<int64_t>();
    if (v < lo || v > hi) return Invalid(fmt::format("{} must be between {} and {}", key, lo, hi));
    return std::optional(v);
  }
  Result<int64_t> RequiredInt(const char* key) {
    BK_ASSIGN_OR_RETURN(auto v, Int(key));
    if (!v) return Invalid(fmt::format("{} is required", key));
    return *v;
  }
  Result<std::optional<std::string>> Str(const char* key) {
    used_.insert(key);
    if (!j_.contains(key) || j_[key].is_null()) return std::optional<std::string>();
    if (!j_[key].is_string() || j_[key].get<std::string>().empty())
      return Invalid(fmt::format("{} must be a non-empty string", key));
    return std::optional(j_[key].get<std::string>());
  }
  Result<std::string> RequiredStr(const char* key) {
    BK_ASSIGN_OR_RETURN(auto v, Str(key));
    if (!v) return Invalid(fmt::format("{} is required", key));
    return *v;
  }
  // Required, and absent reads the same as empty.
  Result<std::string> NonEmptyStr(const char* key) {
    BK_ASSIGN_OR_RETURN(auto v, Str(key));
    if (!v) return Invalid(fmt::format("{} must be a non-empty string", key));
    return *v;
  }
  // A string that may be empty ("" clears a field).
  Result<std::optional<std::string>> AnyStr(const char* key) {
    used_.insert(key);
    if (!j_.contains(key) || j_[key].is_null()) return std::optional<std::string>();
    if (!j_[key].is_string()) return Invalid(fmt::format("{} must be a string", key));
    return std::optional(j_[key].get<std::string>());
  }
  Result<std::vector<std::string>> StrList(const char* key) {
    used_.insert(key);
    std::vector<std::string> out;
    if (!j_.contains(key) || j_[key].is_null()) return out;
    if (!j_[key].is_array()) return Invalid(fmt::format("{} must be an array of strings", key));
    for (const auto& e : j_[key]) {
      if (!e.is_string()) return Invalid(fmt::format("{} must be an array of strings", key));
      out.push_back(e.get<std::string>());
    }
    return out;
  }
  Result<std::optional<bool>> OptBool(const char* key) {
    used_.insert(key);
    if (!j_.contains(key) || j_[key].is_null()) return std::optional<bool>();
    if (!j_[key].is_boolean()) return Invalid(fmt::format("{} must be true or false", key));
    return std::optional(j_[key].get<bool>());
  }
  // A nested object, or nullptr when absent.
  Result<const json*> Obj(const char* key) {
    used_.insert(key);
    if (!j_.contains(key) || j_[key].is_null()) return static_cast<const json*>(nullptr);
    if (!j_[key].is_object()) return Invalid(fmt::format("{} must be an object", key));
    return &j_[key];
  }
  Result<bool> Bool(const char* key) {
    used_.insert(key);
    if (!j_.contains(key) || j_[key].is_null()) return false;
    if (!j_[key].is_boolean()) return Invalid(fmt::format("{} must be true or false", key));
    return j_[key].get<bool>();
  }
  // True only when the key holds true: anything else is false, not an error.
  bool Flag(const char* key) {
    used_.insert(key);
    return j_.contains(key) && j_[key].is_boolean() && j_[key].get<bool>();
  }
  Result<std::vector<int>> Gpus(const char* key) {
    used_.insert(key);
    std::vector<int> out;
    if (!j_.contains(key) || j_[key].is_null()) return out;
    if (!j_[key].is_array()) return Invalid(fmt::format("{} must be an array of GPU indexes", key));
    for (const auto& e : j_[key]) {
      if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > 1023)
        return Invalid(fmt::format("{} must be an array of GPU indexes", key));
      out.push_back(e.get<int>());
    }
    return out;
  }
  Result<std::optional<engine::Mode>> Mode(const char* key) {
    BK_ASSIGN_OR_RETURN(auto s, Str(key));
    if (!s) return std::optional<engine::Mode>();
    if (*s == "shared") return std::optional(engine::Mode::kShared);
    if (*s == "exclusive") return std::optional(engine::Mode::kExclusive);
    return Invalid(fmt::format("{} must be \"shared\" or \"exclusive\"", key));
  }
  // Refuses anything but an object of these fields before any is read, for
  // requests whose field errors are reported after that one.
  Status Known(std::initializer_list<const char*> keys) {
    BK_TRY(Object());
    used_.insert(keys.begin(), keys.end());
    return Done();
  }
  Status Done() const {
    std::vector<std::string> unknown;
    for (const auto& [k, v] : j_.items())
      if (!used_.count(k)) unknown.push_back(k);
    if (unknown.empty()) return Ok();
    return Invalid(fmt::format("params contain unknown field(s): {}", Join(unknown, ", ")));
  }

 private:
  const json& j_;
  std::set<std::string> used_;
};

template <class T>
json Opt(const std::optional<T>& v) {
  return v ? json(*v) : json();
}
template <class T>
std::optional<T> OptGet(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

gpu::LiveStatus LiveStatusAt(const json& j, const char* key) {
  auto status = gpu::kLiveStatusNames.Parse(j.at(key).get<std::string>());
  if (!status) throw std::invalid_argument("unknown live status");
  return *status;
}

std::optional<int> OptInt32(const std::optional<int64_t>& v) {
  return v ? std::optional(static_cast<int>(*v)) : std::nullopt;
}

// Decoders of replies run under one try: a malformed reply is one error.
template <class F>
auto Guard(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::exception& e) {  // json errors, and std::stoi on a bad key
    return Fail(ErrorKind::kCorrupt, fmt::format("the daemon sent a malformed reply ({})", e.what()));
  }
}

json EncodeView(const service::GpuView& v) {
  return {{"gpu", v.gpu},
          {"live_status", gpu::LiveStatusName(v.live_status)},
          {"live_reason", v.live_reason},
          {"load_score", v.load_score},
          {"memory_total_mb", Opt(v.memory_total_mb)},
          {"memory_free_mb", Opt(v.memory_free_mb)},
          {"utilization_percent", Opt(v.utilization_percent)},
          {"priority", v.priority},
          {"pressure", v.pressure},
          {"budget_after_mb", Opt(v.budget_after_mb)}};
}

service::GpuView DecodeView(const json& j) {
  service::GpuView v;
  v.gpu = j.at("gpu").get<int>();
  v.live_status = LiveStatusAt(j, "live_status");
  v.live_reason = j.at("live_reason").get<std::string>();
  v.load_score = j.at("load_score").get<double>();
  v.memory_total_mb = OptGet<int64_t>(j, "memory_total_mb");
  v.memory_free_mb = OptGet<int64_t>(j, "memory_free_mb");
  v.utilization_percent = OptGet<int>(j, "utilization_percent");
  v.priority = j.at("priority").get<int>();
  v.pressure = j.at("pressure").get<double>();
  v.budget_after_mb = OptGet<int64_t>(j, "budget_after_mb");
  return v;
}

json EncodePlacement(const engine::Placement& p) {
  return {
      {"start", p.start}, {"end", p.end}, {"gpus", p.gpus}, {"queued", p.queued}, {"pressure", p.pressure}};
}

engine::Placement DecodePlacement(const json& j) {
  engine::Placement p;
  p.start = j.at("start").get<Seconds>();
  p.end = j.at("end").get<Seconds>();
  p.gpus = j.at("gpus").get<std::vector<int>>();
  p.queued = j.at("queued").get<bool>();
  p.pressure = j.at("pressure").get<std::vector<double>>();
  return p;
}

engine::CancelKind ParseCancelKind(const std::string& name) {
  auto kind = engine::kCancelKindNames.Parse(name);
  if (!kind) throw std::invalid_argument("unknown cancellation kind");
  return *kind;
}

engine::Reservation DecodeReservationUnchecked(const json& j) {
  engine::Reservation r;
  r.id = j.at("id").get<std::string>();
  int64_t uid = j.at("uid").get<int64_t>();
  if (uid < 0 || uid > 0xfffffffeLL) throw std::out_of_range("uid out of range");
  r.uid = static_cast<uint32_t>(uid);
  r.username = j.at("username").get<std::string>();
  r.gpus = j.at("gpus").get<std::vector<int>>();
  auto mode = engine::ParseMode(j.at("mode").get<std::string>());
  if (!mode || (j["mode"] != "shared" && j["mode"] != "exclusive"))
    throw std::invalid_argument("unknown mode");
  r.mode = *mode;
  r.share_units = j.at("share_units").get<int>();
  r.memory_mb = OptGet<int64_t>(j, "memory_mb");
  r.cpus = j.at("cpus").get<int64_t>();
  r.ram_mb = j.at("ram_mb").get<int64_t>();
  r.start = j.at("start").get<Seconds>();
  r.end = j.at("end").get<Seconds>();
  auto status = engine::ParseStatus(j.at("status").get<std::string>());
  if (!status) throw std::invalid_argument("unknown status");
  r.status = *status;
  r.created_at = j.at("created_at").get<Seconds>();
  r.updated_at = j.at("updated_at").get<Seconds>();
  r.op_id = j.at("op_id").get<std::string>();
  r.op_signature = j.at("op_signature").get<std::string>();
  r.edit_count = j.at("edit_count").get<int>();
  if (j.contains("cancellation") && !j["cancellation"].is_null()) {
    const json& c = j["cancellation"];
    r.cancellation = engine::Cancellation{c.at("at").get<Seconds>(),
                                          ParseCancelKind(c.at("kind").get<std::string>()),
                                          c.at("reason").get<std::string>(),
                                          c.at("actor_uid").get<uint32_t>(),
                                          c.at("actor_username").get<std::string>(),
                                          c.at("op_id").get<std::string>()};
  }
  return r;
}

service::JobView DecodeJobViewUnchecked(const json& j) {
  return service::JobView{DecodeReservationUnchecked(j.at("reservation")), DecodeJob(j.at("job"))};
}

// Params of exactly one field: a non-empty string.
Result<std::string> OnlyString(const json& j, const char* key) {
  Fields f(j);
  BK_TRY(f.Known({key}));
  return f.NonEmptyStr(key);
}

// Params of at most a `limit` in [1, 1000].
Result<int> OnlyLimit(const json& j, int fallback) {
  Fields f(j);
  BK_TRY(f.Known({"limit"}));
  BK_ASSIGN_OR_RETURN(auto limit, f.IntIn("limit", 1, 1000));
  return static_cast<int>(limit.value_or(fallback));
}

}  // namespace

// ---- requests -------------------------------------------------------------

namespace {

// An administrator's reason to exceed the fair-share limits goes on the wire
// only when given, as `dry_run` does: a server that does not know it refuses
// it as an unknown field instead of booking within limits it does not have.
void AddOverride(json& j, const std::optional<std::string>& reason) {
  if (reason) j["override_reason"] = *reason;
}

}  // namespace

json Encode(const service::CreateRequest& r) {
  json j = {{"count", r.count},
            {"duration_seconds", r.duration},
            {"mode", engine::ModeName(r.mode)},
            {"share_units", Opt(r.share_units)},
            {"memory_mb", Opt(r.memory_mb)},
            {"cpus", Opt(r.cpus)},
            {"ram_mb", Opt(r.ram_mb)},
            {"start", Opt(r.start)},
            {"gpus", r.gpus},
            {"exclude", r.exclude},
            {"op_id", Opt(r.op_id)},
            {"job",
             r.job ? json{{"spec_id", r.job->spec_id}, {"digest", r.job->digest}, {"summary", r.job->summary}}
                   : json()}};
  AddOverride(j, r.override_reason);
  return j;
}

Result<service::CreateRequest> DecodeCreate(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::CreateRequest r;
  BK_ASSIGN_OR_RETURN(int64_t count, f.RequiredInt("count"));
  if (count < 1 || count > engine::kMaxGpus)
    return Invalid(fmt::format("count must be between 1 and {}", engine::kMaxGpus));
  r.count = static_cast<int>(count);
  BK_ASSIGN_OR_RETURN(r.duration, f.RequiredInt("duration_seconds"));
  BK_ASSIGN_OR_RETURN(auto mode, f.Mode("mode"));
  r.mode = mode.value_or(engine::Mode::kShared);
  BK_ASSIGN_OR_RETURN(auto share, f.Int("share_units"));
  if (share && (*share < 1 || *share > 1000000)) return Invalid("share_units must be between 1 and 1000000");
  r.share_units = OptInt32(share);
  BK_ASSIGN_OR_RETURN(r.memory_mb, f.Int("memory_mb"));
  BK_ASSIGN_OR_RETURN(r.cpus, f.Int("cpus"));
  BK_ASSIGN_OR_RETURN(r.ram_mb, f.Int("ram_mb"));
  BK_ASSIGN_OR_RETURN(r.start, f.Int("start"));
  BK_ASSIGN_OR_RETURN(r.gpus, f.Gpus("gpus"));
  BK_ASSIGN_OR_RETURN(r.exclude, f.Gpus("exclude"));
  BK_ASSIGN_OR_RETURN(r.op_id, f.Str("op_id"));
  BK_ASSIGN_OR_RETURN(const json* job, f.Obj("job"));
  if (job) {
    Fields jf(*job);
    service::JobBinding b;
    BK_ASSIGN_OR_RETURN(b.spec_id, jf.RequiredStr("spec_id"));
    BK_ASSIGN_OR_RETURN(b.digest, jf.RequiredStr("digest"));
    BK_ASSIGN_OR_RETURN(b.summary, jf.RequiredStr("summary"));
    BK_TRY(jf.Done());
    r.job = b;
  }
  BK_ASSIGN_OR_RETURN(r.override_reason, f.Str("override_reason"));
  BK_TRY(f.Done());
  return r;
}

namespace {

// `dry_run` goes on the wire only when set: a write's request stays as it
// was, and a server that does not know dry runs refuses one as an unknown
// field instead of making the change.
void AddDryRun(json& j, bool dry_run) {
  if (dry_run) j["dry_run"] = true;
}

}  // namespace

json Encode(const service::EditRequest& r) {
  json j = {{"ref", r.ref},
            {"op_id", Opt(r.op_id)},
            {"duration_seconds", Opt(r.duration)},
            {"end", Opt(r.end)},
            {"start", Opt(r.start)},
            {"mode", r.mode ? json(engine::ModeName(*r.mode)) : json()},
            {"gpus", r.gpus},
            {"exclude", r.exclude},
            {"count", Opt(r.count)},
            {"update_memory", r.update_memory},
            {"memory_mb", Opt(r.memory_mb)},
            {"share_units", Opt(r.share_units)},
            {"cpus", Opt(r.cpus)},
            {"ram_mb", Opt(r.ram_mb)},
            {"allow_queue", r.allow_queue}};
  AddDryRun(j, r.dry_run);
  AddOverride(j, r.override_reason);
  return j;
}

Result<service::EditRequest> DecodeEdit(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::EditRequest r;
  BK_ASSIGN_OR_RETURN(r.ref, f.RequiredStr("ref"));
  BK_ASSIGN_OR_RETURN(r.op_id, f.Str("op_id"));
  BK_ASSIGN_OR_RETURN(r.duration, f.Int("duration_seconds"));
  BK_ASSIGN_OR_RETURN(r.end, f.Int("end"));
  BK_ASSIGN_OR_RETURN(r.start, f.Int("start"));
  BK_ASSIGN_OR_RETURN(r.mode, f.Mode("mode"));
  BK_ASSIGN_OR_RETURN(r.gpus, f.Gpus("gpus"));
  BK_ASSIGN_OR_RETURN(r.exclude, f.Gpus("exclude"));
  BK_ASSIGN_OR_RETURN(auto count, f.Int("count"));
  if (count && (*count < 1 || *count > engine::kMaxGpus))
    return Invalid(fmt::format("count must be between 1 and {}", engine::kMaxGpus));
  r.count = OptInt32(count);
  BK_ASSIGN_OR_RETURN(r.update_memory, f.Bool("update_memory"));
  BK_ASSIGN_OR_RETURN(r.memory_mb, f.Int("memory_mb"));
  BK_ASSIGN_OR_RETURN(auto share, f.Int("share_units"));
  if (share && (*share < 1 || *share > 1000000)) return Invalid("share_units must be between 1 and 1000000");
  r.share_units = OptInt32(share);
  BK_ASSIGN_OR_RETURN(r.cpus, f.Int("cpus"));
  BK_ASSIGN_OR_RETURN(r.ram_mb, f.Int("ram_mb"));
  BK_ASSIGN_OR_RETURN(r.allow_queue, f.Bool("allow_queue"));
  BK_ASSIGN_OR_RETURN(r.dry_run, f.Bool("dry_run"));
  BK_ASSIGN_OR_RETURN(r.override_reason, f.Str("override_reason"));
  BK_TRY(f.Done());
  return r;
}

json Encode(const service::RenewRequest& r) {
  json j = {{"ref", r.ref}, {"extend_seconds", r.extend_by}, {"op_id", Opt(r.op_id)}};
  AddDryRun(j, r.dry_run);
  AddOverride(j, r.override_reason);
  return j;
}

Result<service::RenewRequest> DecodeRenew(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::RenewRequest r;
  BK_ASSIGN_OR_RETURN(r.ref, f.RequiredStr("ref"));
  BK_ASSIGN_OR_RETURN(r.extend_by, f.RequiredInt("extend_seconds"));
  BK_ASSIGN_OR_RETURN(r.op_id, f.Str("op_id"));
  BK_ASSIGN_OR_RETURN(r.dry_run, f.Bool("dry_run"));
  BK_ASSIGN_OR_RETURN(r.override_reason, f.Str("override_reason"));
  BK_TRY(f.Done());
  return r;
}

json Encode(const service::CancelRequest& r) {
  return {{"ref", r.ref}, {"op_id", Opt(r.op_id)}, {"reason", Opt(r.reason)}};
}

Result<service::CancelRequest> DecodeCancel(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::CancelRequest r;
  BK_ASSIGN_OR_RETURN(r.ref, f.RequiredStr("ref"));
  BK_ASSIGN_OR_RETURN(r.op_id, f.Str("op_id"));
  BK_ASSIGN_OR_RETURN(r.reason, f.Str("reason"));
  BK_TRY(f.Done());
  return r;
}

json Encode(const service::TransferRequest& r) {
  return {{"ref", r.ref}, {"to", r.to}, {"reason", r.reason}};
}

Result<service::TransferRequest> DecodeTransfer(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::TransferRequest r;
  BK_ASSIGN_OR_RETURN(r.ref, f.RequiredStr("ref"));
  BK_ASSIGN_OR_RETURN(r.to, f.RequiredStr("to"));
  BK_ASSIGN_OR_RETURN(r.reason, f.RequiredStr("reason"));
  BK_TRY(f.Done());
  return r;
}

json Encode(const service::ReleaseRequest& r) { return {{"reservation_id", r.reservation_id}}; }

Result<service::ReleaseRequest> DecodeRelease(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::ReleaseRequest r;
  BK_ASSIGN_OR_RETURN(r.reservation_id, f.RequiredStr("reservation_id"));
  BK_TRY(f.Done());
  return r;
}

json Encode(const service::ListQuery& q) {
  return {{"history", q.history}, {"limit", Opt(q.limit)}, {"everyone", q.everyone}};
}

Result<service::ListQuery> DecodeList(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::ListQuery q;
  BK_ASSIGN_OR_RETURN(q.history, f.Bool("history"));
  BK_ASSIGN_OR_RETURN(auto limit, f.Int("limit"));
  if (limit && (*limit < 1 || *limit > 100000)) return Invalid("limit must be between 1 and 100000");
  q.limit = OptInt32(limit);
  BK_ASSIGN_OR_RETURN(q.everyone, f.Bool("everyone"));
  BK_TRY(f.Done());
  return q;
}

// ---- results --------------------------------------------------------------

namespace {

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// One reservation, keys in nlohmann's (sorted) order, without a tree.
void WriteReservation(JsonWriter& w, const engine::Reservation& r) {
  w.BeginObject().Key("cancellation");
  if (const auto& c = r.cancellation) {
    w.BeginObject();
    w.Key("actor_uid").Int(c->actor_uid).Key("actor_username").String(c->actor_username);
    w.Key("at").Int(c->at).Key("kind").String(engine::kCancelKindNames.Name(c->kind));
    w.Key("op_id").String(c->op_id).Key("reason").String(c->reason);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("cpus").Int(r.cpus).Key("created_at").Int(r.created_at).Key("edit_count").Int(r.edit_count);
  w.Key("end").Int(r.end).Key("gpus").BeginArray();
  for (int g : r.gpus) w.Int(g);
  w.EndArray().Key("id").String(r.id).Key("memory_mb");
  if (r.memory_mb)
    w.Int(*r.memory_mb);
  else
    w.Null();
  w.Key("mode").String(engine::ModeName(r.mode)).Key("op_id").String(r.op_id);
  w.Key("op_signature").String(r.op_signature).Key("ram_mb").Int(r.ram_mb);
  w.Key("share_units").Int(r.share_units).Key("start").Int(r.start);
  w.Key("status").String(engine::StatusName(r.status)).Key("uid").Int(r.uid);
  w.Key("updated_at").Int(r.updated_at).Key("username").String(r.username);
  w.EndObject();
}

void WriteStrings(JsonWriter& w, const std::vector<std::string>& list) {
  w.BeginArray();
  for (const auto& x : list) w.String(x);
  w.EndArray();
}

void WriteReservations(JsonWriter& w, const std::vector<engine::Reservation>& list) {
  w.BeginArray();
  for (const auto& r : list) WriteReservation(w, r);
  w.EndArray();
}

}  // namespace

// The tree forms of the replies that carry reservations are read back from
// their text (the Write functions): one definition of each wire form.
json Encode(const engine::Reservation& r) {
  std::string out;
  JsonWriter w(out);
  WriteReservation(w, r);
  return json::parse(out);
}

Result<engine::Reservation> DecodeReservation(const json& j) {
  return Guard([&]() -> Result<engine::Reservation> { return DecodeReservationUnchecked(j); });
}

json Encode(const service::BookingOutcome& o) { return json::parse(Write(o)); }

std::string Write(const service::BookingOutcome& o) {
  json sel = json::array();
  for (const auto& v : o.selected) sel.push_back(EncodeView(v));
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("allocator_source").String(o.allocator_source).Key("assumed_memory_mb");
  if (o.assumed_memory_mb)
    w.Int(*o.assumed_memory_mb);
  else
    w.Null();
  w.Key("avoided_busy");
  WriteStrings(w, o.avoided_busy);
  if (o.dry_run) w.Key("dry_run").Bool(true);  // only then: other replies stay as they were
  w.Key("job").Raw(o.job ? Dump(EncodeJob(*o.job)) : "null");
  w.Key("memory_telemetry").Bool(o.memory_telemetry).Key("message").String(o.message);
  w.Key("queued_reason").String(o.queued_reason).Key("replayed").Bool(o.replayed).Key("reservation");
  WriteReservation(w, o.reservation);
  w.Key("selected").Raw(Dump(sel)).Key("selected_busy");
  WriteStrings(w, o.selected_busy);
  w.Key("status").String(o.status).Key("warnings");
  WriteStrings(w, o.warnings);
  w.EndObject();
  return out;
}

Result<service::BookingOutcome> DecodeBookingOutcome(const json& j) {
  return Guard([&]() -> Result<service::BookingOutcome> {
    service::BookingOutcome o;
    o.status = j.at("status").get<std::string>();
    o.reservation = DecodeReservationUnchecked(j.at("reservation"));
    o.replayed = j.at("replayed").get<bool>();
    o.dry_run = j.value("dry_run", false);
    o.allocator_source = j.at("allocator_source").get<std::string>();
    for (const auto& v : j.at("selected")) o.selected.push_back(DecodeView(v));
    o.memory_telemetry = j.at("memory_telemetry").get<bool>();
    o.assumed_memory_mb = OptGet<int64_t>(j, "assumed_memory_mb");
    o.avoided_busy = j.at("avoided_busy").get<std::vector<std::string>>();
    o.selected_busy = j.at("selected_busy").get<std::vector<std::string>>();
    o.warnings = j.at("warnings").get<std::vector<std::string>>();
    o.message = j.at("message").get<std::string>();
    o.queued_reason = j.value("queued_reason", "");
    if (j.contains("job") && !j["job"].is_null()) o.job = DecodeJob(j["job"]);
    return o;
  });
}

json Encode(const service::CancelOutcome& o) {
  return {{"reservation", Encode(o.reservation)}, {"replayed", o.replayed}};
}

Result<service::CancelOutcome> DecodeCancelOutcome(const json& j) {
  return Guard([&]() -> Result<service::CancelOutcome> {
    return service::CancelOutcome{DecodeReservationUnchecked(j.at("reservation")),
                                  j.at("replayed").get<bool>()};
  });
}

json Encode(const service::ReleaseOutcome& o) {
  return {{"reservation", Encode(o.reservation)}, {"from", o.from}, {"given_back", o.given_back}};
}

Result<service::ReleaseOutcome> DecodeReleaseOutcome(const json& j) {
  return Guard([&]() -> Result<service::ReleaseOutcome> {
    return service::ReleaseOutcome{DecodeReservationUnchecked(j.at("reservation")),
                                   j.at("from").get<engine::Seconds>(),
                                   j.at("given_back").get<engine::Seconds>()};
  });
}

json Encode(const service::Recommendation& r) {
  json sel = json::array();
  for (const auto& v : r.selected) sel.push_back(EncodeView(v));
  return {{"available", r.available},
          {"placement", r.placement ? EncodePlacement(*r.placement) : json()},
          {"nearest", r.nearest ? EncodePlacement(*r.nearest) : json()},
          {"reason", r.reason},
          {"selected", sel},
          {"warnings", r.warnings},
          {"confidence", r.confidence},
          {"request", Encode(r.request)},
          {"start", r.start},
          {"allow_queue", r.allow_queue}};
}

Result<service::Recommendation> DecodeRecommendation(const json& j) {
  return Guard([&]() -> Result<service::Recommendation> {
    service::Recommendation r;
    r.available = j.at("available").get<bool>();
    if (!j.at("placement").is_null()) r.placement = DecodePlacement(j["placement"]);
    if (!j.at("nearest").is_null()) r.nearest = DecodePlacement(j["nearest"]);
    r.reason = j.at("reason").get<std::string>();
    for (const auto& v : j.at("selected")) r.selected.push_back(DecodeView(v));
    r.warnings = j.at("warnings").get<std::vector<std::string>>();
    r.confidence = j.at("confidence").get<std::string>();
    auto req = DecodeCreate(j.at("request"));
    if (!req)
      return Fail(ErrorKind::kCorrupt, "the daemon sent a malformed recommendation: " + req.error().message);
    r.request = *req;
    r.start = j.at("start").get<Seconds>();
    r.allow_queue = j.at("allow_queue").get<bool>();
    return r;
  });
}

json Encode(const service::SlotsResult& r) {
  json opts = json::array();
  for (const auto& o : r.options)
    opts.push_back({{"gpus", o.gpus},
                    {"start", o.start},
                    {"end", o.end},
                    {"live", gpu::LiveStatusName(o.live)},
                    {"free_now_mb", Opt(o.free_now_mb)}});
  return {{"options", opts}, {"truncated_combinations", r.truncated_combinations}};
}

Result<service::SlotsResult> DecodeSlots(const json& j) {
  return Guard([&]() -> Result<service::SlotsResult> {
    service::SlotsResult r;
    for (const auto& o : j.at("options"))
      r.options.push_back({o.at("gpus").get<std::vector<int>>(), o.at("start").get<Seconds>(),
                           o.at("end").get<Seconds>(), LiveStatusAt(o, "live"),
                           OptGet<int64_t>(o, "free_now_mb")});
    r.truncated_combinations = j.at("truncated_combinations").get<bool>();
    return r;
  });
}

json Encode(const service::ListResult& r) { return json::parse(Write(r)); }

std::string Write(const service::ListResult& r) {
  json jobs = json::array();
  for (const auto& x : r.jobs) jobs.push_back(EncodeJob(x));
  std::string out;
  JsonWriter w(out);
  w.BeginObject().Key("jobs").Raw(Dump(jobs));
  w.Key("reservations");
  WriteReservations(w, r.reservations);
  w.Key("total").Int(r.total).Key("truncated").Bool(r.truncated).EndObject();
  return out;
}

Result<service::ListResult> DecodeListResult(const json& j) {
  return Guard([&]() -> Result<service::ListResult> {
    service::ListResult r;
    for (const auto& x : j.at("reservations")) r.reservations.push_back(DecodeReservationUnchecked(x));
    r.total = j.at("total").get<int>();
    r.truncated = j.at("truncated").get<bool>();
    if (j.contains("jobs"))
      for (const auto& x : j["jobs"]) r.jobs.push_back(DecodeJob(x));
    return r;
  });
}

json Encode(const service::HistoryView& v) {
  return {{"reservation", Encode(v.reservation)},
          {"events", Encode(v.events)},
          {"notifications", Encode(v.notifications)}};
}

Result<service::HistoryView> DecodeHistory(const json& j) {
  return Guard([&]() -> Result<service::HistoryView> {
    service::HistoryView v;
    v.reservation = DecodeReservationUnchecked(j.at("reservation"));
    for (const auto& e : j.at("events")) v.events.push_back(DecodeEvent(e));
    for (const auto& n : j.at("notifications")) v.notifications.push_back(DecodeNotification(n));
    return v;
  });
}

json Encode(const std::vector<store::Event>& events) {
  json out = json::array();
  for (const auto& e : events) out.push_back(EncodeEvent(e));
  return out;
}

Result<std::vector<store::Event>> DecodeEvents(const json& j) {
  return Guard([&]() -> Result<std::vector<store::Event>> {
    std::vector<store::Event> out;
    for (const auto& e : j) out.push_back(DecodeEvent(e));
    return out;
  });
}

json Encode(const std::vector<store::Notification>& items) {
  json out = json::array();
  for (const auto& n : items) out.push_back(EncodeNotification(n));
  return out;
}

namespace {

// A limit on the wire: in the unit the configuration gives it (hours,
// days), null when unset.
json LimitsJson(const engine::Limits& l) {
  json out = json::object();
  for (const engine::LimitField& f : engine::LimitFields()) {
    const std::optional<int64_t>& v = l.*f.member;
    out[std::string(f.name)] = v ? json(*v / f.unit) : json();
  }
  return out;
}

engine::Limits LimitsOf(const json& j) {
  engine::Limits out;
  for (const engine::LimitField& f : engine::LimitFields()) {
    const json& v = j.at(std::string(f.name));
    if (!v.is_null()) out.*f.member = v.get<int64_t>() * f.unit;
  }
  return out;
}

}  // namespace

json Encode(const service::FairShareReport& r) {
  json rows = json::array();
  for (const auto& row : r.rows) {
    const engine::LimitUse& u = row.use;
    rows.push_back({{"name", row.name},
                    {"kind", row.group ? "group" : "user"},
                    {"limits", LimitsJson(row.limits)},
                    {"use",
                     {{"gpus_now", u.gpus_now},
                      {"peak_gpus", u.peak_gpus},
                      {"gpu_hours_24h", u.gpu_hours_24h},
                      {"gpu_hours_7d", u.gpu_hours_7d},
                      {"queued", u.queued}}}});
  }
  return {{"configured", r.configured}, {"now", r.now}, {"scopes", rows}};
}

Result<service::FairShareReport> DecodeFairShareReport(const json& j) {
  return Guard([&]() -> Result<service::FairShareReport> {
    service::FairShareReport r;
    r.configured = j.at("configured").get<bool>();
    r.now = j.at("now").get<engine::Seconds>();
    for (const json& row : j.at("scopes")) {
      service::FairShareRow x;
      x.name = row.at("name").get<std::string>();
      x.group = row.at("kind").get<std::string>() == "group";
      x.limits = LimitsOf(row.at("limits"));
      const json& u = row.at("use");
      x.use = {u.at("gpus_now").get<int64_t>(), u.at("peak_gpus").get<int64_t>(),
               u.at("gpu_hours_24h").get<double>(), u.at("gpu_hours_7d").get<double>(),
               u.at("queued").get<int64_t>()};
      r.rows.push_back(std::move(x));
    }
    return r;
  });
}

json Encode(const service::UnreadNotifications& u) {
  return {{"count", u.count}, {"newest", Encode(u.newest)}};
}

Result<service::UnreadNotifications> DecodeUnreadNotifications(const json& j) {
  return Guard([&]() -> Result<service::UnreadNotifications> {
    service::UnreadNotifications u;
    u.count = j.at("count").get<int64_t>();
    for (const auto& n : j.at("newest")) u.newest.push_back(DecodeNotification(n));
    return u;
  });
}

Result<std::vector<store::Notification>> DecodeNotifications(const json& j) {
  return Guard([&]() -> Result<std::vector<store::Notification>> {
    std::vector<store::Notification> out;
    for (const auto& n : j) out.push_back(DecodeNotification(n));
    return out;
  });
}

json Encode(const service::OperationView& v) {
  return {{"found", v.found},
          {"action", v.action},
          {"reservation", v.reservation ? Encode(*v.reservation) : json()}};
}

Result<service::OperationView> DecodeOperation(const json& j) {
  return Guard([&]() -> Result<service::OperationView> {
    service::OperationView v;
    v.found = j.at("found").get<bool>();
    v.action = j.at("action").get<std::string>();
    if (!j.at("reservation").is_null()) v.reservation = DecodeReservationUnchecked(j["reservation"]);
    return v;
  });
}

namespace {

json EncodeDevices(const gpu::Snapshot& snapshot) {
  json devices = json::array();
  for (const auto& d : snapshot.devices) {
    json procs = json::array();
    for (const auto& p : d.processes)
      procs.push_back({{"pid", p.pid},
                       {"uid", p.uid ? json(*p.uid) : json()},
                       {"username", p.username},
                       {"command", p.command},
                       {"gpu_memory_mb", p.gpu_memory_mb},
                       {"sm_utilization_percent", Opt(p.sm_utilization_percent)},
                       {"kind", p.kind},
                       {"identity_source", p.identity_source}});
    devices.push_back({{"index", d.index},
                       {"uuid", d.uuid},
                       {"name", d.name},
                       {"memory_used_mb", Opt(d.memory_used_mb)},
                       {"memory_total_mb", Opt(d.memory_total_mb)},
                       {"utilization_percent", Opt(d.utilization_percent)},
                       {"temperature_c", Opt(d.temperature_c)},
                       {"processes", procs},
                       {"source", gpu::SourceName(d.source)},
                       {"process_telemetry", d.process_telemetry}});
  }
  return devices;
}

json EncodeViews(const std::vector<service::GpuView>& gpus) {
  json views = json::array();
  for (const auto& g : gpus) views.push_back(EncodeView(g));
  return views;
}

json EncodeUsage(const std::vector<service::GpuUsage>& list) {
  json usage = json::array();
  for (const auto& u : list)
    usage.push_back({{"used_units", u.used_units},
                     {"exclusive", u.exclusive},
                     {"next_free", u.next_free},
                     {"owners_now", u.owners_now}});
  return usage;
}

}  // namespace

json Encode(const service::StatusView& v) { return json::parse(Write(v)); }

std::string Write(const service::StatusView& v) {
  std::string out;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("active_count").Int(v.active_count);
  w.Key("devices").Raw(Dump(EncodeDevices(v.snapshot)));
  w.Key("error").String(v.snapshot.error);
  w.Key("gpus").Raw(Dump(EncodeViews(v.gpus)));
  w.Key("mine");
  WriteReservations(w, v.mine);
  w.Key("mine_total").Int(v.mine_total);
  w.Key("now").Int(v.now);
  w.Key("reservations");
  WriteReservations(w, v.reservations);
  w.Key("usage").Raw(Dump(EncodeUsage(v.usage)));
  w.EndObject();
  return out;
}

Result<service::StatusView> DecodeStatus(const json& j) {
  return Guard([&]() -> Result<service::StatusView> {
    service::StatusView v;
    v.now = j.at("now").get<Seconds>();
    v.snapshot.error = j.at("error").get<std::string>();
    for (const auto& d : j.at("devices")) {
      gpu::DeviceSample s;
      s.index = d.at("index").get<int>();
      s.uuid = d.at("uuid").get<std::string>();
      s.name = d.at("name").get<std::string>();
      s.memory_used_mb = OptGet<int64_t>(d, "memory_used_mb");
      s.memory_total_mb = OptGet<int64_t>(d, "memory_total_mb");
      s.utilization_percent = OptGet<int>(d, "utilization_percent");
      s.temperature_c = OptGet<int>(d, "temperature_c");
      std::string src = d.at("source").get<std::string>();
      s.source = src == "nvml"         ? gpu::Source::kNvml
                 : src == "simulation" ? gpu::Source::kSimulation
                                       : gpu::Source::kNone;
      s.process_telemetry = d.at("process_telemetry").get<bool>();
      for (const auto& p : d.at("processes")) {
        gpu::ProcessSample ps;
        ps.pid = p.at("pid").get<int>();
        if (!p.at("uid").is_null()) ps.uid = p["uid"].get<uid_t>();
        ps.username = p.at("username").get<std::string>();
        ps.command = p.at("command").get<std::string>();
        ps.gpu_memory_mb = p.at("gpu_memory_mb").get<int64_t>();
        ps.sm_utilization_percent = OptGet<int>(p, "sm_utilization_percent");
        ps.kind = p.at("kind").get<std::string>();
        ps.identity_source = p.at("identity_source").get<std::string>();
        s.processes.push_back(std::move(ps));
      }
      v.snapshot.devices.push_back(std::move(s));
    }
    for (const auto& g : j.at("gpus")) v.gpus.push_back(DecodeView(g));
    for (const auto& r : j.at("reservations")) v.reservations.push_back(DecodeReservationUnchecked(r));
    for (const auto& u : j.at("usage"))
      v.usage.push_back({u.at("used_units").get<int>(), u.at("exclusive").get<bool>(),
                         u.at("next_free").get<Seconds>(), u.at("owners_now").get<std::vector<uint32_t>>()});
    v.active_count = j.at("active_count").get<int>();
    for (const auto& r : j.at("mine")) v.mine.push_back(DecodeReservationUnchecked(r));
    v.mine_total = j.contains("mine_total") ? j["mine_total"].get<int>() : static_cast<int>(v.mine.size());
    return v;
  });
}

json Encode(const service::PolicyStatus& s) { return {{"status", s.name()}, {"message", s.message}}; }

Result<service::PolicyStatus> DecodePolicyStatus(const json& j) {
  return Guard([&]() -> Result<service::PolicyStatus> {
    auto state = service::kPolicyStateNames.Parse(j.at("status").get<std::string>());
    if (!state) throw std::invalid_argument("unknown policy status");
    return service::PolicyStatus{*state, j.at("message").get<std::string>()};
  });
}

json Encode(const service::ImportSummary& s) {
  return {{"reservations", s.reservations}, {"active", s.active}, {"cancelled", s.cancelled},
          {"expired", s.expired},           {"edits", s.edits},   {"notifications", s.notifications},
          {"operations", s.operations}};
}

Result<service::ImportSummary> DecodeImportSummary(const json& j) {
  return Guard([&]() -> Result<service::ImportSummary> {
    service::ImportSummary s;
    s.reservations = j.at("reservations").get<int>();
    s.active = j.at("active").get<int>();
    s.cancelled = j.at("cancelled").get<int>();
    s.expired = j.at("expired").get<int>();
    s.edits = j.at("edits").get<int>();
    s.notifications = j.at("notifications").get<int>();
    s.operations = j.at("operations").get<int>();
    return s;
  });
}

// ---- jobs -----------------------------------------------------------------

json Encode(const service::JobsQuery& q) { return {{"open_only", q.open_only}}; }

Result<service::JobsQuery> DecodeJobsQuery(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::JobsQuery q;
  BK_ASSIGN_OR_RETURN(q.open_only, f.Bool("open_only"));
  BK_TRY(f.Done());
  return q;
}

namespace {
Result<store::JobStatus> ParseJobStatus(const std::string& name) {
  auto s = store::kJobStatusNames.Parse(name);
  if (!s) return Invalid(fmt::format("unknown job status {}", name));
  return *s;
}
}  // namespace

json Encode(const service::JobPatch& p) {
  json j = {{"reservation_id", p.reservation_id}, {"expire_reservation", p.expire_reservation}};
  if (!p.if_status.empty()) {
    json names = json::array();
    for (store::JobStatus s : p.if_status) names.push_back(store::kJobStatusNames.Name(s));
    j["if_status"] = names;
  }
  auto put = [&](const char* key, const auto& v) {
    if (v) j[key] = *v;
  };
  put("if_claim_token", p.if_claim_token);
  if (p.status) j["status"] = store::kJobStatusNames.Name(*p.status);
  put("claim_token", p.claim_token);
  put("worker_id", p.worker_id);
  put("runner_host", p.runner_host);
  put("runner_pid", p.runner_pid);
  put("exit_code", p.exit_code);
  put("message", p.message);
  put("launch_guard_state", p.launch_guard_state);
  put("launch_guard_key", p.launch_guard_key);
  put("recovery_state", p.recovery_state);
  put("log_warning", p.log_warning);
  put("log_rotated", p.log_rotated);
  if (!p.audit_action.empty()) j["audit_action"] = p.audit_action;
  if (!p.audit_message.empty()) j["audit_message"] = p.audit_message;
  return j;
}

Result<service::JobPatch> DecodeJobPatch(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::JobPatch p;
  BK_ASSIGN_OR_RETURN(p.reservation_id, f.RequiredStr("reservation_id"));
  BK_ASSIGN_OR_RETURN(auto if_status, f.StrList("if_status"));
  BK_ASSIGN_OR_RETURN(p.if_claim_token, f.AnyStr("if_claim_token"));
  BK_ASSIGN_OR_RETURN(auto status, f.Str("status"));
  BK_ASSIGN_OR_RETURN(p.claim_token, f.AnyStr("claim_token"));
  BK_ASSIGN_OR_RETURN(p.worker_id, f.AnyStr("worker_id"));
  BK_ASSIGN_OR_RETURN(p.runner_host, f.AnyStr("runner_host"));
  BK_ASSIGN_OR_RETURN(p.runner_pid, f.Int("runner_pid"));
  BK_ASSIGN_OR_RETURN(p.exit_code, f.Int("exit_code"));
  BK_ASSIGN_OR_RETURN(p.message, f.AnyStr("message"));
  BK_ASSIGN_OR_RETURN(p.launch_guard_state, f.AnyStr("launch_guard_state"));
  BK_ASSIGN_OR_RETURN(p.launch_guard_key, f.AnyStr("launch_guard_key"));
  BK_ASSIGN_OR_RETURN(p.recovery_state, f.AnyStr("recovery_state"));
  BK_ASSIGN_OR_RETURN(p.log_warning, f.AnyStr("log_warning"));
  BK_ASSIGN_OR_RETURN(p.log_rotated, f.OptBool("log_rotated"));
  BK_ASSIGN_OR_RETURN(p.expire_reservation, f.Bool("expire_reservation"));
  BK_ASSIGN_OR_RETURN(auto action, f.Str("audit_action"));
  p.audit_action = action.value_or("");
  BK_ASSIGN_OR_RETURN(auto message, f.AnyStr("audit_message"));
  p.audit_message = message.value_or("");
  BK_TRY(f.Done());
  for (const auto& name : if_status) {
    BK_ASSIGN_OR_RETURN(store::JobStatus s, ParseJobStatus(name));
    p.if_status.push_back(s);
  }
  if (status) {
    BK_ASSIGN_OR_RETURN(p.status, ParseJobStatus(*status));
  }
  return p;
}

json Encode(const service::JobRetryRequest& r) {
  return {{"ref", r.ref}, {"accept_duplicate_risk", r.accept_duplicate_risk}};
}

Result<service::JobRetryRequest> DecodeJobRetry(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::JobRetryRequest r;
  BK_ASSIGN_OR_RETURN(r.ref, f.RequiredStr("ref"));
  BK_ASSIGN_OR_RETURN(r.accept_duplicate_risk, f.Bool("accept_duplicate_risk"));
  BK_TRY(f.Done());
  return r;
}

json Encode(const store::JobRecord& job) { return EncodeJob(job); }

json Encode(const service::JobView& v) {
  return {{"reservation", Encode(v.reservation)}, {"job", EncodeJob(v.job)}};
}

json Encode(const std::vector<service::JobView>& jobs) {
  json out = json::array();
  for (const auto& v : jobs) out.push_back(Encode(v));
  return out;
}

json Encode(const service::JobPatchResult& r) {
  return {{"applied", r.applied}, {"reason", r.reason}, {"current", Encode(r.current)}};
}

Result<store::JobRecord> DecodeJobRecord(const json& j) {
  return Guard([&]() -> Result<store::JobRecord> { return DecodeJob(j); });
}

Result<service::JobView> DecodeJobView(const json& j) {
  return Guard([&]() -> Result<service::JobView> { return DecodeJobViewUnchecked(j); });
}

Result<std::vector<service::JobView>> DecodeJobViews(const json& j) {
  return Guard([&]() -> Result<std::vector<service::JobView>> {
    std::vector<service::JobView> out;
    for (const auto& v : j) out.push_back(DecodeJobViewUnchecked(v));
    return out;
  });
}

Result<service::JobPatchResult> DecodeJobPatchResult(const json& j) {
  return Guard([&]() -> Result<service::JobPatchResult> {
    service::JobPatchResult r;
    r.applied = j.at("applied").get<bool>();
    r.reason = j.at("reason").get<std::string>();
    r.current = DecodeJobViewUnchecked(j.at("current"));
    return r;
  });
}

json Encode(const service::PolicyReloadRequest& r) {
  return {{"config_text", Opt(r.config_text)},
          {"expect_sha256", r.expect_sha256},
          {"force", r.force},
          {"cancel_conflicting", r.cancel_conflicting},
          {"reason", Opt(r.reason)}};
}

Result<service::PolicyReloadRequest> DecodePolicyReload(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  service::PolicyReloadRequest r;
  BK_ASSIGN_OR_RETURN(r.config_text, f.Str("config_text"));
  BK_ASSIGN_OR_RETURN(auto sha, f.AnyStr("expect_sha256"));
  r.expect_sha256 = sha.value_or("");
  BK_ASSIGN_OR_RETURN(auto force, f.OptBool("force"));
  r.force = force.value_or(false);
  BK_ASSIGN_OR_RETURN(auto cancel, f.OptBool("cancel_conflicting"));
  r.cancel_conflicting = cancel.value_or(false);
  BK_ASSIGN_OR_RETURN(r.reason, f.Str("reason"));
  BK_TRY(f.Done());
  return r;
}

json Encode(const service::PolicyChange& r) {
  json changes = json::array(), conflicts = json::array();
  for (const auto& c : r.changes)
    changes.push_back({{"key", c.key}, {"before", c.before}, {"after", c.after}});
  for (const auto& c : r.conflicts)
    conflicts.push_back({{"reservation", Encode(c.reservation)}, {"why", c.why}});
  return {{"status", r.status},     {"changes", changes},     {"restart", r.restart},
          {"conflicts", conflicts}, {"notified", r.notified}, {"cancelled", r.cancelled}};
}

Result<service::PolicyChange> DecodePolicyChange(const json& j) {
  return Guard([&]() -> Result<service::PolicyChange> {
    service::PolicyChange r;
    r.status = j.at("status").get<std::string>();
    for (const auto& c : j.at("changes"))
      r.changes.push_back({c.at("key").get<std::string>(), c.at("before").get<std::string>(),
                           c.at("after").get<std::string>()});
    r.restart = j.at("restart").get<std::vector<std::string>>();
    for (const auto& c : j.at("conflicts"))
      r.conflicts.push_back(
          {DecodeReservationUnchecked(c.at("reservation")), c.at("why").get<std::string>()});
    r.notified = j.at("notified").get<int64_t>();
    r.cancelled = j.at("cancelled").get<int64_t>();
    return r;
  });
}

json Encode(const service::VerifyReport& r) {
  return {{"path", r.path},
          {"integrity", r.integrity},
          {"violations", r.violations},
          {"reservations", r.reservations},
          {"active", r.active}};
}

Result<service::VerifyReport> DecodeVerifyReport(const json& j) {
  return Guard([&]() -> Result<service::VerifyReport> {
    service::VerifyReport r;
    r.path = j.at("path").get<std::string>();
    r.integrity = j.at("integrity").get<std::string>();
    r.violations = j.at("violations").get<std::vector<std::string>>();
    r.reservations = j.at("reservations").get<int64_t>();
    r.active = j.at("active").get<int64_t>();
    return r;
  });
}

json Encode(const service::TransferOutcome& o) {
  return {
      {"reservation", Encode(o.reservation)}, {"from_uid", o.from_uid}, {"from_username", o.from_username}};
}

Result<service::TransferOutcome> DecodeTransferOutcome(const json& j) {
  return Guard([&]() -> Result<service::TransferOutcome> {
    return service::TransferOutcome{DecodeReservationUnchecked(j.at("reservation")),
                                    j.at("from_uid").get<uint32_t>(),
                                    j.at("from_username").get<std::string>()};
  });
}

json Encode(const service::LedgerSwap& s) { return {{"kept", s.kept}, {"checked", Encode(s.checked)}}; }

Result<service::LedgerSwap> DecodeLedgerSwap(const json& j) {
  return Guard([&]() -> Result<service::LedgerSwap> {
    BK_ASSIGN_OR_RETURN(service::VerifyReport checked, DecodeVerifyReport(j.at("checked")));
    return service::LedgerSwap{j.at("kept").get<std::string>(), std::move(checked)};
  });
}

json Encode(const engine::Policy& p) {
  json blackouts = json::array();
  for (const auto& b : p.blackouts)
    blackouts.push_back({{"start", b.start}, {"end", b.end}, {"reason", b.reason}, {"gpus", b.gpus}});
  json prio = json::object();
  for (const auto& [g, v] : p.gpu_priority) prio[std::to_string(g)] = v;
  return {{"gpu_count", p.gpu_count},
          {"slot_seconds", p.slot},
          {"share_capacity", p.share_capacity},
          {"queue_search_seconds", p.queue_search},
          {"horizon_seconds", p.horizon},
          {"max_duration_seconds", p.max_duration},
          {"blackouts", blackouts},
          {"disabled_gpus", p.disabled_gpus},
          {"gpu_priority", prio},
          {"require_shared_memory", p.require_shared_memory},
          {"shared_memory_reserve_mb", p.shared_memory_reserve_mb},
          {"host_cpus", Opt(p.host_cpus)},
          {"host_ram_mb", Opt(p.host_ram_mb)},
          {"default_booking_cpus", p.default_booking_cpus},
          {"default_booking_ram_mb", p.default_booking_ram_mb}};
}

Result<engine::Policy> DecodePolicy(const json& j) {
  return Guard([&]() -> Result<engine::Policy> {
    engine::Policy p;
    p.gpu_count = j.at("gpu_count").get<int>();
    p.slot = j.at("slot_seconds").get<Seconds>();
    p.share_capacity = j.at("share_capacity").get<int>();
    p.queue_search = j.at("queue_search_seconds").get<Seconds>();
    p.horizon = j.at("horizon_seconds").get<Seconds>();
    p.max_duration = j.at("max_duration_seconds").get<Seconds>();
    for (const auto& b : j.at("blackouts"))
      p.blackouts.push_back(
          {b.at("start").get<Seconds>(), b.at("end").get<Seconds>(), b.at("reason").get<std::string>(),
           b.value("gpus", std::vector<int>{})});  // absent from daemons before per-GPU blackouts
    p.disabled_gpus = j.at("disabled_gpus").get<std::vector<int>>();
    for (const auto& [g, v] : j.at("gpu_priority").items()) p.gpu_priority[std::stoi(g)] = v.get<int>();
    p.require_shared_memory = j.at("require_shared_memory").get<bool>();
    p.shared_memory_reserve_mb = j.at("shared_memory_reserve_mb").get<int64_t>();
    p.host_cpus = OptGet<int64_t>(j, "host_cpus");
    p.host_ram_mb = OptGet<int64_t>(j, "host_ram_mb");
    p.default_booking_cpus = j.at("default_booking_cpus").get<int64_t>();
    p.default_booking_ram_mb = j.at("default_booking_ram_mb").get<int64_t>();
    if (p.gpu_count < 1 || p.slot < 60) return Invalid("the daemon announced an invalid policy");
    return p;
  });
}

// ---- the protocol's own requests and replies ------------------------------

json Encode(const NoParams&) { return json::object(); }

Result<NoParams> DecodeNoParams(const json& j) {
  Fields f(j);
  BK_TRY(f.Known({}));
  return NoParams{};
}

json Encode(const ServerInfo& s) {
  return {{"version", s.version},
          {"deployment", s.deployment},
          {"owner_uid", s.owner_uid},
          {"owner", s.owner},
          {"actor", {{"uid", s.actor.uid}, {"username", s.actor.username}, {"admin", s.actor.admin}}},
          {"now", s.now},
          {"policy", Encode(s.policy)},
          {"telemetry", s.telemetry}};
}

Result<ServerInfo> DecodeServerInfo(const json& j) {
  ServerInfo s;
  try {
    s.version = j.at("version").get<std::string>();
    s.deployment = j.at("deployment").get<std::string>();
    s.owner_uid = j.at("owner_uid").get<uint32_t>();
    s.owner = j.at("owner").get<std::string>();
    s.actor.uid = j.at("actor").at("uid").get<uint32_t>();
    s.actor.username = j.at("actor").at("username").get<std::string>();
    s.actor.admin = j.at("actor").at("admin").get<bool>();
    s.now = j.at("now").get<Seconds>();
    // A daemon of an older version does not say.
    s.telemetry = j.value("telemetry", std::string("unknown (the daemon does not say)"));
    if (!j.contains("policy")) throw std::invalid_argument("no policy");
  } catch (const std::exception&) {
    return Fail(ErrorKind::kCorrupt, "the daemon sent a malformed server.ping reply");
  }
  BK_ASSIGN_OR_RETURN(s.policy, DecodePolicy(j["policy"]));
  return s;
}

json Encode(const SlotsRequest& r) {
  return {{"request", Encode(r.request)}, {"from", Opt(r.from)}, {"limit", r.limit}};
}

Result<SlotsRequest> DecodeSlotsRequest(const json& j) {
  Fields f(j);
  BK_TRY(f.Known({"request", "from", "limit"}));
  if (!j.contains("request")) return Invalid("request is required");
  SlotsRequest r;
  BK_ASSIGN_OR_RETURN(r.request, DecodeCreate(j["request"]));
  BK_ASSIGN_OR_RETURN(r.from, f.IntIn("from", 0, int64_t{1} << 40));
  BK_ASSIGN_OR_RETURN(auto limit, f.IntIn("limit", 1, 20));
  r.limit = static_cast<int>(limit.value_or(r.limit));
  return r;
}

json Encode(const HistoryRequest& r) { return {{"ref", r.ref}}; }

Result<HistoryRequest> DecodeHistoryRequest(const json& j) {
  BK_ASSIGN_OR_RETURN(std::string ref, OnlyString(j, "ref"));
  return HistoryRequest{ref};
}

json Encode(const LogRequest& r) { return {{"limit", r.limit}}; }

Result<LogRequest> DecodeLogRequest(const json& j) {
  BK_ASSIGN_OR_RETURN(int limit, OnlyLimit(j, LogRequest{}.limit));
  return LogRequest{limit};
}

json Encode(const NotificationsRequest& r) { return {{"limit", r.limit}}; }

Result<NotificationsRequest> DecodeNotificationsRequest(const json& j) {
  BK_ASSIGN_OR_RETURN(int limit, OnlyLimit(j, NotificationsRequest{}.limit));
  return NotificationsRequest{limit};
}

json Encode(const MarkReadRequest& r) { return {{"ids", r.ids}}; }

Result<MarkReadRequest> DecodeMarkReadRequest(const json& j) {
  Fields f(j);
  BK_TRY(f.Known({"ids"}));
  if (!j.contains("ids")) return Invalid("ids is required");
  BK_ASSIGN_OR_RETURN(auto ids, f.StrList("ids"));
  if (ids.size() > 1000) return Invalid("ids may list at most 1000 notifications");
  return MarkReadRequest{ids};
}

json Encode(const MarkReadReply& r) { return {{"marked", r.marked}}; }

Result<MarkReadReply> DecodeMarkReadReply(const json& j) {
  if (!j.is_object() || !j.contains("marked") || !j["marked"].is_number_integer())
    return Fail(ErrorKind::kCorrupt, "the daemon sent a malformed mark_read reply");
  return MarkReadReply{j["marked"].get<int64_t>()};
}

json Encode(const GenerationReply& r) { return {{"generation", r.generation}}; }

Result<GenerationReply> DecodeGenerationReply(const json& j) {
  if (!j.is_object() || !j.contains("generation") || !j["generation"].is_number_unsigned())
    return Fail(ErrorKind::kCorrupt, "the daemon sent a malformed generation reply");
  return GenerationReply{j["generation"].get<uint64_t>()};
}

json Encode(const OperationRequest& r) { return {{"op_id", r.op_id}}; }

Result<OperationRequest> DecodeOperationRequest(const json& j) {
  BK_ASSIGN_OR_RETURN(std::string op_id, OnlyString(j, "op_id"));
  return OperationRequest{op_id};
}

json Encode(const StatusRequest& r) {
  json j = {{"from", Opt(r.from)}, {"to", Opt(r.to)}};
  if (r.mine_limit) j["mine_limit"] = *r.mine_limit;
  return j;
}

Result<StatusRequest> DecodeStatusRequest(const json& j) {
  Fields f(j);
  BK_TRY(f.Known({"from", "to", "mine_limit"}));
  StatusRequest r;
  BK_ASSIGN_OR_RETURN(r.from, f.IntIn("from", 0, int64_t{1} << 40));
  BK_ASSIGN_OR_RETURN(r.to, f.IntIn("to", 0, int64_t{1} << 40));
  BK_ASSIGN_OR_RETURN(auto limit, f.IntIn("mine_limit", 0, 100000));
  if (limit) r.mine_limit = static_cast<int>(*limit);
  return r;
}

namespace {

// Params of at most one string `key`; "" is sent as nothing.
json OptionalString(const char* key, const std::string& value) {
  json j = json::object();
  if (!value.empty()) j[key] = value;
  return j;
}

Result<std::string> OnlyOptionalString(const json& j, const char* key) {
  Fields f(j);
  BK_TRY(f.Known({key}));
  BK_ASSIGN_OR_RETURN(auto value, f.Str(key));
  return value.value_or("");
}

}  // namespace

json Encode(const VerifyRequest& r) { return OptionalString("path", r.path); }

Result<VerifyRequest> DecodeVerifyRequest(const json& j) {
  BK_ASSIGN_OR_RETURN(std::string path, OnlyOptionalString(j, "path"));
  return VerifyRequest{path};
}

json Encode(const BackupRequest& r) { return {{"path", r.path}}; }

Result<BackupRequest> DecodeBackupRequest(const json& j) {
  BK_ASSIGN_OR_RETURN(std::string path, OnlyString(j, "path"));
  return BackupRequest{path};
}

json Encode(const ClearRequest& r) { return OptionalString("backup_path", r.backup_path); }

Result<ClearRequest> DecodeClearRequest(const json& j) {
  BK_ASSIGN_OR_RETURN(std::string path, OnlyOptionalString(j, "backup_path"));
  return ClearRequest{path};
}

json Encode(const BackupReply& r) { return {{"path", r.path}}; }

Result<BackupReply> DecodeBackupReply(const json& j) {
  if (!j.is_object() || !j.contains("path") || !j["path"].is_string())
    return Fail(ErrorKind::kCorrupt, "the daemon sent a malformed backup reply");
  return BackupReply{j["path"].get<std::string>()};
}

json Encode(const ImportRequest& r) {
  if (r.descriptor) return {{"descriptor", true}};
  return {{"ledger_json", r.ledger_json}};
}

Result<ImportRequest> DecodeImportRequest(const json& j) {
  if (j.is_object() && j.contains("descriptor")) {
    Fields f(j);
    BK_TRY(f.Known({"descriptor"}));
    BK_ASSIGN_OR_RETURN(bool passed, f.Bool("descriptor"));
    if (!passed) return Invalid("descriptor must be true; give the file inline as ledger_json otherwise");
    return ImportRequest{.descriptor = true};
  }
  BK_ASSIGN_OR_RETURN(std::string text, OnlyString(j, "ledger_json"));
  return ImportRequest{text};
}

json Encode(const UsageRequest& r) {
  const monitor::UsageQuery& q = r.query;
  json j = {{"view", monitor::UsageKindName(q.kind)},
            {"from", q.from},
            {"resolution", q.resolution},
            {"limit", q.limit},
            {"text", r.text}};
  if (q.chart) j["chart"] = true;
  if (r.to_given) j["to"] = q.to;
  if (q.uid) j["uid"] = *q.uid;
  if (q.gpu) j["gpu"] = *q.gpu;
  return j;
}

// The checks that need the daemon's clock (the default `to`) and the
// caller (view "me") are the method's.
Result<UsageRequest> DecodeUsageRequest(const json& j) {
  Fields f(j);
  BK_TRY(f.Known({"view", "from", "to", "uid", "gpu", "resolution", "limit", "text", "chart"}));
  UsageRequest r;
  monitor::UsageQuery& q = r.query;
  BK_ASSIGN_OR_RETURN(std::string view, f.NonEmptyStr("view"));
  bool known = false;
  for (auto kind : {monitor::UsageKind::kMe, monitor::UsageKind::kUsers, monitor::UsageKind::kEvents,
                    monitor::UsageKind::kSamples, monitor::UsageKind::kStorage})
    if (view == monitor::UsageKindName(kind)) {
      q.kind = kind;
      known = true;
    }
  if (!known) return Invalid("view must be me, users, events, samples or storage");
  BK_ASSIGN_OR_RETURN(auto from, f.IntIn("from", 0, int64_t{1} << 40));
  q.from = from.value_or(0);
  BK_ASSIGN_OR_RETURN(auto to, f.IntIn("to", 0, int64_t{1} << 40));
  r.to_given = to.has_value();
  q.to = to.value_or(0);
  if (r.to_given && q.from >= q.to) return Invalid("from must be before to");
  BK_ASSIGN_OR_RETURN(auto uid, f.IntIn("uid", -1, 0xfffffffeLL));
  if (uid && *uid >= 0) q.uid = static_cast<uint32_t>(*uid);
  BK_ASSIGN_OR_RETURN(auto gpu, f.IntIn("gpu", -1, 1023));
  if (gpu && *gpu >= 0) q.gpu = static_cast<int>(*gpu);
  BK_ASSIGN_OR_RETURN(auto resolution, f.IntIn("resolution", 60, 86400));
  q.resolution = resolution.value_or(60);
  if (!monitor::IsResolution(q.resolution)) return Invalid("resolution must be 60, 300, 600, 3600 or 86400");
  BK_ASSIGN_OR_RETURN(auto limit, f.IntIn("limit", 1, 200000));
  q.limit = static_cast<int>(limit.value_or(1000));
  r.text = f.Flag("text");
  BK_ASSIGN_OR_RETURN(q.chart, f.Bool("chart"));
  return r;
}

json Encode(const UsageReply& r) { return {{"document", r.document}}; }

Result<UsageReply> DecodeUsageReply(const json& j) {
  if (!j.is_object() || !j.contains("document") || !j["document"].is_string())
    return Fail(ErrorKind::kCorrupt, "the daemon sent a malformed usage reply");
  return UsageReply{j["document"].get<std::string>()};
}

json ErrorObject(int code, const std::string& message, std::optional<ErrorKind> kind) {
  json e = {{"code", code}, {"message", message}};
  if (kind) e["data"] = {{"kind", ErrorKindName(*kind)}};
  return e;
}

Error ErrorFromObject(const json& error) {
  std::string message = error.is_object() && error.contains("message") && error["message"].is_string()
                            ? error["message"].get<std::string>()
                            : "the daemon reported an error";
  ErrorKind kind = ErrorKind::kInvalid;
  if (error.is_object() && error.contains("data") && error["data"].is_object() &&
      error["data"].contains("kind") && error["data"]["kind"].is_string()) {
    std::string k = error["data"]["kind"].get<std::string>();
    for (ErrorKind c : {ErrorKind::kInvalid, ErrorKind::kUsage, ErrorKind::kConflict, ErrorKind::kNoSlot,
                        ErrorKind::kNotFound, ErrorKind::kPermission, ErrorKind::kPolicy, ErrorKind::kCorrupt,
                        ErrorKind::kIo, ErrorKind::kBusy, ErrorKind::kUnavailable, ErrorKind::kInternal})
      if (ErrorKindName(c) == k) kind = c;
  }
  return Error{kind, message};
}

// ---- announcements -------------------------------------------------------

namespace {

constexpr int64_t kMaxTime = int64_t{1} << 40;

// The fields publish and edit share: what to show, how loud, and when.
json AnnouncementFields(const std::optional<std::string>& message, const std::optional<std::string>& level,
                        const std::optional<Seconds>& starts_at, const std::optional<Seconds>& expires_at,
                        const std::optional<Seconds>& lifetime) {
  json j = json::object();
  if (message) j["message"] = *message;
  if (level) j["level"] = *level;
  if (starts_at) j["starts_at"] = *starts_at;
  if (expires_at) j["expires_at"] = *expires_at;
  if (lifetime) j["lifetime_seconds"] = *lifetime;
  return j;
}

// Reads those fields into `r` (a PublishRequest or an AnnouncementEdit).
template <class R>
Status DecodeAnnouncementFields(Fields& f, R& r) {
  BK_ASSIGN_OR_RETURN(auto level, f.Str("level"));
  if (level) r.level = *level;
  BK_ASSIGN_OR_RETURN(r.starts_at, f.IntIn("starts_at", 0, kMaxTime));
  BK_ASSIGN_OR_RETURN(r.expires_at, f.IntIn("expires_at", 0, kMaxTime));
  BK_ASSIGN_OR_RETURN(r.lifetime, f.IntIn("lifetime_seconds", 0, kMaxTime));
  return Ok();
}

}  // namespace

json Encode(const service::PublishRequest& r) {
  return AnnouncementFields(r.message, r.level, r.starts_at, r.expires_at, r.lifetime);
}

Result<service::PublishRequest> DecodePublishRequest(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  BK_TRY(f.Known({"message", "level", "starts_at", "expires_at", "lifetime_seconds"}));
  service::PublishRequest r;
  // An empty message is the service's to refuse, with its own words.
  BK_ASSIGN_OR_RETURN(auto message, f.AnyStr("message"));
  r.message = message.value_or("");
  BK_TRY(DecodeAnnouncementFields(f, r));
  return r;
}

json Encode(const service::AnnouncementEdit& r) {
  json j = AnnouncementFields(r.message, r.level, r.starts_at, r.expires_at, r.lifetime);
  j["ref"] = r.ref;
  return j;
}

Result<service::AnnouncementEdit> DecodeAnnouncementEdit(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  BK_TRY(f.Known({"ref", "message", "level", "starts_at", "expires_at", "lifetime_seconds"}));
  service::AnnouncementEdit r;
  BK_ASSIGN_OR_RETURN(r.ref, f.NonEmptyStr("ref"));
  BK_ASSIGN_OR_RETURN(r.message, f.AnyStr("message"));
  BK_TRY(DecodeAnnouncementFields(f, r));
  return r;
}

json Encode(const service::AnnouncementsQuery& q) { return {{"all", q.all}}; }

Result<service::AnnouncementsQuery> DecodeAnnouncementsQuery(const json& j) {
  Fields f(j);
  BK_TRY(f.Object());
  BK_TRY(f.Known({"all"}));
  BK_ASSIGN_OR_RETURN(bool all, f.Bool("all"));
  return service::AnnouncementsQuery{all};
}

json Encode(const AnnouncementRef& r) { return {{"ref", r.ref}}; }

Result<AnnouncementRef> DecodeAnnouncementRef(const json& j) {
  BK_ASSIGN_OR_RETURN(std::string ref, OnlyString(j, "ref"));
  return AnnouncementRef{ref};
}

json Encode(const service::AnnouncementOutcome& o) {
  return {{"announcement", EncodeAnnouncement(o.announcement)}, {"changed", o.changed}};
}

json Encode(const std::vector<store::Announcement>& list) {
  json out = json::array();
  for (const auto& a : list) out.push_back(EncodeAnnouncement(a));
  return out;
}

Result<service::AnnouncementOutcome> DecodeAnnouncementOutcome(const json& j) {
  return Guard([&]() -> Result<service::AnnouncementOutcome> {
    return service::AnnouncementOutcome{DecodeAnnouncement(j.at("announcement")),
                                        j.at("changed").get<bool>()};
  });
}

Result<std::vector<store::Announcement>> DecodeAnnouncements(const json& j) {
  return Guard([&]() -> Result<std::vector<store::Announcement>> {
    std::vector<store::Announcement> out;
    for (const auto& a : j) out.push_back(DecodeAnnouncement(a));
    return out;
  });
}

}  // namespace bk::rpc
