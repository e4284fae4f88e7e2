#!/usr/bin/env bash
# Whole-command timings of the built `bk` with hyperfine, on a private ledger:
#   (a) every everyday command on an EMPTY ledger (schema and policy, no rows),
#       plus `bk 1 30m` writing into it;
#   (b) a ledger holding 16,000 active reservations (8 GPUs, dense 5-minute
#       shared bookings, written by bench/seed_ledger.py): `bk 1 30m`, `bk l`,
#       `bk st`, and `bk slots 1 30m` for context.
# Each write benchmark resets its ledger with --prepare, so every run sees the
# same state. Results: BUILD/bench/*.json (hyperfine) and BUILD/bench/summary.txt.
#
# usage: bench/commands.sh [BUILD_DIR]     (default: build)
# knobs: BENCH_RUNS (30), BENCH_WARMUP (3), BENCH_COUNT (16000),
#        BENCH_NOW (Unix seconds on the 5-minute grid; default: now, rounded down)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
BK="$BUILD/bk"
OUT="$BUILD/bench"
WORK="$OUT/work"
RUNS=${BENCH_RUNS:-30}
WARMUP=${BENCH_WARMUP:-3}
COUNT=${BENCH_COUNT:-16000}

if ! command -v hyperfine >/dev/null; then
  echo "bench/commands.sh: hyperfine is not installed (Debian: apt-get install hyperfine)" >&2
  exit 2
fi
if [[ ! -x "$BK" ]]; then
  echo "bench/commands.sh: $BK not found; build first: ninja -C $BUILD bk" >&2
  exit 2
fi

# A fixed clock on the slot grid. BK_TEST_NOW is honoured by builds with tests
# enabled (the default); a build without them uses the real clock, which is
# then within a few minutes of this one, so the seeded calendar still holds.
NOW=${BENCH_NOW:-$(( $(date +%s) / 300 * 300 ))}

# Only the variables below: no private config, simulation file or overrides.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^BK_' || true)
export BK_GPU_COUNT=8 BK_TEST_NOW="$NOW" TZ=UTC

mkdir -p "$OUT"
mkdir -p -m 0700 "$WORK"
# Only ours: WORK/scale holds bench/scale.py's cached seeds.
rm -rf "$WORK/empty" "$WORK/empty-seed" "$WORK/16k" "$WORK/16k-seed"

echo "== seeding ledgers (BK_TEST_NOW=$NOW, 8 GPUs)"
python3 "$ROOT/bench/seed_ledger.py" --bk "$BK" --out "$WORK/empty-seed" --count 0 --now "$NOW"
python3 "$ROOT/bench/seed_ledger.py" --bk "$BK" --out "$WORK/16k-seed" --count "$COUNT" --now "$NOW"

# reset SEED RUN restores RUN/ledger.db from SEED (a copy: bk refuses hard
# links); reset_cmd prints the same as a hyperfine --prepare command.
reset_script() { echo "rm -f $2/ledger.db-wal $2/ledger.db-shm && cp -p $1/ledger.db $2/ledger.db"; }
reset() { sh -c "$(reset_script "$1" "$2")"; }
reset_cmd() { echo "sh -c '$(reset_script "$1" "$2")'"; }
for name in empty 16k; do
  mkdir -p -m 0700 "$WORK/$name"
  reset "$WORK/$name-seed" "$WORK/$name"
done

# Sanity: the 16k ledger is readable, bound to this policy, and a new booking
# has to search past the dense block.
export BK_DATA_DIR="$WORK/16k"
"$BK" config | grep -q '^ledger policy: match' || { echo "16k ledger policy does not match" >&2; exit 1; }
first=$("$BK" 1 30m)
echo "sanity: bk 1 30m on $COUNT active -> $first"
reset "$WORK/16k-seed" "$WORK/16k"

HF=(hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style basic)

echo "== (a) empty ledger: reads"
export BK_DATA_DIR="$WORK/empty"
"${HF[@]}" --export-json "$OUT/empty-reads.json" \
  -n 'bk l' "$BK l" \
  -n 'bk st' "$BK st" \
  -n 'bk tl' "$BK tl" \
  -n 'bk config' "$BK config" \
  -n 'bk slots 1 30m' "$BK slots 1 30m" \
  -n 'bk g' "$BK g" \
  -n 'bk --version' "$BK --version"

# Tab completion: a command word, and a reference of your own bookings (the
# ledger asked); each Tab is one such process.
echo "== (a) empty ledger: Tab completion"
reset "$WORK/empty-seed" "$WORK/empty"
"$BK" 1 30m > /dev/null
"${HF[@]}" --export-json "$OUT/empty-complete.json" \
  -n 'Tab: bk re' "$BK __complete re" \
  -n 'Tab: bk renew REF' "$BK __complete renew ''"
reset "$WORK/empty-seed" "$WORK/empty"

