#include "tui/render.h"

#include <gtest/gtest.h>

#include "tui/help.h"
#include "tui/timeline.h"
#include "tui/tui_testing.h"

namespace bk::tui {
namespace {

constexpr Seconds kNow = 1'796'000'000 - 1'796'000'000 % 300;

class RenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data.policy.gpu_count = 4;
    data.policy.share_capacity = 2;
    data.me = 1000;
    data.live.now = kNow;
    data.deployment = "private";
    data.reservations = {
        Booking("aaaaaaaa-0000", 1000, "alice", {0}, kNow, kNow + 3600),
        Booking("bbbbbbbb-0000", 2000, "bob", {1}, kNow, kNow + 1800),
        Booking("cccccccc-0000", 2000, "bob", {1}, kNow + 600, kNow + 1200),
        Booking("dddddddd-0000", 3000, "carol", {2}, kNow + 900, kNow + 2700, engine::Mode::kExclusive),
    };
    data.Index();
    view.now = kNow;
    view.step = 300;
    GoLive(view, TimelineColumns(100), 0);
    rows = PanelRows(data, view.filter);
  }
  std::string Draw(int w, int h) {
    Screen s(w, h);
    Frame f{data, view, rows, glyphs, zone};
    layout = Render(f, s);
    return s.Text();
  }
  Data data;
  View view;
  std::vector<int> rows;
  Glyphs glyphs = AsciiGlyphs();
  FixedZone zone{0};
  Layout layout;
};

TEST_F(RenderTest, CellsShowEachKindOfUse) {
  auto cells = [&](int gpu) { return GpuCells(data, gpu, kNow, 300, 12, "", -1); };
  EXPECT_EQ(cells(0)[0].kind, CellKind::kMine);
  EXPECT_EQ(cells(1)[0].kind, CellKind::kPartly);
  EXPECT_EQ(cells(1)[2].kind, CellKind::kFull);  // both of bob's shared bookings: 2 of 2 slots
  EXPECT_EQ(cells(1)[2].slots, 2);
  EXPECT_EQ(cells(2)[3].kind, CellKind::kExclusive);
  EXPECT_EQ(cells(2)[0].kind, CellKind::kFree);
  EXPECT_EQ(cells(3)[0].kind, CellKind::kFree);
}

TEST_F(RenderTest, BlackoutsAndDisabledGpusShow) {
  data.policy.blackouts = {{kNow + 3600, kNow + 7200, "maintenance", {3}}};
  data.policy.disabled_gpus = {2};
  auto three = GpuCells(data, 3, kNow, 300, 24, "", -1);
  EXPECT_EQ(three[11].kind, CellKind::kFree);
  EXPECT_EQ(three[12].kind, CellKind::kBlackout);
  EXPECT_EQ(GpuCells(data, 2, kNow, 300, 4, "", -1)[0].kind, CellKind::kDisabled);
  std::string text = Draw(100, 30);
  EXPECT_NE(text.find("BLACKOUT"), std::string::npos) << text;
  EXPECT_NE(text.find("maintenance"), std::string::npos);
  EXPECT_NE(text.find("OFF"), std::string::npos);
}

TEST_F(RenderTest, FilterMarksTheUsersCells) {
  auto cells = GpuCells(data, 1, kNow, 300, 4, "bob", -1);
  EXPECT_TRUE(cells[0].filtered);
  EXPECT_FALSE(GpuCells(data, 0, kNow, 300, 4, "bob", -1)[0].filtered);
}

TEST_F(RenderTest, FrameHasHeaderAxisGpusPanelAndFooter) {
  std::string text = Draw(130, 40);
  EXPECT_NE(text.find("GPUBK | LIVE"), std::string::npos) << text;
  EXPECT_NE(text.find("NOW"), std::string::npos);
  EXPECT_NE(text.find("Date"), std::string::npos);
  EXPECT_NE(text.find(" GPU  Cap Util| Free"), std::string::npos);
  EXPECT_NE(text.find("TIMELINE"), std::string::npos);
  EXPECT_NE(text.find("GPU 0"), std::string::npos);  // the GPU focus panel
  for (int g = 0; g < 4; ++g) EXPECT_GE(layout.gpu_at_row[7 + g], 0);
  view.focus = Focus::kReservations;
  view.selected = 0;
  text = Draw(130, 40);
  EXPECT_NE(text.find("Reservations  4 active"), std::string::npos) << text;
  EXPECT_NE(text.find("carol"), std::string::npos);
}

