"""`bk admin data import` of a large ledger.json into a running server.

The client passes the open file to the daemon over the socket (SCM_RIGHTS);
the daemon validates and writes it into a staging ledger on a worker thread
while it keeps answering everyone, refuses writes meanwhile, and swaps the
staging ledger in at the end. Needs root (real accounts, as the other server
tests); skipped otherwise. The file is BK_E2E_IMPORT_MB MiB (50 by default;
smaller under a sanitizer, whose build runs everything several times slower).
"""

import array
import hashlib
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import time
import unittest

from server_fixture import (BK_BIN, NOW, OWNER, USER_A, Account, Rpc, Server, bk_ok, describe, is_root,
                            make_base_dir, poll_until, remove_tree)

GPU_COUNT = 4
INIT_ARGS = ("--gpu-count", str(GPU_COUNT), "--cpus", "16", "--ram", "64g")
SUMMARY = re.compile(r"^imported: (\d+) reservations \((\d+) active, (\d+) cancelled, (\d+) expired\), (\d+) edits, "
                     r"(\d+) notifications, (\d+) operation IDs$")
DEFAULT_MB = 8 if os.environ.get("BK_E2E_SANITIZER") else 50
TARGET_MB = float(os.environ.get("BK_E2E_IMPORT_MB", DEFAULT_MB))
BUSY = "an import is in progress; try again when it finishes"


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def state(gpus, start, end):
    return {"gpus": gpus, "mode": "shared", "share_units": 1, "expected_memory_mb": 4096,
            "start_at": iso(start), "end_at": iso(end)}


def record(i):
    """Reservation i of the original's format: mostly history (expired, edited, cancelled with
    notifications); every 500th an active booking in the future that fits 4 GPUs with room to spare."""
    uid = 2000 + i % 40
    gpus = [i % GPU_COUNT]
    rid = "%08x-0000-4000-8000-%012x" % (i, i)
    if i % 500 == 0:
        k = i // 500
        gpus = [k % GPU_COUNT]
        start = NOW + 3600 + (k // GPU_COUNT) * 3600
        status, end = "active", start + 1800
    else:
        start = NOW - 400 * 86400 + i * 600
        end = start + 3600
        status = "cancelled" if i % 5 == 0 else "expired"
    created = start - 1200
    r = {"id": rid, "uid": uid, "username": "user%d" % (uid - 2000), "mode": "shared", "gpus": gpus,
         "share_units": 1, "expected_memory_mb": 4096, "start_at": iso(start), "end_at": iso(end),
         "status": status, "created_at": iso(created), "updated_at": iso(created + 300),
         "op_id": "op-create-%d" % i, "operation_signature": "%064x" % i, "job": None}
    r["edit_operations"] = [
        {"actor_uid": uid, "actor_username": r["username"], "at": iso(created + 60 * (e + 1)),
         "op_id": "op-edit-%d-%d" % (i, e), "signature": "%064x" % (i * 8 + e),
         "before": state(gpus, start, end - 600 * (2 - e)), "after": state(gpus, start, end - 600 * (1 - e))}
        for e in range(2)]
    if status == "cancelled":
        r["cancel_operation"] = {"actor_uid": 0, "actor_username": "root", "at": iso(created + 300),
                                 "kind": "administrator", "op_id": "op-cancel-%d" % i, "reason": "maintenance",
                                 "signature": "%064x" % (i * 8 + 7)}
        r["notifications"] = [{"id": "note-%d" % i, "type": "reservation-admin-cancelled", "actor_uid": 0,
                               "actor_username": "root", "created_at": iso(created + 300),
                               "reason": "maintenance",
                               "message": "Reservation %s was cancelled by administrator root: maintenance"
                                          % rid[:8]}]
    return r


def big_ledger(megabytes):
    """A ledger.json of about `megabytes` MiB and its records."""
    per_record = len(json.dumps(record(1))) + 2
    count = int(megabytes * (1 << 20) / per_record) + 1
    records = [record(i) for i in range(count)]
    doc = {"version": 1, "announcements": [], "last_transaction_id": "00000000-0000-4000-8000-000000000000",
           "policy": {"version": 1, "gpu_count": GPU_COUNT, "granularity_seconds": 300,
                      "max_shared_reservations_per_gpu": 2, "require_shared_memory": False,
                      "shared_memory_reserve_mb": 512, "dir_mode": "0700", "file_mode": "0600"},
           "reservations": records}
    return doc


def write(path, doc):
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc))  # one C-encoded string: json.dump to a file is several times slower
    os.chmod(path, 0o644)
    return path


