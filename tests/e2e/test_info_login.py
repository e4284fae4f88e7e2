"""`bk info` (administrator, deployment, policy) and `bk login` as a login shell sees it:
`bk login install|uninstall` in a temporary HOME, the five-line limit, and the hook's silence
when the server cannot be reached. Neither command starts a daemon or creates a ledger."""

import json
import os
import stat
import subprocess
import unittest

from bktest import BkTestCase, BK_BIN

BEGIN = "# >>> gpubk: bk login >>>"
END = "# <<< gpubk: bk login <<<"


class InfoTest(BkTestCase):

    def test_private_deployment_and_policy_without_a_ledger(self):
        out = self.ok("info", env={"BK_DISABLED_GPUS": "3"})
        head, rest = out.split("\n\n")
        self.assertEqual(head.splitlines()[0], "GPUBK private ledger")
        self.assertEqual(rest.splitlines(), [
            "Deployment: private (BK_DATA_DIR is set)",
            "Config file: %s/config.json (absent: defaults apply)" % self.data_dir,
            "Ledger: %s/ledger.db (not created yet)" % self.data_dir,
            "Policy:",
            "  GPUs: 4 (3 enabled: 0,1,2)",
            "  Slot: 5m; longest booking 30d; bookings end within 30d",
            "  Shared slots per GPU: 2",
            "  Blackouts not over yet: 0",
            "  Lab presets: 0"])
        self.assertNoDataDir()

    def test_json_keeps_the_administrator_document_and_all_adds_the_rest(self):
        admin = self.json("info", "--json")
        self.assertEqual(admin["schema_version"], "gpubk.administrator.v1")
        self.assertEqual(set(admin), {"schema_version", "kind", "source", "account_resolved", "account",
                                      "full_name", "room", "contact"})
        blackout = json.dumps([{"start_at": "2026-11-30T02:00:00Z", "end_at": "2026-11-30T03:00:00Z",
                                "reason": "x"}, {"start_at": "2026-11-28T02:00:00Z",
                                                 "end_at": "2026-11-28T03:00:00Z", "reason": "past"}])
        doc = self.json("info", "--json", "--all", env={"BK_BOOKING_BLACKOUTS": blackout})
        self.assertEqual((doc["schema_version"], doc["kind"]), ("gpubk.info.v1", "info"))
        self.assertEqual(doc["administrator"], admin)
        self.assertEqual(doc["deployment"]["mode"], "private")
        self.assertIsNone(doc["deployment"]["daemon_answers"])
        self.assertEqual(doc["policy"], {"gpu_count": 4, "enabled_gpus": [0, 1, 2, 3], "slot_seconds": 300,
                                         "max_duration_seconds": 720 * 3600, "horizon_seconds": 30 * 86400,
                                         "shared_slots_per_gpu": 2, "upcoming_blackouts": 1, "lab_presets": 0})
        self.assertIn("--all goes with --json", self.fails("info", "--all"))
        self.assertNoDataDir()

    def test_a_server_nobody_serves(self):
        srv = dead_server(self)
        before = self.snapshot()
        out = self.ok("info")
        self.assertTrue(out.startswith("GPUBK server\n"), out)
        self.assertIn("Socket: %s (no daemon answers; see `bk doctor`)" % os.path.join(srv, "run", "broker.sock"),
                      out)
        self.assertFalse(self.json("info", "--compact", "--all")["deployment"]["daemon_answers"])
        self.assertUnchanged(before, "after bk info")
        self.assertFalse(os.path.exists(os.path.join(srv, "run", "broker.sock")))


def dead_server(case):
    """A server directory that was never served: its socket is dead."""
    srv = os.path.join(case.tmp, "srv")
    os.mkdir(srv, 0o700)
    case.ok("server", "init", "--directory", srv, "--gpu-count", "4")
    case.env["BK_CONFIG_FILE"] = os.path.join(srv, "config.json")
    del case.env["BK_DATA_DIR"]  # it would win over BK_CONFIG_FILE
    return srv


class LoginInstallTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.home = self.env["HOME"]
        self.bashrc = os.path.join(self.home, ".bashrc")
        self.env["SHELL"] = "/bin/bash"

    def read(self, path):
        with open(path, encoding="utf-8") as f:
            return f.read()

    def test_install_once_keep_everything_else_and_uninstall(self):
        with open(self.bashrc, "w", encoding="utf-8") as f:
            f.write("export A=1\nalias ll='ls -l'\n")
        os.chmod(self.bashrc, 0o640)
        self.assertEqual(self.ok("login", "install"), "installed in ~/.bashrc: new interactive shells show "
                                                      "`bk login`; `bk login uninstall` removes it\n")
        self.assertEqual(self.ok("login", "install"), "already installed in ~/.bashrc\n")
        text = self.read(self.bashrc)
        self.assertTrue(text.startswith("export A=1\nalias ll='ls -l'\n" + BEGIN + "\n"), text)
        self.assertEqual(text.count(BEGIN), 1)
        self.assertIn("case $- in\n  *i*) timeout -k 0.2s 1s '%s' login --hook 2>/dev/null || : ;;\nesac\n"
                      % os.path.realpath(BK_BIN), text)
        self.assertTrue(text.endswith(END + "\n"))
        self.assertEqual(stat.S_IMODE(os.stat(self.bashrc).st_mode), 0o640)
        self.assertEqual(self.ok("login", "uninstall"), "removed the bk login block from ~/.bashrc\n")
        self.assertEqual(self.read(self.bashrc), "export A=1\nalias ll='ls -l'\n")
        self.assertEqual(self.ok("login", "uninstall"), "not installed in ~/.bashrc; nothing to remove\n")
        self.assertNoDataDir()

    def test_zsh_an_explicit_file_and_a_linked_dotfile(self):
        self.ok("login", "install", env={"SHELL": "/usr/bin/zsh"})
        self.assertIn(BEGIN, self.read(os.path.join(self.home, ".zshrc")))
        self.assertFalse(os.path.exists(self.bashrc))
        other = os.path.join(self.tmp, "my.rc")
        self.ok("login", "install", "--rc", other)
        self.assertEqual(stat.S_IMODE(os.stat(other).st_mode), 0o644)
        dots = os.path.join(self.home, "dotfiles")
        os.mkdir(dots)
        target = os.path.join(dots, "bashrc")
        with open(target, "w", encoding="utf-8") as f:
            f.write("# mine\n")
        os.symlink(target, self.bashrc)
        out = self.ok("login", "install")
        self.assertEqual(out.splitlines()[0], "note: ~/.bashrc is a link; changed its target %s" % target)
        self.assertTrue(os.path.islink(self.bashrc))
        self.assertTrue(self.read(target).startswith("# mine\n" + BEGIN))

    def test_the_hook_runs_in_an_interactive_shell_only(self):
        self.book_id("1", "1h")
        self.ok("login", "install")
        env = dict(self.env, PATH=os.environ.get("PATH", "/usr/bin:/bin"))
        inter = subprocess.run(["bash", "-ic", "echo done"], env=env, capture_output=True, text=True, timeout=30,
                               stdin=subprocess.DEVNULL)
        self.assertIn("GPUBK: 1 active", inter.stdout)
        plain = subprocess.run(["bash", "-c", "source ~/.bashrc; echo done"], env=env, capture_output=True,
                               text=True, timeout=30)
        self.assertEqual(plain.stdout, "done\n")


class LoginLimitsTest(BkTestCase):

    def test_at_most_five_lines(self):
        self.book_id("1", "1h")
        self.book_id("1", "30m", "-t", "20:00")
        for i in range(3):
            self.ok("admin", "notice", "publish", "Critical %d" % i, "--level", "critical", "--yes")
        lines = self.ok("login").splitlines()
        self.assertEqual(len(lines), 5, lines)
        self.assertEqual(lines[0], "GPUBK: 1 active, 1 upcoming, 3 critical announcements")
        self.assertEqual(lines[-1], "  ... and more: `bk n` lists every notice, `bk l` your bookings")
        self.assertEqual(self.ok("login", "--hook").splitlines(), lines)

    def test_an_unreachable_server_is_silent_with_the_hook_and_starts_nothing(self):
        srv = dead_server(self)
        before = self.snapshot()
        p = self.bk("login", "--hook")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertNotEqual(self.bk("login").returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(srv, "run", "broker.sock")))
        self.assertUnchanged(before, "after bk login")
        # Any error at all, a bad option or a broken configuration too.
        p = self.bk("login", "--hook", "--within", "soon")
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        p = self.bk("login", "--hook", env={"BK_CONFIG_FILE": os.path.join(self.tmp, "missing.json")})
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))


if __name__ == "__main__":
    unittest.main()
