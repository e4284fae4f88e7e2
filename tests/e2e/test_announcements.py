"""Administrators' announcements (`bk admin notice`), `bk login` and `bk admin cancel`.

The private-mode cases run anywhere; the server cases need root like
test_server_users (they reuse its accounts and fixture) and are skipped otherwise.
"""

import json
import sqlite3
import os
import unittest

import test_server_users as users
from bktest import BkTestCase, upstream_reservation

OTHER_UID = 4242


class PrivateAnnouncements(BkTestCase):
    """In private mode the ledger's owner administers it."""

    def publish(self, message, *extra):
        out = self.ok("admin", "notice", "publish", message, "--yes", *extra)
        self.assertRegex(out, r"^published: [0-9a-f]{8} level=\w+ expires=.*\n$")
        return out.split()[1]

    def announcements_in_ledger(self):
        con = sqlite3.connect(f"file:{os.path.join(self.data_dir, 'ledger.db')}?immutable=1", uri=True)
        try:
            return con.execute("SELECT id, level, message, archived_at FROM announcements ORDER BY created_at, id"
                               ).fetchall()
        finally:
            con.close()

    def test_publish_list_edit_archive(self):
        ref = self.publish("GPU 1 fan replacement tonight", "--level", "warning", "--expires", "2h")
        listed = self.ok("admin", "notice", "list")
        self.assertTrue(listed.startswith("ID        Level     State      Expires                 Message\n"), listed)
        self.assertIn(f"{ref}  warning   active     2026-11-29 20:49 +0000  GPU 1 fan replacement tonight\n", listed)
        out = self.ok("admin", "notice", "edit", ref[:5], "--level", "critical", "--message", "Fan swap at 21:00")
        self.assertEqual(out, f"updated: {ref} level=critical expires=2026-11-29 20:49 +0000\n")
        doc = self.json("admin", "notice", "list", "--json")
        self.assertEqual(doc["kind"], "announcements")
        [a] = doc["announcements"]
        self.assertEqual((a["level"], a["message"], a["updated_at"]), ("critical", "Fan swap at 21:00",
                                                                       "2026-11-29T18:49:00Z"))
        self.assertEqual(self.ok("admin", "notice", "rm", ref), f"archived: {ref} (history retained)\n")
        self.assertEqual(self.ok("admin", "notice", "archive", ref), f"archived: {ref} (already archived)\n")
        rows = self.announcements_in_ledger()
        self.assertEqual(len(rows), 1)
        self.assertIsNotNone(rows[0][3])
        self.assertIn(f"{ref}  critical  archived   ", self.ok("admin", "notice", "list"))
        # Every change is in the history, with what it was before.
        events = self.json("lg", "--json")["events"]
        self.assertEqual([e["action"] for e in events],
                         ["announcement-publish", "announcement-edit", "announcement-archive"])

    def test_shown_in_every_surface(self):
        warn = self.publish("GPU 1 fan replacement tonight", "--until", "21:00")
        crit = self.publish("Ledger maintenance at 20:00", "--level", "critical")
        info = self.publish("New GPUs next week", "--level", "info")
        later = self.publish("Not yet", "--level", "critical", "--starts", "+2h")
        st = self.ok("st").splitlines()
        self.assertEqual(st[:2], ["CRITICAL: Ledger maintenance at 20:00 (until 2026-11-30 18:49 +0000)",
                                  "WARNING: GPU 1 fan replacement tonight (until 2026-11-29 21:00 +0000)"])
        self.assertNotIn("New GPUs", "\n".join(st))
        plain = self.ok()
        self.assertIn("CRITICAL: Ledger maintenance", plain)
        self.assertIn("INFO: New GPUs next week (until 2026-11-30 18:49 +0000)", plain)
        self.assertNotIn("Not yet", plain)
        n = self.ok("n")
        self.assertTrue(n.startswith("When                    Ref      Level     Event\n"), n)
        for ref, level in ((warn, "warning"), (crit, "critical"), (info, "info")):
            self.assertIn(f"{ref} {level:<9} ", n)
        self.assertNotIn(later, n)
        doc = self.json("n", "--json")
        self.assertEqual({x["kind"] for x in doc["notifications"]}, {"announcement"})
        self.assertEqual(len(doc["notifications"]), 3)
        ctx = self.json("agent", "context")
        self.assertEqual([a["level"] for a in ctx["announcements"]], ["critical", "warning", "info"])
        login = self.ok("login")
        self.assertEqual(login, "GPUBK: 1 critical announcement\n"
                                "  CRITICAL Ledger maintenance at 20:00 (until 11-30 18:49)\n")
        self.assertEqual(self.json("login", "--json")["announcements"][0]["message"],
                         "Ledger maintenance at 20:00")
        # Two hours on, the scheduled one shows too.
        later_env = {"BK_TEST_NOW": "2026-11-29T20:49:00Z"}
        self.assertIn("CRITICAL: Not yet", self.ok("st", env=later_env))

    def test_bad_input_is_one_line_and_changes_nothing(self):
        ref = self.publish("exists")  # the ledger exists: a refusal must leave it as it was
        self.refused("admin", "notice", "publish", "   ", "--yes", contains="message is empty")
        self.refused("admin", "notice", "publish", "x", "--level", "loud", "--yes",
                     contains="--level must be info, warning or critical")
        self.refused("admin", "notice", "publish", "x", "--expires", "0m", "--yes", contains="positive")
        self.refused("admin", "notice", "publish", "x", "--expires", "30s", "--yes")
        self.refused("admin", "notice", "publish", "x", "--expires", "366d", "--yes",
                     contains="1 minute to 365 days")
        self.refused("admin", "notice", "publish", "x", "--until", "18:49", "--yes",
                     contains="1 minute to 365 days")
        self.refused("admin", "notice", "publish", "x", "--expires", "1h", "--until", "20:00", "--yes")
        self.refused("admin", "notice", "publish", "x", contains="--yes")  # no terminal to confirm at
        self.refused("admin", "notice", "edit", "ffffffff", "--level", "info", contains="announcement not found")
        self.refused("admin", "notice", "edit", ref, contains="nothing to change")
        self.refused("admin", "notice", "archive", "ffffffff", contains="announcement not found")
        self.refused("admin", "notice", "frobnicate", contains="unknown notice command")
        self.refused_json("admin", "notice", "publish", "", "--yes", "--json", contains="empty")
        self.assertEqual(len(self.announcements_in_ledger()), 1)

    def test_login_lists_bookings_and_hook_is_silent_when_empty(self):
        self.assertEqual(self.ok("login"), "No active or upcoming reservations in the next 1d.\n")
        self.assertEqual(self.ok("login", "--hook"), "")
        self.assertNoDataDir()  # read-only: nothing created
        now_id = self.book_id("1", "1h")
        soon_id = self.book_id("2", "30m", "-t", "19:30")
        self.book_id("1", "30m", "-t", "tomorrow 20:00")  # beyond --within
        out = self.ok("login", "--within", "2h", "--hook")
        self.assertEqual(out, f"GPUBK: 1 active, 1 upcoming\n"
                              f"  NOW {now_id[:8]} GPU 0 until 19:45 (56m left)\n"
                              f"  NEXT {soon_id[:8]} GPU 1,2 at 19:30 (in 41m)\n")
        doc = self.json("login", "--json")
        self.assertEqual(doc["kind"], "login-notice")
        self.assertEqual([r["id"] for r in doc["active"]], [now_id])
        self.assertEqual(len(doc["upcoming"]), 1)
        self.assertEqual(doc["within_seconds"], 86400)
        self.refused("login", "--within", "0m", contains="--within")

    def test_admin_cancel_needs_a_reason_and_notifies_the_owner(self):
        rid = "0be00000-0000-4000-8000-000000000001"
        self.import_ledger([upstream_reservation(rid, [0], "2026-11-29T18:45:00Z", "2026-11-29T20:00:00Z",
                                                 uid=OTHER_UID, username="alice")])
        self.refused("admin", "cancel", rid[:8], "--yes", contains="--reason")
        self.refused("admin", "cancel", rid[:8], "--reason", "x" * 513, "--yes", contains="1-512")
        self.refused("admin", "cancel", rid[:8], "--reason", "GPU maintenance", contains="--yes")
        out = self.ok("admin", "cancel", rid[:8], "--reason", "GPU maintenance", "--yes")
        self.assertEqual(out, "cancelled: 0be00000 owner=alice reason=GPU maintenance\n"
                              "The owner can see this cancellation with `bk notifications` or `bk l --history`.\n")
        events = self.json("lg", "--json")["events"]
        self.assertNotIn("admin-cancel", [e["action"] for e in events])  # the owner's history, not ours
        con = sqlite3.connect(f"file:{os.path.join(self.data_dir, 'ledger.db')}?immutable=1", uri=True)
        try:
            notes = con.execute("SELECT uid, type, reason FROM notifications").fetchall()
            actions = [r[0] for r in con.execute("SELECT action FROM events ORDER BY seq")]
        finally:
            con.close()
        self.assertEqual(notes, [(OTHER_UID, "reservation-admin-cancelled", "GPU maintenance")])
        self.assertEqual(actions[-1], "admin-cancel")


