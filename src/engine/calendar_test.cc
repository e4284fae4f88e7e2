#include "engine/calendar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

#include "engine/limits.h"
#include "engine/occupancy.h"
#include "engine/step_map.h"
#include "engine/step_profile.h"

namespace bk::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr Seconds kDay0 = 1795910400;  // 2026-11-29T00:00:00Z

Seconds At(int hour, int minute = 0, int second = 0) {
  return kDay0 + hour * kHour + minute * kMinute + second;
}

Policy Gpus(int count) {
  Policy p;
  p.gpu_count = count;
  return p;
}

Footprint Excl(std::vector<int> gpus, Seconds start, Seconds end) {
  Footprint f;
  f.gpus = std::move(gpus);
  f.mode = Mode::kExclusive;
  f.start = start;
  f.end = end;
  return f;
}

Footprint Shared(std::vector<int> gpus, Seconds start, Seconds end, int units = 1,
                 std::optional<int64_t> memory_mb = std::nullopt) {
  Footprint f;
  f.gpus = std::move(gpus);
  f.mode = Mode::kShared;
  f.share_units = units;
  f.memory_mb = memory_mb;
  f.start = start;
  f.end = end;
  return f;
}

Footprint WithHost(Footprint f, int64_t cpus, int64_t ram_mb) {
  f.cpus = cpus;
  f.ram_mb = ram_mb;
  return f;
}

PlacementRequest Request(Mode mode, Seconds start, Seconds duration, bool queue) {
  PlacementRequest r;
  r.mode = mode;
  r.start = start;
  r.duration = duration;
  r.allow_queue = queue;
  return r;
}
PlacementRequest ExactExcl(Seconds start, Seconds duration) {
  return Request(Mode::kExclusive, start, duration, false);
}
PlacementRequest QueuedExcl(Seconds start, Seconds duration) {
  return Request(Mode::kExclusive, start, duration, true);
}
PlacementRequest ExactShared(Seconds start, Seconds duration, int units = 1) {
  PlacementRequest r = Request(Mode::kShared, start, duration, false);
  r.share_units = units;
  return r;
}
PlacementRequest QueuedShared(Seconds start, Seconds duration, int units = 1) {
  PlacementRequest r = ExactShared(start, duration, units);
  r.allow_queue = true;
  return r;
}
PlacementRequest Pin(PlacementRequest r, std::vector<int> gpus) {
  r.pinned = std::move(gpus);
  return r;
}

GpuAdvice MemoryAdvice(std::vector<std::optional<int64_t>> totals) {
  GpuAdvice a;
  a.memory_total_mb = std::move(totals);
  return a;
}

// ---------------------------------------------------------------------------
// Step functions and interval arithmetic.

TEST(StepProfileTest, SumsPeaksAndIntegrals) {
  StepProfile<2> p;
  p.Add(10, 20, {1, 5});
  p.Add(15, 30, {2, 1});
  p.Add(40, 40, {9, 9});  // empty: ignored
  p.Build();
  EXPECT_EQ(p.ValueAt(9)[0], 0);
  EXPECT_EQ(p.ValueAt(10)[0], 1);
  EXPECT_EQ(p.ValueAt(15)[0], 3);
  EXPECT_EQ(p.ValueAt(20)[0], 2);
  EXPECT_EQ(p.ValueAt(30)[0], 0);
  EXPECT_EQ(p.Peak(0, 15)[0], 1);  // half-open: 15 itself excluded
  EXPECT_EQ(p.Peak(0, 16)[0], 3);
  EXPECT_EQ(p.Peak(20, 100)[1], 1);
  EXPECT_EQ(p.Peak(30, 100)[0], 0);
  EXPECT_EQ(p.Integral(0, 100), 10 * 1 + 15 * 2);
  EXPECT_EQ(p.Integral(12, 17), 3 * 1 + 2 * 3);
  EXPECT_EQ(p.Integral(50, 60), 0);
}

TEST(StepProfileTest, BlockedMergesAdjacentSegmentsAndClips) {
  StepProfile<1> p;
  p.Add(10, 20, {1});
  p.Add(20, 30, {2});
  p.Add(50, 60, {1});
  p.Build();
  auto any = [](const StepProfile<1>::Values& v) { return v[0] > 0; };
  EXPECT_THAT(p.Blocked(any, 0, 100), ElementsAre(Interval{10, 30}, Interval{50, 60}));
  EXPECT_THAT(p.Blocked(any, 15, 55), ElementsAre(Interval{15, 30}, Interval{50, 55}));
  // A predicate true at zero blocks the empty regions too.
  auto none = [](const StepProfile<1>::Values& v) { return v[0] == 0; };
  EXPECT_THAT(p.Blocked(none, 0, 100), ElementsAre(Interval{0, 10}, Interval{30, 50}, Interval{60, 100}));
}

TEST(StartGridTest, FreeStartsRespectGapsAndGrid) {
  // Grid 0, 10, ..., 100; blocked [25, 40) and [70, 75); duration 20.
  StartGrid grid(0, 100, 10);
  auto starts = grid.FreeStarts({{25, 40}, {70, 75}}, 20);
  // t + 20 <= 25 -> t <= 5 -> {0}; 40 <= t <= 50 -> {40, 50}; t >= 75 -> {80, 90, 100}.
  EXPECT_THAT(starts, ElementsAre(Interval{0, 10}, Interval{40, 60}, Interval{80, 110}));
  EXPECT_THAT(StartGrid(5, 4, 10).All(), IsEmpty());
}

TEST(IntervalSetTest, UnionIntersectionAndCoverage) {
  EXPECT_THAT(UnionOf({{0, 10}, {20, 30}}, {{10, 15}, {40, 50}}),
              ElementsAre(Interval{0, 15}, Interval{20, 30}, Interval{40, 50}));
  EXPECT_THAT(IntersectionOf({{0, 10}, {20, 30}}, {{5, 25}}), ElementsAre(Interval{5, 10}, Interval{20, 25}));
  EXPECT_THAT(CoveredAtLeast({{{0, 10}}, {{5, 20}}, {{8, 9}}}, 2), ElementsAre(Interval{5, 10}));
  EXPECT_THAT(CoveredAtLeast({{{0, 10}}, {{10, 20}}}, 1), ElementsAre(Interval{0, 20}));
  EXPECT_TRUE(SetContains({{0, 10}, {20, 30}}, 20));
  EXPECT_FALSE(SetContains({{0, 10}, {20, 30}}, 10));
}

// ---------------------------------------------------------------------------
// Admission and placement, by hand.

TEST(CalendarTest, TouchingIntervalsNeverConflict) {
  Calendar cal(Gpus(1), {Excl({0}, At(1), At(2))}, At(0));
  auto before = cal.FindEarliest(Pin(ExactExcl(At(0), kHour), {0}), {});
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->start, At(0));
  auto after = cal.FindEarliest(Pin(ExactExcl(At(2), kHour), {0}), {});
  ASSERT_TRUE(after.has_value());
  EXPECT_FALSE(after->queued);
  auto inside = cal.FindEarliest(Pin(ExactExcl(At(1, 55), kHour), {0}), {});
  ASSERT_FALSE(inside.has_value());
  EXPECT_THAT(inside.error().reasons, ElementsAre("exclusive conflict on GPU 0"));
}

TEST(CalendarTest, FootprintsEndingByNowAreDropped) {
  Calendar ended(Gpus(1), {Excl({0}, At(0), At(1))}, At(1));
  EXPECT_EQ(ended.now(), At(1));
  // The ended booking no longer holds even the past part of its interval.
  EXPECT_TRUE(ended.FindEarliest(Pin(ExactExcl(At(0), 5 * kMinute), {0}), {}).has_value());
  Calendar running(Gpus(1), {Excl({0}, At(0), At(1)), Excl({0}, At(0), At(1, 0, 1))}, At(1));
  EXPECT_FALSE(running.FindEarliest(Pin(ExactExcl(At(0), 5 * kMinute), {0}), {}).has_value());
}

