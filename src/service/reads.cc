// Read-only BookingService calls: they never create the ledger or bind policy.

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "base/strings.h"
#include "engine/parse.h"
#include "service/impl.h"

namespace bk::service {

using engine::Reservation;
using engine::Seconds;

namespace {

gpu::LiveStatus LiveOf(const std::vector<GpuView>& views, const std::vector<int>& gpus) {
  using gpu::LiveStatus;
  bool all_idle = true, any_busy = false;
  for (int g : gpus) {
    if (views[g].live_status == LiveStatus::kBusy) any_busy = true;
    if (views[g].live_status != LiveStatus::kIdle) all_idle = false;
  }
  return any_busy ? LiveStatus::kBusy : all_idle ? LiveStatus::kIdle : LiveStatus::kUnknown;
}

}  // namespace

Result<Recommendation> BookingService::Recommend(const Actor& actor, const CreateRequest& request) {
  const engine::Policy& p = impl_->policy();
  Recommendation rec;
  rec.request = request;
  BK_TRY(ValidateCreate(p, rec.request, &rec.warnings));
  Advice advice = impl_->LiveAdvice();
  BK_TRY(CheckVramCanFit(p, advice, rec.request));
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->CheckedReader());
  Seconds now = impl_->Now();
  engine::SlotGrid grid = p.grid();
  Seconds start = grid.Floor(now);
  rec.allow_queue = !request.start;
  if (request.start) {
    if (!grid.Aligned(*request.start))
      return Invalid(fmt::format("start time must align to a {}-minute boundary", p.slot / 60));
    if (*request.start < grid.Floor(now))
      return Invalid(fmt::format("booking start must not be before the current booking slot ({})",
                                 engine::FormatIsoUtc(grid.Floor(now))));
    start = *request.start;
  }
  rec.start = start;
  BK_ASSIGN_OR_RETURN(std::optional<engine::LimitRule> limits, impl_->LimitsOf(*s, actor, now));
  BK_ASSIGN_OR_RETURN(engine::Calendar cal, impl_->PlacementCalendar(*s, now));
  auto placed =
      cal.FindEarliest(ToPlacement(rec.request, start, rec.allow_queue, RuleOf(limits)), advice.engine);
  if (!placed) {
    rec.available = false;
    rec.reason = placed.error().Message();
    rec.nearest = placed.error().nearest;
    rec.warnings.push_back("no legal slot found for the requested semantics");
    return rec;
  }
  rec.available = true;
  rec.placement = *placed;
  bool telemetry = true;
  for (size_t i = 0; i < placed->gpus.size(); ++i) {
    GpuView v = advice.views[placed->gpus[i]];
    v.pressure = i < placed->pressure.size() ? placed->pressure[i] : 0;
    if (v.memory_total_mb && rec.request.mode == engine::Mode::kShared) {
      int64_t usable = std::max<int64_t>(0, *v.memory_total_mb - p.shared_memory_reserve_mb);
      int64_t want = rec.request.memory_mb.value_or(
          cal.AutomaticMemoryMb(*v.memory_total_mb, rec.request.share_units.value_or(1)));
      v.budget_after_mb =
          usable -
          cal.PeakCommittedMemoryMb(placed->gpus[i], placed->start, placed->end, *v.memory_total_mb) - want;
    }
    if (v.live_status == gpu::LiveStatus::kUnknown) telemetry = false;
    if (v.live_status == gpu::LiveStatus::kBusy)
      rec.warnings.push_back(fmt::format("GPU {} is busy now ({})", v.gpu, v.live_reason));
    rec.selected.push_back(v);
  }
  // No usage history yet (the monitor provides it): telemetry alone is medium.
  rec.confidence = telemetry ? "medium" : "low";
  if (!rec.request.memory_mb && rec.request.mode == engine::Mode::kShared)
    rec.warnings.push_back(
        "expected memory was omitted; share-weighted memory assumptions were used where possible");
  return rec;
}

