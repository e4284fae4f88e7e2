"""A write that waits for the ledger's lock says so, naming who holds it.

A person at a terminal must not stare at ten silent seconds: after half a
second bk prints who holds the write lock (the kernel's record of the SQLite
lock, so the PID is the holder's, here this test process), and the final
refusal names the holder too.
"""

import json
import os
import sqlite3
import subprocess
import unittest

from bktest import BK_BIN, BkTestCase


class LockWaitTest(BkTestCase):
    def hold_write_lock(self):
        self.book("1", "1h")  # the ledger exists
        db = sqlite3.connect(os.path.join(self.data_dir, "ledger.db"), isolation_level=None)
        self.addCleanup(db.close)
        db.execute("BEGIN IMMEDIATE")
        return db

    def test_waiting_is_announced_with_the_holder_and_the_refusal_names_it(self):
        self.hold_write_lock()
        p = self.bk("1", "1h", env={"BK_LOCK_TIMEOUT_SECONDS": "1.5"})
        self.assertEqual(p.returncode, 75, p.stderr)
        holder = f"held by PID {os.getpid()} ("
        lines = p.stderr.splitlines()
        self.assertIn("waiting for the ledger lock", lines[0])
        self.assertIn(holder, lines[0])
        self.assertIn("is busy", lines[-1])
        self.assertIn(holder, lines[-1])
        self.assertEqual(len(self.reservations()), 1)

    def test_the_booking_goes_through_once_the_holder_lets_go(self):
        db = self.hold_write_lock()
        env = dict(self.env, BK_LOCK_TIMEOUT_SECONDS="20")
        p = subprocess.Popen([BK_BIN, "1", "1h"], env=env, cwd=self.tmp, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            first = p.stderr.readline()  # blocks until bk announces the wait
            self.assertIn(f"waiting for the ledger lock (held by PID {os.getpid()}", first)
            db.execute("COMMIT")
            out, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 0, err)
        self.assertTrue(out.startswith("created: "), out)
        self.assertEqual(len(self.reservations()), 2)

    def test_json_callers_get_one_document_and_a_quiet_stderr(self):
        self.hold_write_lock()
        p = self.bk("1", "1h", "--json", env={"BK_LOCK_TIMEOUT_SECONDS": "1.5"})
        self.assertEqual(p.returncode, 75)
        self.assertEqual(p.stderr, "")
        self.assertIn(f"held by PID {os.getpid()}", json.loads(p.stdout)["error"]["message"])

    def test_no_notice_when_the_lock_is_free(self):
        self.book("1", "1h")
        p = self.bk("1", "1h")
        self.assertEqual(p.returncode, 0)
        self.assertNotIn("waiting for the ledger lock", p.stderr)


if __name__ == "__main__":
    unittest.main()
