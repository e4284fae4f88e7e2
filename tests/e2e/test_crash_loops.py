"""Crash loops: `kill -9` at random moments, many times, and nothing confirmed is ever lost.

Private mode: eight lanes run real `bk` writers (bookings of several shapes and cancels, each
with an operation ID) into one ledger; most are SIGKILLed after a random delay of 0-40 ms,
wherever they happen to be (opening, creating the file, inside the transaction, after the
commit, printing). Against the daemon: 32 client threads book through the socket while the
daemon itself is SIGKILLed at random moments and restarted, and some clients are killed too.

After each loop the ledger is read without bk (ledger_checker.py and sqlite3):

* every write that printed success is there as printed (a confirmed cancel is cancelled);
* nothing is half applied: each reservation has exactly one creation operation and one `add`
  event, each cancelled one exactly one cancel operation and event;
* a retry of a killed write with its operation ID never makes a second reservation;
* no instant is over-admitted on any GPU or the host budget; integrity_check is ok.

BK_CRASH_KILLS sets the private loop's number of kills (default 1000) and BK_CRASH_DAEMON_KILLS
the daemon's (default 50); the counts are printed.
"""

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse

from ledger_checker import check_ledger, integrity_check
from server_fixture import BK_BIN, NOW, bk_ok, budgeted_server, make_base_dir, remove_tree
from test_concurrency import CAPACITY, GPU_COUNT, HOST_CPUS, HOST_RAM_MB, bk_binary, make_env

KILLS = int(os.environ.get("BK_CRASH_KILLS", "1000"))
DAEMON_KILLS = int(os.environ.get("BK_CRASH_DAEMON_KILLS", "50"))
LANES = 8
CLIENTS = 32
MAX_DELAY = 0.040
SEED = int(os.environ.get("BK_CRASH_SEED", "20261201"))


def request(rng):
    """One booking of a random shape, all inside the 30-day horizon and legal in form."""
    hour = rng.randrange(19, 24)
    shapes = [
        ["1", "30m"],
        ["1", "1h", "--cpus", "3"],
        ["2", "15m", "--ram", "8g"],
        ["x", "1", "20m", "--gpu", str(rng.randrange(GPU_COUNT)), "-t", "%02d:%02d" % (hour, rng.choice((0, 30)))],
        ["1", "45m", "-t", "+%dh" % rng.randrange(1, 48)],
    ]
    return rng.choice(shapes)


class Attempt:
    def __init__(self, kind, op, args, target=None):
        self.kind, self.op, self.args, self.target = kind, op, args, target
        self.rc = None
        self.doc = None
        self.killed = False

    def run(self, bk, env, rng, kill, **popen):
        """Runs the write; with `kill`, SIGKILLs it after a random delay unless it ended first.
        Most kills land in the first milliseconds: opening, creating, the transaction."""
        p = subprocess.Popen([bk, *self.args, "--json", "--op-id", self.op], env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen)
        if kill:
            try:
                p.wait(timeout=rng.uniform(0, MAX_DELAY / (4 if rng.random() < 0.7 else 1)))
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                self.killed = True
        out, _ = p.communicate(timeout=120)
        self.rc = p.returncode
        if not self.killed:
            try:
                self.doc = json.loads(out)
            except ValueError:
                self.doc = None
        return self

    @property
    def confirmed(self):
        if self.rc != 0 or not isinstance(self.doc, dict):
            return False
        if self.kind == "create":
            return self.doc.get("status") in ("created", "queued", "exists")
        return self.doc.get("kind") == "cancellation_result"


def read_ledger(path):
    """(reservations by id, operations, events) from a read-only connection."""
    con = sqlite3.connect("file:%s?mode=ro" % urllib.parse.quote(path), uri=True, timeout=30)
    try:
        rows = {r[0]: r for r in con.execute(
            "SELECT id, uid, op_id, gpus, start_at, end_at, status FROM reservations")}
        ops = con.execute("SELECT uid, op_id, action, reservation_id FROM operations").fetchall()
        events = con.execute("SELECT reservation_id, action FROM events").fetchall()
    finally:
        con.close()
    return rows, ops, events


