#!/usr/bin/env python3
"""How GPUBK's cost grows with the ledger: 1k to 1M bookings, daemon and private mode.

For every ledger size (written by bench/seed_ledger.py, cached under
BUILD/bench/work/scale) this starts a fresh rootless server on a copy of the
ledger and measures

  start-up       spawn of `bk server serve` to its sd_notify READY=1
  RSS            the daemon's VmRSS after start-up and after all the load below
  bk 1 30m       whole process through the daemon (hyperfine -N); every run's
                 booking is cancelled again before the next run (hyperfine
                 --prepare, untimed), so the calendar stays the same and the
                 ledger grows by the cancelled rows only
  bk st, l, tl   whole processes through the daemon
  admission      booking.create (1 GPU, 30 min, earliest) over the socket,
                 median of BENCH_ADMISSION (50) calls, each cancelled untimed
  throughput     on the 16,000-active server only: durable bookings/s with 1, 8
                 and 32 clients (bench/server_bench --config, attached)

then the same `bk` commands in private mode (BK_DATA_DIR) on another copy.
Two series: "history" (N in all, min(N, 16,000) of them active, the rest past)
and "active" (N active). The daemon sees only BK_CONFIG_FILE (no other BK_*);
its clock is the seed's "now" through the config's test_now (honoured by
builds with tests, the default), private mode's through BK_TEST_NOW, so a
cached seed stays valid.

Figures: BUILD/bench/scale.json and the table BUILD/bench/scale.txt; draw
them with bench/plot_scale.py. Reported, never asserted.

usage: bench/scale.py [BUILD_DIR]          (default: build)
knobs: BENCH_SIZES ("1k 16k 100k 1M"), BENCH_SERIES ("history active"),
       BENCH_RUNS (20: most hyperfine runs per command), BENCH_ADMISSION (50),
       BENCH_SERVER_SECONDS (3), BENCH_CLIENTS ("1 8 32"), BENCH_RESEED=1
       (write the seeds again). Paths must not contain spaces.

Helper for hyperfine --prepare (not for people):
       bench/scale.py --cancel-newest BK   cancels, with `BK d`, the booking
       the caller's newest event added (by BK_CONFIG_FILE or BK_DATA_DIR).
"""

import json
import os
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SLOT = 300
ACTIVE_CAP = 16000  # the "history" series keeps at most this many active
SIZES = {"1k": 1000, "16k": 16000, "100k": 100000, "1M": 1000000}
MAX_ACTIVE = 117000  # what 8 GPUs x 2 share slots hold in 30 days with the seeder's gaps


def knob(name, default):
    return os.environ.get(name, default)


def clean_env(home, **extra):
    """The caller's environment without BK_*, XDG_* or NOTIFY_SOCKET, plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BK_", "XDG_")) and k != "NOTIFY_SOCKET"}
    env.update(HOME=home, TZ="UTC", **{k: str(v) for k, v in extra.items()})
    return env


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return None


def cancel_newest(bk):
    """hyperfine --prepare: cancel what the last timed `bk 1 30m` booked. The caller's newest event is
    that booking's `add`; nothing to do when it is a cancel (the first run, or a run that failed)."""
    log = subprocess.run([bk, "lg", "--limit", "1", "--json"], capture_output=True, text=True, check=True)
    events = json.loads(log.stdout)["events"]
    if events and events[-1]["action"] == "add" and events[-1]["result"] == "ok":
        subprocess.run([bk, "d", events[-1]["reservation_id"]], stdout=subprocess.DEVNULL, check=True)


# ---- hyperfine ---------------------------------------------------------------------


def hyperfine(out_json, env, commands, runs, prepare=None, failing=False):
    """Medians in ms of whole `bk` processes: {name: ms}. `commands`: [(name, command line)];
    `failing`: they exit non-zero (a refused booking), which hyperfine then accepts."""
    argv = ["hyperfine", "-N", "--style", "basic", "--warmup", "2", "--min-runs", "5", "--max-runs", str(runs),
            "--export-json", out_json]
    if prepare:
        argv += ["--prepare", prepare]
    if failing:
        argv.append("--ignore-failure")
    for name, cmd in commands:
        argv += ["-n", name, cmd]
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    with open(out_json) as f:
        return {r["command"]: r["median"] * 1000.0 for r in json.load(f)["results"]}


