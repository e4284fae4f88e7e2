#pragma once
// The recent load of each GPU as the monitor recorded it, for the context's
// gpu_advice.gpus[].history: the last two hours of usage.db's per-sample
// device rows in one-minute windows, newer windows weighing more (half-life
// ten minutes), as GPUBK 0.2.8 summarised its load history.

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <vector>

#include "config/config.h"
#include "store/usage_store.h"

namespace bk::agent {

struct GpuHistory {
  double predicted_percent = 0;            // the load to expect, 0-100
  double average_utilization_percent = 0;  // device utilisation
  double busy_fraction = 0;                // share of samples where the GPU was busy
  double memory_percent = 0;               // VRAM in use
  int64_t sample_count = 0;                // samples with telemetry in the window
};

// One entry per GPU 0..gpu_count-1 from the device rows (any order); rows
// without telemetry, older than the window or of other GPUs do not count.
std::vector<GpuHistory> SummarizeGpuHistory(std::span<const store::DeviceRow> rows, int gpu_count,
                                            int64_t now_ms);

// The same read from this user's usage.db beside a private ledger. Empty
// history when there is none: no monitor ran yet, or the ledger is a
// server's, whose usage.db only its daemon opens.
std::vector<GpuHistory> ReadGpuHistory(const config::Config& config, bool direct, uid_t owner, int gpu_count,
                                       int64_t now_ms);

}  // namespace bk::agent