class LedgerAssertions:
    def assertWholeLedger(self, path, attempts, *, host=True):
        self.assertEqual(integrity_check(path), "ok")
        self.assertEqual(check_ledger(path, now=NOW, capacity=CAPACITY, gpu_count=GPU_COUNT,
                                      host_cpus=HOST_CPUS if host else None,
                                      host_ram_mb=HOST_RAM_MB if host else None), [])
        rows, ops, events = read_ledger(path)
        creates = {}
        cancels = {}
        for uid, op, action, rid in ops:
            (creates if action == "create" else cancels).setdefault(rid, []).append(op)
        adds, cancel_events = {}, {}
        for rid, action in events:
            if action == "add":
                adds[rid] = adds.get(rid, 0) + 1
            elif action == "cancel":
                cancel_events[rid] = cancel_events.get(rid, 0) + 1
        # Nothing half applied, nothing doubled.
        for rid, row in rows.items():
            self.assertEqual(len(creates.get(rid, [])), 1, "reservation %s: creation operations %s"
                             % (rid, creates.get(rid)))
            self.assertEqual(adds.get(rid, 0), 1, "reservation %s: add events" % rid)
            cancelled = row[6] == "cancelled"
            self.assertEqual(len(cancels.get(rid, [])), 1 if cancelled else 0, "reservation %s" % rid)
            self.assertEqual(cancel_events.get(rid, 0), 1 if cancelled else 0, "reservation %s" % rid)
        self.assertEqual(sorted(creates), sorted(rows), "a creation operation without its reservation")
        by_op = {}
        for rid, row in rows.items():
            by_op.setdefault((row[1], row[2]), []).append(rid)
        self.assertEqual([k for k, v in by_op.items() if len(v) > 1], [], "an operation ID booked twice")
        # Every confirmation is in the ledger as printed.
        lost = []
        for a in attempts:
            if not a.confirmed:
                continue
            r = a.doc["reservation"]
            row = rows.get(r["id"])
            if row is None:
                lost.append("%s %s" % (a.kind, a.op))
            elif a.kind == "cancel" and row[6] != "cancelled":
                lost.append("cancel %s: %s is %s" % (a.op, r["id"], row[6]))
        self.assertEqual(lost, [], "confirmed writes missing after the kills")
        return rows


