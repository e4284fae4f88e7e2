#include "service/booking_service.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "engine/parse.h"
#include "engine/reference.h"
#include "service/fingerprint.h"
#include "service/impl.h"
#include "sys/fs.h"
#include "sys/random.h"
#include "sys/users.h"

namespace bk::service {

using engine::Mode;
using engine::Reservation;
using engine::Seconds;

// ---- Impl -------------------------------------------------------------------

store::OpenOptions BookingService::Impl::StoreOptions(bool create) const {
  store::OpenOptions o{deps.config->ledger_path, create, deps.data_owner,
                       static_cast<int>(deps.config->lock_timeout_seconds * 1000), deps.exclusive_store};
  o.vfs = deps.store_vfs;
  o.on_lock_wait = deps.on_lock_wait;
  return o;
}

Result<store::LedgerStore*> BookingService::Impl::Reader() {
  if (!store) {
    BK_ASSIGN_OR_RETURN(store, store::LedgerStore::Open(StoreOptions(false)));
    Watch(*store);
  }
  return store.get();
}

void BookingService::Impl::Watch(store::LedgerStore& s) {
  ++stores;
  live.reset();
  if (!deps.exclusive_store) return;
  // A failed group commit took back writes the calendar had taken in: it is
  // read again from disk at its next use, and read caches start afresh.
  policy_matched = false;
  s.OnGroupRollback([this] {
    live.reset();
    policy_matched = false;
    ++generation;
    if (override_undo) config_override = *std::exchange(override_undo, std::nullopt);
  });
  s.OnCommit([this](const std::vector<engine::Reservation>& written) {
    ++generation;
    if (!live) return;
    // In order: a reservation written twice ends as it was written last. A
    // pruned one has ended, so Expire drops it if it was still held.
    for (const auto& r : written) {
      if (r.status == engine::Status::kActive)
        live->Put(r.id, r.uid, r.ToFootprint());
      else
        live->Erase(r.id);
    }
  });
}

Result<engine::LiveCalendar*> BookingService::Impl::Live(store::LedgerStore& s, Seconds now) {
  if (!live) {
    BK_ASSIGN_OR_RETURN(auto entries, s.ActiveEntries(now));
    live.emplace(policy(), std::move(entries));
  }
  live->Expire(now);  // ended: it never counts again
  return &*live;
}

Result<engine::Calendar> BookingService::Impl::PlacementCalendar(store::LedgerStore& s, Seconds now,
                                                                 const std::string& except) {
  if (!deps.exclusive_store) {
    BK_ASSIGN_OR_RETURN(auto footprints, s.ActiveFootprints(now, except));
    return engine::Calendar(policy(), footprints, now);
  }
  BK_ASSIGN_OR_RETURN(engine::LiveCalendar * cal, Live(s, now));
  std::optional<engine::Footprint> without;
  if (const engine::Footprint* f = except.empty() ? nullptr : cal->Find(except)) without = *f;
  return engine::Calendar(policy(), cal->occupancy(), now, without);
}

Result<std::vector<engine::Reservation>> BookingService::Impl::Overlapping(store::LedgerStore& s,
                                                                           Seconds from, Seconds to,
                                                                           Seconds now, bool running_only) {
  store::ReservationQuery q;
  q.include_cancelled = false;
  q.overlap_start = from;
  q.overlap_end = to;
  if (running_only) {
    q.active_only = true;
    q.now = now;
  }
  if (!deps.exclusive_store) return s.Reservations(q);
  BK_ASSIGN_OR_RETURN(engine::LiveCalendar * cal, Live(s, now));
  std::vector<engine::Reservation> out;
  // Ended ones (expired, or active until something marks them) from the ledger.
  if (!running_only && from < now) {
    q.ended_by = now;
    BK_ASSIGN_OR_RETURN(out, s.Reservations(q));
  }
  for (const std::string& id : cal->Overlapping(from, to)) {
    BK_ASSIGN_OR_RETURN(auto r, s.Get(id));
    if (r) out.push_back(*std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const engine::Reservation& a, const engine::Reservation& b) {
    return std::tie(a.start, a.end, a.id) < std::tie(b.start, b.end, b.id);
  });
  return out;
}

Result<int64_t> BookingService::Impl::CountActive(store::LedgerStore& s, uint32_t uid, Seconds now) {
  if (!deps.exclusive_store) {
    store::ReservationQuery q{uid, true, true, now};
    return s.CountReservations(q);
  }
  BK_ASSIGN_OR_RETURN(engine::LiveCalendar * cal, Live(s, now));
  return cal->CountOwnedBy(uid);
}

Result<store::LedgerStore*> BookingService::Impl::Writer() {
  if (trial) return store.get();
  if (!store || store->in_memory()) {
    BK_ASSIGN_OR_RETURN(store, store::LedgerStore::Open(StoreOptions(true)));
    Watch(*store);
  }
  return store.get();
}

::bk::Status BookingService::Impl::Prune(store::LedgerStore& s, Seconds now) {
  int64_t days = deps.config->ledger_retention_days;
  if (days <= 0) return Ok();
  BK_ASSIGN_OR_RETURN(auto removed, s.PruneIfDue(now, now - days * engine::kDay));
  if (removed.empty()) return Ok();
  Actor keeper;
  keeper.uid = deps.data_owner;
  keeper.username = sys::UserName(deps.data_owner);
  std::string why = fmt::format("removed from the ledger by the {}-day retention", days);
  std::string txn_id = sys::NewUuid();
  for (const auto& r : removed) {
    store::Event e = MakeEvent("prune", r, keeper, r.op_id, why, now);
    e.transaction_id = txn_id;
    e.before = StateJson(r);
    BK_TRY(s.AppendEvent(e));
  }
  return Ok();
}

bool BookingService::Impl::LedgerExists() const { return sys::Exists(deps.config->ledger_path); }

::bk::Status BookingService::Impl::RecordChange(store::LedgerStore& s, const Actor& actor,
                                                const std::string& action, const Reservation& cur,
                                                const Reservation& next,
                                                const std::optional<std::string>& op_id,
                                                const std::string& signature, const std::string& message,
                                                Seconds now, std::string (*state)(const Reservation&)) {
  std::string id = op_id.value_or(sys::NewUuid());
  BK_TRY(s.Update(next));
  BK_TRY(s.InsertOperation({actor.uid, id, action, cur.id, signature, now}));
  store::Event e = MakeEvent(action, next, actor, id, message, now);
  e.transaction_id = sys::NewUuid();
  e.before = state(cur);
  e.after = state(next);
  e.signature = signature;
  return s.AppendEvent(e);
}

gpu::Snapshot BookingService::Impl::Telemetry() {
  auto age = std::chrono::steady_clock::now() - snapshot_at;
  bool fresh = deps.snapshot_ttl_ms <= 0 || age < std::chrono::milliseconds(deps.snapshot_ttl_ms);
  if (snapshot && fresh) return *snapshot;
  snapshot_at = std::chrono::steady_clock::now();
  // The daemon passes its monitor's latest attributed snapshot, a private
  // ledger the source gpu::OpenSource chose: a simulation file or NVML alike.
  snapshot = deps.gpus ? deps.gpus->Sample(policy().gpu_count) : gpu::UnknownSnapshot(policy().gpu_count);
  return *snapshot;
}

Advice BookingService::Impl::LiveAdvice() { return BuildAdvice(Telemetry(), policy()); }

Result<store::LedgerStore*> BookingService::Impl::CheckedReader() {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, Reader());
  BK_TRY(CheckPolicy(*s, false));
  return s;
}