TEST(CalendarTest, ExclusiveAndSharedConflictMessages) {
  Calendar cal(Gpus(2), {Excl({0}, At(1), At(2)), Shared({1}, At(1), At(2))}, At(0));
  EXPECT_THAT(cal.Reasons(Pin(ExactShared(At(1), kHour), {0}), At(1), {}),
              ElementsAre("exclusive conflict on GPU 0"));
  EXPECT_THAT(cal.Reasons(Pin(ExactExcl(At(1), kHour), {1}), At(1), {}),
              ElementsAre("GPU 1 already has shared reservations"));
  EXPECT_THAT(cal.Reasons(Pin(ExactExcl(At(1), kHour), {0}), At(1), {}),
              ElementsAre("exclusive conflict on GPU 0"));

  auto automatic = cal.FindEarliest(ExactExcl(At(1), kHour), {});
  ASSERT_FALSE(automatic.has_value());
  EXPECT_THAT(automatic.error().reasons,
              ElementsAre("exclusive conflict on GPU 0", "GPU 1 already has shared reservations"));
  ASSERT_TRUE(automatic.error().nearest.has_value());
  EXPECT_EQ(automatic.error().Message(),
            "exclusive conflict on GPU 0; GPU 1 already has shared reservations; nearest available: GPU=0 "
            "2026-11-29T02:00:00Z -> 2026-11-29T03:00:00Z");
  // A shared request still fits next to the shared booking.
  auto shared = cal.FindEarliest(ExactShared(At(1), kHour), {});
  ASSERT_TRUE(shared.has_value());
  EXPECT_THAT(shared->gpus, ElementsAre(1));
}

TEST(CalendarTest, SharedCapacitySumsUnitsAtEveryInstant) {
  Policy p = Gpus(1);
  p.share_capacity = 3;
  Calendar cal(p, {Shared({0}, At(1), At(3)), Shared({0}, At(2), At(4))}, At(0));
  EXPECT_TRUE(cal.FindEarliest(ExactShared(At(1), kHour, 2), {}).has_value());  // peak 1 in [1, 2)
  EXPECT_TRUE(cal.FindEarliest(ExactShared(At(1), 2 * kHour, 1), {}).has_value());
  auto full = cal.FindEarliest(ExactShared(At(1), 2 * kHour, 2), {});
  ASSERT_FALSE(full.has_value());
  EXPECT_THAT(full.error().reasons,
              ElementsAre("shared capacity full on GPU 0 (request 2 slot(s), currently used 2, projected 4, "
                          "maximum 3)"));
  // Queued, it waits until the two bookings no longer overlap its window.
  auto queued = cal.FindEarliest(QueuedShared(At(1), 2 * kHour, 2), {});
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->start, At(3));
  EXPECT_TRUE(queued->queued);
}

TEST(CalendarTest, SharedMemoryBudgetWhenCapacityIsKnown) {
  Calendar cal(Gpus(2), {Shared({0}, At(1), At(3), 1, 16384), Shared({1}, At(1), At(3))}, At(0));
  const GpuAdvice known = MemoryAdvice({24576, 24576});  // usable 24064 with the 512 MiB reserve
  PlacementRequest tenG = Pin(ExactShared(At(1), kHour), {0});
  tenG.memory_mb = 10240;
  EXPECT_THAT(cal.Reasons(tenG, At(1), known),
              ElementsAre("shared memory full on GPU 0 (need 10240 MiB, projected 26624/24064 MiB)"));
  EXPECT_FALSE(cal.FindEarliest(tenG, known).has_value());
  EXPECT_TRUE(cal.FindEarliest(tenG, {}).has_value()) << "unknown capacity: no VRAM check";
  EXPECT_TRUE(cal.FindEarliest(tenG, MemoryAdvice({0, 0})).has_value()) << "0 means unknown";
  PlacementRequest sevenG = tenG;
  sevenG.memory_mb = 7168;
  EXPECT_TRUE(cal.FindEarliest(sevenG, known).has_value());

  // Without a declaration the request claims the automatic, share-weighted budget.
  PlacementRequest automatic = Pin(ExactShared(At(1), kHour), {0});
  EXPECT_THAT(cal.Reasons(automatic, At(1), known),
              ElementsAre("shared memory full on GPU 0 (need 12032 MiB, projected 28416/24064 MiB)"));
  // ...and so does an undeclared booking: 12032 committed on GPU 1.
  EXPECT_EQ(cal.PeakCommittedMemoryMb(1, At(0), At(5), 24576), 12032);
  EXPECT_EQ(cal.PeakCommittedMemoryMb(0, At(0), At(5), 24576), 16384);
  EXPECT_EQ(cal.PeakCommittedMemoryMb(0, At(3), At(5), 24576), 0);
  EXPECT_TRUE(cal.FindEarliest(Pin(ExactShared(At(1), kHour), {1}), known).has_value());

  // A request larger than the usable memory never fits, even on an empty GPU.
  PlacementRequest huge = Pin(ExactShared(At(5), kHour), {1});
  huge.memory_mb = 30000;
  EXPECT_THAT(cal.Reasons(huge, At(5), known),
              ElementsAre("shared memory full on GPU 1 (need 30000 MiB, projected 30000/24064 MiB)"));
  huge.allow_queue = true;
  EXPECT_FALSE(cal.FindEarliest(huge, known).has_value());

  // Queued, the 10g request waits for the 16g booking to end.
  tenG.allow_queue = true;
  auto queued = cal.FindEarliest(tenG, known);
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->start, At(3));
}

TEST(CalendarTest, AutomaticMemoryBudget) {
  Policy p = Gpus(1);
  p.share_capacity = 2;
  Calendar cal(p, {}, At(0));
  EXPECT_EQ(cal.AutomaticMemoryMb(24576, 1), 12032);
  EXPECT_EQ(cal.AutomaticMemoryMb(24576, 2), 24064);
  EXPECT_EQ(cal.AutomaticMemoryMb(100, 1), 1) << "at least 1 MiB even with nothing usable";
}

TEST(CalendarTest, HostCpuBudgetHoldsAtEveryInstant) {
  Policy p = Gpus(3);
  p.host_cpus = 8;
  Calendar cal(
      p, {WithHost(Excl({0}, At(0), At(1)), 4, 0), WithHost(Shared({1}, At(0, 30), At(1, 30)), 4, 0)}, At(0));
  PlacementRequest r = ExactExcl(At(0), kHour);
  r.cpus = 1;
  // Only 4 CPUs are declared at the start, but 8 from 00:30.
  auto exact = cal.FindEarliest(r, {});
  ASSERT_FALSE(exact.has_value());
  EXPECT_THAT(exact.error().reasons,
              ElementsAre("host CPU budget full (request 1 CPUs, already declared 8 of 8)"));
  r.allow_queue = true;
  auto queued = cal.FindEarliest(r, {});
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->start, At(1));
  EXPECT_THAT(queued->gpus, ElementsAre(0));

  // Budgets off: declarations are ignored.
  Calendar unlimited(Gpus(3), {WithHost(Excl({0}, At(0), At(1)), 400, 0)}, At(0));
  EXPECT_TRUE(unlimited.FindEarliest(ExactExcl(At(0), kHour), {}).has_value());
}

