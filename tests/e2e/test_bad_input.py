"""Bad input: one `bk: ...` line on stderr naming the problem and the fix, exit 2, and
nothing written; with --json the error document on stdout instead."""

import os
import shutil
import unittest

from bktest import BkTestCase

# (arguments, substrings the message must contain). None of these needs a ledger
# to be refused, so on an empty data dir the data dir must not even be created.
REFUSED_UP_FRONT = [
    # durations
    (["1", "30"], ["duration must look like 30m, 1h30m, or 1d"]),
    (["1", "1h30h"], ["duration units may only appear once"]),
    (["1", "0m"], ["duration must be positive"]),
    (["1", "7m"], ["duration must be a positive multiple of 5 minutes"]),
    (["1", "1h 30m"], ["duration must look like"]),
    (["1", "1.5h"], ["duration must look like"]),
    (["1", "1w"], ["duration must look like"]),
    (["1", "-5m"], ["duration must look like"]),
    (["x", "1", "7m"], ["multiple of 5 minutes"]),
    # memory
    (["1", "30m", "12"], ["memory must look like 12g or 4096m"]),
    (["1", "30m", "12t"], ["memory must look like 12g or 4096m"]),
    (["1", "30m", "--mem", "0g"], ["memory must be positive"]),
    (["1", "30m", "0.4m"], ["memory must be at least 1 MiB"]),
    (["1", "30m", "12g", "--mem", "12g"], ["either positionally or with --mem, not both"]),
    (["1", "30m", "12g", "13g"], ["13g"]),
    # GPU counts and lists
    (["0", "30m"], ["GPU count must be between 1 and 4"]),
    (["5", "30m"], ["GPU count must be between 1 and 4"]),
    (["1", "30m", "--gpu", "a"], ["--gpu must contain comma-separated GPU indexes"]),
    (["1", "30m", "--gpu", ""], ["--gpu must contain at least one GPU index"]),
    (["2", "30m", "--gpu", "1,1"], ["--gpu must not contain repeated GPU indexes"]),
    (["1", "30m", "--gpu", "9"], ["GPU index 9 is out of range", "0-3"]),
    (["1", "30m", "--gpu", "0,1"], ["--gpu lists 2 GPU(s) but the request is for 1", "bk 2 DUR --gpu 0,1"]),
    (["1", "30m", "-e", "9"], ["GPU index 9 is out of range"]),
    (["1", "30m", "-e", "x"], ["--exclude-gpu must contain comma-separated GPU indexes"]),
    (["4", "30m", "-e", "0"], ["requested 4 GPU(s), but only 3 are eligible", "request-excluded=0"]),
    (["1", "30m", "-g", "0", "-e", "1"], ["--gpu", "--exclude-gpu"]),
    # shared slots
    (["1", "30m", "--share", "3"], ["share slots must be between 1 and 2"]),
    (["1", "30m", "--share", "0"], ["share slots must be between 1 and 2"]),
    (["1", "30m", "--share", "x"], ["--share must be a whole number of slots", "'x'"]),
    (["x", "1", "30m", "--share", "2"], ["--share applies only to shared reservations"]),
    (["x", "1", "30m", "-s", "1"], ["--share applies only to shared reservations"]),
    # start times
    (["1", "30m", "-t", "20:03"], ["start time must align to a 5-minute boundary"]),
    (["1", "30m", "--start", "2026-11-29T20:00:30"], ["align to a 5-minute boundary"]),
    (["1", "30m", "--start", "2026-11-29T10:00"], ["start time is before the current 5-minute interval"]),
    (["1", "30m", "--start", "2026-11-29T20:00:00+08:00"], ["before the current 5-minute interval"]),
    (["1", "30m", "-t", "today 9"], ["before the current 5-minute interval"]),
    (["1", "30m", "-t", "blah"], ["start must be now, +30m, 9, 21, 9am", "ISO 8601"]),
    (["1", "30m", "-t", "tomorrow"], ["start must be now, +30m"]),
    (["1", "30m", "-t", "25:00"], ["24-hour clock must use an hour between 0 and 23"]),
    (["1", "30m", "-t", "13pm"], ["12-hour clock must use an hour between 1 and 12"]),
    (["1", "30m", "-t", "02-30 10:00"], ["invalid calendar date"]),
    (["1", "30m", "-t", "+0m"], ["relative start must look like +30m or +1h30m"]),
    (["1", "30m", "--start", "2026-11-29T20:00", "-t", "20:00"], ["--start", "--at"]),
    # options, commands and grammar
    (["1", "30m", "--frobnicate"], ["--frobnicate", "bk --help"]),
    (["book", "1", "30m", "--frobnicate"], ["--frobnicate", "bk book --help"]),
    (["1", "30m", "--mode", "x"], ["--mode"]),
    (["frobnicate"], ["unknown command: frobnicate", "bk -h"]),
    (["-1", "30m"], ["unknown command: -1"]),
    (["1"], ["`bk 1` needs a duration too, e.g. `bk 1 30m`"]),
    (["book"], ["give a GPU count and a duration, e.g. `bk 1 30m`"]),
    (["x", "1"], ["give a GPU count and a duration"]),
    (["1", "30m", "--"], ["-- must be followed by a job command"]),
    # operation IDs
    (["1", "30m", "--op-id", "a b"], ["operation ID contains unsupported characters"]),
    (["1", "30m", "--op-id", "a/b"], ["operation ID contains unsupported characters"]),
    (["1", "30m", "--op-id", ""], ["operation ID must contain 1-128 characters"]),
    (["1", "30m", "--op-id", "a" * 129], ["operation ID must contain 1-128 characters"]),
    # host budgets
    (["1", "30m", "--cpus", "0"], ["--cpus must be a whole number of CPUs"]),
    (["1", "30m", "--cpus", "1.5"], ["--cpus must be a whole number of CPUs"]),
    (["1", "30m", "--ram", "12"], ["--ram must look like 12g or 4096m"]),
    (["1", "30m", "--ram", "0g"], ["--ram must be positive"]),
    # references and manage commands
    (["d"], ["which reservation?", "bk d 1"]),
    (["e"], ["which reservation?"]),
    (["e", "1"], ["edit needs at least one change", "--duration"]),
    (["history"], ["which reservation?"]),
    (["history", "zzz"], ["zzz"]),
    (["renew", "1"], ["give a reservation and how much longer, e.g. `bk renew 1 30m`"]),
    (["renew", "1", "7m"], ["renewal must be a positive multiple of 5 minutes"]),
    (["d", "1", "2"], ["2"]),
    # list/log limits
    (["l", "-n", "0"], ["--limit must be between 1 and 1000"]),
    (["l", "-n", "1001"], ["--limit must be between 1 and 1000"]),
    (["l", "-n", "x"], ["--limit must be between 1 and 1000"]),
    (["l", "-n", "1", "--no-limit"], ["--limit", "--no-limit"]),
    (["l", "extra"], ["extra", "bk list --help"]),
    (["lg", "--limit", "0"], ["--limit must be between 1 and 1000"]),
    (["n", "--limit", "1001"], ["--limit must be between 1 and 1000"]),
    # views
    (["tl", "1d", "--step", "5m"], ["timeline would contain 288 cells; increase --step or use --step auto (maximum 240)"]),
    (["tl", "--step", "7m"], ["--step must be a multiple of the configured 5-minute slot"]),
    (["tl", "1h", "--step", "25m"], ["--window must be an exact multiple of --step"]),
    (["tl", "--step", "auto", "--window", "2000h"], ["--window is too large for automatic timeline scaling"]),
    (["tl", "--gpu", "9"], ["GPU IDs must be between 0 and 3"]),
    (["tl", "-f", "blah"], ["start must be now"]),
    (["tl", "0m"], ["duration must be positive"]),
    (["st", "--gpu", "x"], ["--gpu must contain comma-separated GPU indexes"]),
    (["st", "extra"], ["extra"]),
    (["g", "5"], ["count must be between 1 and 4"]),
    (["g", "x"], ["count must be between 1 and 4"]),
    (["slots", "5", "1h"], ["GPU count must be between 1 and 4"]),
    (["slots", "1", "1h", "--limit", "21"], ["--limit must be between 1 and 20"]),
    (["slots", "1", "7m"], ["multiple of 5 minutes"]),
    (["slots", "1", "1h", "--mode", "y"], ["--mode must be s, shared, x or exclusive"]),
    (["slots", "x", "1", "1h", "-s", "2"], ["--share applies only to shared reservations"]),
    (["config", "extra"], ["extra"]),
    # admin
    (["admin"], ["usage: bk admin data import|verify|backup"]),
    (["admin", "data", "import"], ["give the ledger.json to import"]),
]

