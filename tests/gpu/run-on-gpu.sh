#!/usr/bin/env bash
# Hardware check of bk's GPU telemetry.
#
#   tests/gpu/run-on-gpu.sh path/to/bk        (or BK_BIN=path/to/bk)
#
# On a machine with an NVIDIA GPU and no network it compares what bk reads
# through NVML (`bk gpu-probe --json`, and `bk m --once --json` when the binary
# has the monitor) with nvidia-smi, starts a small GPU process of its own
# (as an unprivileged user when run as root) and checks that bk attributes it
# to the right UID, then that it disappears once stopped. Every check prints
# PASS, FAIL or SKIP; the exit status is 1 when any check failed, else 0.
#
# Without nvidia-smi or a working driver it says SKIP and exits 0 after
# checking that bk itself degrades cleanly (the ctest gpu.run_on_gpu_dry).
#
# Needs only bash, coreutils, awk and nvidia-smi. The GPU process uses, in
# order: python3 + ctypes on the driver's libcuda.so.1 (no CUDA toolkit),
# python3 + torch, or nvcc; without any of them that check is a SKIP.
# Shared libraries bk needs but the machine lacks can be carried next to it
# in <dir of bk>/lib (added to LD_LIBRARY_PATH here), e.g. a small folder:
#   mkdir -p build-carry/lib && cp build/bk build-carry/ &&
#   cp $(ldd build/bk | awk '/libfmt|libsqlite3|libcrypto/ {print $3}') build-carry/lib/
#   bash tests/gpu/run-on-gpu.sh build-carry/bk        # on the GPU machine
# tests/gpu/fake-gpu-check.sh runs this script against a fake driver.

set -u -o pipefail

BK=${1:-${BK_BIN:-}}
pass=0 fail=0 skip=0
say() { printf '%s\n' "$*"; }
check() {  # check PASS|FAIL|SKIP name [detail]
  local status=$1 name=$2 detail=${3:-}
  case $status in
    PASS) pass=$((pass + 1)) ;;
    FAIL) fail=$((fail + 1)) ;;
    SKIP) skip=$((skip + 1)) ;;
  esac
  if [[ -n $detail ]]; then say "$status $name: $detail"; else say "$status $name"; fi
}
info() { say "info: $*"; }
finish() {
  say "summary: $pass passed, $fail failed, $skip skipped"
  if ((fail > 0)); then exit 1; fi
  exit 0
}

# ---- the binary ----------------------------------------------------------------

if [[ -z $BK || ! -x $BK ]]; then
  check FAIL binary "give the path of bk as \$1 or BK_BIN (got '${BK}')"
  finish
fi
BK=$(cd "$(dirname "$BK")" && pwd)/$(basename "$BK")
bkdir=$(dirname "$BK")
for d in "$bkdir/lib" "$bkdir/../lib"; do
  [[ -d $d ]] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done

TIMEOUT=()
command -v timeout >/dev/null 2>&1 && TIMEOUT=(timeout 120)