@users.needs_root
class ServerAnnouncements(users.ServerCase):
    """Through a real daemon: the owner administers, USER_A and USER_B only read."""

    setUpClass = classmethod(users.SharedServerUsers.setUpClass.__func__)
    _teardown = classmethod(users.SharedServerUsers._teardown.__func__)
    tearDownClass = classmethod(users.SharedServerUsers.tearDownClass.__func__)

    def test_owner_publishes_users_see_it_and_cannot_write(self):
        out = self.ok(self.owner, "admin", "notice", "publish", "Reboot at 20:00", "--level", "critical",
                      "--expires", "3h", "--yes")
        ref = out.split()[1]
        for who in (self.a, self.b):
            self.assertIn("CRITICAL: Reboot at 20:00", self.ok(who, "st"))
            self.assertIn(f"{ref} critical  Reboot at 20:00", self.ok(who, "n"))
            self.assertEqual(self.json_ok(who, "agent", "context")["announcements"][0]["id"][:8], ref)
            self.assertIn("CRITICAL Reboot at 20:00", self.ok(who, "login", "--hook"))
        line = self.fails(self.a, "admin", "notice", "publish", "mine now", "--yes")
        self.assertIn("only an administrator", line)
        self.assertIn("only an administrator", self.fails(self.a, "admin", "notice", "archive", ref))
        self.assertIn("only an administrator", self.fails(self.a, "admin", "notice", "edit", ref, "--level", "info"))
        # A user's list is the active ones only, whatever the owner has archived.
        self.ok(self.owner, "admin", "notice", "publish", "Gone soon", "--level", "info", "--yes")
        gone = [a["id"] for a in self.json_ok(self.owner, "admin", "notice", "list", "--json")["announcements"]
                if a["message"] == "Gone soon"][0]
        self.ok(self.owner, "admin", "notice", "archive", gone[:8])
        listed = self.json_ok(self.a, "admin", "notice", "list", "--json")["announcements"]
        self.assertEqual([a["message"] for a in listed], ["Reboot at 20:00"])
        self.assertEqual(len(self.json_ok(self.owner, "admin", "notice", "list", "--json")["announcements"]), 2)
        self.ok(self.owner, "admin", "notice", "archive", ref)
        self.assertNotIn("Reboot", self.ok(self.a, "st"))

    def test_admin_cancel_through_the_daemon(self):
        victim = self.book(self.a, "1", "45m")
        ref = victim["id"][:8]
        self.assertIn("administrators", self.fails(self.b, "admin", "cancel", ref, "--reason", "mine", "--yes"))
        doc = self.json_ok(self.owner, "admin", "cancel", ref, "--reason", "GPU maintenance", "--yes", "--json")
        self.assertEqual((doc["kind"], doc["status"], doc["owner_username"], doc["reason"]),
                         ("admin-cancel", "cancelled", self.a.name, "GPU maintenance"))
        login = self.ok(self.a, "login")
        self.assertIn(f"NOTICE Reservation {ref} was cancelled by administrator", login)
        n = self.json_ok(self.a, "n", "--json")
        self.assertIn(victim["id"], [x.get("reservation_id") for x in n["notifications"]])


if __name__ == "__main__":
    unittest.main()
