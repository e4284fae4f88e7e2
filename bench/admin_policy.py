#!/usr/bin/env python3
"""How long an administrator's policy change takes on a busy server.

A rootless server is started on a copy of a seeded ledger (bench/seed_ledger.py,
16,000 active bookings by default) and the owner runs, RUNS times each:

  bk admin policy --max-booking-hours H --yes   (H alternates, so each run changes it)
  bk admin blackout add ... --yes, then bk admin blackout rm ID --yes

Each is the whole command as a person runs it: the daemon checks every active
booking against the proposal, the config file is replaced, the daemon re-binds
the ledger and audits the change. Prints the median and the spread in ms.

Usage: admin_policy.py [--bk build/bk] [--count 16000] [--runs 7] [--work DIR]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scale  # noqa: E402  (the seeded server of the scale benchmark)


def timed(argv, env):
    t0 = time.perf_counter()
    p = subprocess.run(argv, env=env, capture_output=True, text=True)
    ms = (time.perf_counter() - t0) * 1000.0
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv), p.returncode, p.stderr.strip()))
    return ms, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bk", default=os.path.join(HERE, "..", "build", "bk"))
    ap.add_argument("--count", type=int, default=16000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    bk = os.path.abspath(a.bk)
    work = a.work or tempfile.mkdtemp(prefix="bk-admin-bench-")
    now = 1795975200  # 2026-11-29T18:00:00Z, on the grid
    seed = os.path.join(work, "seed")
    subprocess.run([sys.executable, os.path.join(HERE, "seed_ledger.py"), "--bk", bk, "--out", seed, "--count",
                    str(a.count), "--now", str(now), "--reuse"], check=True, stdout=subprocess.DEVNULL)
    home = os.path.join(work, "home")
    os.makedirs(home, exist_ok=True)
    daemon = scale.Daemon(bk, os.path.join(work, "srv"), os.path.join(seed, "ledger.db"), now, home)
    env = dict(daemon.client_env, BK_TEST_NOW=str(now))
    policy, blackout = [], []
    try:
        for i in range(a.runs):
            ms, _ = timed([bk, "admin", "policy", "--max-booking-hours", str(700 + i % 2), "--yes"], env)
            policy.append(ms)
            ms_add, _ = timed([bk, "admin", "blackout", "add", "2026-12-20T10:00:00Z", "2h", "bench %d" % i,
                               "--yes"], env)
            listed = json.loads(timed([bk, "admin", "blackout", "list", "--json"], env)[1])
            ms_rm, _ = timed([bk, "admin", "blackout", "rm", listed[0]["id"], "--yes"], env)
            blackout.append((ms_add + ms_rm) / 2)
    finally:
        daemon.stop()
    for name, xs in (("bk admin policy", policy), ("bk admin blackout add|rm", blackout)):
        print("%-26s %d bookings: median %.1f ms (min %.1f, max %.1f, %d runs)"
              % (name, a.count, statistics.median(xs), min(xs), max(xs), len(xs)))


if __name__ == "__main__":
    main()
