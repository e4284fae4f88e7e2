"""Concurrency end-to-end tests: many real `bk` processes writing one private ledger.

Self-contained (stdlib only). Needs BK_BIN, the path of a bk built with tests
enabled (it honours BK_TEST_NOW). Run:

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_concurrency

What is checked afterwards is re-derived independently of bk by
ledger_checker.py, straight from ledger.db.
"""

import calendar
import concurrent.futures
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
import time
import unittest

import ledger_checker

NOW_ISO = "2026-11-29T18:49:00Z"
NOW = calendar.timegm(time.strptime(NOW_ISO, "%Y-%m-%dT%H:%M:%SZ"))
GPU_COUNT = 4
CAPACITY = 2          # max_shared_users, set explicitly so a changed default cannot hide anything
HOST_CPUS = 16
HOST_RAM_MB = 65536

WORKERS = 8
PER_WORKER = 50


def bk_binary():
    path = os.environ.get("BK_BIN", "")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "build", "bk")
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError("set BK_BIN to the bk binary (tried %s)" % path)
    return path


BK = None


def setUpModule():
    global BK
    BK = bk_binary()


def iso_to_unix(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))


def make_env(root, **extra):
    """A clean environment for bk: nothing BK_* leaks in from the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BK_")}
    env.update({
        "BK_DATA_DIR": os.path.join(root, "data"),
        "BK_GPU_COUNT": str(GPU_COUNT),
        "BK_MAX_SHARED_USERS": str(CAPACITY),
        "TZ": "UTC",
        "BK_TEST_NOW": NOW_ISO,
        "HOME": root,
        "XDG_CONFIG_HOME": os.path.join(root, "xdg-config"),
        "XDG_DATA_HOME": os.path.join(root, "xdg-data"),
    })
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_bk(env, args, timeout=60):
    p = subprocess.run([BK] + list(args), env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_gated(env, commands, timeout=60):
    """Starts one bk per argument list, all held at a gate, then opens the gate at once.

    Each child is `sh -c 'read _; exec bk ...'` reading a shared pipe; closing
    the pipe's write end releases every child together (EOF), so the bk
    processes really race. Returns [(rc, stdout, stderr)] in order.
    """
    r, w = os.pipe()
    procs = []
    try:
        for args in commands:
            procs.append(subprocess.Popen(
                ["/bin/sh", "-c", 'read _ || :; exec "$@"', "sh", BK] + list(args), env=env, stdin=r,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    finally:
        os.close(r)
        os.close(w)  # the gate opens here
    out = []
    for p in procs:
        o, e = p.communicate(timeout=timeout)
        out.append((p.returncode, o, e))
    return out


class Outcome:
    """One bk invocation and what it printed."""

    def __init__(self, op_id, args, rc, stdout, stderr):
        self.op_id, self.args, self.rc, self.stdout, self.stderr = op_id, args, rc, stdout, stderr
        try:
            self.doc = json.loads(stdout)
        except ValueError:
            self.doc = None

    def describe(self):
        return "bk %s -> rc=%s stdout=%r stderr=%r" % (" ".join(self.args), self.rc, self.stdout[:400],
                                                     self.stderr[:400])

    @property
    def succeeded(self):
        return (self.rc == 0 and isinstance(self.doc, dict) and self.doc.get("kind") == "booking_result"
                and self.doc.get("status") in ("created", "queued"))


class Ledger:
    """Read-only views of ledger.db used by the assertions."""

    def __init__(self, path):
        self.path = path

    def query(self, sql, *params):
        con = sqlite3.connect("file:%s?mode=ro" % self.path, uri=True, timeout=30)
        try:
            return con.execute(sql, params).fetchall()
        finally:
            con.close()


class BkTestCase(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="bk-conc-")
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        self.ledger_path = os.path.join(self.root, "data", "ledger.db")

    def seed(self, env):
        """Creates the ledger with one sequential booking, so later races are about booking, not creation.

        Racing the very first writes of a fresh ledger is FreshLedgerRaceTest's job.
        """
        full = ["1", "5m", "--gpu", "3", "-t", "23:00", "--json", "--op-id", "seed"]
        o = Outcome("seed", full, *run_bk(env, full))
        self.assertTrue(o.succeeded, o.describe())
        return o

    def assertCleanOutcome(self, o):
        """rc 0 with a booking_result, or rc 2 with a conflict error document; nothing else."""
        self.assertIn(o.rc, (0, 2), o.describe())
        self.assertIsInstance(o.doc, dict, "stdout is not one JSON document: " + o.describe())
        self.assertEqual(o.stderr, "", "unexpected stderr with --json: " + o.describe())
        if o.rc == 0:
            self.assertEqual(o.doc.get("kind"), "booking_result", o.describe())
        else:
            self.assertEqual(o.doc.get("kind"), "error", o.describe())
            err = o.doc.get("error") or {}
            self.assertEqual(err.get("code"), "conflict", o.describe())
            self.assertTrue(err.get("message"), o.describe())

    def assertLedgerSound(self, host=True):
        self.assertEqual(ledger_checker.integrity_check(self.ledger_path), "ok")
        problems = ledger_checker.check_ledger(
            self.ledger_path, now=NOW, capacity=CAPACITY, gpu_count=GPU_COUNT,
            host_cpus=HOST_CPUS if host else None, host_ram_mb=HOST_RAM_MB if host else None)
        self.assertEqual(problems, [], "over-admitted instants:\n" + "\n".join(problems[:20]))

    def assertMatchesLedger(self, successes):
        """Each printed success is in the ledger as printed; nothing else was written."""
        led = Ledger(self.ledger_path)
        rows = {r[0]: r for r in led.query(
            "SELECT id, gpus, start_at, end_at, status, mode, share_units, op_id FROM reservations")}
        for o in successes:
            res = o.doc["reservation"]
            row = rows.get(res["id"])
            self.assertIsNotNone(row, "printed reservation missing from the ledger: " + o.describe())
            _, gpus, start, end, status, mode, units, op_id = row
            self.assertEqual(sorted(ledger_checker.parse_gpus(gpus)), sorted(res["gpus"]), o.describe())
            self.assertEqual(start, iso_to_unix(res["start_at"]), o.describe())
            self.assertEqual(end, iso_to_unix(res["end_at"]), o.describe())
            self.assertEqual(status, "active", o.describe())
            self.assertEqual(mode, res["mode"], o.describe())
            self.assertEqual(op_id, o.op_id, o.describe())
            if mode == "shared":
                self.assertEqual(units, res["share_units_per_gpu"], o.describe())
        ids = [o.doc["reservation"]["id"] for o in successes]
        self.assertEqual(len(set(ids)), len(ids), "two successes printed the same reservation id")
        self.assertEqual(sorted(rows), sorted(ids), "ledger rows differ from the printed successes")

        adds = led.query("SELECT reservation_id, op_id FROM events WHERE action='add'")
        by_res = {}
        for rid, op in adds:
            by_res.setdefault(rid, []).append(op)
        for o in successes:
            rid = o.doc["reservation"]["id"]
            self.assertEqual(by_res.get(rid), [o.op_id], "want exactly one 'add' event for " + o.describe())
        self.assertEqual(len(adds), len(successes), "'add' events that match no printed success")

        ops = led.query("SELECT op_id, action, reservation_id FROM operations")
        self.assertEqual(len(ops), len(successes))
        op_map = {op: (action, rid) for op, action, rid in ops}
        self.assertEqual(len(op_map), len(ops), "an op id has two operations rows")
        for o in successes:
            self.assertEqual(op_map.get(o.op_id), ("create", o.doc["reservation"]["id"]), o.describe())


# ---- the checker, checked -----------------------------------------------------

class LedgerCheckerTest(unittest.TestCase):
    """The checker must catch what it exists to catch, on hand-made ledgers."""

    def setUp(self):
        fd, self.path = tempfile.mkstemp(suffix=".db")
        os.close(fd)
        self.addCleanup(os.unlink, self.path)
        con = sqlite3.connect(self.path)
        con.execute("CREATE TABLE reservations(id TEXT PRIMARY KEY, uid INTEGER, mode TEXT, gpus TEXT, "
                    "share_units INTEGER, cpus INTEGER NOT NULL DEFAULT 0, ram_mb INTEGER NOT NULL DEFAULT 0, "
                    "start_at INTEGER, end_at INTEGER, status TEXT)")
        con.commit()
        con.close()

    def add(self, rid, mode, gpus, start, end, units=None, cpus=0, ram=0, status="active"):
        if mode == "shared" and units is None:
            units = 1
        con = sqlite3.connect(self.path)
        con.execute("INSERT INTO reservations VALUES(?,?,?,?,?,?,?,?,?,?)",
                    (rid, 0, mode, gpus, units, cpus, ram, start, end, status))
        con.commit()
        con.close()

    def check(self, now=0, capacity=2, **kw):
        return ledger_checker.check_ledger(self.path, now=now, capacity=capacity, gpu_count=4, **kw)

    def test_clean_ledger_passes(self):
        self.add("a", "shared", "0", 100, 200)
        self.add("b", "shared", "0", 150, 250)
        self.add("c", "exclusive", "1", 100, 200)
        self.add("d", "exclusive", "1", 200, 300)  # half-open: touching is not overlapping
        self.add("e", "shared", "2,3", 100, 400, units=2)
        self.assertEqual(self.check(), [])

    def test_shared_units_over_capacity_caught(self):
        self.add("a", "shared", "0", 100, 200, units=1)
        self.add("b", "shared", "0", 150, 250, units=2)
        problems = self.check()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("GPU 0", problems[0])
        self.assertIn("[150, 200)", problems[0])

    def test_over_admission_in_an_elementary_interval_only(self):
        # Pairwise each pair fits in capacity 2 on some instants, but [90,100) holds three.
        self.add("a", "shared", "0", 0, 100)
        self.add("b", "shared", "0", 50, 150)
        self.add("c", "shared", "0", 90, 200)
        problems = self.check()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("[90, 100)", problems[0])
        self.assertIn("3 share units", problems[0])

    def test_exclusive_overlap_caught(self):
        self.add("a", "exclusive", "1", 100, 200)
        self.add("b", "shared", "3,1", 199, 300)  # multi-GPU, second GPU collides
        problems = self.check()
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("GPU 1", problems[0])
        self.assertIn("exclusive", problems[0])

    def test_two_exclusives_caught(self):
        self.add("a", "exclusive", "2", 100, 200)
        self.add("b", "exclusive", "0,2", 100, 200)
        self.assertTrue(self.check())

    def test_inactive_and_ended_reservations_ignored(self):
        self.add("a", "exclusive", "0", 100, 200)
        self.add("b", "exclusive", "0", 100, 200, status="cancelled")
        self.add("c", "exclusive", "0", 100, 200, status="expired")
        self.add("d", "exclusive", "3", 50, 150)
        self.add("e", "exclusive", "3", 50, 150)
        self.assertEqual(self.check(now=150), [])  # d/e ended at now, a is alone among the active
        self.assertEqual(len(self.check(now=149)), 1)  # d and e still active: caught

    def test_host_budgets(self):
        self.add("a", "shared", "0", 100, 200, cpus=10, ram=40000)
        self.add("b", "shared", "1", 150, 250, cpus=7, ram=30000)
        self.assertEqual(self.check(), [])  # budgets not given: not checked
        self.assertEqual(self.check(host_cpus=17, host_ram_mb=70000), [])
        cpu = self.check(host_cpus=16)
        self.assertEqual(len(cpu), 1, cpu)
        self.assertIn("17 CPUs", cpu[0])
        ram = self.check(host_ram_mb=65536)
        self.assertEqual(len(ram), 1, ram)
        self.assertIn("70000 MB", ram[0])

    def test_bad_rows_reported(self):
        self.add("a", "shared", "0,0", 100, 200)
        self.add("b", "shared", "7", 100, 200)
        self.add("c", "shared", "1", 100, 200, units=0)
        self.assertEqual(len(self.check()), 3)

    def test_checker_is_read_only(self):
        self.add("a", "exclusive", "0", 100, 200)
        self.add("b", "exclusive", "0", 150, 250)
        with open(self.path, "rb") as f:
            before = f.read()
        self.assertTrue(self.check())
        self.assertEqual(ledger_checker.integrity_check(self.path), "ok")
        with open(self.path, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_integrity_check_reports_damage(self):
        con = sqlite3.connect(self.path)
        con.execute("CREATE INDEX by_gpus ON reservations(gpus, start_at)")
        con.commit()
        con.close()
        for i in range(300):
            self.add("r%04d" % i, "shared", str(i % 4), i, i + 1000)
        self.assertEqual(ledger_checker.integrity_check(self.path), "ok")
        size = os.path.getsize(self.path)
        with open(self.path, "r+b") as f:  # scribble over every page but the first
            f.seek(4096)
            f.write(b"\x5a" * (size - 4096))
        self.assertNotEqual(ledger_checker.integrity_check(self.path), "ok")

    def test_catches_tampering_in_a_real_bk_ledger(self):
        root = tempfile.mkdtemp(prefix="bk-chk-")
        self.addCleanup(shutil.rmtree, root, ignore_errors=True)
        env = make_env(root)
        rc, out, err = run_bk(env, ["x", "1", "1h", "--gpu", "2", "--json"])
        self.assertEqual(rc, 0, out + err)
        res = json.loads(out)["reservation"]
        path = os.path.join(root, "data", "ledger.db")
        self.assertEqual(ledger_checker.check_ledger(path, now=NOW, capacity=CAPACITY, gpu_count=GPU_COUNT), [])
        # Write a second reservation behind bk's back on the same GPU and time.
        con = sqlite3.connect(path)
        con.execute("INSERT INTO reservations(id, uid, username, mode, gpus, share_units, cpus, ram_mb, start_at, "
                    "end_at, status, created_at, updated_at, op_id) "
                    "VALUES('intruder', 0, 'x', 'shared', '2', 1, 0, 0, ?, ?, 'active', 0, 0, 'intruder')",
                    (iso_to_unix(res["start_at"]), iso_to_unix(res["end_at"])))
        con.commit()
        con.close()
        problems = ledger_checker.check_ledger(path, now=NOW, capacity=CAPACITY, gpu_count=GPU_COUNT)
        self.assertEqual(len(problems), 1, problems)
        self.assertIn("intruder", problems[0])


# ---- many processes, one ledger --------------------------------------------------

EXACT_TIMES = ["20:00", "20:30", "21:00", "22:00"]


def mixed_request(worker, i):
    """The i-th request of a worker: (args without --json/--op-id, may_queue)."""
    kind = (worker + i) % 6
    t = EXACT_TIMES[(worker * 7 + i) % len(EXACT_TIMES)]
    if kind == 0:
        return ["1", "30m"], True
    if kind == 1:
        return ["x", "1", "1h"], True
    if kind == 2:
        return ["2", "15m", "-s", "2"], True
    if kind == 3:
        return ["1", "20m", "--cpus", "2", "--ram", "4g"], True
    if kind == 4:  # an exact slot on one GPU: these collide with each other
        return ["1", "30m", "--gpu", str(i % GPU_COUNT), "-t", t], False
    return ["x", "1", "1h", "-t", t], False


class ConcurrentMixedBookingTest(BkTestCase):
    def test_eight_processes_fifty_bookings_each(self):
        env = make_env(self.root, BK_HOST_CPUS=HOST_CPUS, BK_HOST_RAM_MB=HOST_RAM_MB)
        seeded = self.seed(env)

        def worker(w):
            done = []
            for i in range(PER_WORKER):
                args, may_queue = mixed_request(w, i)
                op = "w%d-%02d" % (w, i)
                full = args + ["--json", "--op-id", op]
                rc, out, err = run_bk(env, full)
                done.append((Outcome(op, full, rc, out, err), may_queue))
            return done

        started = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
            results = [x for chunk in pool.map(worker, range(WORKERS)) for x in chunk]
        elapsed = time.monotonic() - started
        self.assertEqual(len(results), WORKERS * PER_WORKER)

        for o, _ in results:
            self.assertCleanOutcome(o)
        successes = [o for o, _ in results if o.rc == 0]
        for o in successes:
            self.assertTrue(o.succeeded, "rc 0 without a created/queued booking_result: " + o.describe())
        # The queue (168 h ahead) has room for every request that may queue; only exact slots can be full.
        for o, may_queue in results:
            if may_queue:
                self.assertEqual(o.rc, 0, "a queueable request was refused: " + o.describe())
        conflicts = [o for o, _ in results if o.rc == 2]
        self.assertTrue(conflicts, "the contended exact slots produced no conflict at all")

        self.assertLedgerSound(host=True)
        self.assertMatchesLedger([seeded] + successes)
        if os.environ.get("BK_E2E_VERBOSE"):
            print("\n%d bookings (%d ok, %d conflicts) in %.1fs" % (len(results), len(successes), len(conflicts),
                                                                  elapsed))


class SameOpIdRaceTest(BkTestCase):
    """Eight identical requests with one --op-id, released together: one booking."""

    ROUNDS = [
        ("same-a", ["1", "30m"]),
        ("same-b", ["x", "1", "1h"]),
        ("same-c", ["2", "15m", "-s", "2"]),
        ("same-d", ["1", "30m", "--gpu", "1", "-t", "20:00"]),
    ]

    def test_same_op_id_books_once(self):
        env = make_env(self.root)
        firsts = [self.seed(env)]
        for op, args in self.ROUNDS:
            full = args + ["--json", "--op-id", op]
            outs = [Outcome(op, full, *r) for r in run_gated(env, [full] * 8)]
            for o in outs:
                self.assertEqual(o.rc, 0, o.describe())
                self.assertCleanOutcome(o)
            ids = {o.doc["reservation"]["id"] for o in outs}
            self.assertEqual(len(ids), 1, "one op id, several reservations: %s" % sorted(ids))
            statuses = sorted(o.doc["status"] for o in outs)
            fresh = [o for o in outs if o.succeeded]
            self.assertEqual(len(fresh), 1, "want one created/queued and seven replays, got %s" % statuses)
            self.assertEqual(statuses.count("exists"), 7, statuses)
            firsts.append(fresh[0])

        self.assertMatchesLedger(firsts)
        self.assertLedgerSound(host=False)


class ExactSlotRaceTest(BkTestCase):
    """Eight exact bookings of one GPU-0 slot with capacity 2, released together: two win."""

    def test_exactly_capacity_bookings_win(self):
        env = make_env(self.root)
        winners = [self.seed(env)]
        for slot in ("20:00", "20:30", "21:00", "21:45", "22:30", "23:30"):
            cmds, ops = [], []
            for i in range(8):
                op = "u%d-%s" % (i, slot.replace(":", ""))
                ops.append(op)
                cmds.append(["1", "30m", "--gpu", "0", "-t", slot, "--json", "--op-id", op])
            outs = [Outcome(op, c, *r) for op, c, r in zip(ops, cmds, run_gated(env, cmds))]
            for o in outs:
                self.assertCleanOutcome(o)
            ok = [o for o in outs if o.rc == 0]
            self.assertEqual(len(ok), CAPACITY, "slot %s: %s" % (slot, [o.describe() for o in ok]))
            for o in ok:
                self.assertTrue(o.succeeded, o.describe())
                self.assertEqual(o.doc["reservation"]["gpus"], [0], o.describe())
                self.assertEqual(o.doc["reservation"]["start_at"], "2026-11-29T%s:00Z" % slot, o.describe())
            winners.extend(ok)

        self.assertMatchesLedger(winners)
        self.assertLedgerSound(host=False)


class FreshLedgerRaceTest(BkTestCase):
    """The first writes to a data directory that does not exist yet, racing each other.

    Every one must book (the busy timeout covers the wait); none may fail because
    another process was creating the ledger or its schema at the same moment.
    """

    ROUNDS = 6  # the window is narrow: several fresh data dirs make a miss unlikely

    def test_concurrent_first_bookings_on_a_fresh_ledger(self):
        failures = []
        for n in range(self.ROUNDS):
            root = os.path.join(self.root, "round%d" % n)
            os.mkdir(root, 0o700)
            env = make_env(root)
            self.ledger_path = os.path.join(root, "data", "ledger.db")
            cmds = [["1", "30m", "--json", "--op-id", "first-%d" % i] for i in range(8)]
            outs = [Outcome(c[-1], c, *r) for c, r in zip(cmds, run_gated(env, cmds))]
            bad = [o for o in outs if not o.succeeded]
            failures.extend(o.describe() for o in bad)
            if not bad:
                for o in outs:
                    self.assertCleanOutcome(o)
                self.assertMatchesLedger(outs)
                self.assertLedgerSound(host=False)
        if failures:
            self.fail("first bookings on a fresh ledger failed (%d of %d):\n%s" % (
                len(failures), 8 * self.ROUNDS, "\n".join(failures[:3])))


class FailingFirstWriteRaceTest(BkTestCase):
    """A write that fails, racing the first booking of a data directory that does not exist yet.

    A failing write must never remove a ledger: another process may have
    committed to it meanwhile. Every booking that printed success must be in
    the ledger afterwards, round after round.
    """

    ROUNDS = 200

    def test_failing_cancel_racing_a_first_booking_loses_nothing(self):
        lost = []
        for n in range(self.ROUNDS):
            root = os.path.join(self.root, "r%d" % n)
            os.mkdir(root, 0o700)
            env = make_env(root)
            # A prefix no UUID has: the cancel fails whichever of the two runs first.
            cmds = [["d", "ffffffff-x", "--json"], ["1", "30m", "--json", "--op-id", "book-%d" % n]]
            (drc, dout, _), (rc, out, err) = run_gated(env, cmds)
            self.assertEqual(drc, 2, dout)
            booked = Outcome("book-%d" % n, cmds[1], rc, out, err)
            self.assertTrue(booked.succeeded, booked.describe())
            self.ledger_path = os.path.join(root, "data", "ledger.db")
            if not os.path.exists(self.ledger_path):
                lost.append("round %d: the ledger is gone" % n)
                continue
            rows = Ledger(self.ledger_path).query("SELECT id FROM reservations")
            if rows != [(booked.doc["reservation"]["id"],)]:
                lost.append("round %d: ledger holds %r" % (n, rows))
            shutil.rmtree(root)
        self.assertEqual(lost, [], "%d of %d confirmed bookings lost" % (len(lost), self.ROUNDS))

    def test_three_exact_start_bookings_keep_the_winner(self):
        lost = []
        for n in range(self.ROUNDS // 2):
            root = os.path.join(self.root, "x%d" % n)
            os.mkdir(root, 0o700)
            env = make_env(root)
            cmds = [["x", "1", "30m", "--gpu", "0", "-t", "20:00", "--json", "--op-id", "x-%d-%d" % (n, i)]
                    for i in range(3)]
            outs = [Outcome(c[-1], c, *r) for c, r in zip(cmds, run_gated(env, cmds))]
            for o in outs:
                self.assertCleanOutcome(o)
            winners = [o for o in outs if o.succeeded]
            self.assertEqual(len(winners), 1, [o.describe() for o in outs])
            self.ledger_path = os.path.join(root, "data", "ledger.db")
            if not os.path.exists(self.ledger_path):
                lost.append("round %d: the ledger is gone" % n)
                continue
            rows = Ledger(self.ledger_path).query("SELECT id FROM reservations")
            if rows != [(winners[0].doc["reservation"]["id"],)]:
                lost.append("round %d: ledger holds %r" % (n, rows))
            shutil.rmtree(root)
        self.assertEqual(lost, [], "%d of %d winning bookings lost" % (len(lost), self.ROUNDS // 2))


if __name__ == "__main__":
    unittest.main()