Result<SlotsResult> BookingService::Slots(const Actor& actor, const CreateRequest& request, Seconds from,
                                          int limit) {
  const engine::Policy& p = impl_->policy();
  CreateRequest req = request;
  BK_TRY(ValidateCreate(p, req, nullptr));
  Advice advice = impl_->LiveAdvice();
  BK_TRY(CheckVramCanFit(p, advice, req));
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->CheckedReader());
  Seconds now = impl_->Now();
  engine::SlotGrid grid = p.grid();
  Seconds start = from <= now ? grid.Floor(now) : grid.Ceil(from);
  BK_ASSIGN_OR_RETURN(std::optional<engine::LimitRule> limits, impl_->LimitsOf(*s, actor, now));
  BK_ASSIGN_OR_RETURN(engine::Calendar cal, impl_->PlacementCalendar(*s, now));

  // Candidate GPU sets: the pinned one, or combinations of eligible GPUs in advice order.
  std::vector<int> pool;
  for (int g : advice.engine.order)
    if (p.GpuEnabled(g) && std::find(req.exclude.begin(), req.exclude.end(), g) == req.exclude.end())
      pool.push_back(g);
  std::vector<std::vector<int>> combos;
  SlotsResult result;
  constexpr size_t kMaxCombos = 2048;
  if (!req.gpus.empty()) {
    combos.push_back(req.gpus);
  } else {
    std::vector<int> pick;
    std::function<void(size_t)> rec = [&](size_t i) {
      if (combos.size() >= kMaxCombos) {
        result.truncated_combinations = true;
        return;
      }
      if (static_cast<int>(pick.size()) == req.count) {
        combos.push_back(pick);
        return;
      }
      for (size_t j = i; j < pool.size(); ++j) {
        pick.push_back(pool[j]);
        rec(j + 1);
        pick.pop_back();
        if (combos.size() >= kMaxCombos) {
          result.truncated_combinations = j + 1 < pool.size() || result.truncated_combinations;
          return;
        }
      }
    };
    rec(0);
  }
  for (const auto& combo : combos) {
    CreateRequest one = req;
    one.gpus = combo;
    std::sort(one.gpus.begin(), one.gpus.end());
    auto placed = cal.FindEarliest(ToPlacement(one, start, true, RuleOf(limits)), advice.engine);
    if (!placed) continue;
    SlotOption o;
    o.gpus = combo;
    o.start = placed->start;
    o.end = placed->end;
    o.live = LiveOf(advice.views, combo);
    for (int g : combo) {
      auto f = advice.views[g].memory_free_mb;
      if (!f) {
        o.free_now_mb.reset();
        break;
      }
      o.free_now_mb = o.free_now_mb ? std::min(*o.free_now_mb, *f) : *f;
    }
    result.options.push_back(o);
  }
  auto key = [&](const SlotOption& o) {
    int prio = 0;
    double score = 0;
    for (int g : o.gpus) prio = std::max(prio, p.Priority(g)), score += advice.views[g].load_score;
    return std::tuple(o.start, prio, score, o.gpus);
  };
  std::stable_sort(result.options.begin(), result.options.end(),
                   [&](const SlotOption& a, const SlotOption& b) { return key(a) < key(b); });
  if (static_cast<int>(result.options.size()) > limit) result.options.resize(limit);
  return result;
}

Result<ListResult> BookingService::List(const Actor& actor, const ListQuery& q) {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  Seconds now = impl_->Now();
  store::ReservationQuery query;
  if (!q.everyone) query.uid = actor.uid;
  query.now = now;
  query.active_only = !q.history;
  query.newest_first = q.history;
  query.limit = q.limit;
  ListResult out;
  BK_ASSIGN_OR_RETURN(out.reservations, s->Reservations(query));
  out.total = static_cast<int>(out.reservations.size());
  if (q.limit && out.total >= *q.limit) {
    int64_t total = 0;
    if (!q.history && !q.everyone) {
      BK_ASSIGN_OR_RETURN(total, impl_->CountActive(*s, actor.uid, now));
    } else {
      BK_ASSIGN_OR_RETURN(total, s->CountReservations(query));
    }
    out.total = static_cast<int>(total);
  }
  out.truncated = out.total > static_cast<int>(out.reservations.size());
  // The caller's jobs on the listed reservations, for the public "job" field.
  BK_ASSIGN_OR_RETURN(auto jobs, s->JobsForUid(actor.uid));
  for (auto& j : jobs)
    if (std::any_of(out.reservations.begin(), out.reservations.end(),
                    [&](const Reservation& r) { return r.id == j.reservation_id; }))
      out.jobs.push_back(std::move(j));
  return out;
}

Result<HistoryView> BookingService::History(const Actor& actor, const std::string& ref) {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  Seconds now = impl_->Now();
  BK_ASSIGN_OR_RETURN(Reservation r, impl_->Resolve(*s, actor, ref, RefScope::kOwnAny, now));
  HistoryView v;
  v.reservation = r;
  BK_ASSIGN_OR_RETURN(v.events, s->EventsForReservation(r.id));
  BK_ASSIGN_OR_RETURN(v.notifications, s->NotificationsForReservation(r.id));
  return v;
}

Result<std::vector<store::Event>> BookingService::Log(const Actor& actor, int limit) {
  if (limit < 1 || limit > 1000) return Invalid("--limit must be between 1 and 1000");
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  // A shared ledger's administrators also see what administrators did to
  // anyone's bookings. A private ledger has one user, whose log stays theirs
  // (other owners' events there are history imported from the original).
  bool audit = actor.admin && impl_->deps.config->deployment != config::Deployment::kPrivate;
  return s->EventsForUid(actor.uid, limit, audit);
}

