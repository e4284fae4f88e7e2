"""Shared server with real Unix accounts: one owner serves, two users connect and book.

Needs root (it creates the accounts bksrvown, bksrva and bksrvb with
`useradd -m` when they are missing, and runs every `bk` as them); skipped
otherwise. Run:

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_server_users

The daemon's clock is fixed with "test_now" in its config.json (test builds
only) and every client sets BK_TEST_NOW to the same instant.
"""

import json
import os
import re
import socket
import stat
import threading
import unittest

from ledger_checker import Reservation, check_ledger, find_violations, integrity_check
from server_fixture import (BK_BIN, NOW, NOW_ISO, OWNER, USER_A, USER_B, Account, Rpc, Server, account_command,
                            bk_ok, describe, ensure_group, is_root, make_base_dir, remove_tree, rpc_as,
                            write_upstream_ledger)

GPU_COUNT = 4
HOST_CPUS = 16
HOST_RAM_MB = 65536
CAPACITY = 2
INIT_ARGS = ("--gpu-count", str(GPU_COUNT), "--cpus", str(HOST_CPUS), "--ram", "64g")


def needs_root(cls):
    return unittest.skipUnless(is_root(), "creates Unix accounts with useradd: run as root (CI does)")(cls)


class ServerCase(unittest.TestCase):
    maxDiff = None

    def own_server(self, test_now=NOW_ISO):
        """A server of the test's own (not yet initialised) with its owner and USER_A, removed afterwards."""
        if not bk_ok():
            self.skipTest("bk binary not found at %s" % BK_BIN)
        self.base = make_base_dir()
        self.addCleanup(remove_tree, self.base)
        self.owner = Account.make(OWNER, self.base)
        self.a = Account.make(USER_A, self.base)
        self.srv = Server(self.base, self.owner, test_now=test_now)
        self.addCleanup(self.srv.cleanup)

    # -- running bk as someone

    def ok(self, who, *args):
        p = who.bk(*args)
        self.assertEqual(p.returncode, 0, "as %s:%s" % (who.name, describe(args, p)))
        return p.stdout

    def json_ok(self, who, *args):
        p = who.bk(*args)
        self.assertEqual(p.returncode, 0, "as %s:%s" % (who.name, describe(args, p)))
        try:
            return json.loads(p.stdout)
        except ValueError as e:
            self.fail("stdout is not JSON (%s) as %s:%s" % (e, who.name, describe(args, p)))

    def fails(self, who, *args, rc=2):
        """The text error contract: exit rc, nothing on stdout, one stderr line "bk: ...". Returns it."""
        p = who.bk(*args)
        d = "as %s:%s" % (who.name, describe(args, p))
        self.assertEqual(p.returncode, rc, d)
        self.assertEqual(p.stdout, "", d)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, d)
        self.assertTrue(lines[0].startswith("bk: "), d)
        return lines[0]

    def book(self, who, *args):
        doc = self.json_ok(who, *args, "--json")
        self.assertEqual(doc["kind"], "booking_result", doc)
        self.assertIn(doc["status"], ("created", "queued"), doc)
        return doc["reservation"]

    def mine(self, who, history=False):
        return self.json_ok(who, "l", "--json", *(["--history"] if history else []))["reservations"]