echo "== (a) empty ledger: bk 1 30m (ledger reset before every run)"
"${HF[@]}" --export-json "$OUT/empty-book.json" --prepare "$(reset_cmd "$WORK/empty-seed" "$WORK/empty")" \
  -n 'bk 1 30m' "$BK 1 30m"

echo "== (b) $COUNT active reservations: bk 1 30m (ledger reset before every run)"
export BK_DATA_DIR="$WORK/16k"
"${HF[@]}" --export-json "$OUT/16k-book.json" --prepare "$(reset_cmd "$WORK/16k-seed" "$WORK/16k")" \
  -n 'bk 1 30m' "$BK 1 30m"

# The same booking judged under fair-share limits on every dimension (loose
# enough that it still books now): what admission with limits adds.
echo "== (b) $COUNT active reservations: bk 1 30m under fair-share limits"
export BK_USER_MAX_GPUS=64 BK_USER_MAX_GPU_HOURS_24H=100000 BK_USER_MAX_GPU_HOURS_7D=1000000 \
  BK_USER_MAX_QUEUED=100000 BK_USER_MAX_BOOKING_HOURS=720
"${HF[@]}" --export-json "$OUT/16k-book-limits.json" --prepare "$(reset_cmd "$WORK/16k-seed" "$WORK/16k")" \
  -n 'bk 1 30m (limits)' "$BK 1 30m"
unset BK_USER_MAX_GPUS BK_USER_MAX_GPU_HOURS_24H BK_USER_MAX_GPU_HOURS_7D BK_USER_MAX_QUEUED BK_USER_MAX_BOOKING_HOURS

echo "== (b) $COUNT active reservations: reads"
reset "$WORK/16k-seed" "$WORK/16k"
"${HF[@]}" --export-json "$OUT/16k-reads.json" \
  -n 'bk l' "$BK l" \
  -n 'bk st' "$BK st" \
  -n 'bk slots 1 30m' "$BK slots 1 30m" \
  -n 'Tab: bk renew REF' "$BK __complete renew ''"

python3 - "$OUT" "$COUNT" <<'EOF' | tee "$OUT/summary.txt"
import json, os, sys

out, count = sys.argv[1], int(sys.argv[2])

def medians(name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return {r["command"]: r["median"] * 1000.0 for r in json.load(f)["results"]}

rows = []  # (what, median ms or None, target ms or None, note)
engine = os.path.join(out, "engine_bench.json")
if os.path.exists(engine):
    with open(engine) as f:
        bench = {b["name"]: b for b in json.load(f)["benchmarks"]}
    def ms(name):
        b = bench.get(name + "_median")
        if not b:
            return None
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b.get("time_unit", "ns")]
        return b["real_time"] * scale
    rows.append(("engine: fully booked 8 GPU x 30 d, build + search", ms("BM_FullyBooked_BuildAndSearch"), 20,
                 "original: 17 s"))
    rows.append(("engine: fully booked, search only", ms("BM_FullyBooked_Search"), None, ""))
    rows.append(("engine: dense 16k, build + search", ms("BM_Dense16k_BuildAndSearch"), None, ""))
    rows.append(("engine: dense 16k, search only", ms("BM_Dense16k_Search"), None, ""))
big = medians("16k-book.json")
rows.append((f"bk 1 30m, {count} active", big.get("bk 1 30m"), 50, "original: 3.7 s"))
limited = medians("16k-book-limits.json").get("bk 1 30m (limits)")
if limited and big.get("bk 1 30m"):
    rows.append((f"bk 1 30m, {count} active, fair-share limits", limited, big["bk 1 30m"] * 1.2,
                 f"x{limited / big['bk 1 30m']:.2f} of the same without limits (target: at most x1.20)"))
for cmd, r in medians("16k-reads.json").items():
    target = 30 if cmd in ("bk l", "bk st") else 50 if cmd.startswith("Tab") else None
    rows.append((f"{cmd}, {count} active", r, target, ""))
for cmd, r in medians("empty-complete.json").items():
    rows.append((f"{cmd}, one booking", r, 50, ""))
for cmd, r in medians("empty-reads.json").items():
    rows.append((f"{cmd}, empty ledger", r, 5, ""))
for cmd, r in medians("empty-book.json").items():
    rows.append((f"{cmd}, empty ledger", r, 5, ""))

print()
print("GPUBK benchmark medians (ms)")
print(f"{'benchmark':<52} {'median':>9} {'target':>8}  verdict")
for what, median, target, note in rows:
    m = "-" if median is None else f"{median:9.3f}"
    t = "" if target is None else f"< {target}"
    verdict = "" if median is None or target is None else ("ok" if median < target else "OVER")
    print(f"{what:<52} {m:>9} {t:>8}  {verdict}{'  (' + note + ')' if note else ''}")
EOF
