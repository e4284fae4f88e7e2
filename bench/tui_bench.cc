// One frame of the terminal UI (bk t) with 8 GPUs and 16,000 bookings in the
// window: what each redraw costs once the ledger has been read (the drawing
// to the terminal itself is ncurses's, outside this figure).

#include <benchmark/benchmark.h>

#include <algorithm>

#include <fmt/format.h>

#include "tui/render.h"

namespace bk::tui {
namespace {

constexpr Seconds kNow = 1'796'000'000 - 1'796'000'000 % 86400;

// Two lanes of back-to-back two-hour shared bookings on each GPU, 16,000 in
// all, from NOW on: about 83 days, every one inside a 1d/col window.
Data Dense() {
  Data d;
  d.policy.gpu_count = 8;
  d.policy.share_capacity = 2;
  d.me = 1000;
  d.live.now = kNow;
  d.live.usage.resize(8);
  d.live.gpus.resize(8);
  int n = 0;
  for (int g = 0; g < 8; ++g)
    for (int lane = 0; lane < 2; ++lane)
      for (int i = 0; i < 1000; ++i, ++n) {
        engine::Reservation r;
        r.id = fmt::format("{:08x}-0000-4000-8000-000000000000", n);
        r.uid = 1000 + n % 40;
        r.username = fmt::format("user{}", n % 40);
        r.gpus = {g};
        r.start = kNow + i * 7200 + lane * 3600;
        r.end = r.start + 7200;
        d.reservations.push_back(r);
      }
  std::sort(d.reservations.begin(), d.reservations.end(),
            [](const auto& a, const auto& b) { return std::tie(a.start, a.id) < std::tie(b.start, b.id); });
  d.Index();
  return d;
}

void Frame16k(benchmark::State& state, Seconds step, Focus focus) {
  Data d = Dense();
  View v;
  v.now = kNow;
  v.step = step;
  v.focus = focus;
  v.selected = focus == Focus::kReservations ? 100 : -1;
  GoLive(v, TimelineColumns(130), 0);
  std::vector<int> rows = PanelRows(d, "");
  Glyphs glyphs = UnicodeGlyphs();
  FixedZone zone(0);
  for (auto _ : state) {
    Screen s(130, 40);
    Frame f{d, v, rows, glyphs, zone};
    benchmark::DoNotOptimize(Render(f, s));
  }
}

void BM_Frame16k_1dPerColumn(benchmark::State& state) { Frame16k(state, 86400, Focus::kTimeline); }
void BM_Frame16k_1dPerColumn_List(benchmark::State& state) { Frame16k(state, 86400, Focus::kReservations); }
void BM_Frame16k_5mPerColumn(benchmark::State& state) { Frame16k(state, 300, Focus::kTimeline); }

// What a change costs before the next frame: sorting, indexing per GPU and
// the panel's rows (done once per ledger change, not per frame).
void BM_Reload16k(benchmark::State& state) {
  Data d = Dense();
  for (auto _ : state) {
    Data copy = d;
    std::sort(copy.reservations.begin(), copy.reservations.end(),
              [](const auto& a, const auto& b) { return std::tie(a.start, a.id) < std::tie(b.start, b.id); });
    copy.Index();
    benchmark::DoNotOptimize(PanelRows(copy, ""));
  }
}

BENCHMARK(BM_Frame16k_1dPerColumn)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Frame16k_1dPerColumn_List)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Frame16k_5mPerColumn)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Reload16k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bk::tui

BENCHMARK_MAIN();