@needs_root
class SharedServerUsers(ServerCase):
    """One server for the class: the owner serves, USER_A and USER_B are connected."""

    @classmethod
    def setUpClass(cls):
        if not bk_ok():
            raise unittest.SkipTest("bk binary not found at %s; build it or set BK_BIN" % BK_BIN)
        cls.base = make_base_dir()
        try:
            cls.owner = Account.make(OWNER, cls.base)
            cls.a = Account.make(USER_A, cls.base)
            cls.b = Account.make(USER_B, cls.base)
            cls.srv = Server(cls.base, cls.owner)
            cls.init_out = cls.srv.init(*INIT_ARGS)
            cls.srv.start()
            for who in (cls.owner, cls.a, cls.b):
                p = who.bk("server", "connect", cls.srv.config)
                if p.returncode != 0:
                    raise AssertionError("connect as %s failed:%s" % (who.name, describe(["server", "connect"], p)))
        except BaseException:
            cls._teardown()
            raise

    @classmethod
    def _teardown(cls):
        srv = getattr(cls, "srv", None)
        if srv is not None:
            srv.cleanup()
        remove_tree(cls.base)

    @classmethod
    def tearDownClass(cls):
        try:
            # Graceful stop, then the ledger on disk must be sound and nothing over-admitted.
            rc = cls.srv.stop()
            if rc != 0:
                raise AssertionError("bk server serve exited %s after SIGTERM:\n%s" % (rc, cls.srv.log()))
            problems = check_ledger(cls.srv.ledger, now=NOW, capacity=CAPACITY, gpu_count=GPU_COUNT,
                                    host_cpus=HOST_CPUS, host_ram_mb=HOST_RAM_MB)
            integrity = integrity_check(cls.srv.ledger)
            if problems or integrity != "ok":
                raise AssertionError("ledger after the users tests: %s; integrity %s" % (problems, integrity))
        finally:
            cls._teardown()

    def test_info_names_the_servers_administrator_from_gecos(self):
        account_command(["usermod", "-c", "Ada Admin,Room 42,555-1234,,on   call ", OWNER])
        out = self.ok(self.a, "info")
        # The administrator first, then the deployment and its policy after a blank line.
        self.assertEqual(out.split("\n\n")[0].splitlines(), [
            "GPUBK server", "Administrator: Ada Admin (%s)" % OWNER, "Linux UID: %d" % self.owner.uid,
            "Room: Room 42", "Contact: work 555-1234; other on call",
            "The administrator can update these fields with `chfn`."])
        self.assertIn("Deployment: server (", out)
        self.assertIn("(the daemon answers)", out)
        p = self.a.bk("info", "--compact")
        self.assertEqual(p.returncode, 0, describe(["info", "--compact"], p))
        doc = json.loads(p.stdout)
        self.assertNotIn(" ", p.stdout.replace("Ada Admin", "").replace("Room 42", "").replace("on call", ""))
        self.assertEqual(doc, {"schema_version": "gpubk.administrator.v1", "kind": "administrator",
                               "source": "linux-account-gecos", "account_resolved": True,
                               "account": {"uid": self.owner.uid, "username": OWNER}, "full_name": "Ada Admin",
                               "room": "Room 42",
                               "contact": {"work_phone": "555-1234", "home_phone": None, "other": "on call"}})
        self.assertEqual(self.json_ok(self.a, "info", "--json"), doc)
        self.assertEqual(self.json_ok(self.a, "agent", "context")["administrator"], doc)

    # -- helpers reading the whole ledger through the daemon as root (an administrator)

    def everyone(self, history=False):
        c = Rpc(self.srv.socket)
        try:
            reply = c.call("reservations.list", {"everyone": True, "history": history, "limit": 100000})
        finally:
            c.close()
        self.assertIn("result", reply, reply)
        return reply["result"]["reservations"]

    def assertDaemonAlive(self):
        self.assertTrue(self.srv.alive(), "the daemon died:\n" + self.srv.log())
        self.srv.ping()

    # ------------------------------------------------------------------ tests

    def test_init_layout_and_next_commands(self):
        self.assertIn("bk server connect %s" % self.srv.config, self.init_out)
        self.assertIn("bk server serve --config %s" % self.srv.config, self.init_out)
        modes = {p: stat.S_IMODE(os.lstat(os.path.join(self.srv.dir, p)).st_mode)
                 for p in (".", "run", "data", "config.json", "data/ledger.db")}
        self.assertEqual(modes, {".": 0o711, "run": 0o711, "data": 0o700, "config.json": 0o644,
                                 "data/ledger.db": 0o600})
        for p in (".", "run", "data", "config.json", "data/ledger.db", "run/broker.sock"):
            self.assertEqual(os.lstat(os.path.join(self.srv.dir, p)).st_uid, self.owner.uid, p)
        sock = os.lstat(self.srv.socket)
        self.assertTrue(stat.S_ISSOCK(sock.st_mode))
        self.assertEqual(stat.S_IMODE(sock.st_mode), 0o666)
        cfg = self.srv.read_config()
        self.assertEqual(cfg["schema_version"], "gpubk.server.v1")
        self.assertEqual((cfg["owner_uid"], cfg["owner"], cfg["socket"]), (self.owner.uid, OWNER, self.srv.socket))
        self.assertEqual((cfg["gpu_count"], cfg["host_cpus"], cfg["host_ram_mb"]), (GPU_COUNT, HOST_CPUS, HOST_RAM_MB))
        # A user cannot read the ledger directly: only through the daemon.
        p = self.a.run(["cat", self.srv.ledger])
        self.assertNotEqual(p.returncode, 0)

    def test_ready_notification_and_log(self):
        self.assertTrue(any("READY=1" in m for m in self.srv.notified), self.srv.notified)
        self.assertIn("listening on %s" % self.srv.socket, self.srv.log())
        with open(self.srv.lock, encoding="utf-8") as f:
            self.assertEqual(f.read().strip(), str(self.srv.proc.pid))

    def test_status_json_per_user(self):
        for who, admin in ((self.a, False), (self.b, False), (self.owner, True)):
            doc = self.json_ok(who, "server", "status", "--json")
            self.assertEqual(doc["schema_version"], "gpubk.server-status.v1")
            self.assertEqual(doc["deployment"], "server")
            self.assertTrue(doc["reachable"], doc)
            self.assertEqual(doc["socket"], self.srv.socket)
            self.assertEqual(doc["config"], self.srv.config)
            self.assertEqual((doc["owner"], doc["owner_uid"]), (OWNER, self.owner.uid))
            self.assertEqual(doc["actor"], {"uid": who.uid, "username": who.name, "admin": admin})
        text = self.ok(self.a, "server", "status")
        self.assertIn("daemon: reachable; you are %s" % USER_A, text)
        self.assertNotIn("administrator", text)

    def test_config_names_socket_transport(self):
        text = self.ok(self.a, "config")
        self.assertIn("deployment: server", text)
        self.assertIn("transport: socket %s" % self.srv.socket, text)
        doc = self.json_ok(self.a, "config", "--json")
        self.assertEqual(doc["transport"], "socket")
        self.assertEqual(doc["deployment"], "server")

    def test_owner_backs_up_and_verifies_the_live_ledger_through_the_daemon(self):
        out = self.ok(self.owner, "admin", "data", "verify")
        self.assertIn("integrity: ok", out)
        copy = os.path.join(self.owner.home, "ledger-backup-%d.db" % os.getpid())
        self.ok(self.owner, "admin", "data", "backup", copy)
        self.assertIn("integrity: ok", self.ok(self.owner, "admin", "data", "verify", copy))
        self.assertIn("only the ledger owner or root", self.fails(self.a, "admin", "data", "verify"))

    def test_usage_history_reaches_users_through_the_daemon(self):
        # usage.db belongs to the owner; other users get it from the daemon.
        doc = self.json_ok(self.a, "u", "me", "--json")
        self.assertEqual(doc["schema_version"], "gpubk.usage.v1")
        self.assertIn("collector", doc)
        users = self.json_ok(self.b, "u", "users", "--since", "1h", "--json")
        self.assertEqual(users["schema_version"], "gpubk.usage.v1")
        text = self.ok(self.a, "u", "events", "--since", "1h")
        self.assertIn("collector:", text)

    def test_usage_trend_and_storage_through_the_daemon(self):
        self.assertIn("ACTIVITY TREND", self.ok(self.a, "u"))
        self.assertNotIn("ACTIVITY TREND", self.ok(self.a, "u", "--no-chart"))
        doc = self.json_ok(self.b, "u", "storage", "--json")
        self.assertEqual(doc["kind"], "usage-storage")
        self.assertGreater(doc["storage"]["bytes"], 0)

    def test_each_sees_the_others_bookings_as_not_theirs(self):
        ra = self.book(self.a, "1", "40m")
        rb = self.book(self.b, "1", "40m")
        # Identity comes from the kernel: each booking carries its maker's UID and name.
        self.assertEqual((ra["uid"], ra["username"], ra["mine"]), (self.a.uid, USER_A, True))
        self.assertEqual((rb["uid"], rb["username"], rb["mine"]), (self.b.uid, USER_B, True))
        for who, own, other in ((self.a, ra, rb), (self.b, rb, ra)):
            listed = self.mine(who)
            ids = {r["id"] for r in listed}
            self.assertIn(own["id"], ids)
            self.assertNotIn(other["id"], ids, "%s's bk l lists %s's booking" % (who.name, other["username"]))
            self.assertTrue(all(r["mine"] and r["uid"] == who.uid for r in listed), listed)
        # bk st: the counts agree with the ledger as the daemon sees it; the other's is under "Other".
        rows = self.everyone()
        for who, other in ((self.a, rb), (self.b, ra)):
            active = [r for r in rows if r["status"] == "active" and r["start"] <= NOW < r["end"]]
            yours = [r for r in active if r["uid"] == who.uid]
            text = self.ok(who, "st", "-v")
            m = re.search(r"Reservations: (\d+) active, (\d+) yours", text)
            self.assertIsNotNone(m, text)
            self.assertEqual((int(m.group(1)), int(m.group(2))), (len(active), len(yours)), text)
            self.assertGreater(len(active), len(yours), text)
            other_part = text.split("Other reservations", 1)
            self.assertEqual(len(other_part), 2, text)
            theirs = other["id"][:8]
            self.assertIn(theirs, other_part[1])
            self.assertIn(other["username"], other_part[1])
            self.assertNotIn(theirs, other_part[0], "the other's booking is listed as yours:\n" + text)

    def test_users_cannot_cancel_edit_or_renew_each_others(self):
        ra = self.book(self.a, "1", "45m")
        before = {r["id"]: r for r in self.mine(self.a)}[ra["id"]]
        ref = ra["id"][:8]
        for args in (("d", ref), ("d", ref, "--reason", "mine now"), ("e", ref, "--duration", "2h"),
                     ("renew", ref, "30m"), ("d", ra["id"])):
            line = self.fails(self.b, *args)
            self.assertIn("belongs to %s" % USER_A, line, args)
        p = self.b.bk("renew", ref, "30m", "--json")
        self.assertEqual(p.returncode, 2, describe(("renew", ref, "30m", "--json"), p))
        err = json.loads(p.stdout)
        self.assertEqual(err["kind"], "error")
        self.assertIn("belongs to %s" % USER_A, err["error"]["message"])
        # Untouched: same end, still active, no edits.
        after = {r["id"]: r for r in self.mine(self.a)}[ra["id"]]
        self.assertEqual(after, before)
        # The same commands work for the booking's own user (so the refusals above were about ownership).
        self.ok(self.a, "renew", ref, "30m")
        self.ok(self.a, "d", ref)
        self.assertNotIn(ra["id"], {r["id"] for r in self.mine(self.a)})

    def test_owner_reasoned_cancel_reaches_the_victim(self):
        victim = self.book(self.a, "1", "50m")
        ref = victim["id"][:8]
        line = self.fails(self.owner, "d", ref)
        self.assertIn("--reason", line)
        self.assertIn(ref, {r["id"][:8] for r in self.mine(self.a)})
        out = self.ok(self.owner, "d", ref, "--reason", "maintenance")
        self.assertIn("cancelled: %s" % ref, out)
        self.assertIn("owner=%s" % USER_A, out)
        self.assertNotIn(victim["id"], {r["id"] for r in self.mine(self.a)})
        # The victim's notifications, text and JSON.
        notes = self.json_ok(self.a, "n", "--json")["notifications"]
        mine = [n for n in notes if n["reservation_id"] == victim["id"]]
        self.assertEqual(len(mine), 1, notes)
        self.assertEqual((mine[0]["reason"], mine[0]["actor_username"], mine[0]["actor_uid"]),
                         ("maintenance", OWNER, self.owner.uid))
        self.assertEqual(mine[0]["type"], "reservation-admin-cancelled")
        text = self.ok(self.a, "n")
        self.assertIn(ref, text)
        self.assertIn("maintenance", text)
        # ... and the booking's history.
        hist = self.json_ok(self.a, "history", ref, "--json")
        self.assertEqual(hist["cancellation"]["reason"], "maintenance")
        self.assertEqual(hist["cancellation"]["actor_username"], OWNER)
        self.assertIn("admin-cancel", [e["action"] for e in hist["events"]])
        self.assertIn("maintenance", self.ok(self.a, "history", ref))
        # The bystander hears nothing about it.
        other_notes = self.json_ok(self.b, "n", "--json")["notifications"]
        self.assertNotIn(victim["id"], [n["reservation_id"] for n in other_notes])

    def test_forged_identity_fields_are_refused(self):
        rb = self.book(self.b, "1", "55m")
        before = self.everyone(history=True)
        forged = [
            {"jsonrpc": "2.0", "id": 1, "method": "booking.create",
             "params": {"count": 1, "duration_seconds": 1800, "uid": 0}},
            {"jsonrpc": "2.0", "id": 2, "method": "booking.create",
             "params": {"count": 1, "duration_seconds": 1800, "username": OWNER}},
            {"jsonrpc": "2.0", "id": 3, "method": "booking.create",
             "params": {"count": 1, "duration_seconds": 1800, "actor": {"uid": 0, "admin": True}}},
            {"jsonrpc": "2.0", "id": 4, "method": "booking.cancel",
             "params": {"ref": rb["id"], "uid": self.b.uid}},
            {"jsonrpc": "2.0", "id": 5, "method": "booking.cancel",
             "params": {"ref": rb["id"], "reason": "forged", "admin": True}},
            {"jsonrpc": "2.0", "id": 6, "method": "booking.renew",
             "params": {"ref": rb["id"], "extend_seconds": 1800, "uid": self.b.uid}},
        ]
        replies = rpc_as(self.a, self.srv.socket, forged)
        self.assertEqual(len(replies), len(forged), replies)
        for req, reply in zip(forged, replies):
            self.assertIsNotNone(reply, req)
            self.assertEqual(reply["id"], req["id"], reply)
            self.assertNotIn("result", reply, "forged request accepted: %r -> %r" % (req, reply))
            self.assertEqual(reply["error"]["code"], -32602, reply)
            self.assertEqual(reply["error"]["data"]["kind"], "invalid", reply)
            self.assertIn("unknown field", reply["error"]["message"])
        # An identity field outside params is not a JSON-RPC request at all.
        top = rpc_as(self.a, self.srv.socket, [
            {"jsonrpc": "2.0", "id": 7, "method": "booking.create", "uid": 0,
             "params": {"count": 1, "duration_seconds": 1800}}])
        self.assertEqual(top[0]["error"]["code"], -32600, top)
        # Nothing was written; B's booking stands.
        after = self.everyone(history=True)
        self.assertEqual(after, before)
        # The environment is no identity either: USER/LOGNAME/HOME of someone else change nothing.
        spoof = self.a.env(USER=OWNER, LOGNAME=OWNER, HOME=self.owner.home, BK_CONFIG_FILE=self.srv.config)
        p = self.a.bk("1", "25m", "--json", env=spoof)
        self.assertEqual(p.returncode, 0, describe(("1", "25m", "--json"), p))
        spoofed = json.loads(p.stdout)["reservation"]
        self.assertEqual((spoofed["uid"], spoofed["username"]), (self.a.uid, USER_A))
        self.ok(self.a, "d", spoofed["id"])
        # Control: the same request without the forged field books, and as the kernel says.
        ok = rpc_as(self.a, self.srv.socket, [
            {"jsonrpc": "2.0", "id": 8, "method": "booking.create",
             "params": {"count": 1, "duration_seconds": 1800}}])[0]
        self.assertIn("result", ok, ok)
        made = ok["result"]["reservation"]
        self.assertEqual((made["uid"], made["username"]), (self.a.uid, USER_A))
        gone = rpc_as(self.a, self.srv.socket, [
            {"jsonrpc": "2.0", "id": 9, "method": "booking.cancel", "params": {"ref": made["id"]}}])[0]
        self.assertIn("result", gone, gone)

    def test_second_serve_by_owner_exits_75_naming_the_pid(self):
        p = self.owner.run(self.srv.serve_cmd(), timeout=30)
        self.assertEqual(p.returncode, 75, describe(["server", "serve"], p))
        self.assertIn("pid %d" % self.srv.proc.pid, p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertDaemonAlive()

    def test_non_owner_serve_exits_77(self):
        root = Account("root", 0, 0, self.base)
        for who in (self.a, root):
            p = who.run(self.srv.serve_cmd(), timeout=30)
            self.assertEqual(p.returncode, 77, "as %s:%s" % (who.name, describe(["server", "serve"], p)))
            self.assertIn("owner %s" % OWNER, p.stderr)
            self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertDaemonAlive()
        with open(self.srv.lock, encoding="utf-8") as f:
            self.assertEqual(f.read().strip(), str(self.srv.proc.pid))

    def test_host_cpu_budget_spans_both_users(self):
        at = "2026-11-30T10:00:00Z"
        ra = self.book(self.a, "1", "1h", "-t", at, "--cpus", "10")
        line = self.fails(self.b, "1", "1h", "-t", at, "--cpus", "7")
        self.assertRegex(line.lower(), r"cpu")
        rb = self.book(self.b, "1", "1h", "-t", at, "--cpus", "6")
        self.assertEqual((ra["start_at"], rb["start_at"]), (at, at))
        self.fails(self.a, "1", "30m", "-t", at, "--cpus", "1")
        rows = [r for r in self.everyone() if r["status"] == "active"]
        res = [Reservation(r["id"], r["uid"], r["mode"], ",".join(map(str, r["gpus"])), r["share_units"],
                           r["cpus"], r["ram_mb"], r["start"], r["end"], r["status"]) for r in rows]
        self.assertEqual(find_violations(res, now=NOW, capacity=CAPACITY, gpu_count=GPU_COUNT,
                                         host_cpus=HOST_CPUS, host_ram_mb=HOST_RAM_MB), [])
        at_ten = [r for r in rows if r["id"] in (ra["id"], rb["id"])]
        self.assertEqual(sum(r["cpus"] for r in at_ten), 16)
        self.assertEqual({r["uid"] for r in at_ten}, {self.a.uid, self.b.uid})


@needs_root
class ServerLifecycle(ServerCase):
    """A server of its own: graceful stops, the daemon down, restarts, access by group."""

    def setUp(self):
        self.own_server()

    def test_owner_not_connected_is_told_which_ledger_was_searched(self):
        self.srv.init(*INIT_ARGS)
        self.srv.start()
        self.ok(self.a, "server", "connect", self.srv.config)
        ref = self.book(self.a, "1", "1h")["id"][:8]
        # The owner never connected: the refusal says the private ledger was searched and how to
        # reach a server (one runs on this host, so it names a config to connect to).
        line = self.fails(self.owner, "d", ref, "--reason", "maintenance")
        self.assertIn("reservation not found for current user: %s" % ref, line)
        self.assertIn("looked in your private ledger", line)
        self.assertRegex(line, r"a server runs here: `bk server connect /\S+/config\.json`, then retry")
        self.ok(self.owner, "server", "connect", self.srv.config)
        self.assertIn("cancelled: %s" % ref, self.ok(self.owner, "d", ref, "--reason", "maintenance"))

    def test_daemon_down_then_up(self):
        self.srv.init(*INIT_ARGS)
        # Connecting while the daemon is not running works, with a clear warning.
        p = self.a.bk("server", "connect", self.srv.config)
        self.assertEqual(p.returncode, 0, describe(["server", "connect"], p))
        self.assertIn("bk server serve", p.stderr)
        # A booking: one line naming `bk server serve`, exit 2, nothing on stdout.
        line = self.fails(self.a, "1", "1h")
        self.assertIn("bk server serve --config %s" % self.srv.config, line)
        self.assertIn(OWNER, line)
        p = self.a.bk("1", "1h", "--json")
        self.assertEqual(p.returncode, 2)
        self.assertIn("bk server serve", json.loads(p.stdout)["error"]["message"])
        line = self.fails(self.a, "l")
        self.assertIn("bk server serve", line)
        p = self.a.bk("server", "status", "--json")
        self.assertEqual(p.returncode, 2, describe(["server", "status", "--json"], p))
        doc = json.loads(p.stdout)
        self.assertFalse(doc["reachable"])
        self.assertIn("bk server serve", doc["error"])
        # Up: the same booking works; SIGTERM stops it cleanly, the socket goes away.
        self.srv.start()
        self.assertTrue(any(m.startswith("READY=1") for m in self.srv.notified), self.srv.notified)
        r = self.book(self.a, "1", "1h")
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        self.assertFalse(os.path.exists(self.srv.socket), "socket left behind after a graceful stop")
        self.srv.drain_notify(0)
        self.assertTrue(any("STOPPING=1" in m for m in self.srv.notified), self.srv.notified)
        self.assertRegex(self.srv.log(), r"serve: stopped: \d+ requests, 1 writes")
        self.assertIn("bk server serve", self.fails(self.a, "l"))
        # Up again (SIGINT this time): the booking survived.
        self.srv.start()
        self.assertEqual([x["id"] for x in self.mine(self.a)], [r["id"]])
        self.srv.proc.send_signal(2)
        self.assertEqual(self.srv.proc.wait(15), 0, self.srv.log())
        self.assertEqual(integrity_check(self.srv.ledger), "ok")

    def test_a_failed_write_after_an_import_keeps_the_ledger(self):
        # The daemon creates a missing ledger at start; an import fills it; a
        # later write that fails must leave every imported booking in place.
        self.srv.init("--gpu-count", str(GPU_COUNT))
        os.unlink(self.srv.ledger)
        self.srv.start()
        for who in (self.owner, self.a):
            self.ok(who, "server", "connect", self.srv.config)
        records = [{"id": "%08x-0000-4000-8000-%012d" % (0xabc00000 + i, i), "uid": self.a.uid,
                    "username": self.a.name, "mode": "shared", "share_units": 1, "gpus": [i % GPU_COUNT],
                    "start_at": "2026-11-30T%02d:00:00Z" % (i + 1), "end_at": "2026-11-30T%02d:30:00Z" % (i + 1),
                    "status": "active", "created_at": "2026-11-29T18:40:00Z",
                    "updated_at": "2026-11-29T18:40:00Z", "op_id": "op-%d" % i} for i in range(5)]
        path = write_upstream_ledger(self.base, records, gpu_count=GPU_COUNT)
        self.assertIn("imported", self.ok(self.owner, "admin", "data", "import", path))
        self.assertEqual(len(self.mine(self.a)), 5)
        self.fails(self.a, "d", "ffff")
        self.fails(self.owner, "d", "ffff")
        self.fails(self.a, "renew", "ffff", "30m")
        self.assertTrue(os.path.exists(self.srv.ledger), "a failed write removed the ledger")
        self.assertEqual(len(self.mine(self.a)), 5)
        # What the daemon holds is what is on disk: a restart reads the same five.
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        self.srv.start()
        self.assertEqual(sorted(r["id"] for r in self.mine(self.a)), sorted(r["id"] for r in records))
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        self.assertEqual(integrity_check(self.srv.ledger), "ok")

    def test_an_import_with_another_policy_names_the_servers_setting(self):
        self.srv.init("--gpu-count", str(GPU_COUNT))
        self.srv.start()
        self.ok(self.owner, "server", "connect", self.srv.config)
        path = write_upstream_ledger(self.base, [], gpu_count=GPU_COUNT + 2)
        line = self.fails(self.owner, "admin", "data", "import", path)
        # A server is configured in its config file, not by the importer's environment.
        self.assertIn('set "gpu_count": %d in %s, restart the daemon' % (GPU_COUNT + 2, self.srv.config), line)
        self.assertNotIn("BK_GPU_COUNT", line)

    def test_an_impostor_on_the_socket_is_never_believed(self):
        # While the daemon is down, another account (root here) binds the
        # socket's path and answers like a daemon. Clients must check who
        # answers before they send anything.
        self.srv.init(*INIT_ARGS)
        self.srv.start()
        self.ok(self.a, "server", "connect", self.srv.config)
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        received = []
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.srv.socket)
        os.chmod(self.srv.socket, 0o666)
        listener.listen(8)
        self.addCleanup(lambda: os.path.exists(self.srv.socket) and os.unlink(self.srv.socket))
        self.addCleanup(listener.close)

        def impostor():
            while True:
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                with conn:
                    conn.settimeout(5)
                    try:
                        data = conn.recv(65536)
                    except OSError:
                        data = b""
                    received.append(data)
                    if data:
                        conn.sendall(b'{"jsonrpc":"2.0","id":1,"result":{"reservations":[],"total":0}}\n')

        t = threading.Thread(target=impostor, daemon=True)
        t.start()
        for args in (["l"], ["1", "1h"]):
            line = self.fails(self.a, *args)
            self.assertIn("is answered by root (UID 0), not by the server owner %s" % OWNER, line)
        p = self.a.bk("server", "status")
        self.assertEqual(p.returncode, 2, describe(["server", "status"], p))
        self.assertIn("is answered by root (UID 0), not by the server owner %s" % OWNER, p.stdout)
        self.assertTrue(received, "the client never connected")
        self.assertEqual([d for d in received if d], [], "a request reached the impostor")

    def test_a_socket_in_a_shared_sticky_directory_is_refused(self):
        self.srv.init(*INIT_ARGS)
        self.ok(self.a, "server", "connect", self.srv.config)
        shared = os.path.join(self.base, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o1777)
        self.srv.patch_config(socket=os.path.join(shared, "broker.sock"))
        line = self.fails(self.a, "l")
        self.assertIn("the socket directory %s is writable by other users" % shared, line)
        self.assertIn("writable by other users", self.fails(self.a, "server", "status"))

    def test_disconnect_returns_to_the_private_ledger(self):
        self.srv.init(*INIT_ARGS)
        self.srv.start()
        self.ok(self.a, "server", "connect", self.srv.config)
        self.book(self.a, "1", "1h")
        self.assertEqual(len(self.mine(self.a)), 1)
        out = self.ok(self.a, "server", "disconnect")
        self.assertIn("private ledger", out)
        doc = self.json_ok(self.a, "server", "status", "--json")
        self.assertEqual(doc["deployment"], "private")
        self.assertEqual(self.mine(self.a), [])
        self.assertEqual(self.srv.stop(), 0, self.srv.log())

    def test_connect_refuses_an_unsafe_config(self):
        self.srv.init(*INIT_ARGS)
        self.assertRegex(self.fails(self.a, "server", "connect", "srv/config.json"), "absolute")
        os.chmod(self.srv.config, 0o666)
        self.assertIn("writable by other users", self.fails(self.a, "server", "connect", self.srv.config))
        os.chmod(self.srv.config, 0o644)
        os.chown(self.srv.config, self.a.uid, self.a.gid)  # a user-controlled file must not be trusted
        self.assertIn("belongs to %s" % USER_A, self.fails(self.a, "server", "connect", self.srv.config))
        os.chown(self.srv.config, self.owner.uid, self.owner.gid)
        self.assertFalse(os.path.exists(os.path.join(self.a.home, ".config", "gpubk", "server.json")))
        p = self.a.bk("server", "connect", self.srv.config)
        self.assertEqual(p.returncode, 0, describe(["server", "connect"], p))
        conn = os.path.join(self.a.home, ".config", "gpubk", "server.json")
        st = os.stat(conn)
        self.assertEqual((st.st_uid, stat.S_IMODE(st.st_mode)), (self.a.uid, 0o600))
        with open(conn, encoding="utf-8") as f:
            self.assertEqual(json.load(f), {"config": self.srv.config})

    def test_access_by_group(self):
        group = "bksrvgrp"
        # The owner must belong to the group to hand its files to it (no root involved).
        gid = ensure_group(group, members=(OWNER, USER_A))
        member = self.a
        outsider = Account.make(USER_B, self.base)
        self.srv.init(*INIT_ARGS, "--access", "group", "--group", group)
        for p, mode in ((".", 0o710), ("run", 0o710), ("config.json", 0o640)):
            st = os.lstat(os.path.join(self.srv.dir, p))
            self.assertEqual((stat.S_IMODE(st.st_mode), st.st_gid), (mode, gid), p)
        self.srv.start()
        st = os.lstat(self.srv.socket)
        self.assertEqual((stat.S_IMODE(st.st_mode), st.st_gid), (0o660, gid))
        # The member connects and books; the outsider cannot even read the config.
        self.ok(member, "server", "connect", self.srv.config)
        self.book(member, "1", "1h")
        for args, env in ((("server", "connect", self.srv.config), None),
                          (("1", "1h"), outsider.env(BK_CONFIG_FILE=self.srv.config))):
            p = outsider.bk(*args, env=env)
            d = describe(args, p)
            self.assertEqual(p.returncode, 2, d)
            # The config exists; the outsider is simply not let in, and should be told so.
            self.assertNotIn("does not exist", p.stderr, d)
            self.assertRegex(p.stderr.lower(), r"permission|access", d)
        with self.assertRaisesRegex(AssertionError, "PermissionError"):
            rpc_as(outsider, self.srv.socket, [{"jsonrpc": "2.0", "id": 1, "method": "server.ping"}])
        self.assertEqual(rpc_as(member, self.srv.socket, [{"jsonrpc": "2.0", "id": 1, "method": "server.ping"}])
                         [0]["result"]["actor"]["username"], USER_A)
        self.assertEqual(self.srv.stop(), 0, self.srv.log())


