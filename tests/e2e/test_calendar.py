"""`bk cal`: bookings as an RFC 5545 iCalendar, read back by a real parser
(Debian's python3-icalendar): every booking's UID, start, end and status
round-trip; an edit raises SEQUENCE, a cancellation stays as CANCELLED; -o
writes a file atomically and never through a link; bad input changes nothing.
"""

import datetime
import os
import unittest

from bktest import BkTestCase

try:
    import icalendar
except ImportError:  # pragma: no cover - the package is in scripts/install-deps
    icalendar = None


def utc(iso):
    return datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


@unittest.skipUnless(icalendar, "python3-icalendar is not installed (scripts/install-deps)")
class CalendarTest(BkTestCase):
    def events(self, text):
        cal = icalendar.Calendar.from_ical(text)
        self.assertEqual(str(cal["VERSION"]), "2.0")
        return {str(e["UID"]): e for e in cal.walk("VEVENT")}

    def test_every_booking_round_trips_through_a_real_parser(self):
        ids = [self.book_id("1", "30m"), self.book_id("2", "1h", "-t", "21:00"),
               self.book_id("x", "1", "2h", "-t", "tomorrow 09:00")]
        self.ok("e", ids[1], "--duration", "2h")
        self.ok("d", ids[2])
        events = self.events(self.ok("cal"))
        self.assertEqual(set(events), {i + "@gpubk" for i in ids})
        for r in self.json("l", "--json", "--history")["reservations"]:
            e = events[r["id"] + "@gpubk"]
            self.assertEqual(e.decoded("DTSTART"), utc(r["start_at"]))
            self.assertEqual(e.decoded("DTEND"), utc(r["end_at"]))
            self.assertEqual(str(e["STATUS"]), "CANCELLED" if r["status"] == "cancelled" else "CONFIRMED")
        self.assertEqual(int(events[ids[0] + "@gpubk"]["SEQUENCE"]), 0)
        self.assertEqual(int(events[ids[1] + "@gpubk"]["SEQUENCE"]), 1)  # one edit
        self.assertEqual(int(events[ids[2] + "@gpubk"]["SEQUENCE"]), 1)  # cancelled
        self.assertIn("exclusive", str(events[ids[2] + "@gpubk"]["SUMMARY"]))

    def test_output_file_is_written_atomically_and_updated_in_place(self):
        first = self.book_id("1", "30m")
        path = os.path.join(self.tmp, "gpus.ics")
        self.assertIn("wrote 1 booking(s)", self.ok("cal", "-o", path))
        with open(path, "rb") as f:
            self.assertEqual(set(self.events(f.read())), {first + "@gpubk"})
        self.ok("renew", first, "30m")
        self.ok("cal", "-o", path)
        with open(path, "rb") as f:
            e = self.events(f.read())[first + "@gpubk"]
        self.assertEqual(int(e["SEQUENCE"]), 1)
        self.assertEqual(e.decoded("DTEND") - e.decoded("DTSTART"), datetime.timedelta(hours=1))
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o644)

    def test_days_bounds_the_past_and_bad_input_changes_nothing(self):
        self.book_id("1", "30m")
        link = os.path.join(self.tmp, "link.ics")
        target = os.path.join(self.tmp, "elsewhere.ics")
        with open(target, "w") as f:
            f.write("keep\n")
        os.symlink(target, link)
        before = self.snapshot()
        for args, needle in ((["cal", "--days", "0"], "--days must be between 1 and 3650"),
                             (["cal", "--days", "x"], "--days must be between 1 and 3650"),
                             (["cal", "-o", link], "not a regular file"),
                             (["cal", "-o", self.tmp + "/"], "needs a file name")):
            p = self.bk(*args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(len(p.stderr.strip().split("\n")), 1, p.stderr)
            self.assertIn(needle, p.stderr)
        self.assertUnchanged(before)
        with open(target) as f:
            self.assertEqual(f.read(), "keep\n")
        # Ended 40 days ago: outside the default 30 days, inside --days 60.
        self.assertEqual(len(self.events(self.ok("cal", env={"BK_TEST_NOW": "2027-01-10T12:00:00Z"}))), 0)
        self.assertEqual(len(self.events(self.ok("cal", "--days", "60",
                                                 env={"BK_TEST_NOW": "2027-01-10T12:00:00Z"}))), 1)


if __name__ == "__main__":
    unittest.main()
