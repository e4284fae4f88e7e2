#include "tui/model.h"

#include <gtest/gtest.h>

#include "engine/civil_time.h"
#include "tui/tui_testing.h"

namespace bk::tui {
namespace {

constexpr Seconds kNow = 1'796'000'000 - 1'796'000'000 % 300 + 120;  // two minutes into a slot

TEST(ZoomLevels, StartAtTheSlotAndKeepMultiplesOfIt) {
  EXPECT_EQ(ZoomLevels(300), (std::vector<Seconds>{300, 900, 3600, 21600, 86400}));
  EXPECT_EQ(ZoomLevels(1800), (std::vector<Seconds>{1800, 3600, 21600, 86400}));
  EXPECT_EQ(ZoomLevels(60), (std::vector<Seconds>{60, 300, 900, 3600, 21600, 86400}));
}

TEST(AlignDown, HoursAndDaysAlignToLocalTime) {
  const int64_t half = 5 * 3600 + 1800;  // +05:30
  EXPECT_EQ((AlignDown(1'796'000'000, 3600, half) + half) % 3600, 0);
  const int64_t offset = 8 * 3600;
  Seconds t = 1'796'000'000;
  Seconds day = AlignDown(t, 86400, offset);
  EXPECT_EQ((day + offset) % 86400, 0);
  EXPECT_LE(day, t);
  EXPECT_GT(day + 86400, t);
  EXPECT_EQ(AlignDown(t, 300, offset) % 300, 0);
}

TEST(GoLive, PutsNowSixColumnsIn) {
  View v;
  v.now = kNow;
  v.step = 300;
  GoLive(v, 100, 0);
  EXPECT_EQ(v.cursor, kNow - 120);
  EXPECT_EQ(v.origin, v.cursor - 6 * 300);
  EXPECT_TRUE(v.live);
}

TEST(MoveCursor, PansTheWindowAtItsEdges) {
  View v;
  v.now = kNow;
  v.step = 300;
  GoLive(v, 10, 0);
  Seconds origin = v.origin;
  MoveCursor(v, 3, 10);  // inside the window: only the cursor moves
  EXPECT_EQ(v.origin, origin);
  MoveCursor(v, 20, 10);  // past the right edge: the window follows
  EXPECT_EQ(v.cursor, v.origin + 9 * 300);
  EXPECT_FALSE(v.live);
  MoveCursor(v, -40, 10);
  EXPECT_EQ(v.cursor, v.origin);
}

TEST(Zoom, KeepsTheCursorColumn) {
  View v;
  v.now = kNow;
  v.step = 300;
  GoLive(v, 60, 0);
  auto levels = ZoomLevels(300);
  EXPECT_FALSE(Zoom(v, levels, true, 60, 0));  // already the finest
  ASSERT_TRUE(Zoom(v, levels, false, 60, 0));
  EXPECT_EQ(v.step, 900);
  EXPECT_EQ(v.cursor % 900, 0);
  EXPECT_EQ((v.cursor - v.origin) / v.step, 6);
}

TEST(PanelRows, ListsBookingsNotEndedAndFiltersByUser) {
  Data d;
  d.policy.gpu_count = 2;
  d.live.now = kNow;
  d.reservations = {Booking("a", 1, "alice", {0}, kNow - 7200, kNow - 3600),
                    Booking("b", 2, "bob", {1}, kNow - 600, kNow + 600),
                    Booking("c", 1, "alice", {0}, kNow + 600, kNow + 1200)};
  d.Index();
  EXPECT_EQ(PanelRows(d, ""), (std::vector<int>{1, 2}));
  EXPECT_EQ(PanelRows(d, "alice"), (std::vector<int>{2}));
  EXPECT_EQ(PanelRows(d, "carol"), (std::vector<int>{}));
}

TEST(ReservationAt, PrefersTheCallersBooking) {
  Data d;
  d.policy.gpu_count = 1;
  d.me = 1;
  d.reservations = {Booking("b", 2, "bob", {0}, kNow, kNow + 600),
                    Booking("a", 1, "alice", {0}, kNow, kNow + 600)};
  d.Index();
  EXPECT_EQ(ReservationAt(d, 0, kNow, kNow + 300), 1);
  EXPECT_EQ(ReservationAt(d, 0, kNow + 600, kNow + 900), -1);
  EXPECT_EQ(ReservationAt(d, 3, kNow, kNow + 300), -1);
}

TEST(EquivalentCommand, SpellsTheBookingAsFlags) {
  Editor e;
  e.count = 2;
  e.duration = 5400;
  e.start = 1'796'000'400;
  e.mode = engine::Mode::kExclusive;
  e.gpus = {1, 3};
  e.memory_mb = 12288;
  FixedZone utc(0);
  std::string cmd = EquivalentCommand(e, utc);
  EXPECT_EQ(cmd.rfind("bk x 2 1h30m -t '", 0), 0u) << cmd;
  EXPECT_NE(cmd.find("-g 1,3 --mem 12288m"), std::string::npos) << cmd;
}

}  // namespace
}  // namespace bk::tui
