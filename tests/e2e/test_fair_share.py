"""Fair-share limits end to end: refusals, races, `bk u limits`, an administrator's override, and the
daemon's calendar feeds.

Private tests run as the current account with BK_DATA_DIR; the server tests need root (real Unix
accounts and a Unix group, as CI runs them) and are skipped otherwise. Run:

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_fair_share

What the races leave in the ledger is re-derived from ledger.db itself, not from bk's answers.
"""

import concurrent.futures
import json
import os
import unittest

from ledger_checker import load_reservations, parse_gpus

from server_fixture import (BK_BIN, NOW, NOW_ISO, OWNER, USER_A, USER_B, Account, Server, bk_ok, describe,
                            ensure_group, is_root, make_base_dir, poll_until, remove_tree)

GROUP = "bkvision"


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def held_peak(ledger, uids=None):
    """The most GPUs the given owners (all when None) hold at once, and the number of rows, from
    ledger.db alone."""
    rows = load_reservations(ledger)
    events = []
    for r in rows:
        if r.status != "active" or (uids is not None and r.uid not in uids):
            continue
        gpus = r.gpus if isinstance(r.gpus, list) else parse_gpus(r.gpus)
        events += [(r.start, len(gpus)), (r.end, -len(gpus))]
    events.sort(key=lambda e: (e[0], e[1]))
    peak = cur = 0
    for _, d in events:
        cur += d
        peak = max(peak, cur)
    return peak, len(rows)


class PrivateLimits(unittest.TestCase):
    def setUp(self):
        if not bk_ok():
            self.skipTest("bk binary not found at %s" % BK_BIN)
        self.base = make_base_dir("bk-fair-")
        self.addCleanup(remove_tree, self.base)
        self.me = Account.current(self.base)
        self.data = os.path.join(self.base, "data")
        os.mkdir(self.data, 0o700)
        with open(os.path.join(self.data, "config.json"), "w", encoding="utf-8") as f:
            json.dump({"gpu_count": 8, "user_max_gpus": 2, "user_max_gpu_hours_24h": 6}, f)
        self.env = self.me.env(BK_DATA_DIR=self.data)

    def bk(self, *args):
        return self.me.bk(*args, env=self.env)

    def test_concurrent_requests_never_exceed_the_limit(self):
        # Eight processes at once, each asking for one GPU for an hour from now: two may win.
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            # Distinct operation IDs: identical exact requests would be one booking ("exists").
            runs = list(pool.map(lambda n: self.bk("1", "1h", "-t", "now", "--op-id", "race-%d" % n, "--json"),
                                 range(8)))
        won = [p for p in runs if p.returncode == 0]
        lost = [p for p in runs if p.returncode != 0]
        self.assertEqual(len(won), 2, [describe(["1", "1h"], p) for p in runs])
        for p in lost:
            self.assertEqual(p.returncode, 2, describe(["1", "1h", "-t", "now"], p))
            self.assertIn("fair-share limit user_max_gpus", p.stdout + p.stderr)
        peak, rows = held_peak(os.path.join(self.data, "ledger.db"))
        self.assertEqual((peak, rows), (2, 2))

    def test_refusal_names_the_limit_the_use_and_the_earliest_fit(self):
        self.assertEqual(self.bk("2", "2h").returncode, 0)
        p = self.bk("1", "1h", "-t", "now")
        self.assertNotEqual(p.returncode, 0)
        out = p.stdout + p.stderr
        self.assertIn("fair-share limit user_max_gpus: %s may hold at most 2 GPU(s) at once; holds 2"
                      % self.me.name, out)
        self.assertIn("nearest available", out)
        # Without -t it queues behind the user's own booking.
        q = self.bk("1", "1h", "--json")
        self.assertEqual(q.returncode, 0, describe(["1", "1h"], q))
        doc = json.loads(q.stdout)
        self.assertEqual(doc["status"], "queued", doc)
        self.assertEqual(doc["reservation"]["start_at"], "2026-11-29T20:45:00Z")

    def test_renewal_past_the_gpu_hours_is_refused(self):
        self.assertEqual(self.bk("2", "2h").returncode, 0)   # 4 of 6 GPU-hours
        self.assertEqual(self.bk("renew", "1", "1h").returncode, 0)   # 6
        p = self.bk("renew", "1", "30m")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("fair-share limit user_max_gpu_hours_24h", p.stdout + p.stderr)
        self.assertIn("that would be 7 (this adds 1)", p.stdout + p.stderr)

    def test_usage_view_shows_use_against_limits(self):
        self.assertEqual(self.bk("2", "1h").returncode, 0)
        p = self.bk("u", "limits", "--json")
        self.assertEqual(p.returncode, 0, describe(["u", "limits"], p))
        doc = json.loads(p.stdout)
        self.assertEqual(doc["schema_version"], "gpubk.limits.v1")
        self.assertTrue(doc["configured"])
        [row] = doc["scopes"]
        self.assertEqual(row["name"], self.me.name)
        self.assertEqual(row["limits"]["max_gpus"], 2)
        self.assertEqual(row["use"]["gpus_now"], 2)
        text = self.bk("u", "limits")
        self.assertEqual(text.returncode, 0)
        self.assertIn("2/2", text.stdout)
        self.assertTrue(all(len(line) <= 72 for line in text.stdout.splitlines()), text.stdout)

    def test_bad_limits_in_config_are_one_line(self):
        with open(os.path.join(self.data, "config.json"), "w", encoding="utf-8") as f:
            json.dump({"user_limits": {"alice": {"max_gpu": 3}}}, f)
        p = self.bk("l")
        self.assertEqual(p.returncode, 2, describe(["l"], p))
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn('user_limits.alice has no limit "max_gpu"', p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.data, "ledger.db")))