std::string BookingService::TelemetrySource() {
  return impl_->deps.gpus ? impl_->deps.gpus->Describe() : gpu::CountOnlySource().Describe();
}

::bk::Status BookingService::Impl::CheckPolicy(store::LedgerStore& s, bool bind) {
  // The daemon alone writes its ledger: once the bound policy was read and
  // matched, it stays so (Watch and a failed group commit forget it).
  if (deps.exclusive_store && policy_matched) return Ok();
  BK_ASSIGN_OR_RETURN(policy_matched, CheckBoundPolicy(s, policy(), bind));
  return Ok();
}

Result<bool> CheckBoundPolicy(store::LedgerStore& s, const engine::Policy& policy, bool bind) {
  std::string local = config::BoundPolicyJson(policy);
  BK_ASSIGN_OR_RETURN(auto bound, s.BoundPolicy());
  if (!bound) {
    if (bind) BK_TRY(s.BindPolicy(local));
    return false;
  }
  std::string diff = config::ComparePolicy(*bound, local);
  if (diff.empty()) return true;
  return Fail(ErrorKind::kPolicy,
              fmt::format("local configuration does not match ledger policy: {}; restore those "
                          "settings or use another data directory",
                          diff));
}

Result<Reservation> BookingService::Impl::Resolve(store::LedgerStore& s, const Actor& actor,
                                                  const std::string& raw, RefScope scope, Seconds now) {
  std::string ref(Trim(raw));
  if (ref.empty()) return Invalid("give a reservation number or ID; `bk l` lists yours");
  store::ReservationQuery own{actor.uid, true, true, now};
  BK_ASSIGN_OR_RETURN(auto mine, s.Reservations(own));
  // A number off the list is refused where it would change something; a
  // history lookup only reads, so there it may still be an ID prefix.
  auto pick = engine::ParseListRef(ref, mine.size(), "active reservation", "bk l");
  if (!pick && scope == RefScope::kOwnActive) return std::unexpected(pick.error());
  if (pick && pick->is_number) return mine[pick->index];
  std::vector<Reservation> matches;
  if (scope == RefScope::kOwnActive) {
    for (auto& r : mine)
      if (StartsWith(r.id, ref)) matches.push_back(r);
  } else {
    BK_ASSIGN_OR_RETURN(matches, s.ByPrefix(ref, actor.uid, 16));
  }
  if (matches.empty()) {
    // Someone else's, or one of ours that is no longer active: say which.
    BK_ASSIGN_OR_RETURN(auto any, s.ByPrefix(ref, std::nullopt, 2));
    if (any.size() == 1 && any[0].uid != actor.uid) {
      if (actor.admin && scope == RefScope::kOwnActive && any[0].ActiveAt(now)) return any[0];
      return Fail(ErrorKind::kPermission,
                  fmt::format("reservation {} belongs to {}; you can only {} your own", any[0].ShortId(),
                              any[0].username, scope == RefScope::kOwnAny ? "see the history of" : "change"));
    }
    if (any.size() == 1 && scope == RefScope::kOwnActive)
      return Invalid(fmt::format("reservation {} is {}; only active reservations can change",
                                 any[0].ShortId(), engine::StatusName(any[0].StatusAt(now))));
    return Fail(
        ErrorKind::kNotFound,
        fmt::format("reservation not found for current user: {}; `bk l` lists your reservations", ref));
  }
  if (matches.size() > 1) {
    std::vector<std::string> ids;
    for (size_t i = 0; i < matches.size() && i < 4; ++i) ids.push_back(matches[i].ShortId());
    return Invalid(
        fmt::format("ambiguous reservation ID {}; matches {}; give more characters", ref, Join(ids, ", ")));
  }
  return matches[0];
}

