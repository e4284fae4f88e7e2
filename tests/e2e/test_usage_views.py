"""`bk u me`'s ACTIVITY TREND, `bk u storage`, `bk u capabilities` and
`bk m --rollup` (docs/monitor.md), on the simulation timelines of
test_monitor.py: samples every 60 s on a stepped clock, so an hour of
history takes one `bk m --samples 60`.
"""

import json
import os
import sqlite3
import unittest

from bktest import ME_UID
from test_monitor import T0, MonitorCase, iso

DAY = 86400
USED, IDLE = "\u2501", "\u2500"  # the original's bar cells


class UsageViewsCase(MonitorCase):

    def setUp(self):
        super().setUp()
        self.env["BK_MONITOR_INTERVAL_SECONDS"] = "60"
        self.env["BK_RECLAIM_AFTER_SECONDS"] = "0"

    def monitor(self, start, samples, busy):
        """`samples` minutes of history from `start`, my process on GPU 0 or not."""
        self.gpus([self.proc(self.mine, sm=50)] if busy else [], [])
        p = self.bk("m", "--samples", str(samples), "--json",
                    env={"BK_TEST_NOW": iso(start), "BK_TEST_CLOCK_STEP": "60"})
        self.assertEqual(p.returncode, 0, p.stderr)

    def history(self):
        """Thursday 11-26: sampled 2 h of a 3 h booking, all used; Sunday 11-29
        (today): 90 min of a 2 h booking, the first hour used."""
        self.mine = self.child()
        thursday = T0 - 3 * DAY
        self.book_id("1", "3h", "--gpu", "0", env={"BK_TEST_NOW": iso(thursday)})
        self.monitor(thursday, 120, busy=True)
        self.book_id("1", "2h", "--gpu", "0")
        self.monitor(T0, 60, busy=True)
        self.monitor(T0 + 3600, 30, busy=False)


class ActivityTrendTest(UsageViewsCase):

    def test_me_draws_seven_days_and_four_weeks_from_the_rollups(self):
        self.history()
        later = {"BK_TEST_NOW": iso(T0 + 3 * 3600)}
        text = self.ok("u", env=later)
        lines = text.splitlines()
        self.assertIn("YOUR GPU USE", lines)
        start = lines.index("ACTIVITY TREND")
        self.assertEqual(lines[start - 1], "")
        self.assertEqual(lines[start + 1], "Last 7 days")
        self.assertEqual(lines[start + 9], "Last 4 weeks")
        days = lines[start + 2:start + 9]
        weeks = lines[start + 10:start + 14]
        self.assertEqual(len(lines), start + 14, text)
        self.assertEqual([d[:11] for d in days], ["  Mon 11-23", "  Tue 11-24", "  Wed 11-25", "  Thu 11-26",
                                                  "  Fri 11-27", "  Sat 11-28", "  Sun 11-29"])
        self.assertEqual([w[:7] for w in weeks], ["  11-02", "  11-09", "  11-16", "  11-23"])
        # Bars scale to the largest booking of their set: Thursday's 2 h is 24 cells.
        self.assertEqual(days[3], "  Thu 11-26 " + USED * 24 + "    2.0/2.0")
        self.assertEqual(days[6], "  Sun 11-29 " + USED * 12 + IDLE * 6 + " " * 6 + "    1.0/1.5")
        self.assertEqual(days[5], "  Sat 11-28" + " " * 25 + "    0.0/0.0")
        self.assertEqual(weeks[3], "  11-23     " + USED * 21 + IDLE * 3 + "    3.0/3.5")
        self.assertEqual(weeks[0], "  11-02" + " " * 29 + "    0.0/0.0")
        self.assertEqual([line for line in lines[start:] if len(line) > 72], [])
        # Only `me` draws it, and --no-chart leaves it out.
        self.assertNotIn("ACTIVITY TREND", self.ok("u", "--no-chart", env=later))
        self.assertEqual(self.ok("u", "me", "--no-chart", env=later), "\n".join(lines[:start - 1]) + "\n")
        for view in ("users", "events", "samples"):
            self.assertNotIn("ACTIVITY TREND", self.ok("u", view, "--no-chart", env=later), view)
            self.assertNotIn("ACTIVITY TREND", self.ok("u", view, env=later), view)
        # The JSON document carries no trend, as the original's.
        doc = self.json("u", "--json", env=later)
        self.assertEqual(doc, self.json("u", "--json", "--no-chart", env=later))
        self.assertEqual(set(doc), {"schema_version", "kind", "generated_at", "node", "warnings", "collector",
                                    "usage_db", "users", "notes", "query", "truncated"})
        self.assertEqual([u["uid"] for u in doc["users"]], [ME_UID])
        self.assertChildrenAlive()

    def test_trend_with_no_use_in_the_interval(self):
        self.history()
        # A week later: nothing in the last 24 h; last week (from 11-23) keeps its bar.
        later = {"BK_TEST_NOW": iso(T0 + 7 * DAY)}
        lines = self.ok("u", env=later).splitlines()
        self.assertIn("no usage records for you in this interval", lines)
        start = lines.index("ACTIVITY TREND")
        self.assertEqual([line[:11] for line in lines[start + 2:start + 9]][0], "  Mon 11-30")
        self.assertEqual(lines[start + 12], "  11-23     " + USED * 21 + IDLE * 3 + "    3.0/3.5")
        self.assertEqual(lines[start + 13], "  11-30" + " " * 29 + "    0.0/0.0")

    def test_no_chart_before_any_history(self):
        out = self.ok("u", "--no-chart")
        self.assertIn("collector: not-seen", out)
        self.assertNotIn("ACTIVITY TREND", self.ok("u"))
        self.assertNoDataDir()


