#!/usr/bin/env bash
# Runs run-on-gpu.sh end to end without a GPU: builds fake_driver.cc as
# libnvidia-ml.so.1 and libcuda.so.1, puts fake-nvidia-smi first on PATH, and
# expects every check to pass, including the attribution of the script's own
# "GPU process" to the user it ran as. This tests the script and bk's dlopen
# path; only a real GPU tests the driver (run run-on-gpu.sh there).
#
#   tests/gpu/fake-gpu-check.sh path/to/bk
set -u
BK=${1:?usage: fake-gpu-check.sh path/to/bk}
here=$(cd "$(dirname "$0")" && pwd)
CXX=${CXX:-$(command -v c++ || command -v g++)}
if [[ -z $CXX ]]; then
  echo "SKIP fake-gpu: no C++ compiler"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bk-fake-gpu.XXXXXX") || exit 1
other=""
trap '[[ -n $other ]] && kill "$other" 2>/dev/null; rm -rf "$tmp"' EXIT
chmod 755 "$tmp"  # the script's unprivileged GPU process loads the fake libcuda from here
mkdir -p "$tmp/lib" "$tmp/bin" "$tmp/state/procs"
chmod 1777 "$tmp/state/procs"
if ! "$CXX" -std=c++17 -O1 -shared -fPIC -o "$tmp/lib/libnvidia-ml.so.1" "$here/fake_driver.cc"; then
  echo "FAIL fake-gpu: could not build the fake driver"
  exit 1
fi
cp "$tmp/lib/libnvidia-ml.so.1" "$tmp/lib/libcuda.so.1"
cp "$here/fake-nvidia-smi" "$tmp/bin/nvidia-smi"
chmod 755 "$tmp/lib"/* "$tmp/bin/nvidia-smi"

# Somebody else's process already on GPU 1 (100 MiB), for the compute-apps comparison.
sleep 300 &
other=$!
echo "1 $((100 << 20))" >"$tmp/state/procs/$other"

out=$(PATH="$tmp/bin:$PATH" LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_GPU_DIR="$tmp/state" \
  bash "$here/run-on-gpu.sh" "$BK" 2>&1)
rc=$?
printf '%s\n' "$out"
bad=0
expect() {  # expect REGEX: some line of the output matches
  if ! grep -Eq "$1" <<<"$out"; then
    echo "fake-gpu: expected a line matching: $1"
    bad=1
  fi
}
expect '^PASS nvml-sample: state ready, library libnvidia-ml.so.1, driver 999.99-fake$'
expect '^PASS probe.gpu-count: 2$'
expect '^PASS probe.gpu1.uuid: GPU-fa4e0001-'
expect '^PASS probe.gpu0.memory-total: 81559 MiB$'
expect "^PASS probe.app$other: on GPU-fa4e0001-[0-9a-f-]+, uid $(id -u) \\($(id -un)\\), kind C, 100 MiB"
expect '^PASS probe.gpu1.memory-used: bk 104 MiB, nvidia-smi 104 MiB$'
expect '^PASS own-process: '
expect '^PASS probe.own-process.uid: '
expect '^PASS probe.own-process.username: '
expect '^PASS probe.own-process.memory: 556 MiB'
expect '^PASS probe.own-process.start-token: [0-9]+$'
expect '^PASS own-process.gone: '
expect '^summary: [0-9]+ passed, 0 failed, 0 skipped$'
if ((rc != 0 || bad != 0)); then
  echo "FAIL fake-gpu (run-on-gpu.sh exit $rc)"
  exit 1
fi

# Again, as if inside a container with its own PID namespace: no attribution
# is possible, and bk must say "unknown" rather than guess.
echo "--- with the driver reporting host PIDs from another namespace"
out=$(PATH="$tmp/bin:$PATH" LD_LIBRARY_PATH="$tmp/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" FAKE_GPU_DIR="$tmp/state" \
  FAKE_GPU_PID_SHIFT=1000000 bash "$here/run-on-gpu.sh" "$BK" 2>&1)
rc=$?
printf '%s\n' "$out"
expect '^SKIP own-process.nvidia-smi: the driver reports PIDs this /proc lacks'
expect "^PASS own-process.foreign-pid: pid $((other + 1000000)) listed with an unknown owner"
expect '^summary: [0-9]+ passed, 0 failed, [0-9]+ skipped$'
if ((rc != 0 || bad != 0)); then
  echo "FAIL fake-gpu in another PID namespace (run-on-gpu.sh exit $rc)"
  exit 1
fi
echo "PASS fake-gpu"