@unittest.skipUnless(is_root(), "creates Unix accounts and a group: run as root (CI does)")
class ServerLimits(unittest.TestCase):
    """One server: USER_A and USER_B are in GROUP, limited to 2 GPUs together; the owner administers."""

    def setUp(self):
        if not bk_ok():
            self.skipTest("bk binary not found at %s" % BK_BIN)
        self.base = make_base_dir("bk-fair-srv-")
        self.addCleanup(remove_tree, self.base)
        self.owner = Account.make(OWNER, self.base)
        self.a = Account.make(USER_A, self.base)
        self.b = Account.make(USER_B, self.base)
        ensure_group(GROUP, [USER_A, USER_B])
        self.srv = Server(self.base, self.owner)
        self.addCleanup(self.srv.cleanup)
        self.srv.init("--gpu-count", "8")
        self.feeds = os.path.join(self.base, "feeds")
        os.mkdir(self.feeds, 0o755)
        os.chown(self.feeds, self.owner.uid, self.owner.gid)
        self.srv.patch_config(group_limits={GROUP: {"max_gpus": 2}}, user_max_gpus=4,
                              calendar_feed_dir=self.feeds)
        self.srv.start()
        for who in (self.a, self.b, self.owner):
            p = who.bk("server", "connect", self.srv.config)
            self.assertEqual(p.returncode, 0, describe(["server", "connect"], p))

    def test_a_group_race_never_exceeds_its_limit(self):
        jobs = list(enumerate([self.a, self.b] * 4))
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            runs = list(pool.map(lambda j: j[1].bk("1", "1h", "-t", "now", "--op-id", "race-%d" % j[0]), jobs))
        won = [p for p in runs if p.returncode == 0]
        self.assertEqual(len(won), 2, [describe(["1", "1h"], p) for p in runs])
        for p in runs:
            if p.returncode:
                self.assertIn("group_limits.%s.max_gpus: group %s may hold at most 2" % (GROUP, GROUP),
                              p.stdout + p.stderr)
        # The owner is not in the group: their own limit (4) applies.
        p = self.owner.bk("3", "1h", "-t", "now")
        self.assertEqual(p.returncode, 0, describe(["3", "1h"], p))
        # The daemon holds its ledger alone: read it once it has stopped.
        self.srv.stop()
        peak, _ = held_peak(self.srv.ledger, {self.a.uid, self.b.uid})
        self.assertEqual(peak, 2)

    def test_an_administrator_goes_beyond_with_a_reason_that_is_audited(self):
        self.assertEqual(self.owner.bk("4", "1h").returncode, 0)
        p = self.owner.bk("1", "1h", "-t", "now")
        self.assertEqual(p.returncode, 2, describe(["1", "1h"], p))
        p = self.owner.bk("1", "1h", "-t", "now", "--reason", "paper deadline")
        self.assertEqual(p.returncode, 0, describe(["1", "1h", "--reason"], p))
        log = self.owner.bk("lg", "--json")
        self.assertIn("beyond fair-share limits: paper deadline", log.stdout)
        # A user may not.
        p = self.a.bk("1", "1h", "--reason", "please")
        self.assertEqual(p.returncode, 2, describe(["1", "1h", "--reason"], p))
        self.assertIn("only administrators", p.stderr)

    def test_admin_policy_sets_a_limit_that_applies_at_once(self):
        self.assertEqual(self.a.bk("1", "1h").returncode, 0)
        p = self.owner.bk("admin", "policy", "--user-max-gpus", "1", "--yes")
        self.assertEqual(p.returncode, 0, describe(["admin", "policy", "--user-max-gpus", "1"], p))
        self.assertEqual(self.srv.read_config()["user_max_gpus"], 1)
        p = self.a.bk("1", "2h", "-t", "now")
        self.assertEqual(p.returncode, 2, describe(["1", "2h"], p))
        self.assertIn("fair-share limit user_max_gpus: %s may hold at most 1 GPU(s)" % USER_A, p.stderr)
        shown = self.owner.bk("admin", "policy")
        self.assertIn("fair share per user: max_gpus 1", shown.stdout)
        p = self.owner.bk("admin", "policy", "--user-max-gpus", "off", "--yes")
        self.assertEqual(p.returncode, 0, describe(["admin", "policy", "--user-max-gpus", "off"], p))
        self.assertNotIn("user_max_gpus", self.srv.read_config())
        p = self.a.bk("1", "2h", "-t", "now")
        self.assertEqual(p.returncode, 0, describe(["1", "2h"], p))
        p = self.owner.bk("admin", "policy", "--user-max-gpus", "0")
        self.assertEqual(p.returncode, 2)
        self.assertIn("--user-max-gpus must be a whole number between 1 and 1024", p.stderr)

    def test_usage_view_shows_the_group_to_its_members(self):
        self.assertEqual(self.a.bk("1", "1h").returncode, 0)
        doc = json.loads(self.a.bk("u", "limits", "--json").stdout)
        names = {(s["kind"], s["name"]): s for s in doc["scopes"]}
        self.assertIn(("user", USER_A), names)
        self.assertNotIn(("user", USER_B), names)  # usage_visibility self
        self.assertEqual(names[("group", GROUP)]["use"]["gpus_now"], 1)
        doc = json.loads(self.owner.bk("u", "limits", "--json").stdout)
        self.assertIn(("user", USER_A), {(s["kind"], s["name"]) for s in doc["scopes"]})

    def test_calendar_feed_follows_the_ledger(self):
        out = json.loads(self.a.bk("1", "1h", "--json").stdout)
        rid = out["reservation"]["id"]
        path = os.path.join(self.feeds, USER_A + ".ics")
        poll_until(lambda: os.path.exists(path) and rid in read(path), 20,
                   "the feed of %s to list %s" % (USER_A, rid))
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o644)
        self.assertEqual(self.a.bk("d", rid[:8]).returncode, 0)
        poll_until(lambda: "STATUS:CANCELLED" in read(path), 20,
                   "the feed to show the cancellation")
        try:
            import icalendar  # Debian python3-icalendar
        except ImportError:
            return
        cal = icalendar.Calendar.from_ical(read(path))
        [event] = [c for c in cal.walk("VEVENT")]
        self.assertEqual(str(event["UID"]), rid + "@gpubk")
        self.assertEqual(str(event["STATUS"]), "CANCELLED")


if __name__ == "__main__":
    unittest.main()