work=$(mktemp -d "${TMPDIR:-/tmp}/bk-gpu-check.XXXXXX") || { check FAIL tempdir "mktemp failed"; finish; }
chmod 755 "$work"
gpu_pid=""
cleanup() {
  if [[ -n $gpu_pid ]] && kill -0 "$gpu_pid" 2>/dev/null; then
    kill -TERM "$gpu_pid" 2>/dev/null
    sleep 1
    kill -KILL "$gpu_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# bk state goes to a scratch directory; NVML only, never a simulation file.
export BK_DATA_DIR="$work/data" XDG_DATA_HOME="$work/xdg-data" XDG_CONFIG_HOME="$work/xdg-config"
export XDG_STATE_HOME="$work/xdg-state"
unset BK_GPU_SIM_FILE BK_GPU_COUNT BK_CONFIG BK_SOCKET 2>/dev/null

if ! version=$("${TIMEOUT[@]}" "$BK" --version 2>&1); then
  missing=$(ldd "$BK" 2>/dev/null | awk '/not found/ {print $1}' | tr '\n' ' ')
  check FAIL binary "bk does not run here: ${version}${missing:+ (missing libraries: $missing; carry them in $bkdir/lib)}"
  finish
fi
check PASS binary "$version"

# probe_json FILE [args...]: bk gpu-probe --json into FILE; returns bk's status.
probe_json() {
  local out=$1
  shift
  "${TIMEOUT[@]}" "$BK" gpu-probe --json "$@" >"$out" 2>"$out.err"
}
# json_field FILE key: the first "key": value in FILE (strings unquoted).
json_field() {
  sed -n -e "s/^ *\"$2\": \"\(.*\)\",\{0,1\}\$/\1/p" -e "s/^ *\"$2\": \([^\",]*\),\{0,1\}\$/\1/p" "$1" |
    head -n 1
}

# ---- is there a GPU at all? ------------------------------------------------------------

SMI=$(command -v nvidia-smi 2>/dev/null)
smi_list=""
if [[ -n $SMI ]]; then
  smi_list=$("${TIMEOUT[@]}" "$SMI" -L 2>&1)
  smi_rc=$?
fi
if [[ -z $SMI || $smi_rc -ne 0 || -z $smi_list ]]; then
  why="no nvidia-smi on PATH"
  [[ -n $SMI ]] && why="nvidia-smi failed: $(printf '%s' "$smi_list" | head -n 1)"
  # What bk must do on such a host: no crash, a stated state, placeholders.
  probe_json "$work/dry.json"
  state=$(json_field "$work/dry.json" state)
  if [[ -n $state && $state != ready ]]; then
    check PASS degrade "bk gpu-probe reports NVML state '$state' without a crash"
  elif [[ $state == ready ]]; then
    check PASS degrade "NVML answers although nvidia-smi does not (nothing to compare against)"
  else
    check FAIL degrade "bk gpu-probe printed no state: $(head -c 300 "$work/dry.json" "$work/dry.json.err")"
  fi
  check SKIP gpu "$why: not a GPU machine, nothing to compare"
  finish
fi
info "nvidia-smi -L: $(printf '%s' "$smi_list" | tr '\n' ';')"

# ---- the driver's view ---------------------------------------------------------------------

smi_gpus() {
  "${TIMEOUT[@]}" "$SMI" --query-gpu=index,uuid,name,memory.total,memory.used,utilization.gpu \
    --format=csv,noheader,nounits 2>/dev/null | sed 's/, /,/g'
}
smi_apps() {
  "${TIMEOUT[@]}" "$SMI" --query-compute-apps=pid,used_memory,gpu_uuid --format=csv,noheader,nounits 2>/dev/null |
    sed 's/, /,/g'
}

# bk's view, flattened to the lines `bk gpu-probe --csv` prints:
#   gpu,index,uuid,name,total,used,util
#   proc,pid,memory,gpu_uuid,uid,username,kind,identity_source,host_start_id
PY=""
for c in /usr/bin/python3 /usr/local/bin/python3 "$(command -v python3 2>/dev/null)"; do
  if [[ -n $c && -x $c ]] && "$c" -c 'import json' 2>/dev/null; then PY=$c; break; fi
done
flatten() {  # flatten JSONFILE > CSV; needs python3
  "$PY" - "$1" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
def n(v):
    return "" if v is None else str(v)
def find_devices(node):
    # bk gpu-probe has them at the top; bk m under "snapshot".
    if isinstance(node, dict):
        for key in ("devices", "gpus"):
            if isinstance(node.get(key), list) and all(isinstance(d, dict) for d in node[key]):
                return node[key]
        for value in node.values():
            found = find_devices(value)
            if found is not None:
                return found
    return None
devices = find_devices(doc) or []
for d in devices:
    idx = d.get("index", d.get("gpu"))
    uuid = d.get("uuid") or d.get("device_uuid") or ""
    print(",".join(["gpu", n(idx), uuid, n(d.get("name")), n(d.get("memory_total_mb")),
                    n(d.get("memory_used_mb")), n(d.get("utilization_percent"))]))
    for p in d.get("processes") or []:
        print(",".join(["proc", n(p.get("pid")), n(p.get("gpu_memory_mb")), uuid, n(p.get("uid")),
                        n(p.get("username")), n(p.get("kind")), n(p.get("identity_source")),
                        n(p.get("host_start_id"))]))
EOF
}
# bk_view NAME OUT: bk's CSV view from source NAME (probe | monitor).
bk_view() {
  local name=$1 out=$2
  if [[ $name == probe ]]; then
    "${TIMEOUT[@]}" "$BK" gpu-probe --csv >"$out" 2>"$out.err"
    return
  fi
  "${TIMEOUT[@]}" "$BK" m --once --json >"$work/monitor.json" 2>"$out.err" || return 1
  flatten "$work/monitor.json" >"$out" 2>>"$out.err"
}

have_monitor=0
"$BK" m --help >/dev/null 2>&1 && have_monitor=1
sources=(probe)
if ((have_monitor)); then
  if [[ -n $PY ]]; then
    sources+=(monitor)
  else
    check SKIP monitor "bk m exists but no python3 to read its JSON; compared through bk gpu-probe only"
  fi
else
  info "this bk has no monitor (bk m); comparing through bk gpu-probe only"
fi

# ---- NVML sample as a whole ---------------------------------------------------------------------

if probe_json "$work/probe.json" --repeat 5; then
  check PASS nvml-sample "state $(json_field "$work/probe.json" state), library $(json_field "$work/probe.json" library), driver $(json_field "$work/probe.json" driver_version)"
else
  check FAIL nvml-sample "bk gpu-probe failed: $(json_field "$work/probe.json" error)$(head -c 300 "$work/probe.json.err")"
fi
info "sample time: first $(json_field "$work/probe.json" first_sample_wall_ms) ms wall; then $(json_field "$work/probe.json" mean_sample_wall_ms) ms wall, $(json_field "$work/probe.json" mean_sample_cpu_ms) ms CPU per sample"
notes=$(awk '/"notes": \[$/ {f = 1; next} f && /^ *\]/ {f = 0} f {gsub(/^ *"|",?$/, ""); print}' "$work/probe.json" |
  sort -u | head -n 10)
[[ -n $notes ]] && info "NVML notes: $(printf '%s' "$notes" | tr '\n' ';')"

# ---- devices: bk vs nvidia-smi ----------------------------------------------------------------

smi_gpus >"$work/smi-gpus.csv"
smi_apps >"$work/smi-apps.csv"
info "nvidia-smi GPUs: $(tr '\n' ';' <"$work/smi-gpus.csv")"
info "nvidia-smi compute apps: $(tr '\n' ';' <"$work/smi-apps.csv")"

compare_devices() {  # compare_devices SOURCE CSV
  local src=$1 csv=$2
  local n_smi n_bk
  n_smi=$(grep -c . "$work/smi-gpus.csv")
  n_bk=$(grep -c '^gpu,' "$csv")
  if [[ $n_smi == "$n_bk" ]]; then check PASS "$src.gpu-count" "$n_bk"; else check FAIL "$src.gpu-count" "bk $n_bk, nvidia-smi $n_smi"; fi
  while IFS=, read -r idx uuid name total used util; do
    local row
    row=$(awk -F, -v i="$idx" '$1 == "gpu" && $2 == i' "$csv" | head -n 1)
    if [[ -z $row ]]; then
      check FAIL "$src.gpu$idx" "bk has no GPU $idx"
      continue
    fi
    IFS=, read -r _ _ buuid bname btotal bused butil <<<"$row"
    [[ $buuid == "$uuid" ]] && check PASS "$src.gpu$idx.uuid" "$uuid" || check FAIL "$src.gpu$idx.uuid" "bk '$buuid', nvidia-smi '$uuid'"
    [[ $bname == "$name" ]] && check PASS "$src.gpu$idx.name" "$name" || check FAIL "$src.gpu$idx.name" "bk '$bname', nvidia-smi '$name'"
    if [[ $total =~ ^[0-9]+$ && $btotal =~ ^[0-9]+$ ]]; then
      local d=$((btotal > total ? btotal - total : total - btotal))
      ((d <= 1)) && check PASS "$src.gpu$idx.memory-total" "$btotal MiB" || check FAIL "$src.gpu$idx.memory-total" "bk $btotal MiB, nvidia-smi $total MiB"
    else
      check FAIL "$src.gpu$idx.memory-total" "bk '$btotal', nvidia-smi '$total'"
    fi
    if [[ $used =~ ^[0-9]+$ && $bused =~ ^[0-9]+$ && $total =~ ^[0-9]+$ ]]; then
      # Memory moves between the two reads; v1 (reserved memory counted) vs
      # v2 differs by a few hundred MiB, hence the tolerance.
      local d=$((bused > used ? bused - used : used - bused)) tol=$((total / 100 > 64 ? total / 100 : 64))
      ((d <= tol)) && check PASS "$src.gpu$idx.memory-used" "bk $bused MiB, nvidia-smi $used MiB" ||
        check FAIL "$src.gpu$idx.memory-used" "bk $bused MiB, nvidia-smi $used MiB (tolerance $tol)"
    else
      check FAIL "$src.gpu$idx.memory-used" "bk '$bused', nvidia-smi '$used'"
    fi
    if [[ $butil =~ ^[0-9]+$ ]] && ((butil <= 100)); then
      check PASS "$src.gpu$idx.utilization" "bk $butil%, nvidia-smi $util%"
    elif [[ ! $util =~ ^[0-9]+$ ]]; then
      check SKIP "$src.gpu$idx.utilization" "not supported here (nvidia-smi '$util', bk '$butil')"
    else
      check FAIL "$src.gpu$idx.utilization" "bk '$butil', nvidia-smi $util%"
    fi
  done <"$work/smi-gpus.csv"
  # Every compute process nvidia-smi lists, on the same GPU in bk's view.
  local apps=0
  while IFS=, read -r pid mem guuid; do
    [[ $pid =~ ^[0-9]+$ ]] || continue
    apps=$((apps + 1))
    local row
    row=$(awk -F, -v p="$pid" -v u="$guuid" '$1 == "proc" && $2 == p && $4 == u' "$csv" | head -n 1)
    if [[ -z $row ]]; then
      check FAIL "$src.app$pid" "nvidia-smi lists pid $pid on $guuid; bk does not"
    else
      IFS=, read -r _ _ bmem _ buid buser bkind _ <<<"$row"
      check PASS "$src.app$pid" "on $guuid, uid ${buid:-?} ($buser), kind $bkind, $bmem MiB (nvidia-smi $mem MiB)"
    fi
  done <"$work/smi-apps.csv"
  ((apps == 0)) && info "$src: no compute processes were running before our own"
}

for src in "${sources[@]}"; do
  if bk_view "$src" "$work/$src.csv"; then
    compare_devices "$src" "$work/$src.csv"
  else
    check FAIL "$src" "reading bk's view failed: $(head -c 400 "$work/$src.csv.err")"
  fi
done

# ---- a GPU process of our own ---------------------------------------------------------------------------

# Run it as an unprivileged user when we are root, so attribution is tested
# against a UID that is not ours.
run_as=()
want_uid=$(id -u)
want_user=$(id -un)
if [[ $(id -u) == 0 ]]; then
  if ! id bkgpu1 >/dev/null 2>&1; then
    useradd --system --no-create-home --user-group --shell /usr/sbin/nologin bkgpu1 >/dev/null 2>&1 ||
      info "could not create user bkgpu1; the GPU process runs as root"
  fi
  if id bkgpu1 >/dev/null 2>&1; then
    if command -v setpriv >/dev/null 2>&1; then
      run_as=(setpriv --reuid="$(id -u bkgpu1)" --regid="$(id -g bkgpu1)" --clear-groups env HOME="$work")
    elif command -v runuser >/dev/null 2>&1; then
      run_as=(runuser -u bkgpu1 -- env HOME="$work")
    fi
  fi
fi

cat >"$work/hold_gpu.py" <<'EOF'
# Holds 256 MiB on one GPU through the driver API (libcuda.so.1, no toolkit),
# prints "ready <pid>", then sleeps.
import ctypes, os, sys, time
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    print("error no libcuda.so.1:", e, flush=True); sys.exit(3)
def ck(rc, what):
    if rc != 0:
        print("error", what, "returned CUDA error", rc, flush=True); sys.exit(4)
ck(cuda.cuInit(0), "cuInit")
dev = ctypes.c_int()
ck(cuda.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
ck(cuda.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate_v2")
ptr = ctypes.c_uint64()
ck(cuda.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(256 << 20)), "cuMemAlloc_v2")
print("ready", os.getpid(), flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 120)
EOF
cat >"$work/hold_torch.py" <<'EOF'
import os, sys, time
import torch
if not torch.cuda.is_available():
    print("error torch sees no CUDA device", flush=True); sys.exit(4)
x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda:0")
torch.cuda.synchronize()
print("ready", os.getpid(), flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 120)
EOF
cat >"$work/hold.cu" <<'EOF'
#include <cstdio>
#include <unistd.h>
#include <cuda_runtime.h>
int main() {
  void* p = nullptr;
  if (cudaMalloc(&p, 256 << 20) != cudaSuccess) { std::printf("error cudaMalloc\n"); return 4; }
  std::printf("ready %d\n", (int)getpid());
  std::fflush(stdout);
  sleep(120);
}
EOF
chmod 644 "$work"/hold_gpu.py "$work"/hold_torch.py "$work"/hold.cu

# start_gpu_process LABEL CMD...: runs it in the background, waits for
# "ready <pid>"; sets gpu_pid. Returns 1 (with the reason in $start_error).
start_error=""
start_gpu_process() {
  local label=$1
  shift
  : >"$work/hold.out"
  CUDA_DEVICE_ORDER=PCI_BUS_ID "$@" >"$work/hold.out" 2>&1 &
  local bg=$! i
  for ((i = 0; i < 120; i++)); do
    if grep -q '^ready ' "$work/hold.out"; then
      gpu_pid=$(awk '/^ready / {print $2; exit}' "$work/hold.out")
      info "GPU process started with $label as $(id -un "$(stat -c %u "/proc/$gpu_pid")" 2>/dev/null): pid $gpu_pid"
      return 0
    fi
    kill -0 "$bg" 2>/dev/null || break
    sleep 0.5
  done
  kill -KILL "$bg" 2>/dev/null
  start_error="$label: $(tr '\n' ' ' <"$work/hold.out" | head -c 300)"
  return 1
}

launched=0
attempts=()
try_launch() {  # try_launch LABEL USE_RUN_AS CMD...
  local label=$1 as=$2
  shift 2
  local prefix=()
  ((as)) && prefix=("${run_as[@]}")
  if start_gpu_process "$label" "${prefix[@]}" "$@"; then
    launched=1
    if ((as)) && ((${#run_as[@]} > 0)); then want_uid=$(id -u bkgpu1); want_user=bkgpu1; fi
    return 0
  fi
  attempts+=("$start_error")
  return 1
}
if [[ -n $PY ]]; then
  # As the unprivileged user first; the interpreter must be reachable by it.
  if ((${#run_as[@]} > 0)) && "${run_as[@]}" "$PY" -c 'import ctypes' >/dev/null 2>&1; then
    try_launch "python3+libcuda" 1 "$PY" "$work/hold_gpu.py" 120
  fi
  ((launched)) || try_launch "python3+libcuda" 0 "$PY" "$work/hold_gpu.py" 120
fi
if ((!launched)); then
  for c in "$PY" "$(command -v python3 2>/dev/null)" "$(command -v python 2>/dev/null)"; do
    [[ -n $c ]] && "$c" -c 'import torch' >/dev/null 2>&1 || continue
    try_launch "torch" 0 "$c" "$work/hold_torch.py" 120 && break
  done
fi
if ((!launched)) && command -v nvcc >/dev/null 2>&1; then
  if nvcc -o "$work/hold" "$work/hold.cu" >"$work/nvcc.log" 2>&1; then
    chmod 755 "$work/hold"
    try_launch "nvcc" 1 "$work/hold" || try_launch "nvcc" 0 "$work/hold"
  else
    attempts+=("nvcc: $(head -c 200 "$work/nvcc.log")")
  fi
fi

if ((!launched)); then
  if ((${#attempts[@]} == 0)); then
    check SKIP own-process "no way to start a GPU process here (python3+libcuda, torch or nvcc)"
  else
    check SKIP own-process "could not start a GPU process: ${attempts[*]}"
  fi
  finish
fi
check PASS own-process "pid $gpu_pid holds 256 MiB, expected owner $want_user (uid $want_uid)"

# Wait until the driver lists it.
listed=""
for ((i = 0; i < 30; i++)); do
  listed=$(smi_apps | awk -F, -v p="$gpu_pid" '$1 == p' | head -n 1)
  [[ -n $listed ]] && break
  sleep 0.5
done
if [[ -n $listed ]]; then
  check PASS own-process.nvidia-smi "$listed"
else
  # In a container with its own PID namespace the driver reports host PIDs,
  # which this /proc cannot see (or nvidia-smi shows no process at all).
  # Attribution then cannot work for anyone, so the checks below would only
  # measure the sandbox; what bk must still do is not misattribute.
  foreign=""
  while IFS=, read -r p _; do
    [[ $p =~ ^[0-9]+$ && ! -d /proc/$p ]] && foreign+="$p "
  done < <(smi_apps)
  if [[ -z $foreign ]]; then
    check SKIP own-process.nvidia-smi "nvidia-smi lists no process for pid $gpu_pid (processes hidden in this container?)"
    finish
  fi
  check SKIP own-process.nvidia-smi "the driver reports PIDs this /proc lacks (${foreign% }): another PID namespace; attribution needs the host's"
  bk_view probe "$work/foreign.csv"
  for p in $foreign; do
    row=$(awk -F, -v p="$p" '$1 == "proc" && $2 == p' "$work/foreign.csv" | head -n 1)
    IFS=, read -r _ _ _ _ buid buser _ <<<"$row"
    if [[ -z $row ]]; then
      check FAIL own-process.foreign-pid "bk does not list pid $p that nvidia-smi lists"
    elif [[ -z $buid ]]; then
      check PASS own-process.foreign-pid "pid $p listed with an unknown owner ($buser), not misattributed"
    else
      check FAIL own-process.foreign-pid "pid $p attributed to uid $buid although /proc has no such pid"
    fi
  done
  finish
fi
own_uuid=$(printf '%s' "$listed" | cut -d, -f3)
own_mem=$(printf '%s' "$listed" | cut -d, -f2)
want_token=$(sed 's/.*) //' "/proc/$gpu_pid/stat" 2>/dev/null | awk '{print $20}')

for src in "${sources[@]}"; do
  if ! bk_view "$src" "$work/$src-own.csv"; then
    check FAIL "$src.own-process" "reading bk's view failed: $(head -c 400 "$work/$src-own.csv.err")"
    continue
  fi
  row=$(awk -F, -v p="$gpu_pid" '$1 == "proc" && $2 == p' "$work/$src-own.csv" | head -n 1)
  if [[ -z $row ]]; then
    check FAIL "$src.own-process.listed" "bk does not list pid $gpu_pid"
    continue
  fi
  IFS=, read -r _ _ bmem buuid buid buser bkind bsource btoken <<<"$row"
  check PASS "$src.own-process.listed" "pid $gpu_pid on $buuid"
  if [[ -n $own_uuid ]]; then
    [[ $buuid == "$own_uuid" ]] && check PASS "$src.own-process.gpu" "$buuid" ||
      check FAIL "$src.own-process.gpu" "bk $buuid, nvidia-smi $own_uuid"
  fi
  [[ $buid == "$want_uid" ]] && check PASS "$src.own-process.uid" "$buid ($buser, $bsource)" ||
    check FAIL "$src.own-process.uid" "bk uid '$buid' ($buser), expected $want_uid ($want_user)"
  [[ $buser == "$want_user" ]] && check PASS "$src.own-process.username" "$buser" ||
    check FAIL "$src.own-process.username" "bk '$buser', expected $want_user"
  [[ $bkind == *C* ]] && check PASS "$src.own-process.kind" "$bkind" || check FAIL "$src.own-process.kind" "'$bkind', expected C"
  if [[ $bmem =~ ^[0-9]+$ ]] && ((bmem >= 256)); then
    check PASS "$src.own-process.memory" "$bmem MiB (nvidia-smi ${own_mem:-?} MiB)"
  elif [[ $bmem == 0 && ! $own_mem =~ ^[0-9]+$ ]]; then
    check SKIP "$src.own-process.memory" "the driver reports no per-process memory here"
  else
    check FAIL "$src.own-process.memory" "bk '$bmem' MiB for 256 MiB allocated (nvidia-smi ${own_mem:-?})"
  fi
  # The PID-reuse token is starttime (field 22 of /proc/<pid>/stat).
  if [[ -n $want_token && $btoken == "$want_token" ]]; then
    check PASS "$src.own-process.start-token" "$btoken"
  else
    check FAIL "$src.own-process.start-token" "bk '$btoken', /proc starttime '$want_token'"
  fi
done
# Stop it (our own process only) and check that it leaves bk's view.
kill -TERM "$gpu_pid" 2>/dev/null
for ((i = 0; i < 20; i++)); do
  kill -0 "$gpu_pid" 2>/dev/null || break
  sleep 0.5
done
kill -KILL "$gpu_pid" 2>/dev/null
gone=0
for ((i = 0; i < 20; i++)); do
  "${TIMEOUT[@]}" "$BK" gpu-probe --csv >"$work/after.csv" 2>/dev/null
  if ! awk -F, -v p="$gpu_pid" '$1 == "proc" && $2 == p {found = 1} END {exit !found}' "$work/after.csv"; then
    gone=1
    break
  fi
  sleep 0.5
done
((gone)) && check PASS own-process.gone "pid $gpu_pid no longer listed" ||
  check FAIL own-process.gone "pid $gpu_pid still listed after it was killed"
gpu_pid=""

finish
