// CPU time of one NVML telemetry sample as the monitor takes it every 2 s:
// 8 GPUs x 25 processes through a fake libnvidia-ml (the driver's own time is
// not ours to optimise), attributed through a fake /proc or through the real
// /proc of 200 live child processes. Target: under 1 ms per sample.

#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "gpu/nvml_fake_test.h"
#include "gpu/nvml_source.h"
#include "gpu/procfs.h"

namespace {

using namespace bk::gpu;

constexpr int kGpus = 8;
constexpr int kPerGpu = 25;

fake::Nvml MakeNvml(const std::vector<int>& pids) {
  fake::Nvml n;
  n.gpus.resize(kGpus);
  for (int g = 0; g < kGpus; ++g) {
    n.gpus[g].uuid = "GPU-0000000" + std::to_string(g) + "-aaaa-bbbb-cccc-dddddddddddd";
    for (int k = 0; k < kPerGpu; ++k) {
      unsigned pid = static_cast<unsigned>(pids[g * kPerGpu + k]);
      n.gpus[g].compute.push_back({pid, 512ULL << 20});
      // Per-process utilisation samples keep arriving, as on a busy GPU.
      n.gpus[g].samples.push_back({pid, 0, 40, 10, 0, 0});
    }
  }
  return n;
}

// Runs Sample() with a monitor-like clock: +2 s per sample, so the identity
// cache's 5 s command refresh is part of the measured cost.
void RunSamples(benchmark::State& state, const ProcReader* proc, const std::vector<int>& pids) {
  fake::Nvml nvml = MakeNvml(pids);
  fake::g = &nvml;
  int64_t mono = 1'000'000'000;
  int64_t wall = 1'800'000'000'000'000;
  {
    NvmlOptions o;
    o.load = fake::Loader(fake::Api());
    o.proc = proc;
    o.monotonic_ns = [&] { return mono; };
    o.wall_us = [&] { return wall; };
    NvmlSource src(o);
    src.Sample(kGpus);  // init, cold identities
    for (auto _ : state) {
      mono += 2'000'000'000;
      wall += 2'000'000;
      for (auto& g : nvml.gpus)
        for (auto& s : g.samples) s.timeStamp = static_cast<unsigned long long>(wall - 1000);
      Snapshot s = src.Sample(kGpus);
      benchmark::DoNotOptimize(s);
      if (s.devices.size() != kGpus || s.devices[0].processes.size() != kPerGpu)
        state.SkipWithError("bad sample");
    }
  }
  fake::g = nullptr;
  state.counters["processes"] = kGpus * kPerGpu;
}

void BM_SampleFakeProc(benchmark::State& state) {
  FakeProcReader proc;
  std::vector<int> pids;
  for (int i = 0; i < kGpus * kPerGpu; ++i) {
    pids.push_back(10000 + i);
    proc.Add(10000 + i, 1000 + i % 7, "python train.py --config exp.yaml", 5000 + i);
  }
  RunSamples(state, &proc, pids);
}
BENCHMARK(BM_SampleFakeProc);

// 200 real processes (children that just wait), read through /proc.
class Children {
 public:
  explicit Children(int n) {
    for (int i = 0; i < n; ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pause();
        _exit(0);
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~Children() {
    for (int pid : pids_) kill(pid, SIGKILL);
    for (int pid : pids_) waitpid(pid, nullptr, 0);
  }
  const std::vector<int>& pids() const { return pids_; }

 private:
  std::vector<int> pids_;
};

void BM_SampleRealProc(benchmark::State& state) {
  Children children(kGpus * kPerGpu);
  if (static_cast<int>(children.pids().size()) != kGpus * kPerGpu) {
    state.SkipWithError("fork failed");
    return;
  }
  RealProcReader proc;
  RunSamples(state, &proc, children.pids());
}
BENCHMARK(BM_SampleRealProc);

// The worst case: 200 PIDs never seen before (every file read, every name looked up).
void BM_ResolveColdRealProc(benchmark::State& state) {
  Children children(kGpus * kPerGpu);
  RealProcReader proc;
  for (auto _ : state) {
    ProcIdentities ids(&proc);
    for (int pid : children.pids()) benchmark::DoNotOptimize(ids.Resolve(pid, 1));
  }
}
BENCHMARK(BM_ResolveColdRealProc);

}  // namespace

BENCHMARK_MAIN();
