"""Crash: kill -9 the shared-server daemon while 16 clients book, restart it, and check the ledger.

Sixteen client threads each run real `bk` processes (`bk 1 30m --json --op-id ...`) in a loop
against the daemon's socket. Once enough confirmations have been read from their outputs the
daemon is killed with SIGKILL, restarted, and the clients retry what failed with the same
operation ID. Afterwards, with the daemon stopped gracefully, the ledger is opened read-only:

* every booking any client saw confirmed is there, with the same ID, GPUs and times;
* every operation ID made exactly one reservation (a retry across the crash never doubles);
* nothing is over-admitted (ledger_checker, independent of bk), PRAGMA integrity_check is ok.

A second test does the same with 32 raw protocol clients, one booking in flight each, so that the
daemon commits their bookings in groups (one fsync for many): the kill comes at a random moment,
and every booking whose success reply a client read must be in the ledger afterwards.

As root the daemon runs as the account bksrvown and the clients as bksrva/bksrvb (created when
missing); otherwise everything runs as the current account. Run:

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_server_crash
"""

import calendar
import json
import os
import random
import re
import sqlite3
import threading
import time
import unittest
import urllib.parse

from ledger_checker import check_ledger, integrity_check
from server_fixture import BK_BIN, NOW, Rpc, bk_ok, budgeted_server, describe, make_base_dir, remove_tree

CLIENTS = 16
PER_CLIENT = 12
KILL_AFTER = 60  # confirmations read before the SIGKILL
GPU_COUNT = 4
CAPACITY = 2
HOST_CPUS = 16
HOST_RAM_MB = 65536
RAW_CLIENTS = 32
RAW_PER_CLIENT = 10


def iso(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))


