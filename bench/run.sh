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