Result<std::string> CheckedReason(const std::string& raw) {
  std::string reason(Trim(raw));
  if (reason.empty() || reason.size() > 512) return Invalid("--reason must be 1-512 characters");
  for (unsigned char c : reason)
    if (c < 0x20) return Invalid("--reason must not contain control characters");
  return reason;
}

store::Event ServerEvent(const std::string& action, const Actor& actor, const std::string& message,
                         Seconds now) {
  store::Event e;
  e.event_id = sys::NewUuid();
  e.transaction_id = sys::NewUuid();
  e.ts = now;
  e.uid = e.actor_uid = actor.uid;
  e.username = e.actor_username = actor.username;
  e.action = action;
  e.message = message;
  return e;
}

store::Event MakeEvent(const std::string& action, const Reservation& r, const Actor& actor,
                       const std::string& op_id, const std::string& message, Seconds now) {
  store::Event e;
  e.event_id = sys::NewUuid();
  e.ts = now;
  e.uid = r.uid;
  e.username = r.username;
  e.actor_uid = actor.uid;
  e.actor_username = actor.username;
  e.action = action;
  e.reservation_id = r.id;
  e.op_id = op_id;
  e.gpus = r.gpus;
  e.mode = std::string(engine::ModeName(r.mode));
  if (r.mode == Mode::kShared) e.share_units = r.share_units;
  e.start = r.start;
  e.end = r.end;
  e.message = message;
  return e;
}

std::string StateJson(const Reservation& r) {
  nlohmann::json j = {
      {"end_at", engine::FormatIsoUtc(r.end)},
      {"expected_memory_mb", r.memory_mb ? nlohmann::json(*r.memory_mb) : nlohmann::json()},
      {"gpus", r.gpus},
      {"mode", engine::ModeName(r.mode)},
      {"share_units", r.mode == Mode::kShared ? nlohmann::json(r.share_units) : nlohmann::json()},
      {"start_at", engine::FormatIsoUtc(r.start)},
      {"cpus", r.cpus},
      {"ram_mb", r.ram_mb}};
  return j.dump();
}

// ---- helpers ----------------------------------------------------------------