# Refused only after the ledger was consulted (policy, conflicts, references).
REFUSED_BY_THE_LEDGER = [
    (["1", "30m", "-t", "+40d"], ["reservation ends beyond the 30-day booking horizon (2026-12-29", "18:49"]),
    (["1", "30m", "--start", "2027-01-10T10:00"], ["30-day booking horizon"]),
    (["1", "800h"], ["reservation duration exceeds the administrator maximum of 720 hours"]),
    (["d", "zzz"], ["reservation not found for current user: zzz", "bk l"]),
    (["d", "zzz", "--reason", "x"], ["reservation not found"]),
    (["e", "zzz", "-d", "1h"], ["reservation not found"]),
    (["e", "1", "-d", "1h"], ["no active reservation number 1: you have no active reservations"]),
    (["renew", "1", "30m"], ["no active reservation number 1: you have no active reservations"]),
]


# Refused by the option grammar: a usage error, which stays on stderr with --json as argparse's do.
USAGE_ERRORS = {
    ("1", "30m", "12g", "13g"), ("1", "30m", "-g", "0", "-e", "1"),
    ("1", "30m", "--start", "2026-11-29T20:00", "-t", "20:00"), ("1", "30m", "--frobnicate"),
    ("book", "1", "30m", "--frobnicate"), ("1", "30m", "--mode", "x"), ("d", "1", "2"),
    ("l", "-n", "1", "--no-limit"), ("l", "extra"),
}


