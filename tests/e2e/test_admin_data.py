"""Administrators' data commands: `bk admin data restore|clear` and `bk admin transfer`, and who
administers (root, the server owner, members of `admin_group`).

The private-mode tests run anywhere; the server tests need root (they create real Unix accounts
with useradd, as test_server_users does) and are skipped otherwise.
"""

import grp
import hashlib
import os
import shutil
import sqlite3
import unittest

from bktest import BkTestCase, upstream_reservation
from server_fixture import (OWNER, USER_A, USER_B, Account, Server, bk_ok, describe, ensure_group,
                            is_root, make_base_dir, remove_tree)

ADMIN_GROUP = "bkdataadm"
LATER, LATER_END = "2026-11-29T20:00:00Z", "2026-11-29T21:00:00Z"


def content(db):
    """Every reservation and event of a closed ledger file, as rows (read without locking)."""
    con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
    try:
        return {"reservations": con.execute("SELECT * FROM reservations ORDER BY id").fetchall(),
                "events": con.execute("SELECT * FROM events ORDER BY seq").fetchall(),
                "notifications": con.execute("SELECT * FROM notifications ORDER BY id").fetchall()}
    finally:
        con.close()


def digest(*paths):
    h = hashlib.sha256()
    for p in paths:
        if os.path.exists(p):
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