namespace {

std::string BusyText(const GpuView& v) { return fmt::format("GPU {} ({})", v.gpu, v.live_reason); }

// Whether GPU `g`'s live load concerns a booking `booker` makes from `start`:
// only one that starts in the current slot meets it, and only someone else's
// processes stand in its way. Load that no process explains has no known
// owner, so it counts as someone else's.
bool BusyForBooker(const gpu::Snapshot& live, int g, uint32_t booker, Seconds start, Seconds now,
                   const engine::Policy& policy) {
  if (start >= policy.grid().Floor(now) + policy.slot) return false;
  if (g < 0 || g >= static_cast<int>(live.devices.size())) return true;
  bool any = false;
  for (const gpu::ProcessSample& pr : live.devices[g].processes) {
    if (gpu::IsSystemProcess(pr.command)) continue;
    any = true;
    if (!pr.uid || *pr.uid != booker) return true;
  }
  return !any;
}

// Who books, and what the GPUs were doing when they did.
struct Booker {
  uint32_t uid;
  Seconds now;
  const gpu::Snapshot& live;
};

// Fills the per-GPU details users and agents see after a placement.
void Describe(BookingOutcome& out, const engine::Calendar& cal, const Advice& advice,
              const engine::Placement& p, const CreateRequest& req, const engine::Policy& policy,
              const std::vector<int>& eligible, const Booker& booker) {
  out.memory_telemetry = !p.gpus.empty();
  for (size_t i = 0; i < p.gpus.size(); ++i) {
    int g = p.gpus[i];
    GpuView v = advice.views[g];
    v.pressure = i < p.pressure.size() ? p.pressure[i] : 0;
    if (!v.memory_total_mb) out.memory_telemetry = false;
    if (v.memory_total_mb && req.mode == Mode::kShared) {
      int64_t usable = policy.UsableMemoryMb(*v.memory_total_mb);
      int64_t requested =
          req.memory_mb.value_or(cal.AutomaticMemoryMb(*v.memory_total_mb, req.share_units.value_or(1)));
      int64_t committed = cal.PeakCommittedMemoryMb(g, p.start, p.end, *v.memory_total_mb);
      v.budget_after_mb = usable - committed - requested;
      if (!req.memory_mb) {
        int64_t a = cal.AutomaticMemoryMb(*v.memory_total_mb, req.share_units.value_or(1));
        out.assumed_memory_mb = out.assumed_memory_mb ? std::min(*out.assumed_memory_mb, a) : a;
      }
    }
    if (v.live_status == gpu::LiveStatus::kBusy &&
        BusyForBooker(booker.live, g, booker.uid, p.start, booker.now, policy))
      out.selected_busy.push_back(BusyText(v));
    out.selected.push_back(v);
  }
  if (req.gpus.empty()) {
    for (int g : eligible) {
      const GpuView& v = advice.views[g];
      if (v.live_status == gpu::LiveStatus::kBusy &&
          std::find(p.gpus.begin(), p.gpus.end(), g) == p.gpus.end())
        out.avoided_busy.push_back(BusyText(v));
    }
  }
}

// With require_shared_memory, an omitted --mem becomes the share-weighted
// budget of the smallest candidate GPU; without telemetry the user must say.
Status FillRequiredMemory(const engine::Policy& p, const Advice& advice, const engine::Calendar& cal,
                          CreateRequest& r) {
  if (!p.require_shared_memory || r.mode != Mode::kShared || r.memory_mb) return Ok();
  std::vector<int> candidates = r.gpus.empty() ? Eligible(p, r.exclude) : r.gpus;
  std::vector<int> unknown;
  int64_t best = -1;
  for (int g : candidates) {
    auto total = advice.views[g].memory_total_mb;
    if (!total) {
      unknown.push_back(g);
      continue;
    }
    int64_t a = cal.AutomaticMemoryMb(*total, r.share_units.value_or(1));
    best = best < 0 ? a : std::min(best, a);
  }
  if (!unknown.empty() || best <= 0)
    return Invalid(
        fmt::format("automatic expected VRAM requires GPU memory telemetry for GPU(s) {}; give a per-GPU "
                    "value such as --mem 12g",
                    JoinInts(unknown)));
  r.memory_mb = best;
  return Ok();
}

Result<Seconds> NormaliseStart(const engine::Policy& p, const std::optional<Seconds>& start, Seconds now) {
  engine::SlotGrid grid = p.grid();
  if (!start) return grid.Floor(now);
  int slot_min = static_cast<int>(p.slot / 60);
  if (!grid.Aligned(*start))
    return Invalid(fmt::format("start time must align to a {}-minute boundary", slot_min));
  if (*start < grid.Floor(now))
    return Invalid(fmt::format("booking start must not be before the current booking slot ({})",
                               engine::FormatIsoUtc(grid.Floor(now))));
  return *start;
}

// Extending a reservation admits only its future part [from, new_end), on the
// same GPUs with the same shape, against a calendar without itself.
engine::PlacementRequest ExtensionRequest(const Reservation& cur, Seconds from, Seconds new_end) {
  engine::PlacementRequest ext;
  ext.count = static_cast<int>(cur.gpus.size());
  ext.duration = new_end - from;
  ext.mode = cur.mode;
  ext.share_units = cur.share_units;
  ext.memory_mb = cur.memory_mb;
  ext.cpus = cur.cpus;
  ext.ram_mb = cur.ram_mb;
  ext.start = from;
  ext.allow_queue = false;
  ext.pinned = cur.gpus;
  std::sort(ext.pinned.begin(), ext.pinned.end());
  return ext;
}

// Admits a longer reservation: the total length, the policy over the new
// part [max(ceil(now), end), new_end), then the calendar on the same GPUs.
// `refused` words the calendar's refusal (edit and renew say it differently).
Status AdmitExtension(const engine::Policy& p, const engine::Calendar& cal, const engine::GpuAdvice& advice,
                      const Reservation& cur, Seconds new_end, Seconds now,
                      const std::optional<engine::LimitRule>& limits,
                      const std::function<std::string(Seconds from, const std::string& why)>& refused) {
  if (new_end - cur.start > p.max_duration)
    return Fail(ErrorKind::kConflict, *engine::PolicyConflict(p, now, cur.start, new_end));
  Seconds from = std::max(p.grid().Ceil(now), cur.end);
  if (auto conflict = engine::PolicyConflict(p, now, from, new_end, cur.gpus))
    return Fail(ErrorKind::kConflict, *conflict);
  if (limits) {
    // Only what the extension adds counts: the held part was admitted already.
    auto why = limits->Reasons(static_cast<int>(cur.gpus.size()), cur.start, new_end, cur.end);
    if (!why.empty())
      return Fail(ErrorKind::kConflict, fmt::format("cannot extend {} until {}: {}", cur.ShortId(),
                                                    engine::FormatIsoUtc(new_end), Join(why, "; ")));
  }
  auto fit = cal.FindEarliest(ExtensionRequest(cur, from, new_end), advice);
  if (!fit) return Fail(ErrorKind::kConflict, refused(from, Join(fit.error().reasons, "; ")));
  return Ok();
}

}  // namespace

// ---- BookingService ---------------------------------------------------------

BookingService::BookingService(Deps deps) : impl_(std::make_unique<Impl>(deps)) {}
BookingService::~BookingService() = default;

Seconds BookingService::Now() const { return impl_->Now(); }
uint64_t BookingService::Generation() const { return impl_->generation; }

Result<uint64_t> BookingService::ChangeCounter() {
  if (impl_->deps.exclusive_store) return impl_->generation;
  // A reader that started before the ledger existed moves to the file once it does.
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->FreshReader());
  BK_ASSIGN_OR_RETURN(int64_t version, s->DataVersion());
  Impl::LedgerMark now{impl_->stores, s->commits(), impl_->generation, version};
  if (now != impl_->seen) ++impl_->changes;
  impl_->seen = now;
  return impl_->changes;
}

Status BookingService::Open() {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  (void)s;
  return Ok();
}
::bk::Status BookingService::BeginBatch() {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  return s->BeginGroup();
}

::bk::Status BookingService::CommitBatch() {
  if (!impl_->store) return Ok();
  BK_TRY(impl_->store->CommitGroup());
  impl_->override_undo.reset();  // a policy changed in the group is durable now
  return Ok();
}

const engine::Policy& BookingService::policy() const { return impl_->policy(); }

Result<BookingOutcome> BookingService::Create(const Actor& actor, const CreateRequest& request) {
  return impl_->Write([&] { return CreateImpl(actor, request); });
}

