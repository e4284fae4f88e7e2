"""An administrator changes a running server's policy and blackouts, with real Unix accounts.

The server's owner runs `bk admin policy` and `bk admin blackout` while its daemon serves
USER_A: the config file is rewritten, the daemon applies it at once (no restart), bookings the
change makes illegal refuse it unless forced (their owners are told) or cancelled, and every
change is in the audit log. Needs root like test_server_users (real accounts); skipped otherwise.
"""

import hashlib
import json
import signal
import time
import unittest

import test_server_users as users

AT = "2026-11-29T20:00:00Z"  # the daemon's clock is NOW, 18:49 UTC that day


@users.needs_root
class AdminPolicy(users.ServerCase):

    def setUp(self):
        self.own_server()
        self.srv.init(*users.INIT_ARGS)
        self.srv.start()
        for who in (self.owner, self.a):
            self.ok(who, "server", "connect", self.srv.config)

    def config_hash(self):
        with open(self.srv.config, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    def config_doc(self):
        with open(self.srv.config) as f:
            return json.load(f)

    def refused_unchanged(self, who, *args, rc=2):
        before = self.config_hash()
        line = self.fails(who, *args, rc=rc)
        self.assertEqual(self.config_hash(), before, "the config file must not change")
        return line

    def notifications(self, who):
        return self.json_ok(who, "n", "--json")["notifications"]

    def test_disable_gpu_with_a_booking_on_it_is_refused_then_forced(self):
        mine = self.book(self.a, "1", "1h", "-g", "3", "-t", AT)
        before = self.config_hash()
        p = self.owner.bk("admin", "policy", "--disabled-gpus", "3", "--yes")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("1 booking(s) the new policy would not admit:", p.stdout)
        self.assertIn(mine["id"][:8], p.stdout)
        self.assertIn("GPU 3 is disabled", p.stdout)
        self.assertTrue(p.stderr.startswith("bk: refused: nothing changed"), p.stderr)
        self.assertEqual(self.config_hash(), before)
        # The dry run's document lists the same conflict and changes nothing either.
        p = self.owner.bk("admin", "policy", "--disabled-gpus", "3", "--dry-run", "--json")
        doc = json.loads(p.stdout)
        self.assertEqual((p.returncode, doc["status"]), (2, "refused"))
        self.assertEqual([c["id"] for c in doc["conflicts"]], [mine["id"]])
        self.assertEqual(doc["changes"], [{"key": "disabled_gpus", "before": [], "after": [3]}])
        self.assertEqual(self.config_hash(), before)
        # A reason is needed to force it.
        self.refused_unchanged(self.owner, "admin", "policy", "--disabled-gpus", "3", "--force", "--yes")
        out = self.ok(self.owner, "admin", "policy", "--disabled-gpus", "3", "--force", "--reason",
                      "fan failure", "--yes")
        self.assertIn("applied: 1 setting(s) changed, effective now; 1 booking owner(s) notified", out)
        self.assertEqual(self.config_doc()["disabled_gpus"], [3])
        # At once, without a restart: GPU 3 is refused, the booking stays, its owner was told.
        line = self.fails(self.a, "1", "1h", "-g", "3", "-t", AT)
        self.assertIn("GPU 3 is disabled", line)
        self.assertIn(mine["id"], [r["id"] for r in self.mine(self.a)])
        told = [n for n in self.notifications(self.a) if n.get("type") == "reservation-policy-conflict"]
        self.assertEqual(len(told), 1, self.notifications(self.a))
        self.assertIn("fan failure", told[0]["message"])
        # Audited with before and after, for the administrator.
        log = self.ok(self.owner, "lg")
        self.assertIn("policy-change ok by %s: policy changed: disabled_gpus; fan failure" % self.owner.name, log)
        event = [e for e in self.json_ok(self.owner, "lg", "--json")["events"] if e["action"] == "policy-change"]
        self.assertEqual([(e["before"], e["after"]) for e in event], [({"disabled_gpus": []}, {"disabled_gpus": [3]})])
        # Enabling it again needs nothing forced.
        self.ok(self.owner, "admin", "policy", "--enable-all", "--yes")
        self.assertNotIn("disabled_gpus", self.config_doc())
        self.book(self.a, "1", "30m", "-g", "3", "-t", AT)

    def test_cancel_overlapping_cancels_and_tells_the_owner(self):
        mine = self.book(self.a, "1", "3h", "-t", AT)
        out = self.ok(self.owner, "admin", "policy", "--max-booking-hours", "2", "--cancel-overlapping",
                      "--reason", "shorter bookings from today", "--yes")
        self.assertIn("1 booking(s) cancelled", out)
        self.assertNotIn(mine["id"], [r["id"] for r in self.mine(self.a)])
        self.assertIn("exceeds the administrator maximum of 2 hours", self.fails(self.a, "1", "3h", "-t", AT))
        told = [n for n in self.notifications(self.a) if n.get("type") == "reservation-admin-cancelled"]
        self.assertEqual(len(told), 1)

    def wait_log(self, text, timeout=10.0):
        deadline = time.monotonic() + timeout
        while text not in self.srv.log():
            if time.monotonic() > deadline:
                self.fail("the daemon never logged %r:\n%s" % (text, self.srv.log()))
            time.sleep(0.05)  # polling the daemon's log for the line, bounded by the deadline

    def test_sighup_applies_a_hand_edit_unless_bookings_conflict(self):
        self.srv.patch_config(max_booking_duration_hours=2)
        self.srv.proc.send_signal(signal.SIGHUP)
        self.wait_log("SIGHUP: policy applied: max_booking_duration_hours")
        self.assertIn("maximum of 2 hours", self.fails(self.a, "1", "3h", "-t", AT))
        self.assertIn("policy-change ok by %s" % self.owner.name, self.ok(self.owner, "lg"))
        # A booking the edit would make illegal keeps the running policy.
        self.book(self.a, "1", "1h", "-g", "1", "-t", AT)
        self.srv.patch_config(disabled_gpus=[1])
        self.srv.proc.send_signal(signal.SIGHUP)
        self.wait_log("SIGHUP: policy not reloaded: 1 booking(s) conflict with it")
        self.book(self.a, "1", "30m", "-g", "1", "-t", AT)

    def test_bad_values_and_callers_change_nothing(self):
        self.refused_unchanged(self.owner, "admin", "policy", "--max-booking-hours", "0", "--yes")
        self.refused_unchanged(self.owner, "admin", "policy", "--max-shared", "x", "--yes")
        self.refused_unchanged(self.owner, "admin", "policy", "--disabled-gpus", "9", "--yes")
        self.refused_unchanged(self.owner, "admin", "policy", "--disabled-gpus", "0,1,2,3", "--yes")
        line = self.refused_unchanged(self.a, "admin", "policy", "--max-booking-hours", "2", "--yes")
        self.assertIn("only root or", line)
        # Without --yes and without a terminal: asked to pass it.
        self.refused_unchanged(self.owner, "admin", "policy", "--max-booking-hours", "2")

    def test_blackout_refuses_bookings_and_renewals_into_it(self):
        mine = self.book(self.a, "1", "2h", "-t", AT)
        out = self.ok(self.owner, "admin", "blackout", "add", "2026-11-29T21:00:00Z", "2h", "PSU swap", "--yes")
        self.assertIn("1 booking owner(s) notified", out)
        windows = self.json_ok(self.owner, "admin", "blackout", "list", "--json")
        self.assertEqual([(w["start_at"], w["end_at"], w["reason"], w["gpus"]) for w in windows],
                         [("2026-11-29T21:00:00Z", "2026-11-29T23:00:00Z", "PSU swap", [])])
        # New bookings and renewals into it: its reason and end, from now on.
        line = self.fails(self.a, "1", "1h", "-t", "2026-11-29T21:30:00Z")
        self.assertIn("PSU swap", line)
        self.assertIn("23:00", line)
        line = self.fails(self.a, "renew", mine["id"][:8], "1h")
        self.assertIn("PSU swap", line)
        # The existing booking stays; its owner was told.
        self.assertIn(mine["id"], [r["id"] for r in self.mine(self.a)])
        self.assertTrue(any("PSU swap" in n["message"] for n in self.notifications(self.a)))
        # Removed: bookable again.
        bid = windows[0]["id"]
        self.ok(self.owner, "admin", "blackout", "rm", bid[:5], "--yes")
        self.book(self.a, "1", "1h", "-t", "2026-11-29T21:30:00Z")
        self.assertEqual(self.json_ok(self.owner, "admin", "blackout", "list", "--json"), [])

    def test_blackout_of_some_gpus(self):
        self.ok(self.owner, "admin", "blackout", "add", AT, "4h", "GPU 2 fan", "--gpus", "2", "--yes")
        line = self.fails(self.a, "1", "1h", "-g", "2", "-t", AT)
        self.assertIn("administrator blackout on GPU 2", line)
        other = self.book(self.a, "1", "1h", "-t", AT)
        self.assertNotIn(2, other["gpus"])

    def test_bad_blackouts_change_nothing(self):
        line = self.refused_unchanged(self.owner, "admin", "blackout", "add", "2026-11-29T23:00:00Z",
                                      "2026-11-29T21:00:00Z", "backwards", "--yes")
        self.assertIn("must end after it starts", line)
        self.refused_unchanged(self.owner, "admin", "blackout", "add", AT, "2h", " ", "--yes")
        self.refused_unchanged(self.owner, "admin", "blackout", "add", AT, "2h", "x", "--gpus", "7", "--yes")
        self.refused_unchanged(self.owner, "admin", "blackout", "rm", "ffffffff", "--yes")
        self.refused_unchanged(self.a, "admin", "blackout", "add", AT, "2h", "mine", "--yes")

    def test_maintain_blocks_the_window_and_announces_it(self):
        mine = self.book(self.a, "1", "1h", "-t", AT)
        out = self.ok(self.owner, "admin", "maintain", "--reason", "PSU swap", "--start", AT, "--duration", "2h",
                      "--yes")
        self.assertIn("1 booking owner(s) notified", out)
        self.assertIn("published: ", out)
        windows = self.json_ok(self.owner, "admin", "blackout", "list", "--json")
        self.assertEqual([(w["start_at"], w["end_at"], w["reason"]) for w in windows],
                         [(AT, "2026-11-29T22:00:00Z", "PSU swap")])
        # Everyone sees the announcement now, before the window starts; bookings into it are refused.
        self.assertIn("WARNING: Maintenance", self.ok(self.a, "st"))
        self.assertIn("PSU swap", self.fails(self.a, "1", "30m", "-t", "2026-11-29T21:00:00Z"))
        self.assertIn(mine["id"], [r["id"] for r in self.mine(self.a)])
        # A dry run changes nothing; bad input is one line.
        before = self.config_hash()
        self.ok(self.owner, "admin", "maintain", "--start", "2026-11-30T08:00:00Z", "--dry-run")
        # The default start is the next slot (18:50 on the daemon's clock).
        out = self.ok(self.owner, "admin", "maintain", "--gpus", "1", "--dry-run")
        self.assertIn("Maintenance: 2026-11-29 18:50 +0000 -> 2026-11-29 20:50 +0000 on GPU 1: Server maintenance", out)
        self.assertEqual(self.config_hash(), before)
        self.refused_unchanged(self.owner, "admin", "maintain", "--duration", "0m", "--yes")
        self.refused_unchanged(self.owner, "admin", "maintain", "--level", "loud", "--yes")
        self.refused_unchanged(self.a, "admin", "maintain", "--yes")

    def test_cancel_overlapping_blackout(self):
        mine = self.book(self.a, "1", "1h", "-t", AT)
        self.refused_unchanged(self.owner, "admin", "blackout", "add", AT, "1h", "rack move",
                               "--cancel-overlapping", "--yes")
        out = self.ok(self.owner, "admin", "blackout", "add", AT, "1h", "rack move", "--cancel-overlapping",
                      "--reason", "rack move tonight", "--yes")
        self.assertIn("1 booking(s) cancelled", out)
        self.assertNotIn(mine["id"], [r["id"] for r in self.mine(self.a)])


if __name__ == "__main__":
    unittest.main()
