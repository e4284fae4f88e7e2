// The app's keys and clicks against a real private ledger (SQLite in a
// temporary directory) and a terminal that records frames instead of drawing.

#include "tui/app.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <deque>
#include <filesystem>
#include <map>

#include "config/config.h"
#include "sys/clock.h"

namespace bk::tui {
namespace {

constexpr Seconds kNow = 1'796'000'000 - 1'796'000'000 % 300 + 240;  // four minutes into a slot

class FakeTerminal : public Terminal {
 public:
  int width() const override { return width_; }
  int height() const override { return height_; }
  void Draw(const Screen& s) override { text = s.Text(); }
  Event Next(int) override { return {}; }
  bool Pending() override { return false; }
  std::string text;
  int width_ = 130, height_ = 40;
};

class AppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/bk-tui-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::map<std::string, std::string> env = {
        {"BK_DATA_DIR", dir_ + "/data"}, {"BK_GPU_COUNT", "4"}, {"HOME", dir_}};
    auto config = config::Load([env](const std::string& k) -> std::optional<std::string> {
      auto it = env.find(k);
      return it == env.end() ? std::nullopt : std::optional(it->second);
    });
    ASSERT_TRUE(config.has_value()) << config.error().message;
    config_ = *config;
    auto ledger = client::OpenDirect(config_, clock_);
    ASSERT_TRUE(ledger.has_value()) << ledger.error().message;
    ledger_ = std::move(*ledger);
    app_ = std::make_unique<App>(Deps{.ledger = *ledger_, .zone = zone_, .deployment = "private"}, terminal_,
                                 AsciiGlyphs());
    app_->Step({});
  }
  void TearDown() override {
    app_.reset();
    ledger_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Key(int key) { app_->Step({Event::Kind::kKey, key}); }
  std::vector<engine::Reservation> Mine() {
    auto list = ledger_->List({});
    EXPECT_TRUE(list.has_value());
    return list ? list->reservations : std::vector<engine::Reservation>{};
  }
  // The screen row where `gpu`'s cells are drawn.
  int RowOf(int gpu) {
    Screen s(terminal_.width_, terminal_.height_);
    std::vector<int> rows = PanelRows(app_->data(), "");
    Frame f{app_->data(), app_->view(), rows, glyphs_, zone_};
    Layout l = Render(f, s);
    for (int y = 0; y < s.height(); ++y)
      if (l.gpu_at_row[y] == gpu) return y;
    return -1;
  }

  std::string dir_;
  sys::FixedClock clock_{kNow};
  FixedZone zone_{0};
  Glyphs glyphs_ = AsciiGlyphs();
  config::Config config_;
  std::unique_ptr<client::Ledger> ledger_;
  FakeTerminal terminal_;
  std::unique_ptr<App> app_;
};

TEST_F(AppTest, BooksAtTheCursorWithTheServicesPreview) {
  Key('a');
  ASSERT_TRUE(app_->view().editor.has_value());
  EXPECT_TRUE(app_->view().editor->ready) << app_->view().editor->verdict;
  EXPECT_NE(terminal_.text.find("READY: GPU 0"), std::string::npos) << terminal_.text;
  Key(']');  // an hour and five minutes
  Key(kKeyEnter);
  auto mine = Mine();
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].gpus, std::vector<int>{0});
  EXPECT_EQ(mine[0].start, kNow - 240);
  EXPECT_EQ(mine[0].end - mine[0].start, 3900);
  EXPECT_FALSE(app_->view().editor.has_value());
  EXPECT_NE(app_->view().message.find("booked"), std::string::npos);
}