namespace {

// An exact-start request that repeats one of the caller's active bookings.
bool SameExactBooking(const Reservation& r, const CreateRequest& req, Seconds start) {
  std::vector<int> gpus = r.gpus;
  std::sort(gpus.begin(), gpus.end());
  return r.mode == req.mode && r.start == start && r.end == start + req.duration &&
         r.memory_mb == req.memory_mb && r.cpus == req.cpus.value_or(0) &&
         r.ram_mb == req.ram_mb.value_or(0) &&
         (req.mode == Mode::kExclusive || r.share_units == req.share_units.value_or(1)) &&
         (req.gpus.empty() ? static_cast<int>(gpus.size()) == req.count : gpus == req.gpus);
}

// The reservation a create writes where the calendar placed it.
Reservation NewReservation(const engine::Policy& p, const Actor& actor, const CreateRequest& req,
                           const engine::Placement& placed, Seconds now) {
  Reservation r;
  r.id = sys::NewUuid();
  r.uid = actor.uid;
  r.username = actor.username;
  r.gpus = placed.gpus;
  r.mode = req.mode;
  r.share_units = req.mode == Mode::kShared ? req.share_units.value_or(1) : p.share_capacity;
  r.memory_mb = req.memory_mb;
  r.cpus = req.cpus.value_or(0);
  r.ram_mb = req.ram_mb.value_or(0);
  r.start = placed.start;
  r.end = placed.end;
  r.status = engine::Status::kActive;
  r.created_at = r.updated_at = now;
  r.op_id = req.op_id.value_or(sys::NewUuid());
  return r;
}

// An identical exact request already booked is answered ("exists"), not doubled.
Result<std::optional<BookingOutcome>> AlreadyBooked(store::LedgerStore& s, const Actor& actor,
                                                    const CreateRequest& req, Seconds start, Seconds now) {
  store::ReservationQuery q{actor.uid, true, true, now};
  BK_ASSIGN_OR_RETURN(auto mine, s.Reservations(q));
  for (const auto& r : mine) {
    if (!SameExactBooking(r, req, start)) continue;
    BookingOutcome out;
    out.status = "exists";
    out.reservation = r;
    out.allocator_source = req.gpus.empty() ? "builtin" : "fixed-gpu";
    out.message = "duplicate request ignored";
    return out;
  }
  return std::nullopt;
}

// Why a queued booking could not start when asked: the reasons the exact
// placement gives, which is what `-t now` would have said.
std::string WhyNotNow(const engine::Calendar& cal, const Advice& advice, const CreateRequest& req,
                      Seconds start, const engine::StartRule* rule) {
  auto exact = cal.FindEarliest(ToPlacement(req, start, false, rule), advice.engine);
  return exact ? std::string() : Join(exact.error().reasons, "; ");
}

}  // namespace

Result<BookingOutcome> BookingService::CreateImpl(const Actor& actor, const CreateRequest& request) {
  const engine::Policy& p = impl_->policy();
  CreateRequest req = request;
  std::vector<std::string> warnings;
  BK_TRY(ValidateCreate(p, req, &warnings));
  if (req.job) BK_TRY(ValidateJobBinding(*req.job));
  BK_ASSIGN_OR_RETURN(std::optional<std::string> waived, LimitOverride(actor, req.override_reason));
  std::string signature = CreateSignature(request, req.mode, req.share_units.value_or(1));

  // A replay is answered before telemetry is sampled or anything is placed.
  auto same_create = [&](const std::string&) { return signature; };
  if (req.op_id) {
    BK_ASSIGN_OR_RETURN(store::LedgerStore * reader, impl_->Reader());
    BK_ASSIGN_OR_RETURN(auto prior, impl_->PriorOperation(*reader, actor, req.op_id, "create", same_create));
    if (prior) return Replay(*prior);
  }
  gpu::Snapshot live = impl_->Telemetry();
  Advice advice = BuildAdvice(live, p);
  BK_TRY(CheckVramCanFit(p, advice, req));

  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, true));
  BK_TRY(impl_->Prune(*s, now));
  BK_ASSIGN_OR_RETURN(auto prior, impl_->PriorOperation(*s, actor, req.op_id, "create", same_create));
  if (prior) return Replay(*prior);
  BK_ASSIGN_OR_RETURN(Seconds start, NormaliseStart(p, req.start, now));
  bool exact = req.start.has_value();
  if (exact) {
    if (auto conflict = engine::PolicyConflict(p, now, start, start + req.duration, req.gpus))
      return Fail(ErrorKind::kConflict, *conflict);
    if (!req.op_id) {
      BK_ASSIGN_OR_RETURN(auto same, AlreadyBooked(*s, actor, req, start, now));
      if (same) return *same;
    }
  } else if (req.duration > p.max_duration) {
    return Fail(ErrorKind::kConflict, *engine::PolicyConflict(p, now, start, start + req.duration));
  }

  std::optional<engine::LimitRule> limits;
  if (!waived) {
    BK_ASSIGN_OR_RETURN(limits, impl_->LimitsOf(*s, actor, now));
  }
  BK_ASSIGN_OR_RETURN(engine::Calendar cal, impl_->PlacementCalendar(*s, now));
  BK_TRY(FillRequiredMemory(p, advice, cal, req));
  auto placed = cal.FindEarliest(ToPlacement(req, start, !exact, RuleOf(limits)), advice.engine);
  if (!placed) return Fail(ErrorKind::kConflict, placed.error().Message());

  Reservation r = NewReservation(p, actor, req, *placed, now);
  r.op_signature = req.op_id ? signature : "";
  BK_TRY(s->Insert(r));
  BK_TRY(s->InsertOperation({actor.uid, r.op_id, "create", r.id, signature, now}));
  std::string message = placed->queued ? "queued" : "created";
  store::Event e = MakeEvent("add", r, actor, r.op_id, WithOverride(message, waived), now);
  e.transaction_id = sys::NewUuid();
  e.after = StateJson(r);
  e.signature = signature;
  BK_TRY(s->AppendEvent(e));
  std::optional<store::JobRecord> job;
  if (req.job) {
    // Bound in the booking's own transaction: a booking never exists without
    // the job its owner asked for.
    job = NewJob(r, *req.job, now);
    BK_TRY(s->InsertJob(*job));
  }

  // Described before the commit: the calendar reads without this booking.
  BookingOutcome out;
  out.job = job;
  out.status = message;
  out.message = message;
  out.reservation = r;
  out.allocator_source = req.gpus.empty() ? "builtin" : "fixed-gpu";
  out.warnings = warnings;
  Describe(out, cal, advice, *placed, req, p, Eligible(p, req.exclude), {actor.uid, now, live});
  if (placed->queued) out.queued_reason = WhyNotNow(cal, advice, req, start, RuleOf(limits));
  if (!out.selected_busy.empty()) out.warnings.push_back(std::string(kSelectedBusyWarning));
  BK_TRY(txn.Commit());
  return out;
}

