"""`bk reset [--yes]`: empties a private ledger and its usage history in place; refuses shared data
and servers."""

import fcntl
import os
import sqlite3
import unittest

from bktest import BkTestCase


def usage_counts(data_dir):
    con = sqlite3.connect(f"file:{os.path.join(data_dir, 'usage.db')}?immutable=1", uri=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("devices", "rollups", "events", "processes", "gpus", "heartbeat")}
    finally:
        con.close()


class ResetTest(BkTestCase):
    def prompt(self):
        return f"Clear all bk data in {self.data_dir}? Type reset to continue: "

    def seed(self):
        """Two bookings (one cancelled) and one monitor sample with alice's process on GPU 1."""
        self.use_sim()
        keep = self.book_id("1", "1h")
        gone = self.book_id("1", "2h")
        self.ok("d", gone)
        self.ok("m", "--once")
        return keep

    def test_yes_empties_every_table_and_keeps_the_files(self):
        self.seed()
        rows = self.row_counts()
        usage = usage_counts(self.data_dir)
        self.assertEqual(rows["reservations"], 2)
        self.assertGreater(usage["events"], 0)
        self.assertGreater(usage["rollups"], 0)
        paths = [os.path.join(self.data_dir, n) for n in ("ledger.db", "usage.db")]
        before = [(os.stat(p).st_ino, os.stat(p).st_mode) for p in paths]

        out = self.ok("reset", "--yes")
        self.assertEqual(out, "reset: removed 2 reservation record(s), %d log line(s), 0 backup file(s), "
                              "%d usage event(s), %d usage rollup(s)\n"
                         % (rows["events"], usage["events"], usage["rollups"]))
        self.assertEqual(self.row_counts(), {"reservations": 0, "events": 0, "operations": 0,
                                             "notifications": 0, "meta": 0})
        self.assertEqual(set(usage_counts(self.data_dir).values()), {0})
        self.assertEqual([(os.stat(p).st_ino, os.stat(p).st_mode) for p in paths], before)
        self.assertEqual(self.ok("l"), "No active reservations.\n")
        self.assertEqual(self.json("u", "events", "--json")["records"], [])
        # A fresh start: booking, the history and sampling work again.
        self.book_id("1", "1h")
        self.assertEqual(self.row_counts()["reservations"], 1)
        self.ok("m", "--once")
        self.assertEqual(self.ok("reset", "--yes").split(",")[0], "reset: removed 1 reservation record(s)")

    def test_without_yes_only_the_word_reset_goes_on(self):
        self.seed()
        before = self.snapshot()
        for answer in ("no\n", "y\n", "RESET\n", ""):
            p = self.bk("reset", input=answer)
            self.assertEqual((p.returncode, p.stdout, p.stderr), (1, self.prompt() + "reset cancelled\n", ""),
                             answer)
        # End of input (stdin at /dev/null) is a no as well, not a crash.
        p = self.bk("reset")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (1, self.prompt() + "reset cancelled\n", ""))
        self.assertUnchanged(before)
        p = self.bk("reset", input=" reset \n")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith(self.prompt() + "reset: removed 2 reservation record(s), "),
                        p.stdout)
        self.assertEqual(self.row_counts()["reservations"], 0)

    def test_nothing_to_clear_creates_nothing(self):
        self.assertEqual(self.ok("reset", "--yes"), "reset: removed 0 reservation record(s), 0 log line(s), "
                                                    "0 backup file(s), 0 usage event(s), 0 usage rollup(s)\n")
        self.assertNoDataDir()

    def test_a_shared_data_directory_is_refused(self):
        self.book_id("1", "1h")
        os.chmod(self.data_dir, 0o770)
        msg = self.refused("reset", "--yes")
        self.assertEqual(msg, "bk reset is disabled for shared data directories; stop writers, back up the "
                              "data, and use an administrator-controlled maintenance procedure")
        self.assertEqual(self.row_counts()["reservations"], 1)

    def test_a_servers_ledger_is_refused_directly_and_through_its_daemon(self):
        server = os.path.join(self.tmp, "srv")
        self.ok("server", "init", "--directory", server, "--gpu-count", "4")
        config = os.path.join(server, "config.json")
        line = self.fails("reset", "--yes", env={"BK_DATA_DIR": None, "BK_CONFIG_FILE": config})
        self.assertEqual(line, "bk: bk reset clears only a private ledger, never a server's through its daemon; "
                               "this bk uses the server ledger of %s (BK_CONFIG_FILE is set)" % config)
        line = self.fails("reset", "--yes", env={"BK_DATA_DIR": os.path.join(server, "data")})
        self.assertTrue(line.startswith("bk: bk reset is disabled for shared data directories;"), line)

    def test_a_running_monitor_is_named_and_nothing_is_cleared(self):
        self.seed()
        before = self.row_counts()
        # The lock as GPUBK 0.2.8 leaves it: JSON naming its holder.
        lock = os.path.join(self.data_dir, "usage.lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        self.addCleanup(os.close, fd)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, b'{"pid": 123, "locked_at": "2026-11-29T18:49:00.123456+00:00"}')
        line = self.fails("reset", "--yes", rc=75)
        self.assertEqual(line, "bk: another monitor is writing usage history in %s (pid 123); stop it before "
                               "bk reset" % self.data_dir)
        self.assertEqual(self.row_counts(), before)

    def test_help_lists_it(self):
        self.assertIn("bk reset [--yes]", self.ok("--help"))
        self.assertIn("--yes", self.ok("reset", "--help"))
        self.refused("reset", "--bogus")


if __name__ == "__main__":
    unittest.main()