class PrivateKillLoop(LedgerAssertions, unittest.TestCase):
    """Eight lanes of writers into one private ledger, most of them SIGKILLed mid-flight."""

    def setUp(self):
        self.bk = bk_binary()
        self.root = tempfile.mkdtemp(prefix="bk-kill-")
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        self.env = make_env(self.root, BK_HOST_CPUS=HOST_CPUS, BK_HOST_RAM_MB=HOST_RAM_MB)
        self.ledger = os.path.join(self.root, "data", "ledger.db")

    def lane(self, i, kills_wanted, attempts, lock):
        rng = random.Random(SEED + i)
        mine, kills, n = [], 0, 0
        while kills < kills_wanted:
            n += 1
            op = "lane%d-%05d" % (i, n)
            if mine and rng.random() < 0.2:
                target = mine.pop(rng.randrange(len(mine)))
                a = Attempt("cancel", op, ["d", target], target)
            else:
                a = Attempt("create", op, request(rng))
            a.run(self.bk, self.env, rng, kill=rng.random() < 0.85)
            kills += a.killed
            if a.kind == "create" and a.confirmed:
                mine.append(a.doc["reservation"]["id"])
            with lock:
                attempts.append(a)

    def test_kill9_a_thousand_times_with_eight_writers(self):
        attempts, lock = [], threading.Lock()
        per_lane = -(-KILLS // LANES)
        threads = [threading.Thread(target=self.lane, args=(i, per_lane, attempts, lock)) for i in range(LANES)]
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(900)
            self.assertFalse(t.is_alive(), "a lane hung")
        killed = [a for a in attempts if a.killed]
        self.assertGreaterEqual(len(killed), KILLS)
        # No write that ran to its end failed for any reason but the calendar or a vanished target.
        for a in attempts:
            if a.killed or a.confirmed:
                continue
            self.assertEqual(a.rc, 2, "%s %s rc=%s" % (a.kind, a.args, a.rc))
            err = (a.doc or {}).get("error") or {}
            self.assertIn(err.get("code"), ("conflict", "invalid", "not_found"), a.doc)
        self.assertWholeLedger(self.ledger, attempts)
        # A killed write retried with its operation ID: the same outcome, never a second booking.
        retried = 0
        for a in killed:
            if a.kind != "create":
                continue
            again = Attempt("create", a.op, a.args).run(self.bk, self.env, None, kill=False)
            self.assertIn(again.rc, (0, 2), again.doc)
            retried += 1
            if retried >= 100:
                break
        rows = self.assertWholeLedger(self.ledger, attempts)
        print("\nprivate kill loop: %d writes, %d SIGKILLs, %d confirmed, %d reservations, %d retried, %.1f s"
              % (len(attempts), len(killed), sum(a.confirmed for a in attempts), len(rows), retried,
                 time.monotonic() - started))


@unittest.skipUnless(bk_ok(), "bk binary not found; build it or set BK_BIN")
class DaemonKillLoop(LedgerAssertions, unittest.TestCase):
    """32 clients book through the daemon while it is SIGKILLed at random moments and restarted."""

    def setUp(self):
        self.base = make_base_dir("bk-dkill-")
        self.addCleanup(remove_tree, self.base)
        self.srv, self.users = budgeted_server(self.base, GPU_COUNT, HOST_CPUS, CAPACITY)
        self.addCleanup(self.srv.cleanup)
        self.srv.start()

    def test_kill9_the_daemon_under_32_clients(self):
        attempts, lock = [], threading.Condition()
        stop = threading.Event()
        client_kills = [0]

        def client(i):
            rng = random.Random(SEED * 7 + i)
            who = self.users[i % len(self.users)]
            env = who.env(BK_CONFIG_FILE=self.srv.config)
            n = 0
            while not stop.is_set():
                n += 1
                a = Attempt("create", "d%02d-%05d" % (i, n), request(rng))
                a.run(BK_BIN, env, rng, kill=rng.random() < 0.3, cwd=who.home, **who.popen_kwargs())
                with lock:
                    attempts.append(a)
                    client_kills[0] += a.killed
                    lock.notify_all()

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(CLIENTS)]
        started = time.monotonic()
        for t in threads:
            t.start()
        rng = random.Random(SEED)
        for _ in range(DAEMON_KILLS):
            # Wait for some progress, then kill at a random moment of it.
            with lock:
                target = len(attempts) + rng.randrange(5, 40)
                lock.wait_for(lambda: len(attempts) >= target, timeout=30)
            self.srv.kill()
            self.srv.start()
        stop.set()
        for t in threads:
            t.join(120)
            self.assertFalse(t.is_alive(), "a client hung")
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        rows = self.assertWholeLedger(self.srv.ledger, attempts)
        print("\ndaemon kill loop: %d daemon SIGKILLs, %d client SIGKILLs, %d writes, %d confirmed, "
              "%d reservations, %.1f s" % (DAEMON_KILLS, client_kills[0], len(attempts),
                                           sum(a.confirmed for a in attempts), len(rows),
                                           time.monotonic() - started))
        self.assertGreater(sum(a.confirmed for a in attempts), DAEMON_KILLS)


if __name__ == "__main__":
    unittest.main()