namespace {

// A dry run's answer says so, replayed ones too: nothing was written for it.
Result<BookingOutcome> DryRunAnswer(bool dry_run, Result<BookingOutcome> out) {
  if (out && dry_run) out->dry_run = true;
  return out;
}

// An edit's result before it is written: the changed reservation and, for a
// future one placed anew, where it went.
struct EditPlan {
  Reservation next;
  std::string message;
  bool queued = false;
  std::optional<engine::Placement> placement;
  CreateRequest shape;
};

// A started reservation may only move its end: elapsed time and what it holds are fixed.
Result<EditPlan> PlanStartedEdit(const engine::Policy& p, const engine::Calendar& cal, const Advice& advice,
                                 const Reservation& cur, const EditRequest& req, Seconds now,
                                 const std::optional<engine::LimitRule>& limits) {
  engine::SlotGrid grid = p.grid();
  int slot_min = static_cast<int>(p.slot / 60);
  bool other = req.start || req.mode || !req.gpus.empty() || !req.exclude.empty() || req.count ||
               req.update_memory || req.share_units || req.cpus || req.ram_mb || req.allow_queue;
  if (other)
    return Invalid(
        "a started reservation may only change its end time; elapsed time, GPUs, mode, share, memory "
        "and host budgets are immutable (use --duration or `bk renew`)");
  if (!req.duration) return Invalid("a started reservation edit must give a new total duration (--duration)");
  if (*req.duration <= 0 || *req.duration % p.slot != 0)
    return Invalid(fmt::format("duration must be a positive multiple of {} minutes", slot_min));
  Seconds new_end = cur.start + *req.duration;
  if (new_end < grid.Ceil(now) || new_end <= now)
    return Invalid(fmt::format("cannot edit elapsed time; the new end must be at or after {}",
                               engine::FormatIsoUtc(std::max(grid.Ceil(now), grid.Floor(now) + p.slot))));
  if (new_end > cur.end) {
    BK_TRY(AdmitExtension(
        p, cal, advice.engine, cur, new_end, now, limits, [&](Seconds from, const std::string& why) {
          return fmt::format(
              "cannot extend this reservation because its GPUs are unavailable from {} to {}{}",
              engine::FormatIsoUtc(from), engine::FormatIsoUtc(new_end), why.empty() ? "" : " (" + why + ")");
        }));
  }
  EditPlan plan{.next = cur};
  plan.next.end = new_end;
  plan.message = "updated future end of started reservation";
  return plan;
}

// A future reservation is placed again as if booked anew, without itself.
Result<EditPlan> PlanFutureEdit(const engine::Policy& p, const engine::Calendar& cal, const Advice& advice,
                                const Reservation& cur, const EditRequest& req, Seconds now,
                                const std::optional<engine::LimitRule>& limits) {
  engine::SlotGrid grid = p.grid();
  int slot_min = static_cast<int>(p.slot / 60);
  CreateRequest r;
  r.mode = req.mode.value_or(cur.mode);
  r.duration = req.duration.value_or(cur.end - cur.start);
  r.memory_mb = req.update_memory ? req.memory_mb : cur.memory_mb;
  if (r.mode == Mode::kShared)
    r.share_units = req.share_units
                        ? req.share_units
                        : (cur.mode == Mode::kShared ? std::optional(cur.share_units) : std::nullopt);
  else if (req.share_units)
    return Invalid("--share applies only to shared reservations; drop it or keep the reservation shared");
  r.cpus = req.cpus ? req.cpus : (cur.cpus ? std::optional(cur.cpus) : std::nullopt);
  r.ram_mb = req.ram_mb ? req.ram_mb : (cur.ram_mb ? std::optional(cur.ram_mb) : std::nullopt);
  if (!req.gpus.empty()) {
    r.gpus = req.gpus;
    r.count = static_cast<int>(req.gpus.size());
  } else if (req.count || !req.exclude.empty()) {
    r.count = req.count.value_or(static_cast<int>(cur.gpus.size()));
    r.exclude = req.exclude;
  } else {
    r.gpus = cur.gpus;
    r.count = static_cast<int>(cur.gpus.size());
  }
  BK_TRY(ValidateCreate(p, r, nullptr));
  BK_TRY(CheckVramCanFit(p, advice, r));
  Seconds start = req.start.value_or(cur.start);
  if (!grid.Aligned(start))
    return Invalid(fmt::format("start time must align to a {}-minute boundary", slot_min));
  Seconds earliest = grid.Floor(now) + p.slot;
  if (start < earliest) {
    if (req.start && !req.allow_queue)
      return Invalid(fmt::format("edit start must not be in the past; earliest editable slot is {}",
                                 engine::FormatIsoUtc(earliest)));
    start = earliest;
  }
  if (!req.allow_queue) {
    if (auto conflict = engine::PolicyConflict(p, now, start, start + r.duration, r.gpus))
      return Fail(ErrorKind::kConflict, *conflict);
  }
  BK_TRY(FillRequiredMemory(p, advice, cal, r));
  auto placed = cal.FindEarliest(ToPlacement(r, start, req.allow_queue, RuleOf(limits)), advice.engine);
  if (!placed) return Fail(ErrorKind::kConflict, placed.error().Message());
  EditPlan plan{.next = cur};
  plan.next.gpus = placed->gpus;
  plan.next.mode = r.mode;
  plan.next.share_units = r.mode == Mode::kShared ? r.share_units.value_or(1) : p.share_capacity;
  plan.next.memory_mb = r.memory_mb;
  plan.next.cpus = r.cpus.value_or(0);
  plan.next.ram_mb = r.ram_mb.value_or(0);
  plan.next.start = placed->start;
  plan.next.end = placed->end;
  plan.queued = placed->start != start;
  plan.message = plan.queued ? "queued" : "updated";
  plan.placement = *placed;
  plan.shape = r;
  return plan;
}

}  // namespace

