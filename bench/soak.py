#!/usr/bin/env python3
"""Soak: the daemon under mixed load from many clients for a bounded time, with its monitor
sampling a simulated host. Every interval it reports the daemon's RSS, its open descriptors
and the p50/p99 latency of the requests answered in that interval; at the end it fails when
RSS or descriptors kept growing, or when p99 got much worse.

    bench/soak.py BK_BINARY [--seconds 300] [--clients 48] [--interval 10]

`make soak` runs it on build/bk (SOAK_SECONDS, SOAK_CLIENTS). Not part of `make check`: it
runs for minutes. Load: raw JSON-RPC connections (no process per request), a mix of
server.ping, reservations.list, context.get, usage.query, placement.recommend, bookings and
cancels (each client keeps at most a few bookings), plus one `bk st` process per second.
Only the Python standard library is used; traffic stays on the Unix socket.
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SIM = os.path.join(HERE, "..", "examples", "sim-4gpu.json")


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


class Client(threading.Thread):
    def __init__(self, sock_path, seed, stop, record):
        super().__init__(daemon=True)
        self.sock_path, self.rng, self.stop, self.record = sock_path, random.Random(seed), stop, record
        self.next_id = 0
        self.mine = []
        self.errors = 0

    def call(self, f, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n"
        t0 = time.monotonic()
        self.sock.sendall(line.encode())
        reply = f.readline()
        self.record(time.monotonic() - t0)
        if not reply:
            raise EOFError("the daemon closed the connection")
        return json.loads(reply)

    def run(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(self.sock_path)
        f = self.sock.makefile("rb")
        n = 0
        while not self.stop.is_set():
            n += 1
            r = self.rng.random()
            if r < 0.30:
                self.call(f, "server.ping", {})
            elif r < 0.55:
                self.call(f, "reservations.list", {"limit": 50})
            elif r < 0.65:
                self.call(f, "context.get", {})
            elif r < 0.70:
                now = int(time.time())
                self.call(f, "usage.query", {"view": "me", "from": now - 600, "to": now})
            elif r < 0.80:
                self.call(f, "placement.recommend", {"count": self.rng.choice((1, 2)), "duration_seconds": 1800})
            elif r < 0.92 or not self.mine:
                if len(self.mine) < 4:
                    reply = self.call(f, "booking.create", {
                        "count": 1, "duration_seconds": self.rng.choice((1800, 3600)),
                        "op_id": "soak-%d-%d" % (id(self), n)})
                    if "result" in reply:
                        self.mine.append(reply["result"]["reservation"]["id"])
                    else:
                        self.errors += 1
                else:
                    self.call(f, "server.ping", {})
            else:
                ref = self.mine.pop(self.rng.randrange(len(self.mine)))
                reply = self.call(f, "booking.cancel", {"ref": ref})
                if "result" not in reply:
                    self.errors += 1
        self.sock.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bk")
    ap.add_argument("--seconds", type=int, default=300)
    ap.add_argument("--clients", type=int, default=48)
    ap.add_argument("--interval", type=int, default=10)
    a = ap.parse_args()
    bk = os.path.abspath(a.bk)
    base = tempfile.mkdtemp(prefix="bk-soak-")
    os.chmod(base, 0o755)
    srv = os.path.join(base, "srv")
    os.mkdir(srv, 0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BK_")}
    env.update({"HOME": base, "XDG_CONFIG_HOME": os.path.join(base, "xdg"), "BK_GPU_SIM_FILE": os.path.abspath(SIM)})
    subprocess.run([bk, "server", "init", "--directory", srv, "--gpu-count", "4", "--cpus", "64", "--ram", "512g",
                    "--max-shared", "8"], env=env, check=True, stdout=subprocess.DEVNULL)
    cfg_path = os.path.join(srv, "config.json")
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg["monitor_interval_seconds"] = 0.5
    cfg["reclaim_after_seconds"] = 0
    with open(cfg_path, "w") as f:
        json.dump(cfg, f, indent=2)
    os.chmod(cfg_path, 0o644)
    log = open(os.path.join(base, "serve.log"), "wb")
    daemon = subprocess.Popen([bk, "server", "serve", "--config", cfg_path], env=env, stdout=log,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    sock_path = os.path.join(srv, "run", "broker.sock")
    deadline = time.monotonic() + 20
    while not os.path.exists(sock_path):
        if daemon.poll() is not None or time.monotonic() > deadline:
            sys.exit("soak: the daemon did not start; see %s" % log.name)
        time.sleep(0.05)  # waiting for the socket to appear, bounded by the deadline

    lock = threading.Lock()
    window = []

    def record(dt):
        with lock:
            window.append(dt)

    stop = threading.Event()
    clients = [Client(sock_path, i, stop, record) for i in range(a.clients)]
    for c in clients:
        c.start()
    cli_env = dict(env, BK_CONFIG_FILE=cfg_path)
    rows = []
    started = time.monotonic()
    print("%8s %9s %5s %9s %9s %9s" % ("t(s)", "RSS(MB)", "fds", "requests", "p50(ms)", "p99(ms)"))
    try:
        next_report = started + a.interval
        while time.monotonic() - started < a.seconds:
            subprocess.run([bk, "st"], env=cli_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=30)
            if daemon.poll() is not None:
                sys.exit("soak: the daemon exited with %s; see %s" % (daemon.returncode, log.name))
            if time.monotonic() >= next_report:
                next_report += a.interval
                with lock:
                    lat = sorted(window)
                    window.clear()
                p50 = lat[len(lat) // 2] * 1000 if lat else 0
                p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000 if lat else 0
                row = (time.monotonic() - started, rss_kb(daemon.pid) / 1024, fds(daemon.pid), len(lat), p50, p99)
                rows.append(row)
                print("%8.0f %9.1f %5d %9d %9.2f %9.2f" % row, flush=True)
            time.sleep(1)  # one `bk st` a second: pacing of the load, not synchronisation
    finally:
        stop.set()
        for c in clients:
            c.join(30)
        daemon.send_signal(signal.SIGTERM)
        rc = daemon.wait(30)
        log.close()
    errors = sum(c.errors for c in clients)
    if rc != 0:
        sys.exit("soak: the daemon exited %s after SIGTERM" % rc)
    if len(rows) < 4:
        shutil.rmtree(base, ignore_errors=True)
        print("soak: too short to judge growth (%d reports)" % len(rows))
        return 0
    # Growth is judged from a quarter of the way in (after warm-up) to the end.
    ref = rows[len(rows) // 4]
    end = rows[-1]
    problems = []
    if end[1] > ref[1] * 1.5 + 8:
        problems.append("RSS grew from %.1f MB to %.1f MB" % (ref[1], end[1]))
    if end[2] > ref[2] + 8:
        problems.append("descriptors grew from %d to %d" % (ref[2], end[2]))
    if end[5] > max(ref[5] * 3, 50):
        problems.append("p99 went from %.2f ms to %.2f ms" % (ref[5], end[5]))
    print("soak: %d clients, %.0f s, %d requests, %d refused writes; RSS %.1f -> %.1f MB, fds %d -> %d, "
          "p99 %.2f -> %.2f ms" % (a.clients, end[0], sum(r[3] for r in rows), errors, rows[0][1], end[1],
                                   rows[0][2], end[2], rows[0][5], end[5]))
    shutil.rmtree(base, ignore_errors=True)
    if problems:
        print("soak: FAILED: " + "; ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