class StorageTest(UsageViewsCase):

    def counts(self):
        con = sqlite3.connect(f"file:{os.path.join(self.data_dir, 'usage.db')}?mode=ro", uri=True)
        try:
            tables = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                      for t in ("devices", "rollups", "events", "processes", "evidence", "gpus", "heartbeat")}
            minute = con.execute("SELECT count(*), min(window_start), max(window_start) FROM rollups "
                                 "WHERE resolution = 60").fetchone()
            return tables, minute
        finally:
            con.close()

    def test_storage_document_and_text(self):
        self.history()
        later = {"BK_TEST_NOW": iso(T0 + 3 * 3600)}
        doc = self.json("u", "storage", "--json", env=later)
        self.assertEqual((doc["schema_version"], doc["kind"]), ("gpubk.usage.v1", "usage-storage"))
        st = doc["storage"]
        self.assertEqual(st["path"], os.path.join(self.data_dir, "usage.db"))
        tables, minute = self.counts()
        self.assertEqual(st["tables"], tables)
        self.assertEqual(st["tiers"]["minute"], {"rows": minute[0], "oldest": iso(minute[1]), "newest": iso(minute[2])})
        self.assertEqual(st["tiers"]["minute"]["oldest"], iso(T0 - 3 * DAY))
        self.assertEqual(st["tiers"]["hourly"]["newest"], "2026-11-29T20:00:00Z")
        self.assertEqual(st["tiers"]["devices"]["rows"], tables["devices"])
        self.assertEqual(set(st["tiers"]), {"devices", "minute", "hourly", "events"})
        self.assertEqual(st["retention"], {"device_days": 2, "minute_days": 35, "hourly_days": 400,
                                           "event_days": 365, "zero_days_means": "unlimited"})
        self.assertEqual(st["bytes"], sum(st["files"].values()))
        self.assertEqual(st["files"]["usage.db"], os.path.getsize(os.path.join(self.data_dir, "usage.db")))
        self.assertEqual(st["format"]["format"], "gpubk.usage.sqlite")
        self.assertEqual(st["format"]["journal_mode"], "wal")
        self.assertGreater(st["pages"]["page_count"], st["pages"]["free_pages"])
        self.assertEqual(st["collector"]["state"], "stopped")
        self.assertEqual(st["warnings"], [])
        compact = self.bk("u", "storage", "-j", "-c", env=later).stdout
        self.assertEqual(len(compact.splitlines()), 1)

        lines = self.ok("u", "storage", env=later).splitlines()
        self.assertTrue(lines[0].startswith("collector: stopped"), lines)
        self.assertEqual(lines[1], "path: " + st["path"])
        self.assertRegex(lines[2], r"^size: [\d.]+ KiB on disk \(usage\.db [\d.]+ KiB, -wal [\d.]+ (B|KiB), -shm ")
        self.assertIn(f"minute rollups: {minute[0]} rows, 2026-11-26 18:49 -> 2026-11-29 20:18, kept 35 days",
                      lines)
        self.assertIn(f"heartbeat: 1 row", lines)
        self.assertIn(f"processes: {tables['processes']} row" + ("" if tables["processes"] == 1 else "s"), lines)
        self.assertTrue(all(": " in line for line in lines), lines)
        self.assertEqual([line for line in lines if len(line) > 80], [])
        self.assertChildrenAlive()

    def test_storage_before_any_monitor_creates_nothing(self):
        self.assertIn("no usage history yet", self.ok("u", "storage"))
        doc = self.json("u", "storage", "--json")
        self.assertIsNone(doc["storage"]["path"])
        self.assertIsNone(doc["storage"]["format"])
        self.assertEqual(doc["storage"]["collector"]["state"], "not-seen")
        self.assertNoDataDir()

    def test_capabilities(self):
        doc = self.json("u", "capabilities", "--json")
        self.assertEqual((doc["schema_version"], doc["kind"]), ("gpubk.usage.v1", "usage-capabilities"))
        self.assertEqual(doc["resolutions"], {"1m": 60, "5m": 300, "10m": 600, "1h": 3600, "1d": 86400})
        self.assertEqual(doc["stored_resolutions"], [60, 3600])
        self.assertEqual(doc["rollup_seconds"], 60)
        self.assertEqual(doc["views"], ["me", "users", "events", "samples", "storage", "capabilities"])
        self.assertEqual(doc["retention"]["minute_days"], 35)
        self.assertEqual(doc["activity_trend"], {"view": "me", "days": 7, "weeks": 4, "resolution": "1h"})
        text = self.ok("u", "capabilities")
        self.assertIn("views: me, users, events, samples, storage, capabilities", text.splitlines())
        self.assertIn("rollup: 60s", text.splitlines())
        self.assertEqual([line for line in text.splitlines() if len(line) > 72], [])
        self.assertIn("storage", self.ok("u", "-h"))
        self.assertIn("capabilities", self.ok("u", "-h"))
        self.assertNoDataDir()

    def test_storage_and_capabilities_take_only_json_options(self):
        for view in ("storage", "capabilities"):
            self.refused("u", view, "--since", "2h", contains="takes only --json")
            self.refused("u", view, "--user", "me", contains="takes only --json")
            self.ok("u", view, "--no-chart")