class PrivateRestoreTest(BkTestCase):
    def seed(self):
        """Two other owners' bookings with chosen IDs (imported), then one of ours."""
        self.import_ledger([
            upstream_reservation("aaaaaaaa-0000-4000-8000-000000000001", [0], LATER, LATER_END, uid=2001,
                                 username="ann"),
            upstream_reservation("bbbbbbbb-0000-4000-8000-000000000002", [1], LATER, LATER_END, uid=2002,
                                 username="ben")])
        return self.book_id("1", "1h")

    def test_restore_round_trip_keeps_every_booking_and_event(self):
        self.seed()
        backup = os.path.join(self.tmp, "backup.db")
        self.ok("admin", "data", "backup", backup)
        before = content(backup)
        self.assertEqual(len(before["reservations"]), 3)
        # Changes after the backup: a new booking and a cancel.
        extra = self.book_id("1", "2h")
        self.ok("d", extra)
        out = self.ok("admin", "data", "restore", backup, "--yes")
        self.assertIn(f"restored: {backup}", out)
        self.assertIn("verified: integrity ok, 3 reservations", out)
        kept = out.strip().splitlines()[-1].rsplit(" ", 1)[1]
        self.assertTrue(os.path.basename(kept).startswith("ledger.db.replaced-"), out)
        self.assertEqual(os.stat(kept).st_mode & 0o777, 0o600)
        self.assertEqual(content(os.path.join(self.data_dir, "ledger.db")), before)
        # The replaced ledger holds what was there: four reservations, one cancelled.
        self.assertEqual(len(content(kept)["reservations"]), 4)
        self.assertNotIn(extra, [r["id"] for r in self.reservations("--history")])

    def test_a_corrupt_backup_is_refused_and_nothing_changes(self):
        self.seed()
        junk = self.write_json("junk.db", "this is not a SQLite database " * 200)
        msg = self.refused("admin", "data", "restore", junk, "--yes",
                           contains=[f"{junk} cannot be restored", "the ledger is unchanged"])
        self.assertNotIn("\n", msg)
        # A truncated backup too.
        backup = os.path.join(self.tmp, "backup.db")
        self.ok("admin", "data", "backup", backup)
        with open(backup, "r+b") as f:
            f.truncate(os.path.getsize(backup) // 2)
        self.refused("admin", "data", "restore", backup, "--yes", contains="cannot be restored")

    def test_a_backup_of_another_policy_is_refused(self):
        self.seed()
        backup = os.path.join(self.tmp, "backup.db")
        self.ok("admin", "data", "backup", backup)
        other = {"BK_DATA_DIR": os.path.join(self.tmp, "other"), "BK_GPU_COUNT": "2"}
        self.ok("1", "1h", env=other)
        msg = self.fails("admin", "data", "restore", backup, "--yes", env=other)
        self.assertIn("its policy differs from this deployment's", msg)

    def test_restore_needs_yes_without_a_terminal(self):
        self.seed()
        backup = os.path.join(self.tmp, "backup.db")
        self.ok("admin", "data", "backup", backup)
        self.refused("admin", "data", "restore", backup, contains="--yes")
        self.refused("admin", "data", "restore", os.path.join(self.tmp, "missing.db"), "--yes",
                     contains="cannot open")

    def test_clear_keeps_a_verifiable_backup(self):
        self.seed()
        target = os.path.join(self.tmp, "before-clear.db")
        self.refused("admin", "data", "clear", contains="--yes")
        out = self.ok("admin", "data", "clear", "--yes", "--backup-to", target)
        self.assertIn(f"backup: {target}", out)
        self.assertIn("cleared: the ledger is empty", out)
        self.assertEqual(self.reservations("--history"), [])
        self.assertIn("integrity: ok", self.ok("admin", "data", "verify", target))
        self.assertEqual(len(content(target)["reservations"]), 3)
        # Without --backup-to: beside the ledger, named with a UTC stamp.
        self.book_id("1", "1h")
        doc = self.json("admin", "data", "clear", "--yes", "--json")
        self.assertEqual(doc["kind"], "clear")
        self.assertTrue(os.path.basename(doc["kept"]).startswith("ledger.db.backup-"), doc)
        self.assertTrue(doc["checked"]["ok"], doc)


def needs_root(cls):
    return unittest.skipUnless(is_root(), "creates Unix accounts with useradd: run as root (CI does)")(cls)


@needs_root
class ServerDataTest(unittest.TestCase):
    """A server with its owner and two users; restore, clear and transfer through the daemon."""
    maxDiff = None

    def setUp(self):
        if not bk_ok():
            self.skipTest("bk binary not found")
        self.base = make_base_dir()
        self.addCleanup(remove_tree, self.base)
        self.owner = Account.make(OWNER, self.base)
        self.a = Account.make(USER_A, self.base)
        self.b = Account.make(USER_B, self.base)
        self.srv = Server(self.base, self.owner)
        self.addCleanup(self.srv.cleanup)
        self.srv.init("--gpu-count", "4")
        self.srv.start()
        for who in (self.owner, self.a, self.b):
            self.ok(who, "server", "connect", self.srv.config)

    def ok(self, who, *args):
        p = who.bk(*args)
        self.assertEqual(p.returncode, 0, "as %s:%s" % (who.name, describe(args, p)))
        return p.stdout

    def fails(self, who, *args):
        p = who.bk(*args)
        d = "as %s:%s" % (who.name, describe(args, p))
        self.assertEqual(p.returncode, 2, d)
        self.assertEqual(p.stdout, "", d)
        self.assertEqual(len(p.stderr.splitlines()), 1, d)
        return p.stderr.strip()

    def book(self, who, *args):
        import json
        return json.loads(self.ok(who, *args, "--json"))["reservation"]["id"]

    def backup(self, name):
        path = os.path.join(self.owner.home, name)
        self.ok(self.owner, "admin", "data", "backup", path)
        return path

    def test_restore_through_the_daemon_keeps_every_booking_of_both_users(self):
        ida = self.book(self.a, "1", "1h")
        idb = self.book(self.b, "1", "2h")
        first = self.backup("first.db")
        self.book(self.a, "1", "3h")
        self.ok(self.b, "d", idb[:8])
        # Not an administrator: refused, one line, even with a backup of their own to give.
        theirs = os.path.join(self.a.home, "first.db")
        shutil.copyfile(first, theirs)
        os.chown(theirs, self.a.uid, self.a.gid)
        self.assertIn("only an administrator", self.fails(self.a, "admin", "data", "restore", theirs, "--yes"))
        out = self.ok(self.owner, "admin", "data", "restore", first, "--yes")
        self.assertIn("restored: " + first, out)
        # The daemon serves the restored ledger at once: what a backup of it holds is the first backup.
        self.assertEqual(content(self.backup("after.db")), content(first))
        self.assertEqual([r["id"] for r in self.mine(self.a)], [ida])
        self.assertEqual([r["id"] for r in self.mine(self.b)], [idb])
        # ... and takes writes again, on the restored calendar.
        self.book(self.a, "1", "1h")

    def mine(self, who):
        import json
        return json.loads(self.ok(who, "l", "--json"))["reservations"]

    def test_a_corrupt_backup_is_refused_through_the_daemon_and_the_ledger_is_unchanged(self):
        self.book(self.a, "1", "1h")
        junk = os.path.join(self.owner.home, "junk.db")
        with open(junk, "w") as f:
            f.write("garbage " * 1000)
        os.chown(junk, self.owner.uid, self.owner.gid)
        files = (self.srv.ledger, self.srv.ledger + "-wal")
        before = digest(*files)
        line = self.fails(self.owner, "admin", "data", "restore", junk, "--yes")
        self.assertIn("cannot be restored", line)
        self.assertIn("the ledger is unchanged", line)
        self.assertEqual(digest(*files), before)
        self.assertEqual(len(self.mine(self.a)), 1)

    def test_clear_through_the_daemon_keeps_a_verified_backup(self):
        self.book(self.a, "1", "1h")
        target = os.path.join(self.owner.home, "cleared.db")
        self.assertIn("only an administrator", self.fails(self.a, "admin", "data", "clear", "--yes"))
        out = self.ok(self.owner, "admin", "data", "clear", "--yes", "--backup-to", target)
        self.assertIn("backup: " + target, out)
        self.assertEqual(self.mine(self.a), [])
        self.assertIn("integrity: ok", self.ok(self.owner, "admin", "data", "verify", target))
        self.assertEqual(len(content(target)["reservations"]), 1)

    def test_transfer_moves_a_booking_and_tells_both_owners(self):
        ida = self.book(self.a, "1", "1h")
        self.assertIn("only an administrator",
                      self.fails(self.a, "admin", "transfer", ida[:8], USER_B, "--reason", "mine", "--yes"))
        self.assertIn("--reason", self.fails(self.owner, "admin", "transfer", ida[:8], USER_B, "--yes"))
        self.assertIn("no local account named nosuchuserbk",
                      self.fails(self.owner, "admin", "transfer", ida[:8], "nosuchuserbk", "--reason", "x",
                                 "--yes"))
        out = self.ok(self.owner, "admin", "transfer", ida[:8], USER_B, "--reason", "a left", "--yes")
        self.assertIn("transferred: %s from %s to %s" % (ida[:8], USER_A, USER_B), out)
        self.assertEqual([r["id"] for r in self.mine(self.b)], [ida])
        self.assertEqual(self.mine(self.a), [])
        for who in (self.a, self.b):
            self.assertIn("transferred", self.ok(who, "n", "--all"))
            self.assertIn("a left", self.ok(who, "n", "--all"))
        log = self.ok(self.owner, "lg")
        self.assertIn("admin-transfer ok %s" % ida[:8], log)
        self.assertIn("from %s to %s: a left" % (USER_A, USER_B), log)

    def test_admin_group_members_administer_and_others_do_not(self):
        ensure_group(ADMIN_GROUP, members=[USER_B])
        self.assertNotIn(USER_A, grp.getgrnam(ADMIN_GROUP).gr_mem)
        self.assertIn("only the ledger owner or root", self.fails(self.b, "admin", "data", "verify"))
        self.srv.stop()
        self.srv.patch_config(admin_group=ADMIN_GROUP)
        self.srv.start()
        self.assertIn("integrity: ok", self.ok(self.b, "admin", "data", "verify"))
        self.assertIn("only the ledger owner or root", self.fails(self.a, "admin", "data", "verify"))
        ida = self.book(self.a, "1", "1h")
        self.ok(self.b, "admin", "transfer", ida[:8], OWNER, "--reason", "group admin", "--yes")
        self.assertEqual([r["id"] for r in self.mine(self.owner)], [ida])


if __name__ == "__main__":
    unittest.main()