Result<BookingOutcome> BookingService::Edit(const Actor& actor, const EditRequest& request) {
  return DryRunAnswer(request.dry_run, impl_->Write([&] { return EditImpl(actor, request); }));
}

Result<BookingOutcome> BookingService::EditImpl(const Actor& actor, const EditRequest& request) {
  const engine::Policy& p = impl_->policy();
  if (request.op_id) BK_TRY(ValidateOpId(*request.op_id));
  bool any_change = request.duration || request.end || request.start || request.mode ||
                    !request.gpus.empty() || !request.exclude.empty() || request.count ||
                    request.update_memory || request.share_units || request.cpus || request.ram_mb;
  if (!any_change)
    return Invalid(
        "edit needs at least one change: --duration, --end, --at/--start, --gpu, --exclude-gpu, --count, "
        "--mode, "
        "--mem, --share, --cpus or --ram");
  if (!request.gpus.empty() && !request.exclude.empty())
    return Invalid("--gpu and --exclude-gpu cannot be combined");
  BK_ASSIGN_OR_RETURN(std::optional<std::string> waived, LimitOverride(actor, request.override_reason));
  gpu::Snapshot live = impl_->Telemetry();
  Advice advice = BuildAdvice(live, p);

  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, true));

  // An op-id replay is recognised before the reference is resolved again: the
  // list numbering may have changed since the first attempt.
  BK_ASSIGN_OR_RETURN(
      auto prior, impl_->PriorOperation(*s, actor, request.op_id, "edit",
                                        [&](const std::string& id) { return EditSignature(request, id); }));
  if (prior) return Replay(*prior);
  BK_ASSIGN_OR_RETURN(Reservation cur, impl_->Resolve(*s, actor, request.ref, RefScope::kOwnActive, now));
  if (cur.uid != actor.uid)
    return Fail(ErrorKind::kPermission,
                "only the owner can edit a reservation; administrators may cancel it");
  std::string signature = EditSignature(request, cur.id);
  // --end names the new end; it becomes a total duration from the (new) start.
  EditRequest req = request;
  if (req.end) {
    if (req.duration) return Invalid("give --end or --duration, not both");
    Seconds base = req.start.value_or(cur.start);
    if (*req.end <= base) return Invalid("--end must be after the reservation's start");
    req.duration = *req.end - base;
  }
  std::optional<engine::LimitRule> limits;
  if (!waived) {
    BK_ASSIGN_OR_RETURN(limits, impl_->LimitsOf(*s, actor, now, cur.id));
  }
  BK_ASSIGN_OR_RETURN(engine::Calendar cal, impl_->PlacementCalendar(*s, now, cur.id));

  BK_ASSIGN_OR_RETURN(EditPlan plan, cur.Started(now)
                                         ? PlanStartedEdit(p, cal, advice, cur, req, now, limits)
                                         : PlanFutureEdit(p, cal, advice, cur, req, now, limits));
  Reservation& next = plan.next;
  next.updated_at = now;
  next.edit_count = cur.edit_count + 1;

  // Described before the commit: the calendar reads without the new state.
  BookingOutcome out;
  out.status = plan.queued ? "queued" : "updated";
  out.message = plan.message;
  out.reservation = next;
  out.allocator_source = req.gpus.empty() ? "builtin" : "fixed-gpu";
  if (plan.placement)
    Describe(out, cal, advice, *plan.placement, plan.shape, p, Eligible(p, plan.shape.exclude),
             {actor.uid, now, live});
  // A dry run ends here, admitted: its transaction rolls back uncommitted.
  if (req.dry_run) return out;
  BK_TRY(impl_->RecordChange(*s, actor, "edit", cur, next, req.op_id, signature,
                             WithOverride(plan.message, waived), now));
  BK_TRY(txn.Commit());
  return out;
}

Result<BookingOutcome> BookingService::Renew(const Actor& actor, const RenewRequest& request) {
  return DryRunAnswer(request.dry_run, impl_->Write([&] { return RenewImpl(actor, request); }));
}

