"""`bk e --dry-run` and `bk renew --dry-run`: the change is admitted as it would be, and
nothing is written, in private mode and through a server's daemon.

The server half needs root like test_server_users (real accounts); it is skipped otherwise.
"""

import unittest

from bktest import BkTestCase
from test_manage import line

import test_server_users as users


class PrivateDryRunTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.rid = self.book_id("1", "30m")  # GPU 0, 18:45-19:15, started

    def test_edit_dry_run_says_what_it_would_do_and_writes_nothing(self):
        before = self.snapshot()
        self.assertEqual(self.ok("e", "1", "-d", "1h", "--dry-run"),
                         line("would update", self.rid, "0", "2026-11-29 18:45", "2026-11-29 19:45"))
        self.assertUnchanged(before, "after bk e --dry-run")
        doc = self.json("e", "1", "-d", "1h", "--dry-run", "--json")
        self.assertEqual((doc["kind"], doc["status"], doc["dry_run"]), ("booking_result", "updated", True))
        self.assertEqual(doc["reservation"]["end_at"], "2026-11-29T19:45:00Z")
        self.assertUnchanged(before, "after bk e --dry-run --json")
        # The edit itself then does what the dry run said, and its document has no dry_run.
        self.assertEqual(self.ok("e", "1", "-d", "1h"),
                         line("updated", self.rid, "0", "2026-11-29 18:45", "2026-11-29 19:45"))
        self.assertNotIn("dry_run", self.json("e", "1", "-d", "2h", "--json"))

    def test_future_edit_dry_run_queues_as_the_edit_would(self):
        future = self.book_id("1", "30m", "--gpu", "1", "-t", "20:00")
        self.ok("x", "4", "1h", "-t", "21:00")
        before = self.snapshot()
        self.assertEqual(self.ok("e", future[:8], "--at", "21:00", "-q", "--dry-run"),
                         line("would queue", future, "1", "2026-11-29 22:00", "2026-11-29 22:30"))
        self.assertUnchanged(before)

    def test_refusals_are_the_real_ones(self):
        self.ok("x", "1", "1h", "--gpu", "0", "-t", "19:30", "-q")
        for args in (["e", "1", "-d", "1h"], ["renew", "1", "30m"], ["e", "1", "--gpu", "1"],
                     ["renew", "1", "7m"], ["e", "9", "-d", "1h"]):
            with self.subTest(args=args):
                self.assertEqual(self.refused(*args, "--dry-run"), self.refused(*args))
                self.assertEqual(self.refused_json(*args, "--dry-run", "--json")["error"],
                                 self.refused_json(*args, "--json")["error"])

    def test_renew_dry_run_says_what_it_would_do_and_writes_nothing(self):
        before = self.snapshot()
        self.assertEqual(self.ok("renew", "1", "30m", "--dry-run", "--op-id", "r-1"),
                         line("would renew", self.rid, "0", "2026-11-29 18:45", "2026-11-29 19:45"))
        doc = self.json("renew", "1", "30m", "--dry-run", "--compact")
        self.assertEqual((doc["status"], doc["dry_run"]), ("updated", True))
        self.assertEqual(doc["reservation"]["end_at"], "2026-11-29T19:45:00Z")
        self.assertUnchanged(before, "after bk renew --dry-run")
        # The operation ID was not kept: the renewal with it is a first one.
        self.assertEqual(self.ok("renew", "1", "30m", "--op-id", "r-1"),
                         line("renewed", self.rid, "0", "2026-11-29 18:45", "2026-11-29 19:45"))
        self.assertEqual(self.reservations()[0]["edit_count"], 1)


class NoLedgerDryRunTest(BkTestCase):

    def test_a_dry_run_never_creates_the_ledger(self):
        self.refused("e", "1", "-d", "1h", "--dry-run")
        self.refused("renew", "1", "30m", "--dry-run")
        self.assertNoDataDir()


@users.needs_root
class ServerDryRunTest(users.ServerCase):

    def setUp(self):
        self.own_server()
        self.srv.init(*users.INIT_ARGS)
        self.srv.start()
        self.ok(self.a, "server", "connect", self.srv.config)

    def ledger(self):
        return (self.mine(self.a, history=True), self.json_ok(self.a, "lg", "--json")["events"])

    def test_dry_runs_through_the_daemon_write_nothing(self):
        mine = self.book(self.a, "1", "1h", "-g", "2", "-t", "20:00")
        before = self.ledger()
        doc = self.json_ok(self.a, "e", "1", "--at", "21:00", "--dry-run", "--json")
        self.assertEqual((doc["status"], doc["dry_run"]), ("updated", True))
        self.assertEqual(doc["reservation"]["start_at"], "2026-11-29T21:00:00Z")
        out = self.ok(self.a, "renew", mine["id"][:8], "30m", "--dry-run")
        self.assertTrue(out.startswith("would renew: %s " % mine["id"][:8]), out)
        self.assertIn("2026-11-29 20:00 +0000 -> 2026-11-29 21:30 +0000", out)
        self.assertEqual(self.ledger(), before)
        # Refused for the reason the change is refused.
        self.book(self.a, "x", "1", "1h", "-g", "2", "-t", "21:00")
        for args in (["renew", "1", "30m"], ["e", "1", "--at", "21:00"]):
            dry = self.fails(self.a, *args, "--dry-run")
            self.assertEqual(dry, self.fails(self.a, *args))
        self.assertEqual(self.mine(self.a)[0]["start_at"], "2026-11-29T20:00:00Z")


if __name__ == "__main__":
    unittest.main()
