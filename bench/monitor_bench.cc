// The monitor's cost: CPU time per sample with 8 simulated GPUs and
// 200 processes, including the usage.db write, and `bk u users --since 30d`
// on 30 days of 8-GPU history.
//
//   BM_Ingest_8x200          Monitor::Ingest of a prepared snapshot: ledger
//                            read, attribution, classification, process
//                            diff, rollups, no-show streaks, usage.db commit
//   BM_Ingest_8x200_Churn    the same with 10% of the processes replaced every
//                            sample (events and process-state writes)
//   BM_SimSample_8x200       what `bk m` does per sample with BK_GPU_SIM_FILE:
//                            read + parse the 200-process file, then Ingest
//   BM_MetricsWrite_8x50     the metrics textfile after one sample: every
//                            user's bookings from the ledger (50), the text
//                            for 8 GPUs and 40 request methods, the atomic
//                            replace of the file (MetricsWriter::Write)
//   BM_MetricsRender_8x50    the text alone (RenderMetrics)
//   BM_Users30d              UsageStore::Users over 30 days of 8-GPU history
//                            (two users per GPU-minute: 691,200 minute rows
//                            plus the hour tier), i.e. `bk u users --since 30d`
//                            without process start-up
//
// MONITOR_BENCH_DB=DIR keeps the 30-day history as DIR/usage.db so the whole
// command can be timed: BK_DATA_DIR=DIR BK_TEST_NOW=<printed> bk u users --since 30d

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "config/config.h"
#include "engine/parse.h"
#include "gpu/source.h"
#include "monitor/metrics_writer.h"
#include "monitor/monitor.h"
#include "service/booking_service.h"
#include "store/usage_store.h"
#include "sys/clock.h"

namespace bk::monitor {
namespace {

constexpr int kGpus = 8;
constexpr int kProcesses = 200;
constexpr int64_t kNow = 1795974600;  // 2026-11-29T17:50:00Z, on the slot grid

std::string TempDir(const char* what) {
  std::string tmpl = std::string("/tmp/bk-monitor-bench-") + what + "-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) std::abort();
  return tmpl;
}

// 8 GPUs, 25 processes each, from 10 users; GPU g is booked by user 1000+g.
gpu::Snapshot BigSnapshot(int generation = 0) {
  gpu::Snapshot s;
  int pid = 10000 + generation * 1000;
  for (int g = 0; g < kGpus; ++g) {
    gpu::DeviceSample d;
    d.index = g;
    d.uuid = "GPU-0000000" + std::to_string(g) + "-0000-4000-8000-000000000000";
    d.name = "NVIDIA H100 80GB HBM3";
    d.memory_total_mb = 81559;
    d.memory_used_mb = 40000;
    d.utilization_percent = 55;
    d.temperature_c = 60;
    d.source = gpu::Source::kSimulation;
    d.process_telemetry = true;
    for (int i = 0; i < kProcesses / kGpus; ++i) {
      gpu::ProcessSample p;
      p.pid = ++pid;
      uid_t uid = 1000 + static_cast<uid_t>((g + i) % 10);
      p.uid = uid;
      p.host_uid = uid;
      p.username = "user" + std::to_string(uid);
      p.command = "python train.py --config configs/run" + std::to_string(i) + ".yaml";
      p.gpu_memory_mb = 1500;
      p.sm_utilization_percent = i % 7 * 10;
      p.host_start_id = std::to_string(123456 + p.pid);
      d.processes.push_back(std::move(p));
    }
    s.devices.push_back(std::move(d));
  }
  return s;
}

std::string SimFileText(const gpu::Snapshot& s) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& d : s.devices) {
    nlohmann::json procs = nlohmann::json::array();
    for (const auto& p : d.processes)
      procs.push_back({{"pid", p.pid},
                       {"uid", *p.uid},
                       {"username", p.username},
                       {"command", p.command},
                       {"gpu_memory_mb", p.gpu_memory_mb},
                       {"sm_utilization_percent", *p.sm_utilization_percent},
                       {"host_start_id", p.host_start_id}});
    gpus.push_back({{"index", d.index},
                    {"uuid", d.uuid},
                    {"name", d.name},
                    {"memory_used_mb", *d.memory_used_mb},
                    {"memory_total_mb", *d.memory_total_mb},
                    {"utilization_percent", *d.utilization_percent},
                    {"processes", procs}});
  }
  return nlohmann::json{{"gpus", gpus}}.dump(2);
}

// A private ledger with one 3-hour shared booking per GPU, and a monitor on it.
struct Fixture {
  std::string root;
  config::Config config;
  std::unique_ptr<sys::FixedClock> clock;
  std::unique_ptr<service::BookingService> service;
  std::unique_ptr<store::UsageStore> usage;
  std::unique_ptr<Monitor> monitor;
  int64_t now_ms = kNow * 1000;

