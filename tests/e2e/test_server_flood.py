"""Floods against the shared-server daemon: one client must neither stall the others nor grow the daemon.

* A client that writes `server.ping` lines as fast as it can and never reads: meanwhile another
  client's pings are answered promptly (nine in ten within 100 ms, none after a second: a stalled
  client would wait for the whole flood, three times as long), and the daemon's peak resident memory
  (VmHWM) stays under 64 MB.
* The same with 50 such clients at once.
* The same with a client that reads its answers (so the daemon is busy with it all along).
* SIGTERM during either flood stops the daemon within two seconds.
* Pipelined `reservations.list` requests on a ledger of thousands of rows, and many distinct
  (so separately cached) lists of it: the daemon's peak memory stays under 64 MB.

Each test has its own server (the daemon as bksrvown when root, else as the current account);
the test talks to the socket itself. The bounds are wide enough for a loaded two-core machine;
they catch a stall, not a slow moment, which the benchmarks under bench/ measure. Under a
sanitizer (BK_E2E_SANITIZER set) the time bounds and the floods are five times longer and the memory bound is not
checked: the sanitizer's own shadow memory and quarantine dominate the figure. Run:

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_server_flood
"""

import os
import select
import signal
import socket
import statistics
import subprocess
import threading
import time
import unittest

from server_fixture import (BK_BIN, NOW, OWNER, Account, Rpc, Server, bk_ok, describe, is_root, make_base_dir,
                            poll_until, remove_tree, write_upstream_ledger)

SANITIZED = bool(os.environ.get("BK_E2E_SANITIZER"))
SLOWDOWN = 5 if SANITIZED else 1
PING_BOUND = 0.1 * SLOWDOWN   # seconds: nine in ten of another client's pings during a flood
STALL_BOUND = 1.0 * SLOWDOWN  # seconds: every ping of another client during a flood
FLOOD_SECONDS = 3.0 * SLOWDOWN  # how long a flood lasts: three times the stall bound
RSS_BOUND_KB = 64 * 1024      # the daemon's peak resident memory during any flood
STOP_BOUND = 2.0 * SLOWDOWN   # seconds from SIGTERM to exit during a flood
ROWS = 3000                # reservations in the large ledger
PING_LINE = b'{"jsonrpc":"2.0","id":1,"method":"server.ping"}\n'


