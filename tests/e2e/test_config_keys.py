"""bk config --keys: the key tables, printed from the declarations; the administrator's guide holds them."""

import os
import unittest

from bktest import SOURCE_DIR, BkTestCase


class ConfigKeysTest(BkTestCase):

    def test_keys_cover_every_setting_and_need_no_ledger(self):
        lines = self.ok("config", "--keys").splitlines()
        self.assertEqual(lines[0], "| key | default | environment | meaning | accepted values |")
        keys = [line.split("`")[1] for line in lines if line.startswith("| `") and not line.startswith("| `BK_")]
        effective = self.json("config", "--json")["effective"]
        # Besides the keys: where the data is, and the original's effective keys that are facts of the
        # deployment rather than settings.
        facts = {"data_dir", "storage_transport", "access_mode", "allocator_command_configured", "broker_gid",
                 "broker_socket", "broker_uid", "config_file", "dir_mode", "enabled_gpus", "file_mode",
                 "monitor_uid", "storage_gid", "worker_effective_max_parallel"}
        self.assertEqual(sorted(keys), sorted(set(effective) - facts))
        self.assertTrue(facts <= set(effective), facts - set(effective))
        self.assertIn("| `BK_GPU_SIM_FILE` | simulated telemetry |", lines)
        self.assertNoDataDir()

    def test_the_administrator_guide_shows_the_generated_tables(self):
        with open(os.path.join(SOURCE_DIR, "docs", "admin-guide.md"), encoding="utf-8") as f:
            guide = f.read()
        tables = self.ok("config", "--keys").split("\n\n")
        for table in tables[:2]:
            self.assertIn(table.strip() + "\n", guide,
                          "docs/admin-guide.md: paste the tables of `bk config --keys` again")


if __name__ == "__main__":
    unittest.main()
