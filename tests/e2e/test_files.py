"""Security and robustness of bk's private data files, end to end.

Self-contained (stdlib only). Needs BK_BIN, the path of a bk built with tests
enabled. CI runs these as root; the foreign-owner tests skip otherwise.

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_files
"""

import fcntl
import hashlib
import os
import random
import shutil
import sqlite3
import stat
import subprocess
import tempfile
import unittest

NOW_ISO = "2026-11-29T18:49:00Z"
FOREIGN_UID = 65534

READ_ONLY_COMMANDS = [["l"], ["st"], ["tl"], ["slots", "1", "30m"], ["g"], ["config"], ["lg"]]
# A write and a few reads: every one of them must refuse a bad ledger.
WRITE = ["1", "30m"]
READS = [["l"], ["st"], ["slots", "1", "30m"]]

# SQLite's POSIX lock bytes (see os_unix.c): PENDING_BYTE = 0x40000000, SHARED_FIRST = PENDING_BYTE + 2.
SQLITE_SHARED_FIRST = 0x40000000 + 2
SQLITE_SHARED_SIZE = 510


def bk_binary():
    path = os.environ.get("BK_BIN", "")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "build", "bk")
    path = os.path.abspath(path)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError("set BK_BIN to the bk binary (tried %s)" % path)
    return path


BK = None