def expected(records):
    return [len(records),
            sum(1 for r in records if r["status"] == "active"),
            sum(1 for r in records if r["status"] == "cancelled"),
            sum(1 for r in records if r["status"] == "expired"),
            sum(len(r.get("edit_operations") or []) for r in records),
            sum(len(r.get("notifications") or []) for r in records),
            sum(1 + len(r.get("edit_operations") or []) + (1 if r.get("cancel_operation") else 0)
                for r in records)]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


@unittest.skipUnless(is_root(), "creates Unix accounts with useradd: run as root (CI does)")
class ServerImportTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        if not bk_ok():
            raise unittest.SkipTest("bk binary not found at %s" % BK_BIN)
        cls.files = make_base_dir("bk-import-")
        doc = big_ledger(TARGET_MB)
        cls.records = doc["reservations"]
        cls.good = write(os.path.join(cls.files, "ledger.json"), doc)
        cls.bad_index = len(cls.records) * 9 // 10
        good_gpus = cls.records[cls.bad_index]["gpus"]
        cls.records[cls.bad_index]["gpus"] = ["x"]
        cls.bad = write(os.path.join(cls.files, "bad.json"), doc)
        cls.records[cls.bad_index]["gpus"] = good_gpus

    @classmethod
    def tearDownClass(cls):
        remove_tree(cls.files)

    def setUp(self):
        self.base = make_base_dir()
        self.addCleanup(remove_tree, self.base)
        self.owner = Account.make(OWNER, self.base)
        self.a = Account.make(USER_A, self.base)
        self.srv = Server(self.base, self.owner)
        self.addCleanup(self.srv.cleanup)
        self.srv.init(*INIT_ARGS)
        self.srv.start()
        for who in (self.owner, self.a):
            p = who.bk("server", "connect", self.srv.config)
            self.assertEqual(p.returncode, 0, describe(["server", "connect"], p))
        self.staging = self.srv.ledger + ".import"

    def import_in_background(self, path, who=None):
        who = who or self.owner
        return subprocess.Popen([BK_BIN, "admin", "data", "import", path], env=who.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=who.home, **who.popen_kwargs())

    def rows(self):
        db = sqlite3.connect("file:%s?mode=ro" % self.srv.ledger, uri=True)
        try:
            return [db.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
                    for t in ("reservations", "events", "operations", "notifications")]
        finally:
            db.close()

    def timed_call(self, method, params=None):
        c = Rpc(self.srv.socket, timeout=10.0)
        try:
            t0 = time.monotonic()
            reply = c.call(method, params or {}, timeout=10.0)
            return reply, time.monotonic() - t0
        finally:
            c.close()

    def test_a_large_ledger_imports_while_others_are_answered(self):
        fds_before = open_fds(self.srv.proc.pid)
        started = time.monotonic()
        proc = self.import_in_background(self.good)
        latencies, refusals = [], []
        while proc.poll() is None:
            for method in ("server.ping", "reservations.list"):
                reply, took = self.timed_call(method)
                self.assertIn("result", reply, reply)
                latencies.append(took)
            if os.path.exists(self.staging) and len(refusals) < 2:
                # The job is running: a booking and a second import are refused at once.
                for method, params in (("booking.create", {"count": 1, "duration_seconds": 3600}),
                                       ("admin.import", {"ledger_json": "{}"})):
                    reply, took = self.timed_call(method, params)
                    if proc.poll() is None and "error" in reply:
                        refusals.append((method, reply["error"], took))
            time.sleep(0.01)  # pacing only: leaves the daemon's worker its share of a loaded machine
        out, err = proc.communicate()
        took = time.monotonic() - started
        self.assertEqual(proc.returncode, 0, err)
        m = SUMMARY.match(out.rstrip("\n"))
        self.assertIsNotNone(m, out)
        self.assertEqual([int(x) for x in m.groups()], expected(self.records))
        print("\n%.0f MiB import of %d records: %.2f s; %d answers during it, slowest %.3f s"
              % (os.path.getsize(self.good) / (1 << 20), len(self.records), took, len(latencies),
                 max(latencies)))
        self.assertGreaterEqual(len(latencies), 4, "too few answers during the import")
        self.assertLess(max(latencies), 1.0)
        self.assertGreater(took, max(latencies))
        self.assertEqual(sorted({m for m, _, _ in refusals}), ["admin.import", "booking.create"], refusals)
        for method, error, answered in refusals:
            self.assertEqual(error["message"], BUSY, method)
            self.assertEqual(error["data"]["kind"], "busy", method)
            self.assertLess(answered, 1.0)
        self.assertFalse(os.path.exists(self.staging))
        exp = expected(self.records)
        self.assertEqual(self.rows()[0], exp[0])
        self.assertEqual(self.rows()[2], exp[6])
        verify = self.owner.bk("admin", "data", "verify", "--json")
        self.assertEqual(verify.returncode, 0, describe(["admin", "data", "verify"], verify))
        poll_until(lambda: open_fds(self.srv.proc.pid) <= fds_before, 5.0, "the daemon to hold no passed descriptor")
        # Writes go on afterwards, against the imported calendar.
        p = self.a.bk("1", "1h")
        self.assertEqual(p.returncode, 0, describe(["1", "1h"], p))

    def test_a_booking_during_the_import_is_refused_busy_by_the_cli(self):
        proc = self.import_in_background(self.good)
        p = None
        while proc.poll() is None and p is None:
            if os.path.exists(self.staging):
                p = self.a.bk("1", "1h")
        proc.communicate()
        self.assertEqual(proc.returncode, 0)
        if p is None:
            self.skipTest("the import finished before a booking could be tried")
        self.assertEqual(p.returncode, 75, describe(["1", "1h"], p))
        self.assertIn(BUSY, p.stderr)

    def test_a_bad_record_deep_in_the_file_leaves_the_ledger_untouched(self):
        before = (sha256(self.srv.ledger), self.rows())
        p = self.owner.bk("admin", "data", "import", self.bad, timeout=300)
        self.assertEqual(p.returncode, 2, describe(["admin", "data", "import"], p))
        self.assertIn("reservations[%d].gpus[0]" % self.bad_index, p.stderr)
        self.assertIn("nothing was imported", p.stderr)
        self.assertEqual((sha256(self.srv.ledger), self.rows()), before)
        self.assertFalse(os.path.exists(self.staging))

    def test_another_user_is_refused(self):
        before = (sha256(self.srv.ledger), self.rows())
        p = self.a.bk("admin", "data", "import", self.good)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("only the ledger owner or root can import data", p.stderr)
        self.assertEqual((sha256(self.srv.ledger), self.rows()), before)
        self.assertFalse(os.path.exists(self.staging))

    def test_a_stopped_daemon_abandons_the_import(self):
        before = (sha256(self.srv.ledger), self.rows())
        proc = self.import_in_background(self.good)
        while proc.poll() is None and not os.path.exists(self.staging):
            pass  # bounded by the import itself: it ends or stages
        if proc.poll() is not None:
            self.skipTest("the import finished before the daemon could be stopped")
        self.srv.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.srv.proc.wait(timeout=60), 0, self.srv.log())
        proc.communicate(timeout=60)
        self.assertNotEqual(proc.returncode, 0)
        self.assertFalse(os.path.exists(self.staging))
        self.assertEqual((sha256(self.srv.ledger), self.rows()), before)

    def test_descriptors_on_other_requests_are_closed(self):
        pid = self.srv.proc.pid
        before = open_fds(pid)
        extra = os.open(self.good, os.O_RDONLY)
        self.addCleanup(os.close, extra)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(self.srv.socket)
        self.addCleanup(s.close)
        f = s.makefile("rb")

        def send(obj, fds):
            line = (json.dumps(obj) + "\n").encode()
            s.sendmsg([line], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else [])
            return json.loads(f.readline())

        ping = send({"jsonrpc": "2.0", "id": 1, "method": "server.ping"}, [extra])
        self.assertIn("result", ping)
        two = send({"jsonrpc": "2.0", "id": 2, "method": "admin.import", "params": {"descriptor": True}},
                   [extra, extra])
        self.assertEqual(two["error"]["message"], "no descriptor came with this import request")
        none = send({"jsonrpc": "2.0", "id": 3, "method": "admin.import", "params": {"descriptor": True}}, [])
        self.assertEqual(none["error"]["message"], "no descriptor came with this import request")
        wrong = os.open(self.files, os.O_RDONLY)
        self.addCleanup(os.close, wrong)
        directory = send({"jsonrpc": "2.0", "id": 4, "method": "admin.import", "params": {"descriptor": True}},
                         [wrong])
        self.assertIn("not a regular file", directory["error"]["message"])
        # Nothing but the connection itself stays open in the daemon (earlier connections of the
        # fixture may still be closing, so the count may only fall).
        poll_until(lambda: open_fds(pid) <= before + 1, 5.0, "the daemon to hold no passed descriptor")
        f.close()  # the file object keeps the socket open too
        s.close()
        self.srv.ping()
        poll_until(lambda: open_fds(pid) <= before, 5.0, "the daemon to close the connection")

    def test_the_inline_form_still_imports(self):
        small = {"version": 1, "reservations": [record(1), record(2)]}
        reply, _ = self.timed_call("admin.import", {"ledger_json": json.dumps(small)})
        self.assertEqual(reply["result"]["reservations"], 2, reply)
        listed, _ = self.timed_call("reservations.list", {"everyone": True, "history": True})
        self.assertEqual(listed["result"]["total"], 2, listed)


if __name__ == "__main__":
    unittest.main()
