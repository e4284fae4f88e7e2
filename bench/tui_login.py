#!/usr/bin/env python3
"""What the terminal UI and the login notice cost a shared machine.

1. `bk t` idle: the real TUI in a tmux pane on a private ledger seeded with
   16,000 bookings (bench/seed_ledger.py), left alone for --idle seconds after
   its first frame; its CPU time (utime + stime from /proc/PID/stat) over that
   time, as a percentage of one core. The clock is real (no BK_TEST_NOW), so
   the minute changes and NOW moves as they would for a person.
2. `bk login --hook` with nothing to say (an empty private ledger), and with a
   server configured whose daemon does not answer: the median of --runs runs.

Usage: tui_login.py [--bk build/bk] [--idle 60] [--runs 21]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def bk_pid(sock):
    pane_pid = subprocess.run(["tmux", "-S", sock, "display", "-p", "-t", "idle", "#{pane_pid}"],
                              capture_output=True, text=True, check=True).stdout.strip()
    out = subprocess.run(["pgrep", "-P", pane_pid, "-x", "bk"], capture_output=True, text=True).stdout.split()
    return int(out[0]) if out else int(pane_pid)


def idle(bk, work, seconds, sim):
    data = os.path.join(work, "idle-data")
    now = int(time.time()) // 300 * 300
    subprocess.run([sys.executable, os.path.join(HERE, "seed_ledger.py"), "--bk", bk, "--out", data, "--count",
                    "16000", "--now", str(now)], check=True, capture_output=True)
    env = {"PATH": "/usr/bin:/bin", "HOME": work, "BK_DATA_DIR": data, "BK_GPU_COUNT": "8", "TZ": "UTC",
           "LANG": "C.UTF-8", "TERM": "xterm-256color"}
    if sim:
        env["BK_GPU_SIM_FILE"] = sim
    sock = os.path.join(work, "tmux.sock")
    line = " ".join("%s=%s" % kv for kv in env.items())
    subprocess.run(["tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "idle", "-x", "130", "-y",
                    "40", "sh", "-c", "exec env -i %s %s t" % (line, bk)], check=True)
    try:
        deadline = time.monotonic() + 30
        while "| q" not in subprocess.run(["tmux", "-S", sock, "capture-pane", "-p", "-t", "idle"],
                                          capture_output=True, text=True).stdout:
            if time.monotonic() > deadline:
                raise RuntimeError("bk t drew no frame in 30 s")
            time.sleep(0.1)
        pid = bk_pid(sock)
        t0, c0 = time.monotonic(), cpu_ticks(pid)
        time.sleep(seconds)
        t1, c1 = time.monotonic(), cpu_ticks(pid)
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
    hz = os.sysconf("SC_CLK_TCK")
    return 100.0 * (c1 - c0) / hz / (t1 - t0)


def login_ms(bk, env, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run([bk, "login", "--hook"], env=env, capture_output=True, text=True)
        times.append((time.perf_counter() - t0) * 1000.0)
        if p.returncode != 0 or p.stdout:
            raise RuntimeError("bk login --hook said something: rc=%d %r" % (p.returncode, p.stdout))
    return statistics.median(times), min(times), max(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bk", default=os.path.join(os.path.dirname(HERE), "build", "bk"))
    ap.add_argument("--idle", type=float, default=60)
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    bk = os.path.abspath(args.bk)
    work = tempfile.mkdtemp(prefix="bk-tui-bench-")
    try:
        empty = {"PATH": "/usr/bin:/bin", "HOME": work, "BK_DATA_DIR": os.path.join(work, "empty"), "TZ": "UTC",
                 "BK_GPU_COUNT": "4"}
        med, lo, hi = login_ms(bk, empty, args.runs)
        print("bk login --hook, no ledger yet:       median %.1f ms (min %.1f, max %.1f)" % (med, lo, hi))
        # A ledger whose only booking was cancelled: read, and nothing to say.
        subprocess.run([bk, "1", "30m", "-t", "+2h"], env=empty, check=True, capture_output=True)
        subprocess.run([bk, "d", "1"], env=empty, check=True, capture_output=True)
        med, lo, hi = login_ms(bk, empty, args.runs)
        print("bk login --hook, nothing to say:      median %.1f ms (min %.1f, max %.1f)" % (med, lo, hi))
        server = os.path.join(work, "srv")
        subprocess.run([bk, "server", "init", "--directory", server, "--gpu-count", "4"], env=empty, check=True,
                       capture_output=True)
        dead = dict(empty, BK_CONFIG_FILE=os.path.join(server, "config.json"))
        med, lo, hi = login_ms(bk, dead, args.runs)
        print("bk login --hook, server unreachable:  median %.1f ms (min %.1f, max %.1f)" % (med, lo, hi))
        if shutil.which("tmux"):
            pct = idle(bk, work, args.idle, None)
            print("bk t idle %.0f s, 16,000 bookings:     %.2f%% of one core" % (args.idle, pct))
            sim = os.path.join(work, "gpus.json")
            with open(sim, "w") as f:
                json.dump({"gpus": [{"index": i, "name": "sim", "uuid": "GPU-%d" % i, "memory_used_mb": 0,
                                     "memory_total_mb": 81920, "utilization_percent": 0, "processes": []}
                                    for i in range(8)]}, f)
            pct = idle(bk, work, args.idle, sim)
            print("  the same with live telemetry:        %.2f%% of one core" % pct)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