TEST(CalendarTest, HostRamBudgetHoldsAtEveryInstant) {
  Policy p = Gpus(4);
  p.host_ram_mb = 131072;
  Calendar cal(p,
               {WithHost(Shared({0}, At(0), At(2)), 0, 65536), WithHost(Shared({1}, At(1), At(3)), 0, 32768)},
               At(0));
  PlacementRequest r = ExactShared(At(0), 2 * kHour);
  r.ram_mb = 40960;
  auto exact = cal.FindEarliest(r, {});
  ASSERT_FALSE(exact.has_value());
  EXPECT_THAT(exact.error().reasons,
              ElementsAre("host RAM budget full (request 40.0GiB, already declared 96.0GiB of 128.0GiB)"));
  ASSERT_TRUE(exact.error().nearest.has_value());
  EXPECT_EQ(exact.error().nearest->start, At(2));
  r.ram_mb = 32768;  // exactly fills the host at the peak
  EXPECT_TRUE(cal.FindEarliest(r, {}).has_value());
}

TEST(CalendarTest, BlackoutIsSkippedWhenQueuedAndAnErrorWhenExact) {
  Policy p = Gpus(1);
  p.blackouts = {{At(1), At(2), "kernel upgrade"}};
  Calendar cal(p, {}, At(0));
  EXPECT_TRUE(cal.FindEarliest(ExactExcl(At(0), kHour), {}).has_value()) << "touching is allowed";
  auto exact = cal.FindEarliest(ExactExcl(At(0, 30), kHour), {});
  ASSERT_FALSE(exact.has_value());
  EXPECT_EQ(exact.error().Message(),
            "administrator blackout 2026-11-29T01:00:00Z -> 2026-11-29T02:00:00Z: kernel upgrade; nearest "
            "available: GPU=0 2026-11-29T02:00:00Z -> 2026-11-29T03:00:00Z");
  auto queued = cal.FindEarliest(QueuedExcl(At(0, 30), kHour), {});
  ASSERT_TRUE(queued.has_value());
  EXPECT_EQ(queued->start, At(2));

  // An unaligned blackout end is rounded up to the grid.
  p.blackouts = {{At(1), At(2, 2, 30), "x"}};
  Calendar unaligned(p, {}, At(0));
  auto after = unaligned.FindEarliest(QueuedExcl(At(0, 30), kHour), {});
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->start, At(2, 5));
}

TEST(CalendarTest, BlackoutOfSomeGpusClosesOnlyThose) {
  Policy p = Gpus(3);
  p.blackouts = {{At(1), At(3), "fan swap", {0, 1}}};
  Calendar cal(p, {}, At(0));
  // Free choice: the one GPU still open.
  auto one = cal.FindEarliest(ExactExcl(At(1), kHour), {});
  ASSERT_TRUE(one.has_value());
  EXPECT_THAT(one->gpus, ElementsAre(2));
  // Two GPUs wait until the window ends.
  PlacementRequest two = QueuedExcl(At(1), kHour);
  two.count = 2;
  auto later = cal.FindEarliest(two, {});
  ASSERT_TRUE(later.has_value());
  EXPECT_EQ(later->start, At(3));
  // Pinned into the window: refused with the window's reason and end.
  auto pinned = cal.FindEarliest(Pin(ExactExcl(At(2), kHour), {1}), {});
  ASSERT_FALSE(pinned.has_value());
  EXPECT_EQ(pinned.error().reasons.front(),
            "administrator blackout on GPU 0,1 2026-11-29T01:00:00Z -> 2026-11-29T03:00:00Z: fan swap");
  EXPECT_EQ(PolicyConflict(p, At(0), At(2), At(4), {1}), pinned.error().reasons.front());
  EXPECT_EQ(PolicyConflict(p, At(0), At(2), At(4), {2}), std::nullopt);
  EXPECT_EQ(PolicyConflict(p, At(0), At(2), At(4)), std::nullopt) << "GPUs not chosen yet";
}

TEST(CalendarTest, HorizonBoundsExactAndQueuedRequests) {
  Policy p = Gpus(1);
  p.horizon = kDay;
  const Seconds now = At(0, 0, 30);  // horizon ends 2026-11-30T00:00:30Z
  Calendar free(p, {}, now);
  auto late = free.FindEarliest(ExactExcl(At(23, 30), kHour), {});
  ASSERT_FALSE(late.has_value());
  EXPECT_EQ(
      late.error().Message(),
      "reservation ends beyond the 1-day booking horizon (2026-11-30T00:00:30Z); no available slot within "
      "next 168 hours");
  EXPECT_TRUE(free.FindEarliest(ExactExcl(At(23), kHour), {}).has_value());

  Calendar until_2300(p, {Excl({0}, At(0), At(23))}, now);
  auto last = until_2300.FindEarliest(QueuedExcl(At(0), kHour), {});
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(last->start, At(23));
  Calendar until_2310(p, {Excl({0}, At(0), At(23, 10))}, now);
  EXPECT_FALSE(until_2310.FindEarliest(QueuedExcl(At(0), kHour), {}).has_value());
}

TEST(CalendarTest, QueueSearchWindowIsInclusive) {
  Policy p = Gpus(1);
  p.queue_search = 2 * kHour;
  Calendar cal(p, {Excl({0}, At(0), At(2))}, At(0));
  auto edge = cal.FindEarliest(QueuedExcl(At(0), kHour), {});
  ASSERT_TRUE(edge.has_value());
  EXPECT_EQ(edge->start, At(2));
  Calendar longer(p, {Excl({0}, At(0), At(2, 5))}, At(0));
  auto none = longer.FindEarliest(QueuedExcl(At(0), kHour), {});
  ASSERT_FALSE(none.has_value());
  EXPECT_FALSE(none.error().nearest.has_value()) << "a queued failure has no hint";
  EXPECT_EQ(none.error().Message(), "exclusive conflict on GPU 0; no available slot within next 2 hours");
}

TEST(CalendarTest, MaximumDurationIsRefusedUpFront) {
  Policy p = Gpus(1);
  p.max_duration = 2 * kHour;
  Calendar cal(p, {}, At(0));
  auto r = cal.FindEarliest(QueuedExcl(At(0), 3 * kHour), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().reasons,
              ElementsAre("reservation duration exceeds the administrator maximum of 2 hours"));
  EXPECT_FALSE(r.error().nearest.has_value());
  EXPECT_TRUE(cal.FindEarliest(QueuedExcl(At(0), 2 * kHour), {}).has_value());
}

TEST(CalendarTest, PolicyConflictCheckOrder) {
  Policy p = Gpus(1);
  p.max_duration = 2 * kHour;
  p.horizon = kDay;
  p.blackouts = {{At(5), At(6), "a"}, {At(5, 30), At(7), "b"}};
  EXPECT_EQ(PolicyConflict(p, At(0), At(4), At(4) + 2 * kDay),
            "reservation duration exceeds the administrator maximum of 2 hours");
  EXPECT_EQ(PolicyConflict(p, At(0), At(23, 30), At(24, 30)),
            "reservation ends beyond the 1-day booking horizon (2026-11-30T00:00:00Z)");
  EXPECT_EQ(PolicyConflict(p, At(0), At(5, 45), At(6, 15)),
            "administrator blackout 2026-11-29T05:00:00Z -> 2026-11-29T06:00:00Z: a");
  EXPECT_EQ(PolicyConflict(p, At(0), At(6), At(6, 15)),
            "administrator blackout 2026-11-29T05:30:00Z -> 2026-11-29T07:00:00Z: b");
  EXPECT_EQ(PolicyConflict(p, At(0), At(7), At(8)), std::nullopt);
}

TEST(CalendarTest, PinnedRequestWaitsInsteadOfSubstituting) {
  Calendar cal(Gpus(2), {Excl({0}, At(0), At(2))}, At(0));
  auto pinned = cal.FindEarliest(Pin(QueuedExcl(At(0), kHour), {0}), {});
  ASSERT_TRUE(pinned.has_value());
  EXPECT_EQ(pinned->start, At(2));
  EXPECT_THAT(pinned->gpus, ElementsAre(0));
  EXPECT_TRUE(pinned->queued);
  auto automatic = cal.FindEarliest(QueuedExcl(At(0), kHour), {});
  ASSERT_TRUE(automatic.has_value());
  EXPECT_EQ(automatic->start, At(0));
  EXPECT_THAT(automatic->gpus, ElementsAre(1));
  EXPECT_FALSE(automatic->queued);
}

