"""Shared harness for the end-to-end tests: every test drives the real `bk`.

Each test gets a fresh temporary directory with its own data dir, a fixed
clock (BK_TEST_NOW), UTC, 100 columns and 4 GPUs without telemetry unless it
asks for a simulation file. Only the Python standard library is used.

    BK_BIN          the bk binary (ctest sets it; default: <repo>/build/bk)
    BK_SOURCE_DIR   the repository (default: two levels above this file)
"""

import hashlib
import json
import os
import pwd
import sqlite3
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("BK_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
BK_BIN = os.environ.get("BK_BIN") or os.path.join(SOURCE_DIR, "build", "bk")
FIXTURES = os.path.join(SOURCE_DIR, "tests", "fixtures")

# The fixed clock: 18:49 UTC, so the current 5-minute slice starts at 18:45.
NOW = "2026-11-29T18:49:00Z"
SLICE = "2026-11-29T18:45:00Z"

ME_UID = os.getuid()
try:
    ME_NAME = pwd.getpwuid(ME_UID).pw_name
except KeyError:  # pragma: no cover - a uid without a passwd entry
    ME_NAME = str(ME_UID)

# Environment variables that could change what bk does and must not leak in
# from the developer's shell.
_SCRUB_PREFIXES = ("BK_", "GPUBK_", "LC_")
_SCRUB_NAMES = {"NO_COLOR", "TERM", "COLUMNS", "LINES", "TZ", "LANG", "LANGUAGE", "XDG_CONFIG_HOME",
                "XDG_DATA_HOME", "XDG_RUNTIME_DIR", "XDG_STATE_HOME", "CUDA_VISIBLE_DEVICES"}

BUSY_PROCESS = {"pid": 4242, "uid": 1001, "username": "alice", "command": "python train.py",
                "gpu_memory_mb": 40960, "sm_utilization_percent": 85}


def sim_gpu(index, name="NVIDIA A100-SXM4-80GB", used=0, total=81920, util=0, processes=None):
    """One GPU entry of a simulation file (docs/simulation.md)."""
    return {"index": index, "name": name, "uuid": "GPU-%08x-0000-4000-8000-%012x" % (index, index),
            "memory_used_mb": used, "memory_total_mb": total, "utilization_percent": util,
            "processes": processes or []}


def default_sim_gpus(count=4):
    """The upstream study's host: four A100-80GB, GPU 1 runs alice's unreserved job."""
    gpus = []
    for i in range(count):
        if i == 1:
            gpus.append(sim_gpu(1, used=40960, util=87, processes=[dict(BUSY_PROCESS)]))
        elif i == 0:
            gpus.append(sim_gpu(0, used=1024))
        elif i == 3:
            gpus.append(sim_gpu(3, util=3))
        else:
            gpus.append(sim_gpu(i))
    return gpus


def upstream_reservation(rid, gpus, start, end, status="active", mode="shared", share=1, uid=None,
                         username=None, **extra):
    """A reservation record in the original's ledger.json format."""
    r = {"id": rid, "uid": ME_UID if uid is None else uid, "username": ME_NAME if username is None else username,
         "mode": mode, "gpus": gpus, "start_at": start, "end_at": end, "status": status,
         "created_at": "2026-11-29T18:40:00Z", "updated_at": "2026-11-29T18:40:00Z",
         "op_id": "op-" + rid}
    if mode == "shared":
        r["share_units"] = share
    r.update(extra)
    return r


def upstream_ledger(reservations, gpu_count=4):
    """A whole ledger.json of GPUBK 0.2.8 holding `reservations`."""
    return {"version": 1, "announcements": [], "last_transaction_id": "00000000-0000-4000-8000-000000000000",
            "policy": {"version": 1, "gpu_count": gpu_count, "granularity_seconds": 300,
                       "max_shared_reservations_per_gpu": 2, "require_shared_memory": False,
                       "shared_memory_reserve_mb": 512, "dir_mode": "0700", "file_mode": "0600"},
            "reservations": reservations}


class BkTestCase(unittest.TestCase):
    """Base class: a private data dir, a fixed clock and helpers to run bk."""

    gpu_count = 4  # BK_GPU_COUNT for every test of the class; None leaves it unset
    maxDiff = None

    def setUp(self):
        if not os.access(BK_BIN, os.X_OK):
            self.fail(f"bk binary not found at {BK_BIN}; build it or set BK_BIN")
        self._tmp = tempfile.TemporaryDirectory(prefix="bk-e2e-")
        self.addCleanup(self._tmp.cleanup)
        self.tmp = self._tmp.name
        self.data_dir = os.path.join(self.tmp, "data")
        home = os.path.join(self.tmp, "home")
        os.mkdir(home)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(_SCRUB_PREFIXES) and k not in _SCRUB_NAMES}
        env.update({"HOME": home, "BK_DATA_DIR": self.data_dir, "BK_TEST_NOW": NOW, "TZ": "UTC",
                    "COLUMNS": "100", "LANG": "C.UTF-8", "TERM": "dumb"})
        if self.gpu_count is not None:
            env["BK_GPU_COUNT"] = str(self.gpu_count)
        self.env = env
        self.last = None

    # ------------------------------------------------------------------ running

    def bk(self, *args, env=None, input=None):
        """Runs bk; `env` overrides the test's environment (a value of None removes the variable)."""
        e = dict(self.env)
        for k, v in (env or {}).items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = str(v)
        p = subprocess.run([BK_BIN, *[str(a) for a in args]], env=e, input=input, capture_output=True,
                           text=True, encoding="utf-8", errors="replace", timeout=30, cwd=self.tmp,
                           stdin=None if input is not None else subprocess.DEVNULL)
        self.last = p
        return p

    def _describe(self, args, p):
        return f"\n$ bk {' '.join(map(str, args))}\nrc={p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}"

    def ok(self, *args, env=None, input=None):
        """Runs bk, asserts exit 0 and returns stdout."""
        p = self.bk(*args, env=env, input=input)
        self.assertEqual(p.returncode, 0, self._describe(args, p))
        return p.stdout

    def fails(self, *args, rc=2, env=None, input=None):
        """Asserts the text-mode error contract: exit `rc`, nothing on stdout, exactly one
        stderr line starting with "bk: ". Returns that line (without the newline)."""
        p = self.bk(*args, env=env, input=input)
        d = self._describe(args, p)
        self.assertEqual(p.returncode, rc, d)
        self.assertEqual(p.stdout, "", d)
        lines = p.stderr.splitlines()
        self.assertEqual(len(lines), 1, d)
        self.assertTrue(lines[0].startswith("bk: "), d)
        self.assertTrue(p.stderr.endswith("\n"), d)
        self.assertNotIn("Traceback", p.stderr)
        self.assertNotIn("terminate called", p.stderr)
        return lines[0]

    def json(self, *args, rc=0, env=None):
        """Runs bk, asserts exit `rc` and that stdout is exactly one JSON document; returns it."""
        p = self.bk(*args, env=env)
        d = self._describe(args, p)
        self.assertEqual(p.returncode, rc, d)
        try:
            return json.loads(p.stdout)
        except ValueError as e:
            self.fail(f"stdout is not JSON ({e}){d}")

    def json_error(self, *args, env=None):
        """The JSON error contract: exit 2, empty stderr, one line on stdout holding a
        bk.agent.v1 document of kind "error". Returns the document."""
        p = self.bk(*args, env=env)
        d = self._describe(args, p)
        self.assertEqual(p.returncode, 2, d)
        self.assertEqual(p.stderr, "", d)
        self.assertEqual(len(p.stdout.splitlines()), 1, d)
        doc = json.loads(p.stdout)
        self.assertEqual(doc["kind"], "error", d)
        self.assertEqual(doc["schema_version"], "bk.agent.v1", d)
        self.assertIsInstance(doc["error"]["message"], str)
        self.assertTrue(doc["error"]["message"], d)
        return doc

    def book(self, *args, env=None):
        """Books with --json and returns the booking_result document."""
        doc = self.json(*args, "--json", env=env)
        self.assertEqual(doc["kind"], "booking_result")
        return doc

    def book_id(self, *args, env=None):
        return self.book(*args, env=env)["reservation"]["id"]

    def reservations(self, *extra, env=None):
        """`bk l --json` reservations (own active, or with "--history")."""
        return self.json("l", "--json", *extra, env=env)["reservations"]

    def import_ledger(self, reservations, name="ledger.json"):
        """Seeds the (empty) ledger through `bk admin data import` with records in the original's
        format: the way to get other users' reservations and chosen IDs."""
        path = self.write_json(name, upstream_ledger(reservations, gpu_count=self.gpu_count or 4))
        out = self.ok("admin", "data", "import", path)
        self.assertTrue(out.startswith("imported: "), out)
        return path

    # --------------------------------------------------------------- simulation

    def write_json(self, name, doc):
        path = os.path.join(self.tmp, name)
        with open(path, "w", encoding="utf-8") as f:
            if isinstance(doc, str):
                f.write(doc)
            else:
                json.dump(doc, f)
        return path

    def use_sim(self, gpus=None, name="sim.json", keep_gpu_count=False):
        """Writes a simulation file (default: default_sim_gpus()) and points BK_GPU_SIM_FILE at it.
        The GPU count then comes from the file unless keep_gpu_count."""
        path = self.write_json(name, {"gpus": default_sim_gpus() if gpus is None else gpus})
        self.env["BK_GPU_SIM_FILE"] = path
        if not keep_gpu_count:
            self.env.pop("BK_GPU_COUNT", None)
        return path

    # ---------------------------------------------------------------- disk state

    def snapshot(self):
        """Everything under the data dir's parent that bk could have written: every path
        with its size, mtime and content hash, plus the ledger's row counts."""
        files = {}
        for root, dirs, names in os.walk(self.tmp):
            rel_root = os.path.relpath(root, self.tmp)  # HOME is in here too: bk must not write there either
            for n in sorted(dirs):
                files[os.path.join(rel_root, n) + "/"] = "dir"
            for n in sorted(names):
                path = os.path.join(root, n)
                st = os.stat(path)
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
                files[os.path.join(rel_root, n)] = (st.st_size, st.st_mtime_ns, digest)
        return {"files": files, "rows": self.row_counts()}

    def row_counts(self):
        """Row counts of the ledger tables, read without locking or creating anything."""
        db = os.path.join(self.data_dir, "ledger.db")
        if not os.path.exists(db):
            return None
        con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
        try:
            out = {}
            for table in ("reservations", "events", "operations", "notifications", "meta"):
                try:
                    out[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                except sqlite3.Error:
                    out[table] = None
            return out
        finally:
            con.close()

    def assertUnchanged(self, before, what=""):
        after = self.snapshot()
        self.assertEqual(before["rows"], after["rows"], f"ledger rows changed {what}")
        self.assertEqual(before["files"], after["files"], f"files changed on disk {what}")

    def refused(self, *args, env=None, contains=None):
        """Bad input: the text error contract AND nothing changed on disk. Returns the message
        (without the "bk: " prefix); `contains` are substrings it must hold."""
        before = self.snapshot()
        line = self.fails(*args, env=env)
        self.assertUnchanged(before, f"after bk {' '.join(map(str, args))}: {line}")
        msg = line[len("bk: "):]
        for c in ([contains] if isinstance(contains, str) else (contains or [])):
            self.assertIn(c, msg)
        return msg

    def refused_json(self, *args, env=None, contains=None):
        """Bad input with --json: the error document on stdout and nothing changed on disk."""
        before = self.snapshot()
        doc = self.json_error(*args, env=env)
        self.assertUnchanged(before, f"after bk {' '.join(map(str, args))} (json)")
        for c in ([contains] if isinstance(contains, str) else (contains or [])):
            self.assertIn(c, doc["error"]["message"])
        return doc

    def assertNoDataDir(self):
        self.assertFalse(os.path.exists(self.data_dir), f"{self.data_dir} was created")