class RollupTest(UsageViewsCase):

    def test_rollup_option(self):
        out = self.ok("m", "--once", "--rollup", "60")
        first = out.splitlines()[0]
        self.assertTrue(first.startswith("monitor started: interval=60s reclaim_after=0s rollup=60s "), first)
        self.assertIn(" rollup=60s ", self.ok("m", "--once", "--interval", "0.5", env={"BK_TEST_NOW": iso(T0 + 60)}))
        self.assertIn("only 60 is accepted", self.refused("m", "--once", "--rollup", "120"))
        self.refused("m", "--once", "--rollup", "30", contains="only 60 is accepted")
        self.refused("m", "--once", "--rollup", "soon", contains="--rollup")
        self.refused("m", "--once", "--rollup", "0", contains="--rollup")

    def test_rollup_must_be_a_whole_number_of_intervals(self):
        line = self.fails("m", "--once", "--interval", "7")
        self.assertEqual(line, "bk: monitor_rollup_seconds must be an integer multiple of monitor_interval_seconds")
        self.refused("m", "--once", "--interval", "7", "--rollup", "60",
                     contains="monitor_rollup_seconds must be an integer multiple of monitor_interval_seconds")
        self.refused("m", "--once", env={"BK_MONITOR_INTERVAL_SECONDS": "45"},
                     contains="integer multiple")


if __name__ == "__main__":
    unittest.main()
