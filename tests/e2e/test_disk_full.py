"""A full disk: the ledger on a small tmpfs, filled to the last block.

Bookings fail with one line naming the full disk and change nothing; what was confirmed before
stays, the ledger stays sound, and everything works again once space returns. The same holds
through the daemon, which keeps running (and keeps its monitor sampling) while it cannot write;
when writes that arrived together fail their shared commit, every one of their clients is told.

Needs root (it mounts a tmpfs; CI runs as root); skipped otherwise.
"""

import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from bktest import BkTestCase
from ledger_checker import integrity_check
from server_fixture import OWNER, USER_A, Account, Rpc, Server, is_root, make_base_dir, remove_tree


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0755" % size, "tmpfs", path],
                       capture_output=True, text=True)
    return p.returncode == 0


def fill(mount):
    """Takes every free block of the filesystem; returns the filler's path."""
    path = os.path.join(mount, "filler")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (65536, 4096, 512, 1):  # big steps, then the crumbs
            while True:
                try:
                    os.write(fd, b"\0" * size)
                except OSError:
                    break
    finally:
        os.close(fd)
    return path


def can_mount():
    if not is_root():
        return False
    probe = tempfile.mkdtemp(prefix="bk-mnt-probe-")
    try:
        if not mount_tmpfs(probe, "64k"):
            return False
        subprocess.run(["umount", probe], check=False)
        return True
    finally:
        shutil.rmtree(probe, ignore_errors=True)


MOUNT_OK = can_mount()


@unittest.skipUnless(MOUNT_OK, "needs root and tmpfs mounts (CI has both)")
class PrivateLedgerOnAFullDisk(BkTestCase):

    def setUp(self):
        super().setUp()
        self.mount = os.path.join(self.tmp, "mnt")
        self.assertTrue(mount_tmpfs(self.mount, "1m"))
        self.addCleanup(subprocess.run, ["umount", "-l", self.mount], check=False)
        self.env["BK_DATA_DIR"] = self.data_dir = os.path.join(self.mount, "data")

    def test_bookings_fail_clearly_and_recover(self):
        first = [self.book_id("1", "30m", "--op-id", "before-%d" % i) for i in range(3)]
        filler = fill(self.mount)
        for args in (["1", "30m", "-t", "21:00", "--op-id", "during"], ["x", "1", "1h", "--gpu", "2"],
                     ["d", first[0]]):
            line = self.fails(*args)
            self.assertIn("cannot write %s: the disk is full (no space left on device)"
                          % os.path.join(self.data_dir, "ledger.db"), line)
        doc = self.json_error("1", "30m", "--json")
        self.assertIn("no space left", doc["error"]["message"])
        os.unlink(filler)
        # Space is back: nothing was lost or half written, and everything works.
        self.assertEqual(integrity_check(os.path.join(self.data_dir, "ledger.db")), "ok")
        self.assertIn("invariants: ok (3 reservations", self.ok("admin", "data", "verify"))
        self.assertEqual(sorted(r["id"] for r in self.reservations()), sorted(first))
        self.assertEqual(self.row_counts()["operations"], 3)
        again = self.book("1", "30m", "-t", "21:00", "--op-id", "during")
        self.assertEqual(again["status"], "created")  # the failed attempt left no trace to replay
        self.ok("d", first[0])
        self.assertEqual(len(self.reservations()), 3)


@unittest.skipUnless(MOUNT_OK, "needs root and tmpfs mounts (CI has both)")
class SkillOnAFullDisk(BkTestCase):
    """`bk skill install --force` whose staged copy cannot be written keeps the installed copy."""

    def test_a_failed_replacement_keeps_the_previous_copy(self):
        agents = os.path.join(self.env["HOME"], ".agents")
        self.assertTrue(mount_tmpfs(agents, "1m"))
        self.addCleanup(subprocess.run, ["umount", "-l", agents], check=False)
        dest = os.path.join(agents, "skills", "gpubk")
        self.assertIn(dest, self.ok("skill", "install", "--agent", "codex"))
        previous = "---\nname: gpubk\ndescription: the copy that must survive\n---\nkeep\n"
        with open(os.path.join(dest, "SKILL.md"), "w") as f:
            f.write(previous)
        filler = fill(agents)
        line = self.fails("skill", "install", "--agent", "codex", "--force")
        self.assertIn("No space left on device", line)
        with open(os.path.join(dest, "SKILL.md")) as f:
            self.assertEqual(f.read(), previous)
        self.assertEqual(os.listdir(os.path.dirname(dest)), ["gpubk"])  # no staged or backup copy left
        os.unlink(filler)
        self.ok("skill", "install", "--agent", "codex", "--force")
        self.assertIn("current", self.ok("skill", "status"))