@needs_root
class OriginalSystemConfig(ServerCase):
    """GPUBK 0.2.8's system config.json (config_version 1, a broker) is served and read as it is."""

    def setUp(self):
        self.own_server(test_now=None)  # the original's file has no test clock
        self.srv.init(*INIT_ARGS)
        # Root's file, 0644, as the original's /etc/gpubk/config.json.
        self.original = os.path.join(self.srv.dir, "original.json")

    def write_original(self, doc):
        with open(self.original, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        os.chmod(self.original, 0o644)

    def original_doc(self):
        return {"config_version": 1, "data_dir": os.path.join(self.srv.dir, "data"),
                "broker_socket": self.srv.socket, "broker_uid": self.owner.uid, "broker_socket_mode": "0666",
                "gpu_count": GPU_COUNT, "slot_minutes": 5, "max_shared_users": 2, "disabled_gpus": [3],
                "gpu_priority": {"1": 10}, "file_mode": "0644", "allocator_weight": 5.0}

    def as_a(self, *args):
        return self.a.bk(*args, env=self.a.env(BK_CONFIG_FILE=self.original, BK_TEST_NOW=None))

    def test_served_read_and_explained(self):
        self.write_original(self.original_doc())
        self.srv.config = self.original
        self.srv.start()
        p = self.as_a("config")
        self.assertEqual(p.returncode, 0, describe(["config"], p))
        self.assertIn("GPUBK 0.2.8 config: honoured broker_socket, broker_uid, data_dir, disabled_gpus, gpu_count, "
                      "gpu_priority, max_shared_users, slot_minutes\n", p.stdout)
        self.assertIn("not used: file_mode: remove it: the daemon writes its files 0600", p.stdout)
        self.assertIn("not used: allocator_weight: remove it with allocator_command", p.stdout)
        self.assertIn("transport: socket %s" % self.srv.socket, p.stdout)
        p = self.as_a("config", "--json")
        self.assertEqual(p.returncode, 0, describe(["config", "--json"], p))
        eff = json.loads(p.stdout)["effective"]
        self.assertEqual((eff["disabled_gpus"], eff["enabled_gpus"], eff["gpu_priority"]), ([3], [0, 1, 2], {"1": 10}))
        self.assertEqual((eff["access_mode"], eff["broker_socket"], eff["broker_uid"]),
                         ("broker", self.srv.socket, self.owner.uid))
        # Bookings go through the daemon with the original's policy: GPU 3 is disabled.
        p = self.as_a("3", "1h", "--json")
        self.assertEqual(p.returncode, 0, describe(["3", "1h", "--json"], p))
        self.assertEqual(sorted(json.loads(p.stdout)["reservation"]["gpus"]), [0, 1, 2])
        self.assertEqual(self.as_a("1", "1h", "--gpu", "3").returncode, 2)

    def test_without_a_broker_says_what_to_add(self):
        doc = self.original_doc()
        del doc["broker_socket"]
        self.write_original(doc)
        line = self.fails_env("l")
        self.assertIn("GPUBK 0.2.8's configuration without broker_socket", line)
        self.assertIn("add broker_socket, broker_uid and data_dir", line)
        doc = self.original_doc()
        doc["broker_socket_mode"] = "0600"
        self.write_original(doc)
        self.assertIn("broker_socket_mode must be 0666 without broker_gid", self.fails_env("l"))

    def fails_env(self, *args):
        p = self.as_a(*args)
        d = describe(args, p)
        self.assertEqual(p.returncode, 2, d)
        self.assertEqual(p.stdout, "", d)
        self.assertEqual(len(p.stderr.splitlines()), 1, d)
        return p.stderr


if __name__ == "__main__":
    unittest.main()