Result<std::vector<store::Notification>> BookingService::Notifications(const Actor& actor, int limit) {
  if (limit < 1 || limit > 1000) return Invalid("--limit must be between 1 and 1000");
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  return s->NotificationsForUid(actor.uid, limit);
}

Result<OperationView> BookingService::Operation(const Actor& actor, const std::string& op_id) {
  BK_TRY(ValidateOpId(op_id));
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  BK_ASSIGN_OR_RETURN(auto op, s->FindOperation(actor.uid, op_id));
  OperationView v;
  if (!op) return v;
  v.found = true;
  v.action = op->action;
  BK_ASSIGN_OR_RETURN(v.reservation, s->Get(op->reservation_id));
  return v;
}

Result<StatusView> BookingService::Status(const Actor& actor, Seconds from, Seconds to,
                                          std::optional<int> mine_limit) {
  const engine::Policy& p = impl_->policy();
  StatusView v;
  v.now = impl_->Now();
  v.snapshot = impl_->Telemetry();
  v.gpus = BuildAdvice(v.snapshot, p).views;
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  // Per-GPU facts from the occupancy: the daemon's live one, or one built
  // from the lean footprints, so a long calendar costs little.
  std::optional<engine::Occupancy> built;
  const engine::Occupancy* occupancy = nullptr;
  if (impl_->deps.exclusive_store) {
    BK_ASSIGN_OR_RETURN(engine::LiveCalendar * live, impl_->Live(*s, v.now));
    occupancy = &live->occupancy();
    v.active_count = static_cast<int>(live->size());
  } else {
    BK_ASSIGN_OR_RETURN(auto fps, s->ActiveFootprints(v.now));
    occupancy = &built.emplace(p.gpu_count, p.BudgetsOn(), fps);
    v.active_count = static_cast<int>(fps.size());
  }
  v.usage.resize(p.gpu_count);
  for (int g = 0; g < p.gpu_count; ++g) {
    const auto& steps = occupancy->Gpu(g);
    const auto& at_now = steps.ValueAt(v.now);
    v.usage[g].exclusive = at_now[engine::Occupancy::kExclusive] > 0;
    v.usage[g].used_units = static_cast<int>(at_now[engine::Occupancy::kUnits]);
    v.usage[g].next_free =
        steps.FirstWhere(v.now, [](const auto& x) { return x[engine::Occupancy::kHolders] == 0; });
  }
  BK_ASSIGN_OR_RETURN(auto current, impl_->Overlapping(*s, v.now, v.now + 1, v.now, true));
  for (const auto& r : current)
    for (int g : r.gpus)
      if (g >= 0 && g < p.gpu_count) v.usage[g].owners_now.push_back(r.uid);
  store::ReservationQuery mine_q{actor.uid, true, true, v.now};
  mine_q.limit = mine_limit;
  BK_ASSIGN_OR_RETURN(v.mine, s->Reservations(mine_q));
  v.mine_total = static_cast<int>(v.mine.size());
  if (mine_limit && v.mine_total >= *mine_limit) {
    BK_ASSIGN_OR_RETURN(int64_t total, impl_->CountActive(*s, actor.uid, v.now));
    v.mine_total = static_cast<int>(total);
  }
  BK_ASSIGN_OR_RETURN(v.reservations, impl_->Overlapping(*s, from, to, v.now, false));
  return v;
}

Result<std::vector<engine::Reservation>> BookingService::Running(Seconds at) {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  return impl_->Overlapping(*s, at, at + 1, at, /*running_only=*/true);
}

Result<std::vector<engine::Interval>> BookingService::ExclusiveWindows() {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  if (impl_->deps.exclusive_store) {
    BK_ASSIGN_OR_RETURN(engine::LiveCalendar * live, impl_->Live(*s, impl_->Now()));
    return live->ExclusiveIntervals();
  }
  BK_ASSIGN_OR_RETURN(auto fps, s->ActiveFootprints(impl_->Now()));
  std::vector<engine::Interval> out;
  for (const auto& f : fps)
    if (f.mode == engine::Mode::kExclusive) out.push_back({f.start, f.end});
  return out;
}

Result<PolicyStatus> BookingService::CheckPolicy() {
  BK_ASSIGN_OR_RETURN(store::LedgerStore * s, impl_->Reader());
  BK_ASSIGN_OR_RETURN(auto bound, s->BoundPolicy());
  if (!bound) return PolicyStatus{PolicyState::kUnbound, ""};
  std::string diff = config::ComparePolicy(*bound, config::BoundPolicyJson(impl_->policy()));
  if (diff.empty()) return PolicyStatus{PolicyState::kMatch, ""};
  return PolicyStatus{PolicyState::kMismatch, "local configuration does not match ledger policy: " + diff};
}

}  // namespace bk::service