@unittest.skipUnless(MOUNT_OK, "needs root and tmpfs mounts (CI has both)")
class ServerOnAFullDisk(unittest.TestCase):

    def setUp(self):
        self.base = make_base_dir("bk-full-")
        self.addCleanup(remove_tree, self.base)
        self.owner = Account.make(OWNER, self.base)
        self.a = Account.make(USER_A, self.base)
        self.mount = os.path.join(self.base, "mnt")
        self.assertTrue(mount_tmpfs(self.mount, "2m"))
        self.addCleanup(subprocess.run, ["umount", "-l", self.mount], check=False)
        os.chmod(self.mount, 0o755)
        self.srv = Server(self.mount, self.owner)
        self.addCleanup(self.srv.cleanup)
        self.srv.init("--gpu-count", "4")
        self.srv.patch_config(monitor_interval_seconds=0.2)
        self.srv.start()
        p = self.a.bk("server", "connect", self.srv.config)
        self.assertEqual(p.returncode, 0, p.stderr)

    def book(self, *args):
        p = self.a.bk(*args, "--json")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return json.loads(p.stdout)["reservation"]["id"]

    def monitor_check(self, want, timeout=20.0):
        """Polls `bk doctor --json` (the owner's) until want(message of the monitor check) holds."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            p = self.owner.bk("doctor", "--json", env=self.owner.env(BK_CONFIG_FILE=self.srv.config))
            try:
                checks = {c["name"]: c for c in json.loads(p.stdout)["checks"]}
                last = checks["monitor"]
            except (ValueError, KeyError):
                last = p.stdout + p.stderr
            if isinstance(last, dict) and want(last["message"]):
                return last
        self.fail("monitor check never as wanted; last %r\n%s" % (last, self.srv.log()))

    def test_the_daemon_refuses_writes_keeps_serving_and_recovers(self):
        first = [self.book("1", "30m") for _ in range(2)]
        filler = fill(self.mount)
        p = self.a.bk("1", "30m", "-t", "21:00")
        self.assertEqual((p.returncode, p.stdout), (2, ""), p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn("the disk is full", p.stderr)
        # Still serving reads from memory, and alive.
        p = self.a.bk("l", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sorted(r["id"] for r in json.loads(p.stdout)["reservations"]), sorted(first))
        self.assertTrue(self.srv.alive(), self.srv.log())
        # The monitor samples on, says it is not recording, and why.
        check = self.monitor_check(lambda m: "not recording: cannot write" in m and "the disk is full" in m)
        self.assertEqual(check["status"], "fail")
        os.unlink(filler)
        # Count-only GPUs (no telemetry) read as degraded; what matters is that it records again.
        self.monitor_check(lambda m: m.startswith("collector ") and "not recording" not in m)
        third = self.book("1", "30m", "-t", "22:00")
        p = self.a.bk("l", "--json")
        self.assertEqual(sorted(r["id"] for r in json.loads(p.stdout)["reservations"]), sorted(first + [third]))
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        self.assertEqual(integrity_check(self.srv.ledger), "ok")


    def test_a_failed_group_commit_answers_every_writer_with_an_error(self):
        first = self.book("1", "30m")
        filler = fill(self.mount)
        conns = [Rpc(self.srv.socket, timeout=30) for _ in range(4)]
        self.addCleanup(lambda: [c.close() for c in conns])

        def create(op):
            return {"jsonrpc": "2.0", "id": op, "method": "booking.create",
                    "params": {"count": 1, "duration_seconds": 1800, "op_id": op}}

        # Each connection sends its requests at once; the read between writes must not see them.
        sent = {}
        for i, c in enumerate(conns):
            ops = ["full-%d-%d" % (i, n) for n in range(3)]
            lines = [create(ops[0]), create(ops[1]),
                     {"jsonrpc": "2.0", "id": "list-%d" % i, "method": "reservations.list",
                      "params": {"everyone": True}},
                     create(ops[2])]
            c.send_raw("".join(json.dumps(line) + "\n" for line in lines))
            sent[i] = [line["id"] for line in lines]
        for i, c in enumerate(conns):
            for want in sent[i]:
                reply = c.read(30)
                self.assertEqual(reply.get("id"), want, reply)  # answers in the order of the requests
                if want.startswith("list-"):
                    self.assertEqual([r["id"] for r in reply["result"]["reservations"]], [first], reply)
                    continue
                self.assertNotIn("result", reply, reply)
                self.assertEqual(reply["error"]["data"]["kind"], "io", reply)
                self.assertIn("the disk is full", reply["error"]["message"])
        self.assertTrue(self.srv.alive(), self.srv.log())
        os.unlink(filler)
        second = self.book("1", "30m", "-t", "22:00")
        p = self.a.bk("l", "--json")
        self.assertEqual(sorted(r["id"] for r in json.loads(p.stdout)["reservations"]), sorted([first, second]))
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        self.assertEqual(integrity_check(self.srv.ledger), "ok")

if __name__ == "__main__":
    unittest.main()