TEST(CalendarTest, PinnedSetIsSortedAndMustBeEligible) {
  Policy p = Gpus(4);
  p.disabled_gpus = {3};
  Calendar cal(p, {}, At(0));
  auto pinned = cal.FindEarliest(Pin(ExactExcl(At(0), kHour), {2, 0}), {});
  ASSERT_TRUE(pinned.has_value());
  EXPECT_THAT(pinned->gpus, ElementsAre(0, 2));
  auto disabled = cal.FindEarliest(Pin(ExactExcl(At(0), kHour), {3}), {});
  ASSERT_FALSE(disabled.has_value());
  EXPECT_THAT(disabled.error().reasons, ElementsAre("GPU(s) unavailable for this time range"));
  PlacementRequest excluded = Pin(QueuedExcl(At(0), kHour), {1});
  excluded.excluded = {1};
  EXPECT_FALSE(cal.FindEarliest(excluded, {}).has_value());
}

TEST(CalendarTest, DisabledAndExcludedGpusAreNeverChosen) {
  Policy p = Gpus(3);
  p.disabled_gpus = {0};
  Calendar cal(p, {}, At(0));
  PlacementRequest r = ExactExcl(At(0), kHour);
  r.excluded = {1};
  auto placed = cal.FindEarliest(r, {});
  ASSERT_TRUE(placed.has_value());
  EXPECT_THAT(placed->gpus, ElementsAre(2));
  r.count = 2;
  auto two = cal.FindEarliest(r, {});
  ASSERT_FALSE(two.has_value());
  EXPECT_THAT(two.error().reasons, ElementsAre("not enough GPUs available for this request"));
}

TEST(CalendarTest, PriorityOnlyBreaksTiesAtTheSameEarliestStart) {
  Policy p = Gpus(2);
  p.gpu_priority = {{0, 5}};  // GPU 1 is preferred
  Calendar busy(p, {Excl({1}, At(0), At(1))}, At(0));
  auto now_free = busy.FindEarliest(QueuedExcl(At(0), kHour), {});
  ASSERT_TRUE(now_free.has_value());
  EXPECT_EQ(now_free->start, At(0));
  EXPECT_THAT(now_free->gpus, ElementsAre(0)) << "free now beats preferred later";

  Calendar idle(p, {}, At(0));
  auto tie = idle.FindEarliest(QueuedExcl(At(0), kHour), {});
  ASSERT_TRUE(tie.has_value());
  EXPECT_THAT(tie->gpus, ElementsAre(1));
}

TEST(CalendarTest, AdviceOrderAndScoresChooseAmongFreeGpus) {
  Calendar cal(Gpus(3), {}, At(0));
  GpuAdvice advice;
  advice.order = {2, 0, 1};
  PlacementRequest r = ExactExcl(At(0), kHour);
  r.count = 2;
  auto ordered = cal.FindEarliest(r, advice);
  ASSERT_TRUE(ordered.has_value());
  EXPECT_THAT(ordered->gpus, ElementsAre(2, 0)) << "kept in preference order";
  advice.scores = {30.0, 10.0, 20.0};  // score comes before rank
  auto scored = cal.FindEarliest(r, advice);
  ASSERT_TRUE(scored.has_value());
  EXPECT_THAT(scored->gpus, ElementsAre(1, 2));
}

TEST(CalendarTest, PressurePushesSharedWorkToEmptierGpus) {
  Calendar cal(Gpus(2), {Shared({0}, At(0), At(2))}, At(0));
  auto automatic = cal.FindEarliest(QueuedShared(At(0), kHour), {});
  ASSERT_TRUE(automatic.has_value());
  EXPECT_THAT(automatic->gpus, ElementsAre(1));
  EXPECT_THAT(automatic->pressure, ElementsAre(0.0));
  auto pinned = cal.FindEarliest(Pin(QueuedShared(At(0), kHour), {0}), {});
  ASSERT_TRUE(pinned.has_value());
  EXPECT_THAT(pinned->pressure, ElementsAre(50.0));
  PlacementRequest both = QueuedShared(At(0), kHour);
  both.count = 2;
  auto two = cal.FindEarliest(both, {});
  ASSERT_TRUE(two.has_value());
  EXPECT_THAT(two->gpus, ElementsAre(1, 0));
  EXPECT_THAT(two->pressure, ElementsAre(0.0, 50.0));

  // Partial overlap counts overlap seconds x units: 30 min of 1 unit over 1 h at capacity 2.
  Calendar partial(Gpus(1), {Shared({0}, At(0), At(0, 30))}, At(0));
  auto p = partial.FindEarliest(QueuedShared(At(0), kHour), {});
  ASSERT_TRUE(p.has_value());
  EXPECT_THAT(p->pressure, ElementsAre(25.0));
}

TEST(CalendarTest, LegacyUnalignedEndsRoundUpToTheGrid) {
  const Seconds now = At(12, 41);
  const Seconds start = At(12, 40);  // floor(now)
  Calendar running(Gpus(1), {Excl({0}, At(11), At(12, 42))}, now);
  auto pushed = running.FindEarliest(QueuedExcl(start, kHour), {});
  ASSERT_TRUE(pushed.has_value());
  EXPECT_EQ(pushed->start, At(12, 45));

  Calendar ended(Gpus(1), {Excl({0}, At(11), At(12, 40, 30))}, now);
  auto kept = ended.FindEarliest(QueuedExcl(start, kHour), {});
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->start, start) << "a record that ended before now is ignored";

  Policy ten = Gpus(1);
  ten.slot = 10 * kMinute;
  Calendar coarse(ten, {Excl({0}, At(11), At(12, 45))}, now);
  auto next = coarse.FindEarliest(QueuedExcl(start, kHour), {});
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->start, At(12, 50));
}

TEST(CalendarTest, ReasonsAreEmptyWhenThePlacementFits) {
  Calendar cal(Gpus(2), {Excl({0}, At(0), At(1))}, At(0));
  EXPECT_THAT(cal.Reasons(ExactExcl(At(0), kHour), At(0), {}), IsEmpty()) << "GPU 1 is free";
  PlacementRequest two = ExactExcl(At(0), kHour);
  two.count = 2;
  EXPECT_THAT(cal.Reasons(two, At(0), {}), ElementsAre("exclusive conflict on GPU 0"));
}