def time_commands(bk, env, out_prefix, runs):
    """`bk 1 30m` (each run's booking cancelled before the next), then `bk st`, `bk l`, `bk tl`. The
    first booking, cancelled at once, also makes the caller's newest event a cancel: --prepare then
    never cancels a seeded booking. When the ledger leaves no slot within the queue search (100k
    active: 26 days of dense bookings, searched 7 days ahead) every booking is refused; then the
    refusal is what is timed, and said so."""
    first = subprocess.run([bk, "1", "30m"], env=env, capture_output=True, text=True)
    refused = first.returncode != 0
    cancel = f"{sys.executable} {os.path.abspath(__file__)} --cancel-newest {bk}"
    subprocess.run(cancel.split(), env=env, check=True)
    book = hyperfine(out_prefix + "-book.json", env, [("bk 1 30m", f"{bk} 1 30m")], runs, cancel, refused)
    subprocess.run(cancel.split(), env=env, check=True)
    reads = hyperfine(out_prefix + "-reads.json", env,
                      [("bk st", f"{bk} st"), ("bk l", f"{bk} l"), ("bk tl", f"{bk} tl")], runs)
    return {"book_ms": book["bk 1 30m"], "st_ms": reads["bk st"], "l_ms": reads["bk l"],
            "tl_ms": reads["bk tl"], "book_refused": refused,
            "first_booking": (first.stderr if refused else first.stdout).strip()}


# ---- the daemon ---------------------------------------------------------------------