def setUpModule():
    global BK
    BK = bk_binary()


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def mode_of(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def snapshot(root):
    """Every path under root (not following links) with its type, mode, owner and content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                what = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                what = ("file", digest(p))
            else:
                what = ("dir",)
            out[os.path.relpath(p, root)] = what + (stat.S_IMODE(st.st_mode), st.st_uid)
    return out


class FilesTestCase(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="bk-files-")
        os.chmod(self.root, 0o700)
        self.addCleanup(shutil.rmtree, self.root, ignore_errors=True)
        self.data = os.path.join(self.root, "data")
        self.ledger = os.path.join(self.data, "ledger.db")

    def env(self, data_dir=None):
        env = {k: v for k, v in os.environ.items() if not k.startswith("BK_")}
        env.update({
            "BK_DATA_DIR": data_dir or self.data,
            "BK_GPU_COUNT": "4",
            "TZ": "UTC",
            "BK_TEST_NOW": NOW_ISO,
            "HOME": self.root,
            "XDG_CONFIG_HOME": os.path.join(self.root, "xdg-config"),
            "XDG_DATA_HOME": os.path.join(self.root, "xdg-data"),
        })
        return env

    def bk(self, args, data_dir=None, umask=-1):
        p = subprocess.run([BK] + list(args), env=self.env(data_dir), stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=60, umask=umask)
        return p.returncode, p.stdout, p.stderr

    def book(self, data_dir=None):
        rc, out, err = self.bk(WRITE, data_dir)
        self.assertEqual(rc, 0, out + err)

    def assertRefused(self, args, data_dir=None, contains=()):
        """Exit 2, nothing on stdout, exactly one `bk: ...` line on stderr containing each of `contains`."""
        rc, out, err = self.bk(args, data_dir)
        what = "bk %s -> rc=%d stdout=%r stderr=%r" % (" ".join(args), rc, out, err)
        self.assertEqual(rc, 2, what)
        self.assertEqual(out, "", what)
        self.assertTrue(err.startswith("bk: "), what)
        self.assertTrue(err.endswith("\n") and "\n" not in err[:-1], "want one line: " + what)
        self.assertNotIn("Traceback", err)
        for c in contains:
            self.assertIn(c, err, what)
        return err

    def assertAllRefused(self, data_dir=None, contains=()):
        for args in [WRITE] + READS:
            with self.subTest(cmd=" ".join(args)):
                self.assertRefused(args, data_dir, contains)


class CreationModesTest(FilesTestCase):
    def test_data_dir_0700_and_ledger_0600_under_umask_000(self):
        rc, out, err = self.bk(WRITE, umask=0)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(mode_of(self.data), 0o700)
        self.assertEqual(mode_of(self.ledger), 0o600)
        self.assertEqual(os.lstat(self.ledger).st_uid, os.getuid())
        for suffix in ("-wal", "-shm", "-journal"):
            if os.path.exists(self.ledger + suffix):
                self.assertEqual(mode_of(self.ledger + suffix), 0o600, suffix)
        # A second write under the same umask changes nothing either.
        rc, out, err = self.bk(WRITE, umask=0)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(mode_of(self.data), 0o700)
        self.assertEqual(mode_of(self.ledger), 0o600)

    def test_nested_data_dir_created_private_under_umask_000(self):
        nested = os.path.join(self.root, "a", "b", "data")
        rc, out, err = self.bk(WRITE, data_dir=nested, umask=0)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(mode_of(nested), 0o700)
        self.assertEqual(mode_of(os.path.join(nested, "ledger.db")), 0o600)
        for d in (os.path.join(self.root, "a"), os.path.join(self.root, "a", "b")):
            self.assertEqual(mode_of(d) & 0o022, 0, "%s is group/other-writable: %o" % (d, mode_of(d)))

    def test_wal_and_shm_created_0600_under_umask_000(self):
        self.book()
        # Hold a POSIX read lock on SQLite's shared-lock bytes of ledger.db: bk's connection can read and
        # write (WAL writers lock in -shm), but cannot take the exclusive lock it needs on close to
        # checkpoint and delete -wal/-shm. So the files bk creates below stay for us to inspect.
        fd = os.open(self.ledger, os.O_RDONLY)
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, SQLITE_SHARED_SIZE, SQLITE_SHARED_FIRST)
            self.assertFalse(os.path.exists(self.ledger + "-wal"))
            rc, out, err = self.bk(WRITE, umask=0)
            self.assertEqual(rc, 0, out + err)
            for suffix in ("-wal", "-shm"):
                self.assertTrue(os.path.exists(self.ledger + suffix), suffix + " was not left behind")
                self.assertEqual(mode_of(self.ledger + suffix), 0o600, suffix)
                self.assertEqual(os.lstat(self.ledger + suffix).st_uid, os.getuid(), suffix)
        finally:
            os.close(fd)
        self.assertEqual(mode_of(self.ledger), 0o600)


class SymlinkTest(FilesTestCase):
    def test_symlinked_data_dir_refused_and_target_untouched(self):
        target = os.path.join(self.root, "real")
        os.mkdir(target, 0o700)
        os.symlink(target, self.data)
        before = snapshot(self.root)
        for spelling in (self.data, self.data + "/"):
            with self.subTest(data_dir=spelling):
                self.assertRefused(WRITE, spelling, contains=["symbolic link"])
        self.assertEqual(snapshot(self.root), before)
        self.assertEqual(os.listdir(target), [])

    def test_symlinked_data_dir_with_a_ledger_refused_for_reads_and_writes(self):
        target = os.path.join(self.root, "real")
        self.book(target)
        os.symlink(target, self.data)
        before = snapshot(self.root)
        self.assertAllRefused(contains=["symbolic link"])
        self.assertEqual(snapshot(self.root), before)

    def test_symlinked_ledger_refused_and_target_untouched(self):
        other = os.path.join(self.root, "other")
        self.book(other)  # a genuine ledger elsewhere, owned by us, 0600
        self.book()
        os.unlink(self.ledger)
        os.symlink(os.path.join(other, "ledger.db"), self.ledger)
        before = snapshot(self.root)
        self.assertAllRefused(contains=[self.ledger, "symbolic link"])
        self.assertEqual(snapshot(self.root), before)

    def test_dangling_ledger_symlink_not_followed(self):
        os.mkdir(self.data, 0o700)
        victim = os.path.join(self.root, "victim.db")
        os.symlink(victim, self.ledger)
        self.assertRefused(WRITE, contains=["symbolic link"])
        self.assertFalse(os.path.exists(victim), "bk created the file a dangling symlink points at")


@unittest.skipUnless(os.geteuid() == 0, "needs root to chown files to another UID")
class ForeignOwnerTest(FilesTestCase):
    def test_ledger_owned_by_another_uid_refused(self):
        self.book()
        os.chown(self.ledger, FOREIGN_UID, -1)
        before = snapshot(self.root)
        self.assertAllRefused(contains=[self.ledger, str(FOREIGN_UID)])
        self.assertEqual(snapshot(self.root), before)

    def test_data_dir_owned_by_another_uid_refused(self):
        self.book()
        os.chown(self.data, FOREIGN_UID, -1)
        before = snapshot(self.root)
        self.assertAllRefused(contains=[str(FOREIGN_UID)])
        self.assertEqual(snapshot(self.root), before)


class WritableDirTest(FilesTestCase):
    def test_group_or_other_writable_data_dir_refused(self):
        self.book()
        for mode in (0o770, 0o707, 0o777, 0o720):
            with self.subTest(mode=oct(mode)):
                os.chmod(self.data, mode)
                before = snapshot(self.root)
                self.assertAllRefused(contains=[self.data, "writable"])
                self.assertEqual(snapshot(self.root), before)
                self.assertEqual(mode_of(self.data), mode, "bk changed the mode itself")

    def test_writable_empty_data_dir_refused_for_writes(self):
        os.mkdir(self.data)
        os.chmod(self.data, 0o777)
        self.assertRefused(WRITE, contains=["writable"])
        self.assertEqual(os.listdir(self.data), [])

    def test_group_writable_ledger_refused(self):
        self.book()
        os.chmod(self.ledger, 0o660)
        before = snapshot(self.root)
        self.assertAllRefused(contains=[self.ledger])
        self.assertEqual(snapshot(self.root), before)


class CorruptLedgerTest(FilesTestCase):
    def plant(self, content):
        os.mkdir(self.data, 0o700)
        with open(self.ledger, "wb") as f:
            f.write(content)
        os.chmod(self.ledger, 0o600)

    def check_refused_untouched(self, contains):
        before = snapshot(self.root)
        for args in [WRITE] + READS:
            with self.subTest(cmd=" ".join(args)):
                err = self.assertRefused(args, contains=[self.ledger])
                low = err.lower()
                self.assertTrue(any(w in low for w in contains), "no way out in the message: %r" % err)
                self.assertEqual(snapshot(self.root), before, "bk changed the data dir after: " + err)

    def test_random_bytes(self):
        self.plant(random.Random(20261129).randbytes(16384))
        self.check_refused_untouched(["move it aside", "restore", "remove"])

    def test_text_file(self):
        self.plant(b"these are my notes, not a database\n" * 10)
        self.check_refused_untouched(["move it aside", "restore", "remove"])

    def test_sqlite_database_that_is_not_ours_refused(self):
        self.plant(b"")
        os.unlink(self.ledger)
        con = sqlite3.connect(self.ledger)
        con.execute("CREATE TABLE photos(name TEXT, taken INTEGER)")
        con.execute("INSERT INTO photos VALUES('cat.jpg', 1)")
        con.commit()
        con.close()
        os.chmod(self.ledger, 0o600)
        for args in [WRITE] + READS:
            with self.subTest(cmd=" ".join(args)):
                self.assertRefused(args, contains=[self.ledger, "not a GPUBK ledger"])
        con = sqlite3.connect("file:%s?mode=ro" % self.ledger, uri=True)
        self.assertEqual(con.execute("SELECT name FROM sqlite_master").fetchall(), [("photos",)])
        con.close()

    def test_sqlite_database_that_is_not_ours_left_byte_identical(self):
        # Refusing it must not convert it to WAL mode (header bytes 18-19) or otherwise write to it.
        for args in READS + [WRITE]:
            with self.subTest(cmd=" ".join(args)):
                shutil.rmtree(self.data, ignore_errors=True)
                os.mkdir(self.data, 0o700)
                con = sqlite3.connect(self.ledger)
                con.execute("CREATE TABLE photos(name TEXT, taken INTEGER)")
                con.commit()
                con.close()
                os.chmod(self.ledger, 0o600)
                with open(self.ledger, "rb") as f:
                    header = f.read(20)
                before = snapshot(self.root)
                self.assertRefused(args)
                with open(self.ledger, "rb") as f:
                    after = f.read(20)
                self.assertEqual(after[18:20], header[18:20], "bk switched the foreign database's journal mode")
                self.assertEqual(snapshot(self.root), before, "bk modified a database it then refused")

    def test_newer_schema_version_refused(self):
        self.book()
        con = sqlite3.connect(self.ledger)
        con.execute("PRAGMA user_version=999")
        con.commit()
        con.close()
        before = snapshot(self.root)
        self.assertAllRefused(contains=[self.ledger, "999"])
        self.assertEqual(snapshot(self.root), before)


class ReadOnlyCommandsTest(FilesTestCase):
    def test_reads_on_a_missing_data_dir_create_nothing(self):
        for args in READ_ONLY_COMMANDS:
            with self.subTest(cmd=" ".join(args)):
                before = snapshot(self.root)
                rc, out, err = self.bk(args)
                self.assertEqual(rc, 0, "bk %s: %s%s" % (" ".join(args), out, err))
                self.assertFalse(os.path.lexists(self.data), "bk %s created the data dir" % " ".join(args))
                self.assertEqual(snapshot(self.root), before)

    def test_reads_on_an_empty_data_dir_create_no_ledger(self):
        os.mkdir(self.data, 0o700)
        for args in READ_ONLY_COMMANDS:
            with self.subTest(cmd=" ".join(args)):
                rc, out, err = self.bk(args)
                self.assertEqual(rc, 0, "bk %s: %s%s" % (" ".join(args), out, err))
                self.assertEqual(os.listdir(self.data), [], "bk %s wrote into the data dir" % " ".join(args))


class AppendOnlyEventsTest(FilesTestCase):
    def test_events_cannot_be_updated_or_deleted(self):
        self.book()
        self.book()
        con = sqlite3.connect(self.ledger)
        try:
            rows = con.execute("SELECT * FROM events ORDER BY seq").fetchall()
            self.assertGreaterEqual(len(rows), 2)
            for sql in ("UPDATE events SET message='rewritten'",
                        "UPDATE events SET ts=0 WHERE seq=(SELECT min(seq) FROM events)",
                        "DELETE FROM events",
                        "DELETE FROM events WHERE seq=(SELECT max(seq) FROM events)"):
                with self.subTest(sql=sql):
                    with self.assertRaises(sqlite3.DatabaseError) as cm:
                        con.execute(sql)
                    self.assertIn("append-only", str(cm.exception))
                    con.rollback()
            self.assertEqual(con.execute("SELECT * FROM events ORDER BY seq").fetchall(), rows)
        finally:
            con.close()
        # The ledger still works after the attempts.
        self.book()


if __name__ == "__main__":
    unittest.main()