TEST(CalendarTest, AtMostThreeDistinctReasons) {
  Calendar cal(Gpus(5), {Excl({0, 1, 2, 3, 4}, At(0), At(1))}, At(0));
  auto r = cal.FindEarliest(ExactExcl(At(0), kHour), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_THAT(r.error().reasons, ElementsAre("exclusive conflict on GPU 0", "exclusive conflict on GPU 1",
                                             "exclusive conflict on GPU 2"));
  EXPECT_EQ(r.error().nearest->start, At(1));
}

TEST(CalendarTest, FullyBookedCalendarFails) {
  Policy p = Gpus(8);
  p.horizon = kDay;
  p.queue_search = 24 * kHour;
  std::vector<Footprint> booked;
  for (Seconds t = At(0); t < At(24); t += 5 * kMinute)
    for (int g = 0; g < 8; ++g) booked.push_back(Excl({g}, t, t + 5 * kMinute));
  Calendar cal(p, booked, At(0));
  auto r = cal.FindEarliest(QueuedExcl(At(0), 5 * kMinute), {});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(
      r.error().Message(),
      "exclusive conflict on GPU 0; exclusive conflict on GPU 1; exclusive conflict on GPU 2; no available "
      "slot within next 24 hours");
  p.horizon = kDay + 5 * kMinute;
  Calendar longer(p, booked, At(0));
  auto edge = longer.FindEarliest(QueuedExcl(At(0), 5 * kMinute), {});
  ASSERT_TRUE(edge.has_value());
  EXPECT_EQ(edge->start, At(24));
}

// ---------------------------------------------------------------------------
// Randomised comparison with a brute-force oracle.

struct Case {
  uint64_t seed = 0;
  Policy policy;
  Seconds now = 0;
  std::vector<Footprint> footprints;
  PlacementRequest request;
  GpuAdvice advice;
};

namespace oracle {

bool Overlaps(Seconds s1, Seconds e1, Seconds s2, Seconds e2) { return s1 < e2 && e1 > s2; }
bool Has(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<const Footprint*> Relevant(const Case& c, Seconds s, Seconds e, int gpu /* -1: any */) {
  std::vector<const Footprint*> out;
  for (const Footprint& f : c.footprints)
    if (f.end > c.now && Overlaps(f.start, f.end, s, e) && (gpu < 0 || Has(f.gpus, gpu))) out.push_back(&f);
  return out;
}

// Elementary segments of [s, e) cut at every relevant boundary.
std::vector<std::pair<Seconds, Seconds>> Segments(const std::vector<const Footprint*>& fps, Seconds s,
                                                  Seconds e) {
  std::vector<Seconds> points{s, e};
  for (const Footprint* f : fps) {
    points.push_back(std::max(s, f->start));
    points.push_back(std::min(e, f->end));
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  std::vector<std::pair<Seconds, Seconds>> out;
  for (std::size_t i = 0; i + 1 < points.size(); ++i) out.emplace_back(points[i], points[i + 1]);
  return out;
}

int64_t Auto(const Policy& p, int64_t total, int64_t units) {
  int64_t usable = std::max<int64_t>(0, total - p.shared_memory_reserve_mb);
  return std::max<int64_t>(1, usable * units / std::max(1, p.share_capacity));
}

bool GpuFree(const Case& c, int g, Seconds s, Seconds e) {
  const PlacementRequest& r = c.request;
  for (const Blackout& b : c.policy.blackouts)
    if (Has(b.gpus, g) && Overlaps(s, e, b.start, b.end)) return false;
  auto relevant = Relevant(c, s, e, g);
  if (r.mode == Mode::kExclusive) return relevant.empty();
  for (const Footprint* f : relevant)
    if (f->mode == Mode::kExclusive) return false;
  std::optional<int64_t> total;
  if (static_cast<std::size_t>(g) < c.advice.memory_total_mb.size() && c.advice.memory_total_mb[g] &&
      *c.advice.memory_total_mb[g] > 0) {
    total = c.advice.memory_total_mb[g];
  }
  for (auto [l, rr] : Segments(relevant, s, e)) {
    int64_t used = 0, committed = 0;
    for (const Footprint* f : relevant) {
      if (!Overlaps(f->start, f->end, l, rr)) continue;
      used += f->share_units;
      if (total)
        committed += std::max<int64_t>(
            1, f->memory_mb.value_or(0) ? *f->memory_mb : Auto(c.policy, *total, f->share_units));
    }
    if (used + r.share_units > c.policy.share_capacity) return false;
    if (total) {
      int64_t usable = std::max<int64_t>(0, *total - c.policy.shared_memory_reserve_mb);
      int64_t requested = r.memory_mb.value_or(0) ? *r.memory_mb : Auto(c.policy, *total, r.share_units);
      if (requested > usable || committed + requested > usable) return false;
    }
  }
  return true;
}

bool HostFits(const Case& c, Seconds s, Seconds e) {
  const Policy& p = c.policy;
  if (!p.host_cpus && !p.host_ram_mb) return true;
  auto relevant = Relevant(c, s, e, -1);
  for (auto [l, rr] : Segments(relevant, s, e)) {
    int64_t cpus = 0, ram = 0;
    for (const Footprint* f : relevant) {
      if (!Overlaps(f->start, f->end, l, rr)) continue;
      cpus += f->cpus;
      ram += f->ram_mb;
    }
    if (p.host_cpus && cpus + c.request.cpus > *p.host_cpus) return false;
    if (p.host_ram_mb && ram + c.request.ram_mb > *p.host_ram_mb) return false;
  }
  return true;
}

bool PolicyFits(const Case& c, Seconds s, Seconds e) {
  if (e - s > c.policy.max_duration || e > c.now + c.policy.horizon) return false;
  for (const Blackout& b : c.policy.blackouts)
    if (b.gpus.empty() && Overlaps(s, e, b.start, b.end)) return false;
  return true;
}

double Pressure(const Case& c, int g, Seconds s, Seconds e) {
  int64_t unit_seconds = 0;
  for (const Footprint* f : Relevant(c, s, e, g))
    if (f->mode == Mode::kShared)
      unit_seconds += (std::min(e, f->end) - std::max(s, f->start)) * f->share_units;
  double x = 100.0 * static_cast<double>(unit_seconds) / static_cast<double>(std::max<Seconds>(1, e - s)) /
             static_cast<double>(std::max(1, c.policy.share_capacity));
  return std::round(x * 1000.0) / 1000.0;
}

bool Eligible(const Case& c, int g) { return c.policy.GpuEnabled(g) && !Has(c.request.excluded, g); }

// A further condition on [start, end) beside the calendar's (the limits).
using Extra = std::function<bool(Seconds start, Seconds end)>;

std::optional<Placement> Find(const Case& c, bool queue, const Extra& extra = nullptr) {
  const PlacementRequest& r = c.request;
  const Policy& p = c.policy;
  if (r.duration > p.max_duration) return std::nullopt;
  Seconds hi = queue ? std::min(r.start + p.queue_search, c.now + p.horizon) : r.start;
  for (Seconds t = r.start; t <= hi; t += p.slot) {
    Seconds e = t + r.duration;
    if (!PolicyFits(c, t, e) || !HostFits(c, t, e)) continue;
    if (extra && !extra(t, e)) continue;
    Placement out;
    if (!r.pinned.empty()) {
      std::vector<int> pins = r.pinned;
      std::sort(pins.begin(), pins.end());
      pins.erase(std::unique(pins.begin(), pins.end()), pins.end());
      bool ok = true;
      for (int g : pins) ok = ok && Eligible(c, g) && GpuFree(c, g, t, e);
      if (!ok) continue;
      out.gpus = pins;
    } else {
      using Key = std::tuple<int, double, std::size_t, int>;
      std::vector<Key> free;
      for (int g = 0; g < p.gpu_count; ++g) {
        if (!Eligible(c, g) || !GpuFree(c, g, t, e)) continue;
        auto it = std::find(c.advice.order.begin(), c.advice.order.end(), g);
        std::size_t rank = it != c.advice.order.end() ? static_cast<std::size_t>(it - c.advice.order.begin())
                                                      : c.advice.order.size() + static_cast<std::size_t>(g);
        double score = static_cast<std::size_t>(g) < c.advice.scores.size() ? c.advice.scores[g] : 0.0;
        free.emplace_back(p.Priority(g), score + Pressure(c, g, t, e), rank, g);
      }
      if (static_cast<int>(free.size()) < r.count) continue;
      std::sort(free.begin(), free.end());
      for (int i = 0; i < r.count; ++i) out.gpus.push_back(std::get<3>(free[i]));
    }
    out.start = t;
    out.end = e;
    out.queued = t > r.start;
    for (int g : out.gpus) out.pressure.push_back(Pressure(c, g, t, e));
    return out;
  }
  return std::nullopt;
}

}  // namespace oracle

std::string Describe(const std::optional<Placement>& p) {
  if (!p) return "none";
  std::ostringstream s;
  s << "start=" << p->start << " gpus=[";
  for (int g : p->gpus) s << g << ' ';
  s << "] queued=" << p->queued << " pressure=[";
  for (double x : p->pressure) s << x << ' ';
  s << ']';
  return s.str();
}

std::string Describe(const Case& c) {
  std::ostringstream s;
  const Policy& p = c.policy;
  s << "case seed=" << c.seed << " now=" << c.now << "\n policy: gpus=" << p.gpu_count << " slot=" << p.slot
    << " C=" << p.share_capacity << " queue=" << p.queue_search << " horizon=" << p.horizon
    << " max=" << p.max_duration << " reserve=" << p.shared_memory_reserve_mb << " disabled=[";
  for (int g : p.disabled_gpus) s << g << ' ';
  s << "] prio={";
  for (auto [g, v] : p.gpu_priority) s << g << ':' << v << ' ';
  s << "} cpus=" << p.host_cpus.value_or(-1) << " ram=" << p.host_ram_mb.value_or(-1) << " blackouts=[";
  for (const Blackout& b : p.blackouts) {
    s << '[' << b.start << ',' << b.end << ")";
    for (int g : b.gpus) s << 'g' << g;
    s << ' ';
  }
  s << "]\n footprints:";
  for (const Footprint& f : c.footprints) {
    s << "\n  " << (f.mode == Mode::kExclusive ? 'X' : 'S') << " [" << f.start << ',' << f.end << ") gpus=[";
    for (int g : f.gpus) s << g << ' ';
    s << "] u=" << f.share_units << " mem=" << f.memory_mb.value_or(-1) << " cpus=" << f.cpus
      << " ram=" << f.ram_mb;
  }
  const PlacementRequest& r = c.request;
  s << "\n request: " << (r.mode == Mode::kExclusive ? 'X' : 'S') << " start=" << r.start
    << " d=" << r.duration << " count=" << r.count << " u=" << r.share_units
    << " mem=" << r.memory_mb.value_or(-1) << " cpus=" << r.cpus << " ram=" << r.ram_mb
    << " queue=" << r.allow_queue << " pinned=[";
  for (int g : r.pinned) s << g << ' ';
  s << "] excluded=[";
  for (int g : r.excluded) s << g << ' ';
  s << "]\n advice: order=[";
  for (int g : c.advice.order) s << g << ' ';
  s << "] scores=[";
  for (double x : c.advice.scores) s << x << ' ';
  s << "] memory=[";
  for (const auto& m : c.advice.memory_total_mb) s << m.value_or(-1) << ' ';
  s << "]";
  return s.str();
}

Case Generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };

  Case c;
  c.seed = seed;
  Policy& p = c.policy;
  static constexpr int kSlots[] = {1, 2, 3, 5, 10, 15, 60};
  p.slot = kSlots[uniform(0, 6)] * kMinute;
  p.gpu_count = static_cast<int>(uniform(1, 6));
  p.share_capacity = static_cast<int>(uniform(1, 4));
  const SlotGrid grid = p.grid();
  c.now = kDay0 + uniform(0, 2 * kHour);
  const Seconds base = grid.Floor(c.now);
  // Keep the brute force cheap: at most ~160 grid slots per search.
  p.queue_search = chance(0.1) ? 0 : p.slot * uniform(1, 160);
  if (chance(0.2)) p.horizon = uniform(1, 12) * kHour + uniform(0, 3599);
  if (chance(0.1)) p.max_duration = uniform(1, 3) * kHour;
  p.shared_memory_reserve_mb = chance(0.8) ? 512 : uniform(0, 4096);
  for (int g = 0; g < p.gpu_count; ++g) {
    if (chance(0.15)) p.disabled_gpus.push_back(g);
    if (chance(0.3)) p.gpu_priority[g] = static_cast<int>(uniform(0, 2));
  }
  if (chance(0.3)) {
    if (chance(0.7)) p.host_cpus = uniform(4, 12);
    if (chance(0.7)) p.host_ram_mb = uniform(8, 32) * 1024;
  }
  // Random instants near the search, on the grid or (legacy) anywhere.
  const Seconds span = std::max<Seconds>(3 * kHour, p.queue_search);
  auto instant = [&](bool aligned) {
    Seconds t = base + uniform(-kHour, span);
    return aligned ? grid.Floor(t) : t;
  };
  for (int64_t n = chance(0.6) ? 0 : uniform(1, 2); n > 0; --n) {
    Seconds s = instant(chance(0.5));
    p.blackouts.push_back(
        {s, s + uniform(1, 90) * kMinute + (chance(0.5) ? uniform(0, 59) : 0), "maintenance", {}});
    // Some close only a few GPUs.
    if (chance(0.4))
      for (int g = 0; g < p.gpu_count; ++g)
        if (chance(0.5)) p.blackouts.back().gpus.push_back(g);
  }
  std::sort(p.blackouts.begin(), p.blackouts.end(),
            [](const Blackout& a, const Blackout& b) { return a.start < b.start; });

  const int64_t footprints = uniform(0, 20);
  for (int64_t i = 0; i < footprints; ++i) {
    Footprint f;
    const bool legacy = chance(0.2);
    f.start = instant(!legacy);
    f.end = f.start + p.slot * uniform(1, 24) + (legacy ? uniform(1, p.slot) : 0);
    f.mode = chance(0.7) ? Mode::kShared : Mode::kExclusive;
    const int64_t gpus = uniform(1, std::min(3, p.gpu_count));
    for (int64_t k = 0; k < gpus; ++k) f.gpus.push_back(static_cast<int>(uniform(0, p.gpu_count - 1)));
    if (chance(0.05)) f.gpus.push_back(p.gpu_count);  // a GPU no longer configured
    f.share_units = static_cast<int>(chance(0.05) ? p.share_capacity + 1 : uniform(1, p.share_capacity));
    if (chance(0.5)) f.memory_mb = uniform(1, 20) * 1024;
    f.cpus = uniform(0, 4);
    f.ram_mb = uniform(0, 4) * 1024;
    c.footprints.push_back(std::move(f));
  }

  PlacementRequest& r = c.request;
  r.mode = chance(0.6) ? Mode::kShared : Mode::kExclusive;
  r.start = base + (chance(0.6) ? 0 : p.slot * uniform(0, 20));
  r.duration = p.slot * uniform(1, 12);
  r.count = static_cast<int>(chance(0.6) ? 1 : uniform(1, p.gpu_count));
  r.share_units = static_cast<int>(uniform(1, p.share_capacity));
  if (chance(0.3)) r.memory_mb = uniform(1, 10) * 1024;
  if (p.BudgetsOn()) {
    r.cpus = uniform(0, 3);
    r.ram_mb = uniform(0, 8) * 1024;
  }
  r.allow_queue = chance(0.6);
  if (chance(0.25)) {
    for (int64_t k = uniform(1, p.gpu_count); k > 0; --k)
      r.pinned.push_back(static_cast<int>(uniform(0, p.gpu_count - 1)));
  }
  if (chance(0.2)) r.excluded.push_back(static_cast<int>(uniform(0, p.gpu_count - 1)));

  GpuAdvice& a = c.advice;
  if (chance(0.5)) {
    for (int g = 0; g < p.gpu_count; ++g) a.order.push_back(g);
    std::shuffle(a.order.begin(), a.order.end(), rng);
    if (chance(0.3)) a.order.resize(static_cast<std::size_t>(uniform(0, p.gpu_count)));
    if (chance(0.1)) a.order.push_back(p.gpu_count + 3);  // invalid entries are ignored
  }
  if (chance(0.5)) {
    static constexpr double kScores[] = {0.0, 10.0, 45.0, 12.5};
    for (int g = 0; g < p.gpu_count; ++g) a.scores.push_back(kScores[uniform(0, 3)]);
  }
  if (chance(0.5)) {
    static constexpr int64_t kTotals[] = {0, 8192, 16384, 24576};
    for (int g = 0; g < p.gpu_count; ++g)
      a.memory_total_mb.push_back(chance(0.8) ? std::optional<int64_t>(kTotals[uniform(0, 3)])
                                              : std::nullopt);
  }
  return c;
}

bool Same(const std::optional<Placement>& a, const std::optional<Placement>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->start == b->start && a->end == b->end && a->gpus == b->gpus && a->queued == b->queued &&
         a->pressure == b->pressure;
}

TEST(CalendarOracleTest, MatchesBruteForceOnRandomCases) {
  constexpr uint64_t kSeed = 20261129;
  constexpr int kCases = 20000;
  int placed = 0, queued = 0, failed = 0, mismatches = 0;
  for (int i = 0; i < kCases && mismatches < 5; ++i) {
    const Case c = Generate(kSeed + static_cast<uint64_t>(i));
    const Calendar cal(c.policy, c.footprints, c.now);
    auto got = cal.FindEarliest(c.request, c.advice);
    std::optional<Placement> fast = got ? std::optional<Placement>(*got) : std::nullopt;
    std::optional<Placement> want = oracle::Find(c, c.request.allow_queue);
    if (!Same(fast, want)) {
      ++mismatches;
      ADD_FAILURE() << "case " << i << ": placement differs\n fast:   " << Describe(fast)
                    << "\n oracle: " << Describe(want) << "\n"
                    << Describe(c);
      continue;
    }
    // The nearest-available hint of a failed exact request is the queued search.
    if (!got && !c.request.allow_queue) {
      auto hint = oracle::Find(c, /*queue=*/true);
      if (!Same(got.error().nearest, hint)) {
        ++mismatches;
        ADD_FAILURE() << "case " << i << ": nearest differs\n fast:   " << Describe(got.error().nearest)
                      << "\n oracle: " << Describe(hint) << "\n"
                      << Describe(c);
        continue;
      }
    }
    if (!got) {
      EXPECT_FALSE(got.error().reasons.empty()) << Describe(c);
    }
    // Reasons() agrees with the oracle about the requested start itself.
    PlacementRequest exact = c.request;
    exact.allow_queue = false;
    Case exact_case = c;
    exact_case.request = exact;
    const bool fits_at_start = oracle::Find(exact_case, false).has_value();
    if (cal.Reasons(c.request, c.request.start, c.advice).empty() != fits_at_start) {
      ++mismatches;
      ADD_FAILURE() << "case " << i << ": Reasons() at the start disagrees (oracle fits=" << fits_at_start
                    << ")\n"
                    << Describe(c);
    }
    if (got) {
      ++placed;
      queued += got->queued;
      EXPECT_THAT(cal.Reasons(c.request, got->start, c.advice), IsEmpty()) << Describe(c);
    } else {
      ++failed;
    }
  }
  EXPECT_EQ(mismatches, 0);
  // The generator must exercise every outcome, or the comparison proves little.
  EXPECT_GT(placed - queued, kCases / 10);
  EXPECT_GT(queued, kCases / 20);
  EXPECT_GT(failed, kCases / 20);
  std::printf("oracle: %d placed (%d queued), %d failed\n", placed, queued, failed);
  RecordProperty("placed", placed);
  RecordProperty("queued", queued);
  RecordProperty("failed", failed);
}

// Fair-share limits, by their definitions, slot by slot: the oracle of
// LimitRule, which the calendar keeps to in the same search.
namespace limits_oracle {

int64_t HeldAt(const LimitScope& s, Seconds x) {
  int64_t n = 0;
  for (const Holding& h : s.held)
    if (h.start <= x && x < h.end) n += h.gpus;
  return n;
}

// GPU-seconds `s` holds in [from, to), with `gpus` more over [start, end).
int64_t UsedIn(const LimitScope& s, Seconds from, Seconds to, int gpus, Seconds start, Seconds end) {
  auto overlap = [&](Seconds a, Seconds b) {
    return std::max<Seconds>(0, std::min(b, to) - std::max(a, from));
  };
  int64_t total = gpus * overlap(start, end);
  for (const Holding& h : s.held) total += h.gpus * overlap(h.start, h.end);
  return total;
}

bool Fits(const std::vector<LimitScope>& scopes, int gpus, Seconds t, Seconds e, Seconds now, Seconds slot) {
  for (const LimitScope& s : scopes) {
    const Limits& l = s.limits;
    if (l.max_duration && e - t > *l.max_duration) return false;
    if (l.max_horizon && e > now + *l.max_horizon) return false;
    if (l.max_queued && t > now) {
      int64_t waiting = 0;
      for (const Holding& h : s.held) waiting += h.start > now;
      if (waiting + 1 > *l.max_queued) return false;
    }
    if (l.max_gpus)
      for (Seconds x = t; x < e; x += slot)
        if (HeldAt(s, x) + gpus > *l.max_gpus) return false;
    const std::pair<std::optional<int64_t>, Seconds> windows[] = {{l.max_gpu_hours_24h, kDay},
                                                                  {l.max_gpu_hours_7d, 7 * kDay}};
    for (const auto& [hours, w] : windows) {
      if (!hours) continue;
      for (Seconds u = t - w + slot; u < e; u += slot)
        if (UsedIn(s, u, u + w, gpus, t, e) > *hours * kHour) return false;
    }
  }
  return true;
}

}  // namespace limits_oracle

TEST(CalendarOracleTest, LimitsMatchBruteForce) {
  constexpr uint64_t kSeed = 20261202;
  constexpr int kCases = 2000;
  int placed = 0, limited = 0, failed = 0, mismatches = 0;
  for (int i = 0; i < kCases && mismatches < 5; ++i) {
    Case c = Generate(kSeed + static_cast<uint64_t>(i));
    std::mt19937_64 rng(c.seed ^ 0x5eedULL);
    auto uniform = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
    const Seconds slot = c.policy.slot;
    const SlotGrid grid = c.policy.grid();
    std::vector<LimitScope> scopes;
    for (int64_t n = uniform(1, 2); n > 0; --n) {
      LimitScope s;
      s.name = n == 1 ? "alice" : "group g";
      if (chance(0.5)) s.limits.max_gpus = uniform(1, 5);
      if (chance(0.4)) s.limits.max_gpu_hours_24h = uniform(1, 30);
      if (chance(0.3)) s.limits.max_gpu_hours_7d = uniform(1, 60);
      if (chance(0.2)) s.limits.max_duration = slot * uniform(1, 12);
      if (chance(0.2)) s.limits.max_horizon = uniform(1, 8) * kHour;
      if (chance(0.2)) s.limits.max_queued = uniform(0, 2);
      // What the scope holds: the last week's use and what lies ahead, on the grid.
      for (int64_t k = uniform(0, 8); k > 0; --k) {
        Seconds start = grid.Floor(c.now + uniform(-8 * kDay, 6 * kHour));
        s.held.push_back({start, start + slot * uniform(1, 72), static_cast<int>(uniform(1, 3))});
      }
      scopes.push_back(std::move(s));
    }
    const LimitRule rule(scopes, c.now, slot);
    c.request.rule = &rule;
    const int gpus =
        c.request.pinned.empty()
            ? c.request.count
            : static_cast<int>(std::set<int>(c.request.pinned.begin(), c.request.pinned.end()).size());
    const oracle::Extra extra = [&](Seconds t, Seconds e) {
      return limits_oracle::Fits(scopes, gpus, t, e, c.now, slot);
    };
    const Calendar cal(c.policy, c.footprints, c.now);
    auto got = cal.FindEarliest(c.request, c.advice);
    std::optional<Placement> fast = got ? std::optional<Placement>(*got) : std::nullopt;
    std::optional<Placement> want = oracle::Find(c, c.request.allow_queue, extra);
    if (!Same(fast, want)) {
      ++mismatches;
      ADD_FAILURE() << "case " << i << ": placement with limits differs\n fast:   " << Describe(fast)
                    << "\n oracle: " << Describe(want) << "\n"
                    << Describe(c);
      continue;
    }
    if (!got && !c.request.allow_queue && !Same(got.error().nearest, oracle::Find(c, true, extra))) {
      ++mismatches;
      ADD_FAILURE() << "case " << i << ": nearest with limits differs\n" << Describe(c);
      continue;
    }
    // The rule's reasons agree with the definitions at the requested start.
    const Seconds t = c.request.start, e = t + c.request.duration;
    if (rule.Reasons(gpus, t, e).empty() != limits_oracle::Fits(scopes, gpus, t, e, c.now, slot)) {
      ++mismatches;
      ADD_FAILURE() << "case " << i << ": limit reasons at the start disagree\n" << Describe(c);
    }
    limited += !Same(oracle::Find(c, c.request.allow_queue), want);
    if (got) {
      ++placed;
    } else {
      ++failed;
      EXPECT_FALSE(got.error().reasons.empty()) << Describe(c);
    }
  }
  EXPECT_EQ(mismatches, 0);
  // Limits must change the answer often, or the comparison proves little.
  EXPECT_GT(placed, kCases / 10);
  EXPECT_GT(failed, kCases / 10);
  EXPECT_GT(limited, kCases / 10);
  std::printf("limits oracle: %d placed, %d moved or refused by limits, %d failed\n", placed, limited,
              failed);
}

// The daemon's calendar: an occupancy changed one footprint at a time, with
// footprints that came and went again, and one that does not count (the
// reservation being edited). It must answer exactly like the brute force over
// the footprints that count.
TEST(CalendarOracleTest, IncrementalOccupancyMatchesBruteForce) {
  constexpr uint64_t kSeed = 20261201;
  constexpr int kCases = 8000;
  int mismatches = 0, excepted = 0;
  for (int i = 0; i < kCases && mismatches < 5; ++i) {
    Case c = Generate(kSeed + static_cast<uint64_t>(i));
    std::mt19937_64 rng(c.seed);
    std::erase_if(c.footprints, [&](const Footprint& f) { return f.end <= c.now; });
    Occupancy occupancy(c.policy.gpu_count, c.policy.BudgetsOn());
    // Transients: added among the others, removed again in another order.
    std::vector<Footprint> transients;
    for (const Footprint& f : Generate(kSeed + 1000000 + static_cast<uint64_t>(i)).footprints)
      if (f.end > c.now) transients.push_back(f);
    for (const Footprint& f : transients) occupancy.Add(f);
    for (const Footprint& f : c.footprints) occupancy.Add(f);
    std::shuffle(transients.begin(), transients.end(), rng);
    for (const Footprint& f : transients) occupancy.Remove(f);
    std::optional<Footprint> except;
    if (!c.footprints.empty() && std::bernoulli_distribution(0.5)(rng)) {
      auto k = std::uniform_int_distribution<std::size_t>(0, c.footprints.size() - 1)(rng);
      except = c.footprints[k];
      c.footprints.erase(c.footprints.begin() + static_cast<std::ptrdiff_t>(k));
      ++excepted;
    }
    const Calendar cal(c.policy, occupancy, c.now, except);
    auto got = cal.FindEarliest(c.request, c.advice);
    std::optional<Placement> fast = got ? std::optional<Placement>(*got) : std::nullopt;
    std::optional<Placement> want = oracle::Find(c, c.request.allow_queue);
    PlacementRequest exact = c.request;
    exact.allow_queue = false;
    Case exact_case = c;
    exact_case.request = exact;
    const bool fits_at_start = oracle::Find(exact_case, false).has_value();
    const bool reasons_agree = cal.Reasons(c.request, c.request.start, c.advice).empty() == fits_at_start;
    if (!Same(fast, want) || !reasons_agree) {
      ++mismatches;
      ADD_FAILURE() << "case " << i << ": differs (reasons agree: " << reasons_agree
                    << ")\n fast:   " << Describe(fast) << "\n oracle: " << Describe(want) << "\n"
                    << Describe(c);
    }
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(excepted, kCases / 4);
}

TEST(OccupancyTest, RemovingWhatWasAddedLeavesNothing) {
  Occupancy occupancy(3, true);
  std::vector<Footprint> fps = {Excl({0, 2}, At(0), At(2)), Shared({1}, At(1), At(3), 2)};
  fps[1].memory_mb = 4096;
  fps[1].cpus = 4;
  for (const Footprint& f : fps) occupancy.Add(f);
  EXPECT_EQ(occupancy.Gpu(0).ValueAt(At(1))[Occupancy::kExclusive], 1);
  EXPECT_EQ(occupancy.Gpu(1).ValueAt(At(2))[Occupancy::kUnits], 2);
  EXPECT_EQ(occupancy.DeclaredMemory(1).ValueAt(At(2))[0], 4096);
  EXPECT_EQ(occupancy.Host().ValueAt(At(2))[Occupancy::kCpus], 4);
  for (const Footprint& f : fps) occupancy.Remove(f);
  for (int g = 0; g < 3; ++g) {
    EXPECT_TRUE(occupancy.Gpu(g).empty()) << g;
    EXPECT_TRUE(occupancy.DeclaredMemory(g).empty()) << g;
    EXPECT_TRUE(occupancy.AutomaticMemory(g).empty()) << g;
  }
  EXPECT_TRUE(occupancy.Host().empty());
}

TEST(OccupancyTest, BuiltAtOnceEqualsBuiltOneByOne) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Case c = Generate(seed);
    Occupancy one_by_one(c.policy.gpu_count, true);
    for (const Footprint& f : c.footprints) one_by_one.Add(f);
    const Occupancy at_once(c.policy.gpu_count, true, c.footprints);
    for (int g = 0; g < c.policy.gpu_count; ++g) {
      EXPECT_EQ(one_by_one.Gpu(g).Steps(), at_once.Gpu(g).Steps()) << seed;
      EXPECT_EQ(one_by_one.DeclaredMemory(g).Steps(), at_once.DeclaredMemory(g).Steps()) << seed;
      EXPECT_EQ(one_by_one.AutomaticMemory(g).size(), at_once.AutomaticMemory(g).size()) << seed;
    }
    EXPECT_EQ(one_by_one.Host().Steps(), at_once.Host().Steps()) << seed;
  }
}

TEST(StepMapTest, WindowsReadOnlyWhatTheyCover) {
  StepMap<1> m;
  m.Add(10, 20, {1});
  m.Add(15, 30, {2});
  std::vector<std::tuple<Seconds, Seconds, int64_t>> pieces;
  m.ForEachSegment(
      12, 40, [&](Seconds a, Seconds b, const StepMap<1>::Values& v) { pieces.emplace_back(a, b, v[0]); });
  EXPECT_THAT(pieces, ElementsAre(std::tuple<Seconds, Seconds, int64_t>{12, 15, 1},
                                  std::tuple<Seconds, Seconds, int64_t>{15, 20, 3},
                                  std::tuple<Seconds, Seconds, int64_t>{20, 30, 2},
                                  std::tuple<Seconds, Seconds, int64_t>{30, 40, 0}));
  m.Add(15, 30, {-2});
  EXPECT_EQ(m.size(), 2u);  // 10 and 20 only: the removed interval left no breakpoint
  EXPECT_EQ(m.ValueAt(25)[0], 0);
}

}  // namespace
}  // namespace bk::engine