class Rpc:
    """One NDJSON JSON-RPC connection to the broker socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(path)
        self.buf = b""
        self.next_id = 0

    def call(self, method, params=None, refusal_ok=False):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError(f"{method}: the daemon closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        reply = json.loads(line)
        if "result" not in reply and not refusal_ok:
            raise RuntimeError(f"{method}: {reply.get('error')}")
        return reply.get("result")

    def close(self):
        self.sock.close()


def admission(sock_path, calls):
    """booking.create latency over the socket: 1 GPU, 30 minutes, earliest; each cancelled untimed.
    A refusal (no slot within the queue search) is timed as well and counted."""
    rpc = Rpc(sock_path)
    ms, refused = [], 0
    tag = f"scale-{os.getpid()}-{time.monotonic_ns()}"
    for i in range(calls + 3):  # three to warm up
        t0 = time.perf_counter()
        result = rpc.call("booking.create", {"count": 1, "duration_seconds": 1800, "op_id": f"{tag}-{i}"},
                          refusal_ok=True)
        elapsed = (time.perf_counter() - t0) * 1000.0
        if i >= 3:
            ms.append(elapsed)
            refused += result is None
        if result is not None:
            rpc.call("booking.cancel", {"ref": find_id(result), "op_id": f"{tag}-{i}-cancel"})
    rpc.close()
    ms.sort()
    return {"median_ms": statistics.median(ms), "p90_ms": ms[int(len(ms) * 0.9) - 1], "calls": calls,
            "refused": refused}


def find_id(result):
    """The reservation ID in a booking.create result (its `reservation`, or first of `reservations`)."""
    for key in ("reservation", "reservations"):
        r = result.get(key)
        if isinstance(r, list) and r:
            r = r[0]
        if isinstance(r, dict) and "id" in r:
            return r["id"]
    raise RuntimeError(f"no reservation ID in booking.create's result: {json.dumps(result)[:300]}")


class Daemon:
    """A fresh rootless server holding a copy of `seed_ledger`, served until stop()."""

    def __init__(self, bk, directory, seed_ledger, now, home):
        self.bk, self.dir = bk, directory
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(os.path.dirname(directory), exist_ok=True)
        env = clean_env(home)
        subprocess.run([bk, "server", "init", "--directory", directory, "--gpu-count", "8"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        self.config = os.path.join(directory, "config.json")
        with open(self.config) as f:
            doc = json.load(f)
        doc["test_now"] = str(now)  # the seed's clock (builds with tests); ignored otherwise
        with open(self.config, "w") as f:
            json.dump(doc, f, indent=2)
        self.socket = doc["socket"]
        self.ledger = os.path.join(doc["data_dir"], "ledger.db")
        for extra in ("", "-wal", "-shm"):
            if os.path.exists(self.ledger + extra):
                os.remove(self.ledger + extra)
        shutil.copyfile(seed_ledger, self.ledger)
        os.chmod(self.ledger, 0o600)
        self.client_env = clean_env(home, BK_CONFIG_FILE=self.config)
        self.proc = None
        self.startup_ms = self.start(env)

    def start(self, env):
        """Spawns `bk server serve`; returns ms from spawn to READY=1 (sd_notify on our own socket)."""
        notify_dir = tempfile.mkdtemp(prefix="bk-notify-")
        notify = os.path.join(notify_dir, "notify.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        listener.bind(notify)
        listener.settimeout(0.2)  # to look whether the daemon exited meanwhile
        log = open(os.path.join(self.dir, "serve.log"), "w")
        t0 = time.perf_counter()
        self.proc = subprocess.Popen([self.bk, "server", "serve", "--config", self.config],
                                     env=dict(env, NOTIFY_SOCKET=notify), stdout=log, stderr=log,
                                     stdin=subprocess.DEVNULL)
        try:
            while time.perf_counter() - t0 < 120 and self.proc.poll() is None:
                try:
                    if b"READY=1" in listener.recv(4096):
                        return (time.perf_counter() - t0) * 1000.0
                except socket.timeout:
                    pass
            if self.proc.poll() is None:
                self.proc.kill()
            raise RuntimeError(f"bk server serve did not become ready; see {self.dir}/serve.log")
        finally:
            log.close()
            listener.close()
            shutil.rmtree(notify_dir)

    def rss_mb(self):
        return rss_mb(self.proc.pid)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


def throughput(build, daemon, seed_ledger, clients_list, seconds, prefix):
    """Durable bookings/s on the running daemon, one server_bench run per client count, each in its
    own slots past everything the seed holds (the daemon keeps its ledger locked)."""
    tool = next((p for p in (os.path.join(build, "bench", "server_bench"), os.path.join(build, "server_bench"))
                 if os.access(p, os.X_OK)), None)
    if tool is None:
        print("   throughput: server_bench not built (ninja -C BUILD server_bench); skipped")
        return {}
    db = sqlite3.connect(f"file:{seed_ledger}?mode=ro", uri=True)
    start = db.execute("SELECT coalesce(max(end_at), 0) FROM reservations").fetchone()[0]
    db.close()
    start = (start // SLOT + 1) * SLOT
    figures = {}
    for clients in clients_list:
        out = f"{prefix}-throughput-{clients}.json"
        subprocess.run([tool, "--bk", daemon.bk, "--config", daemon.config, "--pid", str(daemon.proc.pid),
                        "--start", str(start), "--clients", str(clients), "--seconds", str(seconds), "--seed",
                        "0", "--order", "b", "--json", out], env=daemon.client_env, check=False,
                       stdout=subprocess.DEVNULL)
        with open(out) as f:
            booked = json.load(f)["durable_bookings"]
        figures[str(clients)] = booked
        # 16 bookings fill a slot; the next run starts after this one's last.
        start += ((booked["ok"] + booked["errors"] + clients) // 16 + 2) * SLOT
        print(f"   throughput, {clients:2d} clients: {booked['per_second']:8.0f} durable bookings/s "
              f"(p50 {booked['p50_us'] / 1000:.1f} ms, {booked['errors']} errors)")
    return figures


# ---- one ledger size ----------------------------------------------------------------


def seed(bk, work, active, history, reseed):
    """The cached seed for (active, history): (its directory, its seed.json: "now", "seconds", ...)."""
    out = os.path.join(work, f"seed-a{active}-h{history}")
    now = int(time.time()) // SLOT * SLOT
    argv = [sys.executable, os.path.join(ROOT, "bench", "seed_ledger.py"), "--bk", bk, "--out", out, "--count",
            str(active), "--history", str(history), "--now", str(now)]
    subprocess.run(argv + ([] if reseed else ["--reuse"]), check=True)
    with open(os.path.join(out, "seed.json")) as f:
        return out, json.load(f)


def measure(cfg, active, history, with_throughput):
    """Everything for one ledger: the daemon's figures, then private mode's. The copies the commands
    ran on are removed afterwards (at 1M each is 1.4 GB); hyperfine's files and the daemon's log stay
    under work/scale/results."""
    key = f"a{active}-h{history}"
    print(f"== {active + history} bookings ({active} active, {history} past)")
    seed_dir, made = seed(cfg["bk"], cfg["work"], active, history, cfg["reseed"])
    ledger = os.path.join(seed_dir, "ledger.db")
    fig = {"active": active, "history": history, "bookings": active + history, "now": made["now"],
           "seed_seconds": made.get("seconds"), "ledger_mb": os.path.getsize(ledger) / 1e6}
    prefix = os.path.join(cfg["work"], "results", key)
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    fig.update(daemon_figures(cfg, ledger, made["now"], prefix, with_throughput))
    print(f"   daemon: start-up {fig['startup_ms']:.0f} ms, RSS {fig['rss_start_mb']:.1f} -> "
          f"{fig['rss_end_mb']:.1f} MB, admission {fig['admission']['median_ms']:.2f} ms, "
          f"bk 1 30m {fig['daemon']['book_ms']:.1f} ms, bk st {fig['daemon']['st_ms']:.1f} ms; "
          f"{fig['daemon']['first_booking'].splitlines()[0]}")

    priv = prefix + "-private-ledger"
    shutil.rmtree(priv, ignore_errors=True)
    os.makedirs(priv, mode=0o700)
    shutil.copyfile(ledger, os.path.join(priv, "ledger.db"))
    os.chmod(os.path.join(priv, "ledger.db"), 0o600)
    env = clean_env(cfg["home"], BK_DATA_DIR=priv, BK_GPU_COUNT=8, BK_TEST_NOW=made["now"])
    try:
        fig["private"] = time_commands(cfg["bk"], env, prefix + "-private", cfg["runs"])
    finally:
        shutil.rmtree(priv)
    print(f"   private: bk 1 30m {fig['private']['book_ms']:.1f} ms, bk st {fig['private']['st_ms']:.1f} ms, "
          f"bk l {fig['private']['l_ms']:.1f} ms, bk tl {fig['private']['tl_ms']:.1f} ms")
    return key, fig


def daemon_figures(cfg, ledger, now, prefix, with_throughput):
    """Start-up, RSS, whole commands, admission (and throughput) on a fresh server holding `ledger`."""
    d = Daemon(cfg["bk"], prefix + "-server", ledger, now, cfg["home"])
    fig = {"startup_ms": d.startup_ms, "rss_start_mb": d.rss_mb()}
    try:
        fig["daemon"] = time_commands(cfg["bk"], d.client_env, prefix + "-daemon", cfg["runs"])
        fig["admission"] = admission(d.socket, cfg["admission"])
        if with_throughput:
            fig["throughput"] = throughput(cfg["build"], d, ledger, cfg["clients"], cfg["seconds"], prefix)
        fig["rss_end_mb"] = d.rss_mb()
    finally:
        fig["daemon_exit"] = d.stop()
        fig["pruned"] = prune_events(d.ledger)
        shutil.copyfile(os.path.join(d.dir, "serve.log"), prefix + "-serve.log")
        shutil.rmtree(d.dir)
    return fig


def prune_events(ledger):
    """`prune` events written while the daemon ran: 0 when the history stayed inside the retention."""
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM events WHERE action = 'prune'").fetchone()[0]
    finally:
        db.close()


# ---- the report -----------------------------------------------------------------------


def plan(sizes, series):
    """The ledgers to measure, [(active, history)], and {series: [keys]}; the empty server always."""
    runs, views = [(0, 0)], {}
    for name in series:
        keys = []
        for label in sizes:
            n = SIZES[label]
            if name == "history":
                pair = (min(n, ACTIVE_CAP), n - min(n, ACTIVE_CAP))
            elif n <= MAX_ACTIVE:
                pair = (n, 0)
            else:
                print(f"== skipped: {label} active bookings cannot exist on 8 GPUs (at most ~{MAX_ACTIVE} "
                      "in the 30-day horizon)")
                continue
            if pair not in runs:
                runs.append(pair)
            keys.append(f"a{pair[0]}-h{pair[1]}")
        views[name] = keys
    return runs, views


def git_commit():
    """HEAD, and the last commit that changed what `bk` is built from (+dirty: changed since)."""
    def git(*args):
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True).stdout.strip()
    dirty = "+dirty" if git("status", "--porcelain", "--", "src", "CMakeLists.txt") else ""
    return f"{git('rev-parse', '--short', 'HEAD')} (src {git('log', '-1', '--format=%h', '--', 'src')}{dirty})"


def verdicts(runs):
    """The targets: (what, figure, limit text, ok) for those whose figures exist."""
    out = []
    empty, a16, h1m = runs.get("a0-h0"), runs.get("a16000-h0"), runs.get("a16000-h984000")
    if empty and a16:
        for cmd, limit in (("book_ms", 1.2), ("st_ms", 1.5)):
            ratio = a16["daemon"][cmd] / empty["daemon"][cmd]
            out.append((f"daemon {cmd[:-3]}: 16k active / empty", f"{ratio:.2f}x", f"<= {limit}x", ratio <= limit))
    if a16 and h1m:
        ratio = h1m["admission"]["median_ms"] / a16["admission"]["median_ms"]
        out.append(("admission: 1M / 16k (history)", f"{ratio:.2f}x", "< 3x", ratio < 3))
    if a16 and "32" in a16.get("throughput", {}):
        rate = a16["throughput"]["32"]["per_second"]
        out.append(("durable bookings/s, 32 clients, 16k", f"{rate:.0f}", ">= 3000", rate >= 3000))
    if h1m:
        out.append(("daemon RSS with 1M (after the load)", f"{h1m['rss_end_mb']:.0f} MB", "< 300 MB",
                    h1m["rss_end_mb"] < 300))
        out.append(("daemon start-up with 1M", f"{h1m['startup_ms']:.0f} ms", "< 2000 ms",
                    h1m["startup_ms"] < 2000))
    return out


def table(doc):
    lines = [f"GPUBK scale benchmark, {doc['date']}, commit {doc['commit']}, {doc['cpus']} CPUs "
             f"(load {doc['load']}); medians in ms unless said", ""]
    head = (f"{'bookings':>9} {'active':>7} {'past':>7} {'start':>6} {'RSS0':>6} {'RSS1':>6} {'admit':>6} | "
            f"{'d:book':>7} {'d:st':>6} {'d:l':>6} {'d:tl':>6} | {'p:book':>7} {'p:st':>6} {'p:l':>6} "
            f"{'p:tl':>6}")
    lines += [head, "-" * len(head)]
    def book(v, refused):
        return f"{v:>6.1f}{'r' if refused else ' '}"

    for key, r in sorted(doc["runs"].items(), key=lambda kv: (kv[1]["bookings"], kv[1]["active"])):
        d, p, a = r["daemon"], r["private"], r["admission"]
        lines.append(f"{r['bookings']:>9} {r['active']:>7} {r['history']:>7} {r['startup_ms']:>6.0f} "
                     f"{r['rss_start_mb']:>6.1f} {r['rss_end_mb']:>6.1f} {book(a['median_ms'], a['refused'])[1:]} | "
                     f"{book(d['book_ms'], d['book_refused'])} {d['st_ms']:>6.1f} {d['l_ms']:>6.1f} "
                     f"{d['tl_ms']:>6.1f} | {book(p['book_ms'], p['book_refused'])} {p['st_ms']:>6.1f} "
                     f"{p['l_ms']:>6.1f} {p['tl_ms']:>6.1f}")
    lines += ["", "start: spawn to READY=1 (ms); RSS0/RSS1: daemon VmRSS after start / after the load (MB);",
              "admit: booking.create over the socket; d: through the daemon; p: private mode (BK_DATA_DIR);",
              "r: the booking was refused (no slot within the 7-day queue search): the refusal is timed", ""]
    for key, r in doc["runs"].items():
        for clients, t in r.get("throughput", {}).items():
            lines.append(f"durable bookings/s, {r['active']} active, {clients:>2} clients: {t['per_second']:8.0f}"
                         f"  (p50 {t['p50_us'] / 1000:.1f} ms, p99 {t['p99_us'] / 1000:.1f} ms, "
                         f"{t['errors']} errors)")
    lines += [""] + [f"{what:<40} {fig:>10}  target {limit:<9} {'ok' if ok else 'MISSED'}"
                     for what, fig, limit, ok in verdicts(doc["runs"])]
    lines += [f"note: {n}" for n in doc["notes"]]
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--cancel-newest":
        cancel_newest(sys.argv[2])
        return
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
    bk = os.path.join(build, "bk")
    if not os.access(bk, os.X_OK):
        sys.exit(f"bench/scale.py: {bk} not found; build first: ninja -C {build} bk server_bench")
    if not shutil.which("hyperfine"):
        sys.exit("bench/scale.py: hyperfine is not installed (Debian: apt-get install hyperfine)")
    sizes = knob("BENCH_SIZES", "1k 16k 100k 1M").split()
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        sys.exit(f"bench/scale.py: BENCH_SIZES: unknown {unknown}; use {' '.join(SIZES)}")
    work = os.path.join(build, "bench", "work", "scale")
    os.makedirs(os.path.join(work, "home"), mode=0o700, exist_ok=True)
    cfg = {"bk": bk, "build": build, "work": work, "home": os.path.join(work, "home"),
           "reseed": knob("BENCH_RESEED", "") == "1", "runs": int(knob("BENCH_RUNS", "20")),
           "admission": int(knob("BENCH_ADMISSION", "50")), "seconds": knob("BENCH_SERVER_SECONDS", "3"),
           "clients": [int(c) for c in knob("BENCH_CLIENTS", "1 8 32").split()]}
    runs, views = plan(sizes, knob("BENCH_SERIES", "history active").split())
    doc = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "commit": git_commit(),
           "bk_version": subprocess.run([bk, "--version"], capture_output=True, text=True).stdout.strip(),
           "cpus": os.cpu_count(), "load": " ".join(f"{x:.1f}" for x in os.getloadavg()), "series": views,
           "runs": {}, "notes": []}
    if "1M" in sizes and "active" in views:
        doc["notes"].append(f"1M active bookings cannot exist on 8 GPUs: 2 share slots x 5-minute slots hold "
                            f"~138k in the 30-day horizon (~{MAX_ACTIVE} with the seeder's gaps)")
    for active, history in runs:
        key, fig = measure(cfg, active, history, with_throughput=(active, history) == (ACTIVE_CAP, 0))
        doc["runs"][key] = fig
    out = os.path.join(build, "bench")
    with open(os.path.join(out, "scale.json"), "w") as f:
        json.dump(doc, f, indent=1)
    text = table(doc)
    with open(os.path.join(out, "scale.txt"), "w") as f:
        f.write(text)
    print()
    print(text, end="")


if __name__ == "__main__":
    main()
