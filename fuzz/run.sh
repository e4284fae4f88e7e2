#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS each: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
#
# Each target starts from its committed seeds (fuzz/corpus/<target>, read but
# never written) plus what earlier runs found (BUILD_DIR/fuzz/corpus/<target>,
# where new inputs go), with its dictionary fuzz/<target>.dict. A crash, an
# ASan or UBSan report, a leak, an input slower than 10 s or more than 2 GiB of
# memory fails the target; the failing input lands in
# BUILD_DIR/fuzz/artifacts/<target>/ and the whole run exits 1 after trying
# every target. The log of each target is BUILD_DIR/fuzz/<target>.log.
set -uo pipefail
cd "$(dirname "$0")/.."

if (($# < 2)); then
  echo "usage: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build=$1
seconds=$2
shift 2
targets=("$@")
if ((${#targets[@]} == 0)); then
  for dir in fuzz/corpus/*/; do targets+=("$(basename "$dir")"); done
fi

# Longest input per target: room for the largest seed and some growth, but
# small enough that each input runs fast.
max_len() {
  case $1 in
    parse_fuzz) echo 256 ;;
    booking_args_fuzz | server_json_fuzz) echo 1024 ;;
    import_fuzz | sim_source_fuzz) echo 16384 ;;
    *) echo 8192 ;;
  esac
}

# Leaks fail (ASan's default on Linux, stated here); UBSan is built with
# -fno-sanitize-recover, so any UB aborts with a stack trace.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

failed=()
summary=()
for t in "${targets[@]}"; do
  bin=$build/$t
  if [[ ! -x $bin ]]; then
    echo "fuzz: $bin is missing; build the 'fuzzers' target of $build" >&2
    failed+=("$t")
    continue
  fi
  corpus=$build/fuzz/corpus/$t
  artifacts=$build/fuzz/artifacts/$t/
  log=$build/fuzz/$t.log
  mkdir -p "$corpus" "$artifacts"
  dict=()
  [[ -f fuzz/$t.dict ]] && dict=("-dict=fuzz/$t.dict")
  echo "fuzz: $t for ${seconds}s"
  start=$SECONDS
  "$bin" "$corpus" "fuzz/corpus/$t" "${dict[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" \
    -print_final_stats=1 -artifact_prefix="$artifacts" >"$log" 2>&1
  rc=$?
  took=$((SECONDS - start))
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  if ((rc != 0)); then
    failed+=("$t")
    summary+=("$t: FAILED (exit $rc) after ${took}s; see $log and $artifacts")
    grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:' "$log" >&2 || tail -5 "$log" >&2
  else
    summary+=("$t: ok, ${runs:-?} inputs in ${took}s, corpus $(ls "$corpus" | wc -l) files")
  fi
done

printf 'fuzz: %s\n' "${summary[@]}"
if ((${#failed[@]} > 0)); then
  echo "fuzz: failed: ${failed[*]}" >&2
  exit 1
fi