class DaemonCrash(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        if not bk_ok():
            self.skipTest("bk binary not found at %s; build it or set BK_BIN" % BK_BIN)
        self.base = make_base_dir("bk-crash-")
        self.addCleanup(remove_tree, self.base)
        self.srv, self.users = budgeted_server(self.base, GPU_COUNT, HOST_CPUS, CAPACITY)
        self.addCleanup(self.srv.cleanup)
        self.srv.start()

    def request(self, i, n):
        """Client i's n-th booking: a mix of shared and exclusive, with CPU declarations that make the
        host budget bind (at most five 3-CPU bookings at once)."""
        if (i + n) % 4 == 0:
            return ["x", "1", "20m", "--cpus", "2"]
        return ["1", "30m", "--cpus", "3"]

    def test_kill9_while_16_clients_book(self):
        lock = threading.Condition()
        confirmed = {}      # (uid, op_id) -> (client, booking document)
        errors = []         # unexpected failures, described
        killed = threading.Event()
        restarted = threading.Event()
        failed_in_crash = []

        def client(i):
            who = self.users[i % len(self.users)]
            env = who.env(BK_CONFIG_FILE=self.srv.config)
            for n in range(PER_CLIENT):
                op = "crash-c%02d-%03d" % (i, n)
                args = [*self.request(i, n), "--json", "--op-id", op]
                after_restart = 0
                while True:
                    p = who.bk(*args, env=env, timeout=60)
                    if p.returncode == 0:
                        try:
                            doc = json.loads(p.stdout)
                        except ValueError:
                            with lock:
                                errors.append("not JSON" + describe(args, p))
                            return
                        with lock:
                            if doc.get("status") not in ("created", "queued", "exists"):
                                errors.append("unexpected status" + describe(args, p))
                            confirmed[(who.uid, op)] = (i, doc)
                            lock.notify_all()
                        break
                    if not killed.is_set():
                        with lock:
                            errors.append("failed while the daemon was up" + describe(args, p))
                            lock.notify_all()
                        return
                    if restarted.is_set():
                        after_restart += 1
                        if after_restart > 2:
                            with lock:
                                errors.append("still failing after the restart" + describe(args, p))
                                lock.notify_all()
                            return
                    else:
                        with lock:
                            failed_in_crash.append(op)
                            lock.notify_all()
                        # Synchronisation, not a delay: block until the daemon is back.
                        if not restarted.wait(60):
                            with lock:
                                errors.append("the daemon never came back")
                            return

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(CLIENTS)]
        for t in threads:
            t.start()
        with lock:
            ok = lock.wait_for(lambda: len(confirmed) >= KILL_AFTER or errors, timeout=60)
        self.assertTrue(ok, "only %d confirmations within 60 s" % len(confirmed))
        self.assertEqual(errors, [])
        killed.set()
        self.srv.kill()
        self.assertEqual(self.srv.proc.returncode, -9)
        with lock:
            before_crash = dict(confirmed)
        self.assertLess(len(before_crash), CLIENTS * PER_CLIENT, "the clients finished before the kill")
        # The clients must have noticed the crash (their next bookings fail) before the restart.
        with lock:
            noticed = lock.wait_for(lambda: failed_in_crash or errors, timeout=30)
        self.assertTrue(noticed, "no client noticed the daemon was gone")
        self.srv.start()
        restarted.set()
        for t in threads:
            t.join(120)
            self.assertFalse(t.is_alive(), "a client hung")
        self.assertEqual(errors, [])
        self.assertEqual(len(confirmed), CLIENTS * PER_CLIENT)
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        self.assertIn("listening on", self.srv.log())

        # The ledger, read-only, without bk.
        self.assertEqual(integrity_check(self.srv.ledger), "ok")
        uri = "file:%s?mode=ro" % urllib.parse.quote(self.srv.ledger)
        con = sqlite3.connect(uri, uri=True)
        try:
            rows = {r[0]: r for r in con.execute(
                "SELECT id, uid, op_id, gpus, mode, start_at, end_at, status FROM reservations")}
            doubled = con.execute("SELECT uid, op_id, count(*) FROM reservations GROUP BY uid, op_id "
                                  "HAVING count(*) > 1").fetchall()
            ops = con.execute("SELECT count(*) FROM operations WHERE action = 'create'").fetchone()[0]
        finally:
            con.close()
        self.assertEqual(doubled, [])
        self.assertEqual(len(rows), CLIENTS * PER_CLIENT, "reservations other than the confirmed ones")
        self.assertEqual(ops, CLIENTS * PER_CLIENT)
        for (uid, op), (i, doc) in sorted(confirmed.items()):
            r = doc["reservation"]
            row = rows.get(r["id"])
            self.assertIsNotNone(row, "confirmed booking %s (%s) is missing after the crash" % (r["id"], op))
            self.assertEqual(row[1:], (uid, op, ",".join(map(str, r["gpus"])), r["mode"], iso(r["start_at"]),
                                       iso(r["end_at"]), "active"), op)
        # Bookings confirmed before the kill are the same ones afterwards (nothing rewritten).
        for key, (_, doc) in before_crash.items():
            self.assertEqual(confirmed[key][1]["reservation"]["id"], doc["reservation"]["id"])
        statuses = [doc["status"] for _, doc in confirmed.values()]
        if os.environ.get("BK_TEST_VERBOSE"):
            print("\nconfirmed before the kill %d, failed during the crash %d, statuses %s"
                  % (len(before_crash), len(failed_in_crash), {s: statuses.count(s) for s in set(statuses)}))
        self.assertEqual(check_ledger(self.srv.ledger, now=NOW, capacity=CAPACITY, gpu_count=GPU_COUNT,
                                      host_cpus=HOST_CPUS, host_ram_mb=HOST_RAM_MB), [])


    def create(self, op):
        return {"jsonrpc": "2.0", "id": op, "method": "booking.create",
                "params": {"count": 1, "duration_seconds": 1800, "cpus": 1, "op_id": op}}

    def test_kill9_while_32_raw_clients_book_in_shared_commits(self):
        seed = int.from_bytes(os.urandom(4), "little")
        kill_after = random.Random(seed).randint(RAW_CLIENTS, RAW_CLIENTS * RAW_PER_CLIENT // 2)
        why = " (seed %d, kill after %d confirmations)" % (seed, kill_after)
        lock = threading.Condition()
        confirmed = {}  # op_id -> reservation, from success replies read before the kill
        in_flight = []  # op_ids sent but unanswered when the daemon died
        errors = []
        killed = threading.Event()

        def client(i):
            try:
                rpc = Rpc(self.srv.socket, timeout=60)
            except OSError as e:
                with lock:
                    errors.append("client %d cannot connect: %r" % (i, e))
                    lock.notify_all()
                return
            try:
                for n in range(RAW_PER_CLIENT):
                    op = "group-c%02d-%03d" % (i, n)
                    try:
                        rpc.send(self.create(op))
                        reply = rpc.read(60)
                    except (OSError, EOFError) as e:
                        with lock:
                            if killed.is_set():
                                in_flight.append(op)
                            else:
                                errors.append("%s failed while the daemon was up: %r" % (op, e))
                            lock.notify_all()
                        return
                    with lock:
                        if reply.get("id") != op or "result" not in reply:
                            errors.append("%s: unexpected reply %r" % (op, reply))
                            lock.notify_all()
                            return
                        confirmed[op] = reply["result"]["reservation"]
                        lock.notify_all()
            finally:
                rpc.close()

        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(RAW_CLIENTS)]
        for t in threads:
            t.start()
        with lock:
            ok = lock.wait_for(lambda: len(confirmed) >= kill_after or errors, timeout=120)
            self.assertTrue(ok, "only %d confirmations within 120 s%s" % (len(confirmed), why))
            self.assertEqual(errors, [], why)
            killed.set()
        self.srv.kill()
        self.assertEqual(self.srv.proc.returncode, -9)
        for t in threads:
            t.join(60)
            self.assertFalse(t.is_alive(), "a client hung" + why)
        self.assertEqual(errors, [], why)
        self.assertLess(len(confirmed), RAW_CLIENTS * RAW_PER_CLIENT, "the clients finished before the kill")

        # Every booking a client was told about survived, with the same ID.
        self.srv.start()
        rpc = Rpc(self.srv.socket, timeout=60)
        for op, r in sorted(confirmed.items()):
            reply = rpc.call("reservation.history", {"ref": r["id"]})
            self.assertIn("result", reply, "confirmed booking %s (%s) is missing after the crash%s" % (r["id"], op, why))
            self.assertEqual(reply["result"]["reservation"]["op_id"], op)
        # What was in flight is retried by operation ID, pipelined on one connection: each is
        # booked at most once, and the answers come back in the order of the requests.
        rpc.send_raw("".join(json.dumps(self.create(op)) + "\n" for op in in_flight))
        for op in in_flight:
            reply = rpc.read(60)
            self.assertEqual(reply.get("id"), op, why)
            self.assertIn(reply.get("result", {}).get("status"), ("created", "queued", "exists"), reply)
        rpc.close()
        p = self.srv.owner.bk("admin", "data", "verify", env=self.srv.owner.env(BK_CONFIG_FILE=self.srv.config))
        self.assertEqual(p.returncode, 0, describe(["admin", "data", "verify"], p))
        self.assertIn("invariants: ok", p.stdout)
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        # The retries shared commits: fewer fsyncs than writes.
        m = re.search(r"stopped: \d+ requests, (\d+) writes in (\d+) group commits", self.srv.log())
        self.assertIsNotNone(m, self.srv.log())
        if len(in_flight) > 4:
            self.assertLess(int(m.group(2)), int(m.group(1)), self.srv.log())

        if os.environ.get("BK_TEST_VERBOSE"):
            print("\nconfirmed before the kill %d, in flight %d, then %s writes in %s group commits%s"
                  % (len(confirmed), len(in_flight), m.group(1), m.group(2), why))
        self.assertEqual(integrity_check(self.srv.ledger), "ok")
        uri = "file:%s?mode=ro" % urllib.parse.quote(self.srv.ledger)
        con = sqlite3.connect(uri, uri=True)
        try:
            ids = {r[0] for r in con.execute("SELECT id FROM reservations")}
            doubled = con.execute("SELECT uid, op_id, count(*) FROM reservations GROUP BY uid, op_id "
                                  "HAVING count(*) > 1").fetchall()
        finally:
            con.close()
        self.assertEqual(doubled, [], why)
        self.assertLessEqual({r["id"] for r in confirmed.values()}, ids, why)
        self.assertEqual(check_ledger(self.srv.ledger, now=NOW, capacity=CAPACITY, gpu_count=GPU_COUNT,
                                      host_cpus=HOST_CPUS, host_ram_mb=HOST_RAM_MB), [], why)

if __name__ == "__main__":
    unittest.main()
