#!/usr/bin/env bash
# All GPUBK benchmarks: the engine (Google Benchmark, bench/engine_bench.cc),
# then whole commands (bench/commands.sh, hyperfine). `make bench` runs
# `bench/run.sh build`. Results go to BUILD/bench/: engine_bench.json,
# the hyperfine *.json files and summary.txt (the table printed at the end).
#
# usage: bench/run.sh [BUILD_DIR]     (default: build)
# Reported, never asserted: the targets in the summary are for the issue notes.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUT="$BUILD/bench"
mkdir -p "$OUT"

ENGINE=""
for candidate in "$BUILD/bench/engine_bench" "$BUILD/engine_bench"; do
  if [[ -x "$candidate" ]]; then ENGINE="$candidate"; break; fi
done

if [[ -n "$ENGINE" ]]; then
  echo "== engine: $ENGINE"
  "$ENGINE" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_out="$OUT/engine_bench.json" --benchmark_out_format=json
else
  rm -f "$OUT/engine_bench.json"
  echo "== engine: engine_bench not built (needs libbenchmark-dev; then ninja -C $BUILD engine_bench); skipped"
fi

echo
"$ROOT/bench/commands.sh" "$BUILD"

# ---- shared server (bench/server_bench.cc) -----------------------------------
# 32 concurrent clients on the daemon's socket: durable bookings/s
# (booking.create, each a committed transaction), reads/s (server.ping,
# reservations.list), and `bk l` through the daemon as a whole process.
# Figures: stdout, BUILD/bench/server_bench.txt and BUILD/bench/server_bench.json.
SERVER_BENCH=""
for candidate in "$BUILD/bench/server_bench" "$BUILD/server_bench"; do
  if [[ -x "$candidate" ]]; then SERVER_BENCH="$candidate"; break; fi
done
echo
if [[ -n "$SERVER_BENCH" && -x "$BUILD/bk" ]]; then
  echo "== server: $SERVER_BENCH"
  "$SERVER_BENCH" --bk "$BUILD/bk" --dir "$OUT" --clients "${BENCH_SERVER_CLIENTS:-32}" \
    --seconds "${BENCH_SERVER_SECONDS:-3}" --json "$OUT/server_bench.json" | tee "$OUT/server_bench.txt" \
    || echo "== server: server_bench reported errors (see above)"
else
  echo "== server: server_bench not built (needs libbenchmark-dev, like engine_bench; then ninja -C $BUILD server_bench bk); skipped"
fi

# ---- GPU sampling and the monitor (bench/gpu_bench.cc, bench/monitor_bench.cc) ----
for name in gpu_bench monitor_bench; do
  for candidate in "$BUILD/bench/$name" "$BUILD/$name"; do
    if [[ -x "$candidate" ]]; then
      echo
      echo "== $name: $candidate"
      "$candidate" --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
        --benchmark_out="$OUT/$name.json" --benchmark_out_format=json
      break
    fi
  done
done
