#include "engine/live_calendar.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace bk::engine {
namespace {

using ::testing::ElementsAre;

Policy FourGpus() {
  Policy p;
  p.gpu_count = 4;
  p.share_capacity = 2;
  p.host_cpus = 16;
  return p;
}

Footprint Fp(std::vector<int> gpus, Seconds start, Seconds end, Mode mode = Mode::kShared) {
  Footprint f;
  f.gpus = std::move(gpus);
  f.mode = mode;
  f.start = start;
  f.end = end;
  f.cpus = 1;
  return f;
}

TEST(LiveCalendarTest, PutReplacesEraseForgetsExpireDropsEnded) {
  LiveCalendar cal(FourGpus());
  cal.Put("a", 1000, Fp({0}, 0, 600));
  cal.Put("b", 1000, Fp({1}, 300, 900, Mode::kExclusive));
  cal.Put("c", 2000, Fp({0}, 0, 1200));
  EXPECT_EQ(cal.size(), 3u);
  EXPECT_EQ(cal.CountOwnedBy(1000), 2);
  EXPECT_EQ(cal.occupancy().Gpu(0).ValueAt(100)[Occupancy::kUnits], 2);
  EXPECT_THAT(cal.ExclusiveIntervals(), ElementsAre(Interval{300, 900}));

  cal.Put("a", 1000, Fp({2}, 0, 600));  // an edit moved it
  EXPECT_EQ(cal.occupancy().Gpu(0).ValueAt(100)[Occupancy::kUnits], 1);
  EXPECT_EQ(cal.occupancy().Gpu(2).ValueAt(100)[Occupancy::kUnits], 1);
  ASSERT_NE(cal.Find("a"), nullptr);
  EXPECT_THAT(cal.Find("a")->gpus, ElementsAre(2));

  cal.Erase("b");
  EXPECT_TRUE(cal.ExclusiveIntervals().empty());
  EXPECT_EQ(cal.CountOwnedBy(1000), 1);
  EXPECT_TRUE(cal.occupancy().Gpu(1).empty());

  cal.Expire(600);  // "a" ends at 600: gone; "c" runs on
  EXPECT_EQ(cal.Find("a"), nullptr);
  EXPECT_EQ(cal.CountOwnedBy(1000), 0);
  EXPECT_EQ(cal.size(), 1u);
  EXPECT_TRUE(cal.occupancy().Gpu(2).empty());
  EXPECT_EQ(cal.occupancy().Host().ValueAt(700)[Occupancy::kCpus], 1);
}

// Whatever the order of puts, replacements and erasures, the occupancy is
// the one built at once from what remains.
TEST(LiveCalendarTest, AnyHistoryLeavesTheOccupancyOfWhatRemains) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const Policy p = FourGpus();
  for (int round = 0; round < 50; ++round) {
    LiveCalendar live(p);
    std::map<std::string, LiveCalendar::Entry> model;
    for (int step = 0; step < 200; ++step) {
      std::string id = "r" + std::to_string(pick(0, 30));
      if (pick(0, 3) == 0) {
        live.Erase(id);
        model.erase(id);
        continue;
      }
      Seconds start = pick(0, 100) * 300;
      Footprint f = Fp({static_cast<int>(pick(0, 3)), static_cast<int>(pick(0, 3))}, start,
                       start + pick(1, 12) * 300, pick(0, 4) == 0 ? Mode::kExclusive : Mode::kShared);
      if (pick(0, 1)) f.memory_mb = pick(1, 8) * 1024;
      f.share_units = static_cast<int>(pick(1, 2));
      auto owner = static_cast<uint32_t>(pick(1, 3));
      live.Put(id, owner, f);
      model[id] = {id, owner, f};
    }
    const Seconds now = pick(0, 50) * 300;
    live.Expire(now);
    std::erase_if(model, [&](const auto& kv) { return kv.second.footprint.end <= now; });
    std::vector<Footprint> remaining;
    int64_t owned_by_1 = 0;
    for (const auto& [id, e] : model) {
      remaining.push_back(e.footprint);
      owned_by_1 += e.owner == 1;
    }
    const Occupancy want(p.gpu_count, true, remaining);
    ASSERT_EQ(live.size(), model.size());
    EXPECT_EQ(live.CountOwnedBy(1), owned_by_1);
    for (int g = 0; g < p.gpu_count; ++g) {
      EXPECT_EQ(live.occupancy().Gpu(g).Steps(), want.Gpu(g).Steps()) << round;
      EXPECT_EQ(live.occupancy().DeclaredMemory(g).Steps(), want.DeclaredMemory(g).Steps()) << round;
    }
    EXPECT_EQ(live.occupancy().Host().Steps(), want.Host().Steps()) << round;
  }
}

TEST(LiveCalendarTest, StartsFromManyAtOnce) {
  std::vector<LiveCalendar::Entry> entries = {{"a", 1, Fp({0}, 0, 600)},
                                              {"b", 2, Fp({0}, 300, 900, Mode::kExclusive)}};
  LiveCalendar live(FourGpus(), entries);
  EXPECT_EQ(live.size(), 2u);
  EXPECT_EQ(live.occupancy().Gpu(0).ValueAt(400)[Occupancy::kHolders], 2);
  live.Erase("a");
  live.Erase("b");
  EXPECT_TRUE(live.occupancy().Gpu(0).empty());
}

}  // namespace
}  // namespace bk::engine
