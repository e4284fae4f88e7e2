"""bk admin data verify / backup on a private ledger."""

import os
import sqlite3
import unittest

from bktest import BkTestCase


class AdminDataTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.ok("1", "30m")
        self.ok("x", "1", "1h", "--gpu", "1")

    def test_verify_live_ledger(self):
        out = self.ok("admin", "data", "verify")
        self.assertIn("integrity: ok", out)
        self.assertIn("invariants: ok (2 reservations, 2 active)", out)
        doc = self.json("admin", "data", "verify", "--json")
        self.assertEqual((doc["schema_version"], doc["ok"], doc["violations"]), ("gpubk.verify.v1", True, []))

    def test_backup_is_a_consistent_ledger_and_verify_finds_tampering(self):
        copy = os.path.join(self.data_dir, "copy.db")
        out = self.ok("admin", "data", "backup", copy)
        self.assertIn("backup: " + copy, out)
        self.assertEqual(os.stat(copy).st_mode & 0o777, 0o600)
        self.assertIn("invariants: ok (2 reservations", self.ok("admin", "data", "verify", copy))
        # Someone writes behind bk's back: a second exclusive booking on GPU 1.
        db = sqlite3.connect(copy)
        db.execute("INSERT INTO reservations SELECT 'x'||id, uid, username, mode, gpus, share_units, memory_mb, "
                   "cpus, ram_mb, start_at, end_at, status, created_at, updated_at, 'x'||op_id, op_signature, "
                   "edit_count, cancel_at, cancel_kind, cancel_reason, cancel_actor_uid, cancel_actor_username, "
                   "cancel_op_id FROM reservations WHERE mode = 'exclusive'")
        db.commit()
        db.close()
        p = self.bk("admin", "data", "verify", copy)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("GPU 1 exclusive reservation overlaps another", p.stdout)

    def test_backup_refuses_an_existing_file_and_relative_paths(self):
        copy = os.path.join(self.data_dir, "copy.db")
        self.ok("admin", "data", "backup", copy)
        before = open(copy, "rb").read()
        self.fails("admin", "data", "backup", copy)
        self.assertEqual(open(copy, "rb").read(), before)
        self.fails("admin", "data", "backup", "relative.db")

    def test_unknown_admin_command(self):
        self.fails("admin", "data", "frobnicate")
        self.fails("admin", "frob")


if __name__ == "__main__":
    unittest.main()


class DoctorTest(BkTestCase):

    def test_doctor_on_a_missing_ledger_creates_nothing(self):
        out = self.ok("doctor")
        self.assertIn("pass configuration: private", out)
        self.assertIn("warn monitor: collector not-seen", out)
        self.assertFalse(os.path.exists(self.data_dir))

    def test_doctor_json_and_strict(self):
        self.ok("1", "30m")
        doc = self.json("doctor", "--json")
        names = {c["name"]: c["status"] for c in doc["checks"]}
        self.assertEqual(doc["schema_version"], "gpubk.doctor.v1")
        self.assertEqual((names["ledger-policy"], names["ledger-integrity"]), ("pass", "pass"))
        self.assertTrue(doc["healthy"])
        # A monitor or worker not running is an issue only when required (as in GPUBK 0.2.8).
        p = self.bk("doctor", "--strict")
        self.assertEqual(p.returncode, 0, p.stdout)
        for flag in ("--require-monitor", "--require-worker"):
            p = self.bk("doctor", "--strict", flag)
            self.assertEqual(p.returncode, 2, p.stdout)  # the monitor and the worker are not running

    def test_doctor_fails_on_a_policy_mismatch(self):
        self.ok("1", "30m")
        # Issues exit 0 unless --strict (as in GPUBK 0.2.8).
        p = self.bk("doctor", env={"BK_GPU_COUNT": "8"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("fail ledger-policy: local configuration does not match ledger policy: gpu_count", p.stdout)
        p = self.bk("doctor", "--strict", env={"BK_GPU_COUNT": "8"})
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("fail ledger-policy: local configuration does not match ledger policy: gpu_count", p.stdout)