def json_variant(args):
    """The same request with --json (before any `--`)."""
    if "--" in args:
        i = args.index("--")
        return args[:i] + ["--json"] + args[i:]
    return args + ["--json"]


# Commands whose grammar has --json, so that adding it does not change the error.
JSON_COMMANDS = {"book", "x", "l", "lg", "n", "d", "e", "history", "renew"}


def has_json(args):
    return bool(args) and (args[0].isdigit() or args[0] in JSON_COMMANDS) and args != ["1"]


class EmptyDataDirTest(BkTestCase):
    """On a data dir that does not exist yet, refused input must not create it."""

    def test_refused_up_front(self):
        for args, needles in REFUSED_UP_FRONT:
            with self.subTest(args=args):
                self.refused(*args, contains=needles)
                self.assertNoDataDir()

    def test_refused_up_front_json(self):
        for args, needles in REFUSED_UP_FRONT:
            if not has_json(args):
                continue
            with self.subTest(args=args):
                if tuple(args) in USAGE_ERRORS:
                    self.refused(*json_variant(args), contains=needles)
                else:
                    self.refused_json(*json_variant(args), contains=needles)
                self.assertNoDataDir()

    def test_compact_also_selects_json_errors(self):
        doc = self.refused_json("1", "30", "--compact")
        self.assertEqual(doc["error"]["message"], "duration must look like 30m, 1h30m, or 1d")

    def test_refused_by_the_ledger_creates_nothing(self):
        for args, needles in REFUSED_BY_THE_LEDGER:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            with self.subTest(args=args):
                self.fails(*args)
                self.assertNoDataDir()

    def test_conflict_on_a_fresh_data_dir_creates_nothing(self):
        self.use_sim()
        self.fails("1", "30m", "--gpu", "1", "--mem", "90g", "-t", "now")
        self.assertNoDataDir()

    def test_messages_of_refusals_by_the_ledger(self):
        # the text is right even though the data dir gets created (see above)
        for args, needles in REFUSED_BY_THE_LEDGER:
            with self.subTest(args=args):
                p = self.bk(*args)
                self.assertEqual((p.returncode, p.stdout), (2, ""))
                self.assertEqual(len(p.stderr.splitlines()), 1)
                for n in needles:
                    self.assertIn(n, p.stderr)