Result<BookingOutcome> BookingService::RenewImpl(const Actor& actor, const RenewRequest& request) {
  const engine::Policy& p = impl_->policy();
  if (request.op_id) BK_TRY(ValidateOpId(*request.op_id));
  if (request.extend_by <= 0 || request.extend_by % p.slot != 0)
    return Invalid(
        fmt::format("renewal must be a positive multiple of {} minutes, e.g. bk renew 1 30m", p.slot / 60));
  BK_ASSIGN_OR_RETURN(std::optional<std::string> waived, LimitOverride(actor, request.override_reason));
  Advice advice = impl_->LiveAdvice();
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, true));
  BK_ASSIGN_OR_RETURN(
      auto prior, impl_->PriorOperation(*s, actor, request.op_id, "renew",
                                        [&](const std::string& id) { return RenewSignature(request, id); }));
  if (prior) return Replay(*prior);
  BK_ASSIGN_OR_RETURN(Reservation cur, impl_->Resolve(*s, actor, request.ref, RefScope::kOwnActive, now));
  if (cur.uid != actor.uid) return Fail(ErrorKind::kPermission, "only the owner can renew a reservation");
  std::string signature = RenewSignature(request, cur.id);
  Seconds new_end = cur.end + request.extend_by;
  std::optional<engine::LimitRule> limits;
  if (!waived) {
    BK_ASSIGN_OR_RETURN(limits, impl_->LimitsOf(*s, actor, now, cur.id));
  }
  BK_ASSIGN_OR_RETURN(engine::Calendar cal, impl_->PlacementCalendar(*s, now, cur.id));
  BK_TRY(
      AdmitExtension(p, cal, advice.engine, cur, new_end, now, limits, [&](Seconds, const std::string& why) {
        return fmt::format("cannot renew {} until {}: {}", cur.ShortId(), engine::FormatIsoUtc(new_end),
                           why.empty() ? "its GPUs are unavailable" : why);
      }));
  Reservation next = cur;
  next.end = new_end;
  next.updated_at = now;
  next.edit_count = cur.edit_count + 1;
  BookingOutcome out;
  out.status = "updated";
  out.message = fmt::format("renewed by {}", engine::FormatDuration(request.extend_by));
  out.reservation = next;
  out.allocator_source = "fixed-gpu";
  // A dry run ends here, admitted: its transaction rolls back uncommitted.
  if (request.dry_run) return out;
  BK_TRY(impl_->RecordChange(*s, actor, "renew", cur, next, request.op_id, signature,
                             WithOverride(out.message, waived), now));
  BK_TRY(txn.Commit());
  return out;
}

Result<CancelOutcome> BookingService::Cancel(const Actor& actor, const CancelRequest& request) {
  return impl_->Write([&] { return CancelImpl(actor, request); });
}

Result<CancelOutcome> BookingService::CancelImpl(const Actor& actor, const CancelRequest& request) {
  if (request.op_id) BK_TRY(ValidateOpId(*request.op_id));
  if (request.reason) BK_TRY(CheckedReason(*request.reason));
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Writer());
  BK_ASSIGN_OR_RETURN(store::WriteTxn txn, s->BeginWrite());
  Seconds now = impl_->Now();
  BK_TRY(impl_->CheckPolicy(*s, false));
  // A replay names the same reservation it cancelled; once cancelled it is no
  // longer in the active list, so it is found by the operation first. A list
  // number cannot be re-resolved after the cancel moved the list on, so it
  // replays; an ID must name the reservation the operation cancelled.
  BK_ASSIGN_OR_RETURN(auto prior, impl_->PriorOperation(*s, actor, request.op_id, "cancel", CancelSignature));
  if (prior) {
    std::string ref(Trim(request.ref));
    if (!StartsWith(prior->id, ref) && !AllDigits(ref)) return Invalid(DifferentWrite(*request.op_id));
    return CancelOutcome{*prior, true};
  }
  BK_ASSIGN_OR_RETURN(Reservation cur, impl_->Resolve(*s, actor, request.ref, RefScope::kOwnActive, now));
  bool foreign = cur.uid != actor.uid;
  if (foreign && !actor.admin)
    return Fail(ErrorKind::kPermission,
                fmt::format("reservation {} belongs to {}; you can only cancel your own", cur.ShortId(),
                            cur.username));
  if (foreign && !request.reason)
    return Invalid(
        fmt::format("cancelling {}'s reservation needs --reason TEXT; the owner is notified", cur.username));
  CancelStep step{.actor = actor, .cur = cur};
  step.kind = foreign ? engine::CancelKind::kAdministrator : engine::CancelKind::kOwner;
  step.reason = foreign
                    ? std::string(Trim(*request.reason))
                    : std::string(request.reason ? Trim(*request.reason) : "cancelled by reservation owner");
  step.op_id = request.op_id.value_or(sys::NewUuid());
  step.signature = CancelSignature(cur.id);
  step.action = "cancel";
  step.event_action = foreign ? "admin-cancel" : "cancel";
  step.event_message = foreign ? step.reason : "cancelled";
  if (foreign) {
    step.notification_type = "reservation-admin-cancelled";
    step.notification_message = fmt::format("Reservation {} was cancelled by administrator {}: {}",
                                            cur.ShortId(), actor.username, step.reason);
  }
  Reservation next;
  BK_TRY(impl_->CancelReservation(*s, step, next, now));
  BK_TRY(txn.Commit());
  return CancelOutcome{next, false};
}

}  // namespace bk::service
