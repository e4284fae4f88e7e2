"""One clock: human text in the user's zone with its offset, JSON in UTC.

The service words its refusals in UTC (a daemon serves users in many zones);
bk writes every instant of a text message in the caller's zone. Run under two
zones east and west of UTC so an unconverted time cannot pass by accident.
"""

import re
import unittest

from bktest import BkTestCase

UTC_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:Z|\+00:00)")


class OneClock(BkTestCase):
    gpu_count = 1

    def conflict(self, tz):
        env = {"TZ": tz}
        self.ok("x", "1", "2h", "-q", env=env)
        return self.refused("1", "1h", "-t", "now", env=env)

    def check_zone(self, tz, offset, nearest_local):
        msg = self.conflict(tz)
        self.assertIsNone(UTC_INSTANT.search(msg), msg)
        self.assertIn("nearest available: GPU=0 %s %s" % (nearest_local, offset), msg)
        # The refusal ends with the command that books that slot, pasteable as is.
        cmd = msg.rsplit("; book it with: ", 1)[1]
        self.assertTrue(cmd.startswith("bk 1 1h --gpu 0 --at "), cmd)
        args = re.findall(r'"[^"]*"|\S+', cmd)[1:]
        out = self.ok(*[a.strip('"') for a in args], env={"TZ": tz})
        self.assertTrue(out.startswith("created: "), out)
        self.assertIn(nearest_local + " " + offset, out)

    def test_shanghai(self):
        # The fixed clock is 2026-11-29 18:49 UTC; the exclusive booking holds until 20:45 UTC.
        self.check_zone("Asia/Shanghai", "+0800", "2026-11-30 04:45")

    def test_new_york(self):
        self.check_zone("America/New_York", "-0500", "2026-11-29 15:45")

    def test_json_stays_utc(self):
        self.ok("x", "1", "2h", "-q")
        doc = self.json_error("1", "1h", "-t", "now", "--json", env={"TZ": "Asia/Shanghai"})
        self.assertIn("nearest available: GPU=0 2026-11-29T20:45:00Z", doc["error"]["message"])
        self.assertNotIn("book it with", doc["error"]["message"])

    def test_edit_refusal_is_local(self):
        ref = self.book_id("1", "1h", "-t", "+3h")
        # Moved onto the current slot, which has started: the earliest editable slot is named.
        msg = self.refused("e", ref, "--start", "2026-11-29T18:45:00Z", env={"TZ": "Asia/Shanghai"})
        self.assertIsNone(UTC_INSTANT.search(msg), msg)
        self.assertIn("+0800", msg)

    def test_agent_context_carries_the_callers_zone(self):
        for tz, offset in (("Asia/Shanghai", "+08:00"), ("America/New_York", "-05:00")):
            zone = self.json("agent", "context", env={"TZ": tz})["time_zone"]
            self.assertEqual((zone["name"], zone["utc_offset"]), (tz, offset))


if __name__ == "__main__":
    unittest.main()
