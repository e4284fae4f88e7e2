#!/usr/bin/env python3
"""How long `bk c` takes against real hosts over OpenSSH, warm and cold.

Builds four hosts with tests/e2e/cluster_hosts.py (a network namespace, sshd, daemon and
node identity each, and a client namespace; root only), puts them in the user's catalog and
times, RUNS times each, as the user in the client namespace:

  bk c rec 2 1h --json     the recommendation across the four hosts
  bk c st --json           every host's context

warm: the client's shared OpenSSH connections (ControlMaster, kept 60 s in
      ~/.cache/gpubk/ssh) are up: one untimed call first;
cold: before each timed run the client's ssh masters are killed and their control sockets
      removed, so the run connects, authenticates and starts a master per host afresh;
off:  BK_CLUSTER_SSH_CONTROL=off, no connection sharing at all (every call connects).

Prints the medians (and the spread) in ms next to the targets: warm <= 300 ms, cold
<= 1.5 s. The figures are reported, never asserted. Not part of ctest.

Usage: sudo bench/cluster_bench.py [--bk build/bk] [--runs 15] [--hosts 4]
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

TARGET_WARM_MS = 300
TARGET_COLD_MS = 1500


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bk", default=os.path.join(ROOT, "build", "bk"), help="the bk binary (default build/bk)")
    ap.add_argument("--runs", type=int, default=15, help="timed runs per figure (default 15)")
    ap.add_argument("--hosts", type=int, default=4, help="hosts to build (default 4)")
    args = ap.parse_args()
    if args.runs < 1 or not 1 <= args.hosts <= 50:
        ap.error("--runs must be at least 1 and --hosts 1-50")

    # cluster_hosts reads BK_BIN when it is imported.
    os.environ["BK_BIN"] = os.path.abspath(args.bk)
    sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
    import cluster_hosts  # noqa: E402

    why = cluster_hosts.unavailable()
    if why:
        print("cluster_bench: %s" % why, file=sys.stderr)
        return 2

    cluster = cluster_hosts.ClusterHosts(args.hosts)
    t0 = time.perf_counter()
    with cluster:
        cluster.catalog_all()
        print("%d hosts built in %.1f s (node IDs %s)" % (args.hosts, time.perf_counter() - t0,
                                                      ", ".join(h.node_id for h in cluster.hosts)))
        figures = []
        for label, cmd in (("bk c rec 2 1h", ["c", "rec", "2", "1h", "--json"]),
                           ("bk c st", ["c", "st", "--json"])):
            for mode in ("warm", "cold", "off"):
                ms = measure(cluster, cmd, mode, args.runs)
                target = TARGET_WARM_MS if mode == "warm" else TARGET_COLD_MS
                figures.append((label, mode, ms, target))
        print()
        print("%-16s %-5s %10s %10s %10s %8s" % ("command", "conn", "median ms", "min ms", "max ms", "target"))
        for label, mode, ms, target in figures:
            med = statistics.median(ms)
            print("%-16s %-5s %10.0f %10.0f %10.0f %8s %s" % (label, mode, med, min(ms), max(ms), "<=%d" % target,
                                                              "ok" if med <= target else "OVER"))
    return 0


def timed(cluster, cmd, env=None):
    t0 = time.perf_counter()
    p = cluster.client_bk(*cmd, env=env, timeout=120)
    ms = (time.perf_counter() - t0) * 1000.0
    if p.returncode != 0:
        raise RuntimeError("bk %s failed (%d): %s%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:], p.stderr))
    doc = json.loads(p.stdout)
    down = [n["name"] for n in doc.get("nodes", []) if n.get("available") is False]
    if down:
        raise RuntimeError("bk %s: hosts not available: %s\n%s" % (" ".join(cmd), down, p.stdout[-4000:]))
    return ms


def drop_connections(cluster):
    """Every process of the client namespace ends (the ControlMaster connections with them) and
    the control sockets go: the next call starts from nothing."""
    cluster._kill_ns(cluster.client_ns)
    control = os.path.join(cluster.user.home, ".cache", "gpubk", "ssh")
    for name in os.listdir(control) if os.path.isdir(control) else []:
        os.remove(os.path.join(control, name))


def measure(cluster, cmd, mode, runs):
    ms = []
    env = {"BK_CLUSTER_SSH_CONTROL": "off"} if mode == "off" else None
    drop_connections(cluster)
    if mode == "warm":
        timed(cluster, cmd)  # brings the masters up
    for _ in range(runs):
        if mode == "cold":
            drop_connections(cluster)
        ms.append(timed(cluster, cmd, env))
    return ms


if __name__ == "__main__":
    sys.exit(main())