TEST_F(AppTest, ABlockedPreviewBooksNothing) {
  service::CreateRequest held;
  held.duration = 7200;
  held.mode = engine::Mode::kExclusive;
  held.gpus = {0};
  ASSERT_TRUE(ledger_->Create(held).has_value());
  Key('r');  // read again now rather than at the next poll
  Key('a');
  ASSERT_TRUE(app_->view().editor.has_value());
  EXPECT_FALSE(app_->view().editor->ready);
  EXPECT_FALSE(app_->view().editor->verdict.empty());
  Key(kKeyEnter);
  EXPECT_TRUE(app_->view().message_error);
  EXPECT_EQ(Mine().size(), 1u);
  Key(kKeyEscape);
  EXPECT_FALSE(app_->view().editor.has_value());
  EXPECT_FALSE(app_->done());
}

TEST_F(AppTest, AClickMovesTheCursorToThatCell) {
  int y = RowOf(2);
  ASSERT_GE(y, 0);
  Seconds origin = app_->view().origin;
  app_->Step({Event::Kind::kClick, 0, kLabelWidth + 10, y});
  EXPECT_EQ(app_->view().gpu, 2);
  EXPECT_EQ(app_->view().cursor, origin + 10 * app_->view().step);
  Key('a');
  Key(kKeyEnter);
  auto mine = Mine();
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].gpus, std::vector<int>{2});
  EXPECT_EQ(mine[0].start, origin + 10 * app_->view().step);
}

TEST_F(AppTest, CancelAsksFirstAndOnlyYesCancels) {
  service::CreateRequest r;
  r.duration = 3600;
  r.start = kNow - 240 + 3600;
  ASSERT_TRUE(ledger_->Create(r).has_value());
  Key('r');
  Key(kKeyTab);  // the reservations list, first row selected
  Key('d');
  ASSERT_TRUE(app_->view().dialog.has_value());
  Key('n');
  EXPECT_EQ(Mine().size(), 1u);
  Key('d');
  Key('y');
  EXPECT_TRUE(Mine().empty());
  EXPECT_NE(app_->view().message.find("cancelled"), std::string::npos);
}

TEST_F(AppTest, EditMovesAFutureBooking) {
  service::CreateRequest r;
  r.duration = 3600;
  r.start = kNow - 240 + 3600;
  ASSERT_TRUE(ledger_->Create(r).has_value());
  Key('r');
  Key(kKeyTab);
  Key('e');
  ASSERT_TRUE(app_->view().editor.has_value());
  Key(kKeyRight);
  Key(kKeyRight);
  EXPECT_TRUE(app_->view().editor->ready) << app_->view().editor->verdict;
  Key(kKeyEnter);
  auto mine = Mine();
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].start, kNow - 240 + 3600 + 600);
}

TEST_F(AppTest, ARunningBookingMovesOnlyItsEnd) {
  service::CreateRequest r;
  r.duration = 3600;
  ASSERT_TRUE(ledger_->Create(r).has_value());  // from the current slot: running now
  Key('r');
  Key(kKeyTab);
  Key('e');
  ASSERT_TRUE(app_->view().editor.has_value());
  EXPECT_TRUE(app_->view().editor->end_only);
  Key(kKeyRight);  // refused: the start stays
  EXPECT_TRUE(app_->view().message_error);
  Key(']');
  Key(']');
  EXPECT_TRUE(app_->view().editor->ready) << app_->view().editor->verdict;
  EXPECT_EQ(app_->view().editor->verdict, "renews it");
  Key(kKeyEnter);
  auto mine = Mine();
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].end, kNow - 240 + 3600 + 600);
  // Earlier shortens it.
  Key('e');
  for (int i = 0; i < 4; ++i) Key('[');
  EXPECT_TRUE(app_->view().editor->ready) << app_->view().editor->verdict;
  Key(kKeyEnter);
  mine = Mine();
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].end, kNow - 240 + 3600 - 600);
  EXPECT_EQ(mine[0].start, kNow - 240);
}

TEST_F(AppTest, QuitsOnQ) {
  Key('q');
  EXPECT_TRUE(app_->done());
}

TEST_F(AppTest, QuitsOnASignal) {
  app_->Step({Event::Kind::kInterrupt});
  EXPECT_TRUE(app_->done());
}

}  // namespace
}  // namespace bk::tui