  Fixture() {
    root = TempDir("ingest");
    config.data_dir = root + "/data";
    config.ledger_path = config.data_dir + "/ledger.db";
    config.policy.gpu_count = kGpus;
    clock = std::make_unique<sys::FixedClock>(kNow);
    service = std::make_unique<service::BookingService>(
        service::BookingService::Deps{&config, clock.get(), nullptr, static_cast<uid_t>(getuid()), false});
    for (int g = 0; g < kGpus; ++g) {
      service::CreateRequest r;
      r.count = 1;
      r.gpus = {g};
      r.duration = 3 * 3600;
      uint32_t uid = 1000 + g;
      if (!service->Create({uid, "user" + std::to_string(uid), false}, r)) std::abort();
    }
    auto u = store::UsageStore::Open({config.data_dir + "/usage.db", true, getuid(), 10000});
    if (!u) std::abort();
    usage = std::move(*u);
    Options o;
    o.config = &config;
    o.service = service.get();
    o.actor = {static_cast<uint32_t>(getuid()), "owner", true};
    o.usage = usage.get();
    o.interval_ms = 2000;
    o.monitor_id = "bench";
    o.pid = getpid();
    o.uid = getuid();
    monitor = std::make_unique<Monitor>(o);
    if (!monitor->Start(now_ms)) std::abort();
  }
  ~Fixture() {
    monitor.reset();
    usage.reset();
    service.reset();
    std::filesystem::remove_all(root);
  }
  void Ingest(gpu::Snapshot snap) {
    clock->Set(now_ms / 1000);
    auto r = monitor->Ingest({now_ms, false, std::move(snap)});
    if (!r) std::abort();
    benchmark::DoNotOptimize(r->events.size());
    now_ms += 2000;
  }
};

void BM_Ingest_8x200(benchmark::State& state) {
  Fixture f;
  const gpu::Snapshot snap = BigSnapshot();
  f.Ingest(snap);  // the first sample records 200 process starts
  for (auto _ : state) f.Ingest(snap);
  state.counters["processes"] = kProcesses;
}
BENCHMARK(BM_Ingest_8x200)->Unit(benchmark::kMicrosecond);

void BM_Ingest_8x200_Churn(benchmark::State& state) {
  Fixture f;
  std::vector<gpu::Snapshot> gens;
  for (int i = 0; i < 10; ++i) gens.push_back(BigSnapshot(i));
  gpu::Snapshot snap = gens[0];
  f.Ingest(snap);
  int k = 0;
  for (auto _ : state) {
    // Replace the 20 processes of one "slot" (10%) with those of another generation.
    state.PauseTiming();
    ++k;
    int from = k % 10;
    for (int g = 0; g < kGpus; ++g) {
      auto& procs = snap.devices[g].processes;
      int slot = k % (kProcesses / kGpus / 2);
      procs[slot * 2] = gens[from].devices[g].processes[slot * 2];
      procs[slot * 2 + 1] = gens[from].devices[g].processes[slot * 2 + 1];
    }
    gpu::Snapshot copy = snap;
    state.ResumeTiming();
    f.Ingest(std::move(copy));
  }
}
BENCHMARK(BM_Ingest_8x200_Churn)->Unit(benchmark::kMicrosecond);

// The fixture's 8 running bookings and 42 more to come, 40 methods with latencies.
struct MetricsFixture : Fixture {
  RequestStats stats;
  TickReport report;
  MetricsFixture() {
    for (int i = 0; i < 42; ++i) {
      service::CreateRequest r;
      r.count = 1;
      r.gpus = {i % kGpus};
      r.duration = 3600;
      r.start = kNow + 4 * 3600 + (i / kGpus) * 3600;
      uint32_t uid = 1000 + static_cast<uint32_t>(i % 10);
      if (!service->Create({uid, "user" + std::to_string(uid), false}, r)) std::abort();
    }
    for (int m = 0; m < 40; ++m)
      for (int k = 0; k < 20; ++k) stats.Record("method." + std::to_string(m), 0.0001 * (k + 1), k % 9 != 0);
    clock->Set(now_ms / 1000);
    auto r = monitor->Ingest({now_ms, false, BigSnapshot()});
    if (!r) std::abort();
    report = *std::move(r);
    config.metrics_textfile = root + "/gpubk.prom";
  }
};

void BM_MetricsWrite_8x50(benchmark::State& state) {
  MetricsFixture f;
  MetricsWriter writer(f.config, *f.service, {static_cast<uint32_t>(getuid()), "owner", true});
  writer.SetRequests(&f.stats);
  for (auto _ : state)
    if (!writer.Write(f.report, 1)) std::abort();
}
BENCHMARK(BM_MetricsWrite_8x50)->Unit(benchmark::kMicrosecond);