TEST_F(RenderTest, NothingIsWrittenInTheLastColumn) {
  for (auto [w, h] : {std::pair{72, 18}, std::pair{130, 40}, std::pair{100, 25}}) {
    Screen s(w, h);
    Frame f{data, view, rows, glyphs, zone};
    Render(f, s);
    for (int y = 0; y < h; ++y) EXPECT_EQ(s.at(w - 1, y).glyph, U' ') << w << "x" << h << " row " << y;
  }
}

TEST_F(RenderTest, SmallTerminalsGetOneLine) {
  std::string text = Draw(60, 15);
  EXPECT_TRUE(layout.too_small);
  EXPECT_EQ(text.find("Terminal too small: 60x15"), 0u) << text;
  text = Draw(72, 18);
  EXPECT_FALSE(layout.too_small);
}

TEST_F(RenderTest, FooterFitsEveryWidth) {
  for (int w : {72, 80, 100, 130, 200}) {
    Screen s(w, 24);
    Frame f{data, view, rows, glyphs, zone};
    Render(f, s);
    EXPECT_FALSE(s.RowText(23).empty());
    EXPECT_LE(static_cast<int>(s.RowText(23).size()), w - 1);
  }
}

TEST_F(RenderTest, BannerShowsWarningsButNotInfo) {
  store::Announcement info, warning;
  info.level = store::AnnouncementLevel::kInfo;
  info.message = "coffee in room 3";
  warning.level = store::AnnouncementLevel::kCritical;
  warning.message = "power work tonight";
  data.announcements = {info, warning};
  std::string text = Draw(130, 40);
  EXPECT_NE(text.find("CRITICAL: power work tonight"), std::string::npos) << text;
  EXPECT_EQ(text.find("coffee"), std::string::npos);
}

TEST_F(RenderTest, EditorPreviewDrawsOnTheTimeline) {
  Editor e;
  e.start = kNow + 3600;
  e.duration = 1800;
  e.gpus = {3};
  e.checked = true;
  e.ready = true;
  e.placed = {3};
  e.placed_start = e.start;
  e.placed_end = e.end();
  view.editor = e;
  std::string text = Draw(130, 40);
  EXPECT_NE(text.find("READY"), std::string::npos) << text;
  EXPECT_NE(text.find("++++++"), std::string::npos);  // six 5-minute columns
  view.editor->ready = false;
  view.editor->verdict = "GPU 3 is taken";
  text = Draw(130, 40);
  EXPECT_NE(text.find("BLOCKED: GPU 3 is taken"), std::string::npos) << text;
  EXPECT_NE(text.find("xxxxxx"), std::string::npos);
}

TEST_F(RenderTest, UnicodeGlyphsWhenAvailable) {
  glyphs = UnicodeGlyphs();
  std::string text = Draw(100, 24);
  EXPECT_NE(text.find("\u25c6"), std::string::npos);  // alice's own booking
  EXPECT_NE(text.find("\u2588"), std::string::npos);  // carol's exclusive one
}

TEST(Screen, ControlCharactersNeverReachTheTerminal) {
  Screen s(20, 1);
  s.Put(0, 0,
        "a\x1b[2Jb\xc2\x9b\x80"
        "c");  // ESC, then CSI as C1, then a stray byte
  EXPECT_EQ(s.RowText(0), "a?[2Jb??c");
}

TEST_F(RenderTest, HelpListsTheLegendInTheGlyphsInUse) {
  auto lines = HelpLines(AsciiGlyphs());
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  EXPECT_NE(all.find("X  exclusive"), std::string::npos) << all;
  EXPECT_NE(all.find("@  yours"), std::string::npos);
}

}  // namespace
}  // namespace bk::tui