class ExistingLedgerTest(BkTestCase):
    """With a ledger holding reservations, refused input changes nothing on disk."""

    def setUp(self):
        super().setUp()
        self.running = self.book_id("1", "30m", "--gpu", "0")          # #1, started
        self.future = self.book_id("1", "1h", "--gpu", "1", "-t", "20:00")  # #2
        self.excl = self.book_id("x", "1", "1h", "--gpu", "2")          # #3 (18:45)
        self.ok("1", "1h", "--op-id", "used-1", "--gpu", "3", "-q")

    def test_refused_up_front(self):
        for args, needles in REFUSED_UP_FRONT:
            if args in (["e", "1"],):
                continue
            with self.subTest(args=args):
                self.refused(*args, contains=needles)

    def test_refused_by_the_ledger(self):
        for args, needles in REFUSED_BY_THE_LEDGER:
            if args[:2] in (["e", "1"], ["renew", "1"]):
                continue  # #1 exists here
            with self.subTest(args=args):
                self.refused(*args, contains=needles)
                self.refused_json(*json_variant(args), contains=needles)

    def test_edit_with_bad_values(self):
        f = self.future[:8]
        cases = [
            (["e", "1", "-d", "7m"], "multiple of 5 minutes"),
            (["e", "1", "--gpu", "1"], "a started reservation may only change its end time"),
            (["e", "1", "-d", "5m", "--mem", "1g"], "a started reservation may only change its end time"),
            (["e", f, "--gpu", "9"], "GPU index 9 is out of range"),
            (["e", f, "--gpu", "0,0"], "repeated"),
            (["e", f, "-c", "0"], "--count must be a whole number of GPUs >= 1"),
            (["e", f, "-c", "5"], "GPU count must be between 1 and 4"),
            (["e", f, "--mode", "y"], "--mode must be s, shared, x or exclusive"),
            (["e", f, "--mem", "12"], "memory must look like 12g or 4096m"),
            (["e", f, "-t", "20:03"], "align to a 5-minute boundary"),
            (["e", f, "-s", "3"], "share slots must be between 1 and 2"),
            (["e", f, "--mode", "x", "-s", "2"], "--share applies only to shared reservations"),
            (["e", f, "-d", "0m"], "duration must be positive"),
            (["e", f, "-d", "800h"], "720 hours"),
            (["e", f, "-t", "+40d"], "30-day booking horizon"),
            (["e", f, "--start", "now"], "edit start must not be in the past"),
            (["e", f, "--gpu", "2", "-t", "19:00"], "exclusive conflict on GPU 2"),
            (["e", f, "--frobnicate"], "--frobnicate"),
            (["renew", "1", "800h"], "720 hours"),
            (["renew", self.excl[:8], "0m"], "duration must be positive"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                self.refused(*args, contains=needle)

    def test_conflicts_write_nothing(self):
        cases = [
            # exclusive on a pinned GPU that is already booked
            (["x", "1", "30m", "--gpu", "0", "-t", "now"], "GPU 0 already has shared reservations"),
            (["1", "30m", "--gpu", "2", "-t", "now"], "exclusive conflict on GPU 2"),
            (["1", "30m", "--gpu", "0", "-s", "2", "-t", "now"], "shared capacity full on GPU 0"),
            (["4", "30m", "-t", "now"], "nearest available"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                self.refused(*args, contains=[needle, "nearest available"])
                self.refused_json(*json_variant(args), contains=needle)

    def test_reused_op_id(self):
        msg = self.refused("1", "30m", "--op-id", "used-1")
        self.assertEqual(msg, "operation ID used-1 was already used for a different write; choose a new --op-id")

    def test_cancelled_reservation_cannot_be_changed(self):
        self.ok("d", self.future)
        self.refused("d", self.future, contains="is cancelled")
        self.refused("e", self.future, "-d", "2h", contains="is cancelled")
        self.refused("renew", self.future, "30m")

    def test_import_into_a_non_empty_ledger(self):
        path = self.write_json("l.json", {"version": 1, "reservations": []})
        self.refused("admin", "data", "import", path, contains="needs an empty ledger")


class EnvironmentConfigTest(BkTestCase):
    """Invalid settings in the environment are refused before anything is opened."""

    CASES = [
        ({"BK_SLOT_MINUTES": "7"}, ["slot_minutes must divide one hour", "1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60"]),
        ({"BK_GPU_COUNT": "0"}, ["gpu_count must be between 1 and 1024"]),
        ({"BK_GPU_COUNT": "abc"}, ["gpu_count must be an integer"]),
        ({"BK_MAX_SHARED_USERS": "x"}, ["max_shared_users must be an integer"]),
        ({"BK_MAX_SHARED_USERS": "0"}, ["max_shared_users"]),
        ({"BK_HOST_CPUS": "-1"}, ["host_cpus"]),
        ({"BK_TEST_NOW": "garbage"}, ["BK_TEST_NOW must be Unix seconds or an ISO time"]),
    ]

    def test_invalid_settings(self):
        for env, needles in self.CASES:
            for args in (["1", "30m"], ["l"], ["st"], ["config"]):
                with self.subTest(env=env, args=args):
                    self.refused(*args, env=env, contains=needles)
                    self.assertNoDataDir()
            with self.subTest(env=env, json=True):
                self.refused_json("1", "30m", "--json", env=env, contains=needles)
                self.assertNoDataDir()

    def test_invalid_settings_with_an_existing_ledger(self):
        self.ok("1", "30m", "-q")
        for env, needles in self.CASES:
            with self.subTest(env=env):
                self.refused("1", "30m", env=env, contains=needles)

    def test_ledger_bound_setting_changed_later(self):
        self.ok("1", "30m", "-q")
        msg = self.refused("1", "30m", env={"BK_SLOT_MINUTES": "10"})
        self.assertIn("local configuration does not match ledger policy", msg)
        self.assertIn("granularity_seconds: ledger=300 local=600", msg)
        p = self.bk("config", env={"BK_SLOT_MINUTES": "10"})
        self.assertEqual(p.returncode, 2)
        self.assertIn("ledger policy: mismatch", p.stdout)


class ConfigFileTest(BkTestCase):
    """An invalid <data dir>/config.json is refused with its path; nothing else is created."""

    def write_config(self, text):
        os.makedirs(self.data_dir)
        with open(os.path.join(self.data_dir, "config.json"), "w") as f:
            f.write(text)

    def check(self, text, needles):
        self.write_config(text)
        for args in (["1", "30m"], ["l"], ["st"], ["e", "1", "-d", "1h"], ["d", "1"]):
            with self.subTest(args=args):
                msg = self.refused(*args, contains=needles)
                self.assertIn(os.path.join(self.data_dir, "config.json"), msg)
        self.assertEqual(os.listdir(self.data_dir), ["config.json"])
        self.refused_json("1", "30m", "--json", contains=needles)

    def test_unknown_key_with_did_you_mean(self):
        self.check('{"slot_minute": 5}', ["unknown key slot_minute (did you mean slot_minutes?)"])

    def test_bad_value(self):
        self.check('{"gpu_count": "x"}', ["gpu_count must be an integer"])

    def test_out_of_range(self):
        self.check('{"max_shared_users": 0}', ["max_shared_users must be between 1 and 10000"])

    def test_not_json(self):
        self.check("{bad json", ["is not valid JSON; fix or remove it"])

    def test_duplicate_key(self):
        self.check('{"gpu_count": 4, "gpu_count": 8}', ['names key "gpu_count" twice; keep one'])

    def test_not_an_object(self):
        self.check("[]", ["must hold a JSON object"])

    def test_valid_file_applies(self):
        self.write_config('{"slot_minutes": 10, "max_shared_users": 3}')
        self.assertIn("share=1 slot (max 3)", self.ok("1", "30m"))
        self.refused("1", "15m", contains="multiple of 10 minutes")



class TimeTextTest(BkTestCase):
    """Times that name no instant, or nothing at all."""

    def test_empty_time_is_not_now(self):
        for args in (["1", "30m", "-t", ""], ["1", "30m", "--start", " "], ["x", "1", "1h", "--at", ""]):
            self.refused(*args, contains="the time is empty")
        self.assertNoDataDir()

    def test_time_skipped_by_daylight_saving_is_refused(self):
        env = {"TZ": "America/New_York", "BK_TEST_NOW": "2026-03-07T17:00:00Z"}
        for when in ("2026-03-08 02:30", "tomorrow 02:30", "03-08 2:30am"):
            self.refused("1", "30m", "-t", when, env=env,
                         contains=["2026-03-08 02:30 does not exist in the local time zone",
                                   "2026-03-08 03:30 -0400"])
        self.assertNoDataDir()
        # The hour before and after the gap are ordinary times.
        self.assertIn("2026-03-08 01:30 -0500", self.ok("1", "30m", "-t", "2026-03-08 01:30", env=env))
        self.assertIn("2026-03-08 03:30 -0400", self.ok("1", "30m", "-t", "2026-03-08 03:30", env=env))

    def test_a_booking_across_the_fall_back_never_ends_before_it_starts(self):
        env = {"TZ": "America/New_York", "BK_TEST_NOW": "2026-10-31T17:00:00Z", "COLUMNS": "100"}
        # 01:30 EDT for 45 minutes ends at 01:15 EST, on the repeated hour.
        rid = self.book_id("1", "45m", "--start", "2026-11-01T05:30:00Z", env=env)
        row = [l for l in self.ok("l", env=env).splitlines() if rid[:8] in l][0]
        self.assertIn("11-01 01:30 -0400", row)
        self.assertIn("11-01 01:15 -0500", row)
        row = [l for l in self.ok("st", env=env).splitlines() if rid[:8] in l][0]
        self.assertIn("11-01 01:30 -0400->11-01 01:15 -0500", row)

    def test_server_directory_too_long_for_a_socket(self):
        long_dir = os.path.join(self.tmp, "s" * (120 - len(self.tmp)))
        msg = self.refused("server", "init", "--directory", long_dir, contains="too long")
        self.assertIn("run/broker.sock", msg)
        self.assertFalse(os.path.exists(long_dir))

if __name__ == "__main__":
    unittest.main()