void BM_MetricsRender_8x50(benchmark::State& state) {
  MetricsFixture f;
  auto list = f.service->List({static_cast<uint32_t>(getuid()), "owner", true}, {.everyone = true});
  if (!list) std::abort();
  MetricsInput in;
  in.snapshot = &f.report.snapshot;
  in.gpu_count = kGpus;
  in.now = kNow;
  in.bookings = list->reservations;
  in.decisions = f.report.decisions;
  in.requests = &f.stats;
  for (auto _ : state) benchmark::DoNotOptimize(RenderMetrics(in).size());
  state.counters["bookings"] = static_cast<double>(in.bookings.size());
}
BENCHMARK(BM_MetricsRender_8x50)->Unit(benchmark::kMicrosecond);

void BM_SimSample_8x200(benchmark::State& state) {
  Fixture f;
  std::string sim = f.root + "/sim.json";
  std::ofstream(sim) << SimFileText(BigSnapshot());
  gpu::SimFileSource source(sim);
  for (auto _ : state) f.Ingest(source.Sample(kGpus));
}
BENCHMARK(BM_SimSample_8x200)->Unit(benchmark::kMicrosecond);

// 30 days x 1440 minutes x 8 GPUs x 2 (the booking holder "ok", a second user
// "unreserved" on the same GPU), written through the store's own upsert so
// the hour tier is filled exactly as the monitor fills it.
void Seed30Days(store::UsageStore& u, int64_t end) {
  const int64_t start = end - 30 * 86400;
  if (!u.Begin()) std::abort();
  std::vector<store::RollupRow> batch;
  for (int64_t w = start; w < end; w += 60) {
    batch.clear();
    for (int g = 0; g < kGpus; ++g) {
      for (int k = 0; k < 2; ++k) {
        store::RollupRow r;
        r.window_start = w;
        r.resolution = 60;
        r.gpu = g;
        r.uid = 1000 + static_cast<uint32_t>((g * 3 + k + w / 86400) % 20);
        r.username = "user" + std::to_string(r.uid);
        r.status = k == 0 ? "ok" : "unreserved";
        r.samples = 30;
        r.active_samples = (w / 60 + g) % 3 == 0 ? 0 : 30;
        r.observed_ms = 60000;
        r.active_ms = r.active_samples * 2000;
        r.process_sum = r.active_samples;
        r.process_max = 1;
        r.sm_sum = 30 * 40;
        r.sm_count = 30;
        r.sm_max = 80;
        r.memory_sum_mb = 30 * 20000;
        r.memory_max_mb = 20000;
        r.util_sum = 30 * 50;
        r.util_count = 30;
        r.util_max = 90;
        batch.push_back(std::move(r));
      }
    }
    if (!u.AddRollups(batch)) std::abort();
  }
  if (!u.Commit()) std::abort();
}

// The seeded history, built once per process (Google Benchmark calls the
// function several times to choose the iteration count) and removed at exit
// unless MONITOR_BENCH_DB asked to keep it.
struct History {
  std::string dir;
  bool keep = false;
  ~History() {
    if (!keep) std::filesystem::remove_all(dir);
  }
};

const std::string& HistoryDir() {
  static History h;
  static const bool seeded = [] {
    const char* keep = std::getenv("MONITOR_BENCH_DB");
    h.keep = keep && *keep;
    h.dir = h.keep ? std::string(keep) : TempDir("users");
    std::filesystem::create_directories(h.dir);
    std::filesystem::permissions(h.dir, std::filesystem::perms::owner_all);
    std::filesystem::remove(h.dir + "/usage.db");
    auto u = store::UsageStore::Open({h.dir + "/usage.db", true, getuid(), 10000});
    if (!u) std::abort();
    Seed30Days(**u, kNow);
    if (h.keep)
      std::fprintf(stderr,
                   "kept %s/usage.db; time it with BK_DATA_DIR=%s BK_TEST_NOW=%s bk u users --since 30d\n",
                   h.dir.c_str(), h.dir.c_str(), engine::FormatIsoUtc(kNow).c_str());
    return true;
  }();
  (void)seeded;
  return h.dir;
}

void BM_Users30d(benchmark::State& state) {
  auto u = store::UsageStore::Open({HistoryDir() + "/usage.db", false, getuid(), 10000});
  if (!u) std::abort();
  size_t users = 0;
  for (auto _ : state) {
    // `bk u users --since 30d` at kNow: [now + 1 - 30d, now + 1)
    auto r = (*u)->Users(kNow + 1 - 30 * 86400, kNow + 1, std::nullopt);
    if (!r) std::abort();
    users = r->size();
    benchmark::DoNotOptimize(users);
  }
  state.counters["users"] = static_cast<double>(users);
}
BENCHMARK(BM_Users30d)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bk::monitor

BENCHMARK_MAIN();