def vm_kb(pid, field):
    """A memory figure of /proc/PID/status in KiB (VmRSS, VmHWM)."""
    with open("/proc/%d/status" % pid, encoding="ascii") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (field, pid))


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class Flooder:
    """Raw connections (one thread for all) that write request lines as fast as their sockets take
    them, until stopped, until `seconds` have passed, or until the daemon closes one. They never
    read, or with `drain` they read and drop every answer as fast as they can."""

    def __init__(self, path, line=PING_LINE, seconds=3.0, drain=False, connections=1):
        self.drain = drain
        self.answered = 0  # bytes of answers drained
        self.socks = []
        for _ in range(connections):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.setblocking(False)
            self.socks.append(s)
        self.blob = line * max(1, 65536 // len(line))  # whole lines: wrapping around keeps them whole
        self.seconds = seconds
        self.written = {s: 0 for s in self.socks}
        self.ended = None  # why it stopped
        self.stop_flag = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        deadline = time.monotonic() + self.seconds
        while not self.stop_flag.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                self.ended = "time"
                return
            # Waiting for room in a socket (or answers to drop), bounded so that stop() is seen.
            r, w, _ = select.select(self.socks if self.drain else [], self.socks, [], min(left, 0.05))
            for s in r:
                if not self._drain(s):
                    return
            for s in w:
                if not self._send(s):
                    return
        self.ended = "stopped"

    def _send(self, s):
        pos = self.written[s] % len(self.blob)
        try:
            self.written[s] += s.send(self.blob[pos:])
        except BlockingIOError:
            pass
        except OSError as e:
            self.ended = repr(e)
            return False
        return True

    def _drain(self, s):
        try:
            got = s.recv(1 << 20)
        except BlockingIOError:
            return True
        except OSError as e:
            self.ended = repr(e)
            return False
        if not got:
            self.ended = "closed by the daemon"
            return False
        self.answered += len(got)
        return True

    def total_written(self):
        return sum(self.written.values())

    def __enter__(self):
        self.thread.start()
        # The flood is under way once every connection has sent something and all together more than
        # the daemon's first read (64 KiB) and a socket buffer.
        poll_until(lambda: (min(self.written.values()) > 0 and self.total_written() > 128 * 1024)
                   or self.ended, 10, "the flood to start")
        return self

    def running(self):
        return self.thread.is_alive()

    def __exit__(self, *exc):
        self.stop_flag.set()
        self.thread.join(10)
        for s in self.socks:
            s.close()
        return False


class Flood(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        if not bk_ok():
            self.skipTest("bk binary not found at %s; build it or set BK_BIN" % BK_BIN)
        self.base = make_base_dir("bk-flood-")
        self.addCleanup(remove_tree, self.base)
        self.owner = Account.make(OWNER, self.base) if is_root() else Account.current(self.base, "owner")
        self.srv = Server(self.base, self.owner)
        self.addCleanup(self.srv.cleanup)
        self.srv.init("--gpu-count", "4", "--cpus", "16", "--ram", "64g")

    def tearDown(self):
        if self.srv.alive():
            self.assertEqual(self.srv.stop(), 0, self.srv.log())

    # -- helpers

    def start(self):
        self.srv.start()
        self.pid = self.srv.proc.pid

    def hwm_kb(self):
        return vm_kb(self.pid, "VmHWM")

    def assertSmall(self, what):
        if SANITIZED:
            return
        hwm = self.hwm_kb()
        self.assertLess(hwm, RSS_BOUND_KB, "%s: the daemon peaked at %.1f MB resident" % (what, hwm / 1024))

    def assertNoSlowPings(self, took):
        self.assertTrue(took, "no ping was tried: the flood was over before it was seen under way")
        self.assertGreater(len(took), 10, "too few pings during the flood")
        median = statistics.median(took) * 1000
        stalled = [round(t, 3) for t in took if t >= STALL_BOUND]
        self.assertEqual(stalled, [], "pings slower than %.0f ms during the flood (of %d, median %.1f ms)"
                         % (STALL_BOUND * 1000, len(took), median))
        p90 = statistics.quantiles(took, n=10)[-1]
        self.assertLess(p90, PING_BOUND, "one ping in ten took over %.0f ms during the flood (of %d, median %.1f ms)"
                        % (PING_BOUND * 1000, len(took), median))

    def timed_ping(self, conn):
        t0 = time.monotonic()
        reply = conn.call("server.ping", timeout=10)
        took = time.monotonic() - t0
        self.assertIn("result", reply)
        return took

    def ping_during_flood(self, **flooder):
        """Floods the daemon (Flooder's keywords) and, for as long as the flood writes, pings it from
        another client; asserts those pings were answered promptly. Returns the flooder."""
        other = Rpc(self.srv.socket)
        self.addCleanup(other.close)
        self.timed_ping(other)
        took = []
        with Flooder(self.srv.socket, seconds=FLOOD_SECONDS, **flooder) as flood:
            while flood.running():
                took.append(self.timed_ping(other))
            self.assertEqual(flood.ended, "time", "a flooding connection was closed early")
        self.assertNoSlowPings(took)
        return flood

    def seed_large_ledger(self):
        """ROWS past (expired) reservations of several users, imported (as the owner, before the
        daemon starts) with `bk admin data import` straight into the server's ledger."""
        rows = []
        for i in range(ROWS):
            start = NOW - (i // 4 + 2) * 3600
            rid = "%08x-0000-4000-8000-%012x" % (i, i)
            rows.append({"id": rid, "uid": 2000 + i % 7, "username": "user%d" % (i % 7), "mode": "shared",
                         "gpus": [i % 4], "share_units": 1, "start_at": iso(start), "end_at": iso(start + 1800),
                         "status": "expired", "created_at": iso(start - 60), "updated_at": iso(start + 1800),
                         "op_id": "op-" + rid})
        path = write_upstream_ledger(self.base, rows, gpu_count=4)
        args = ("admin", "data", "import", path)
        env = self.owner.env(BK_DATA_DIR=os.path.join(self.srv.dir, "data"), BK_GPU_COUNT=4)
        p = self.owner.bk(*args, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, describe(args, p))

    # -- the floods

    def test_a_ping_flood_neither_stalls_another_client_nor_grows_the_daemon(self):
        self.start()
        self.ping_during_flood()
        self.assertSmall("a ping flood")
        # The flood left nothing behind: the daemon answers a fresh connection.
        fresh = Rpc(self.srv.socket)
        self.addCleanup(fresh.close)
        self.assertLess(self.timed_ping(fresh), STALL_BOUND)

    def test_a_ping_flood_that_reads_its_answers_does_not_stall_another_client(self):
        self.start()
        flood = self.ping_during_flood(drain=True)
        self.assertGreater(flood.answered, 0, "the flood was not answered at all")
        self.assertSmall("a ping flood that reads its answers")

    def test_a_ping_flood_on_many_connections_neither_stalls_another_client_nor_grows_the_daemon(self):
        # A round of the event loop now has 50 busy connections, yet each gets only its share.
        self.start()
        self.ping_during_flood(connections=50)
        self.assertSmall("a ping flood on 50 connections")

    def test_sigterm_during_a_flood_stops_the_daemon_promptly(self):
        # A flood that never reads (the daemon holds it back) and one that reads (the daemon is busy).
        for drain in (False, True):
            with self.subTest(drain=drain):
                self.start()
                with Flooder(self.srv.socket, seconds=30.0, drain=drain):
                    t0 = time.monotonic()
                    self.srv.proc.send_signal(signal.SIGTERM)
                    try:
                        rc = self.srv.proc.wait(STOP_BOUND * 5)
                    except subprocess.TimeoutExpired:
                        rc = None
                    took = time.monotonic() - t0
                    self.srv.kill()  # when it ignored the signal; the next round starts afresh
                self.assertIsNotNone(rc, "the daemon ignored SIGTERM during a flood:\n" + self.srv.log())
                self.assertEqual(rc, 0, self.srv.log())
                self.assertLess(took, STOP_BOUND, "the daemon took %.2f s to stop during a flood" % took)

    def test_pipelined_lists_of_a_large_ledger_keep_the_daemon_small(self):
        self.seed_large_ledger()
        self.start()
        lists = Rpc(self.srv.socket, timeout=30)
        self.addCleanup(lists.close)
        n = 50  # 1 MB each: all of them answered at once would be 50 MB
        lists.send_raw(b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"reservations.list",'
                                b'"params":{"history":true,"everyone":true}}\n' % i for i in range(n)))
        # Meanwhile (the lists not read yet), another client is served.
        other = Rpc(self.srv.socket)
        self.addCleanup(other.close)
        took = [self.timed_ping(other) for _ in range(10)]
        self.assertSmall("%d pipelined lists, none read yet" % n)
        for i in range(n):
            reply = lists.read(30)
            self.assertEqual(reply.get("id"), i)
            self.assertEqual(reply["result"]["total"], ROWS)
            self.assertEqual(len(reply["result"]["reservations"]), ROWS)
        self.assertSmall("%d pipelined lists of %d rows" % (n, ROWS))
        self.assertLess(max(took), STALL_BOUND, "a ping took %.3f s while the lists were answered" % max(took))

    def test_many_distinct_cached_lists_keep_the_daemon_small(self):
        self.seed_large_ledger()
        self.start()
        c = Rpc(self.srv.socket, timeout=30)
        self.addCleanup(c.close)
        n = 60  # 1 MB each: all of them cached would be 60 MB
        for limit in range(ROWS, ROWS - n, -1):  # another limit is another cache entry
            reply = c.call("reservations.list", {"history": True, "everyone": True, "limit": limit}, timeout=30)
            self.assertEqual(len(reply["result"]["reservations"]), limit)
        self.assertSmall("%d distinct lists of about %d rows" % (n, ROWS))
        # Small answers are still served (and cached) as before.
        for _ in range(3):
            self.assertIn("result", c.call("reservations.list", {"limit": 5}))


if __name__ == "__main__":
    unittest.main()
