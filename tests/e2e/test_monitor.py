"""The monitor (`bk m`), usage history (`bk u`) and no-show reclamation, on
scripted simulation timelines (docs/monitor.md).

Each timeline rewrites the simulation file (BK_GPU_SIM_FILE is re-read every
sample) and drives `bk m --once --json` with a new BK_TEST_NOW each time, so
the samples are exactly where the test puts them; the no-show streak carries
over between runs through usage.db unless a gap separates them. Processes on
the simulated GPUs are real sleeping children of this test: the monitor must
never signal them, so each test checks they are still alive.

Settings: samples every 10 s, reclaim_after 60 s, so a no-show is reclaimed at
the 7th trustworthy sample after the booking's start (t0 .. t0+60 s).
"""

import calendar
import json
import os
import signal
import sqlite3
import subprocess
import time
import unittest

from bktest import BK_BIN, ME_NAME, ME_UID, NOW, BkTestCase, sim_gpu, upstream_reservation

T0 = calendar.timegm(time.strptime(NOW, "%Y-%m-%dT%H:%M:%SZ"))  # 18:49:00; a `bk 1 2h` starts at 18:45
ALICE = 1001


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


class MonitorCase(BkTestCase):
    gpu_count = 2  # BK_GPU_COUNT stays set: an {"error": ...} file has no GPUs to count

    def setUp(self):
        super().setUp()
        self.env["BK_RECLAIM_AFTER_SECONDS"] = "60"
        self.env["BK_MONITOR_INTERVAL_SECONDS"] = "10"
        self.sim = os.path.join(self.tmp, "sim.json")
        self.env["BK_GPU_SIM_FILE"] = self.sim
        self.children = []
        self.gpus([], [])

    # ------------------------------------------------------------ processes

    def child(self):
        """A real process for the simulated GPU: it must outlive every monitor run."""
        p = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)
        self.children.append(p)
        self.addCleanup(self._reap, p)
        return p.pid

    @staticmethod
    def _reap(p):
        if p.poll() is None:
            p.kill()  # our own child, started above
        p.wait()

    def assertChildrenAlive(self):
        for p in self.children:
            self.assertIsNone(p.poll(), f"pid {p.pid} was signalled or died")
            os.kill(p.pid, 0)

    def proc(self, pid, uid=ME_UID, username=ME_NAME, sm=0, **extra):
        d = {"pid": pid, "uid": uid, "username": username, "command": "python train.py",
             "gpu_memory_mb": 2048, "sm_utilization_percent": sm}
        d.update(extra)
        return d

    # ------------------------------------------------------------ timeline

    def gpus(self, *per_gpu):
        self.write_json("sim.json", {"gpus": [sim_gpu(i, processes=list(p)) for i, p in enumerate(per_gpu)]})

    def nvml_error(self, text="NVML_ERROR_GPU_IS_LOST: GPU has fallen off the bus"):
        self.write_json("sim.json", {"error": text})

    def sample(self, t, env=None):
        """One `bk m --once --json` at time t; returns the gpubk.monitor.v1 document."""
        e = {"BK_TEST_NOW": iso(t)}
        e.update(env or {})
        doc = self.json("m", "--once", "--json", env=e)
        self.assertEqual(doc["schema_version"], "gpubk.monitor.v1")
        self.assertEqual(doc["kind"], "monitor-sample")
        return doc

    @staticmethod
    def reclaimed(doc):
        return [d for d in doc["reclaim"] if d["reclaimed"]]

    def run_until(self, times, expect_reclaim_at=None, env=None):
        """Samples at each time; asserts nothing is reclaimed before `expect_reclaim_at`
        and that the sample at exactly that time reclaims."""
        docs = []
        for t in times:
            doc = self.sample(t, env=env)
            got = self.reclaimed(doc)
            if expect_reclaim_at is not None and t == expect_reclaim_at:
                self.assertEqual(len(got), 1, f"no reclaim at +{t - T0}s: {doc['reclaim']}")
            else:
                self.assertEqual(got, [], f"reclaimed at +{t - T0}s, expected "
                                          f"{'never' if expect_reclaim_at is None else expect_reclaim_at - T0}")
            docs.append(doc)
        return docs

    def active_ids(self, t):
        return [r["id"] for r in self.json("l", "--json", env={"BK_TEST_NOW": iso(t)})["reservations"]]


class ReclaimTimelineTest(MonitorCase):

    def test_reclaims_exactly_at_the_threshold_and_not_one_sample_before(self):
        other = self.child()
        rid = self.book_id("1", "2h", "--gpu", "0")
        # Someone else's process on the booked GPU is no use by the owner.
        self.gpus([self.proc(other, uid=ALICE, username="alice", sm=90)], [])
        docs = self.run_until([T0 + 10 * k for k in range(7)], expect_reclaim_at=T0 + 60)
        first = docs[0]["reclaim"][0]
        self.assertEqual(first["verdict"], "no-use")
        self.assertEqual(first["reservation_id"], rid)
        self.assertEqual(docs[5]["reclaim"][0]["streak_seconds"], 50.0)
        reason = self.reclaimed(docs[6])[0]["reason"]
        self.assertIn(f"no process of {ME_NAME} on GPU 0", reason)
        self.assertIn("reclaim_after_seconds=60", reason)
        self.assertIn("reclaim", [e["event"] for e in docs[6]["events"]])

        after = {"BK_TEST_NOW": iso(T0 + 70)}
        self.assertEqual(self.active_ids(T0 + 70), [])
        hist = self.json("l", "--history", "--json", env=after)["reservations"]
        self.assertEqual(hist[0]["id"], rid)
        self.assertEqual(hist[0]["cancellation"]["kind"], "reclaimed")
        self.assertEqual(hist[0]["cancellation"]["reason"], reason)
        notes = self.json("n", "--json", env=after)["notifications"]
        self.assertEqual(len(notes), 1)
        self.assertEqual(notes[0]["type"], "reservation-reclaimed")
        self.assertEqual(notes[0]["reservation_id"], rid)
        # The message wraps under its column to the terminal's width (43 columns of When/Ref/Level).
        lines = self.ok("n", env=dict(after, COLUMNS="72")).splitlines()
        self.assertEqual([line for line in lines if len(line) > 72], [])
        self.assertGreater(len(lines), 2)
        self.assertTrue(all(line.startswith(" " * 43) and line[43] != " " for line in lines[2:]), lines)
        self.assertIn("reclaimed by the monitor", " ".join(" ".join(lines[1:]).split()))
        history = self.ok("history", rid[:8], env=after)
        self.assertIn("reclaimed", history)
        self.assertChildrenAlive()

    def test_owner_process_at_zero_percent_is_use(self):
        mine = self.child()
        rid = self.book_id("1", "2h", "--gpu", "1")
        self.gpus([], [self.proc(mine, sm=0)])
        docs = self.run_until([T0 + 10 * k for k in range(20)])
        self.assertEqual(docs[0]["reclaim"][0]["verdict"], "use")
        # Once seen, it stays used even when the process is gone.
        self.gpus([], [])
        docs = self.run_until([T0 + 200 + 10 * k for k in range(10)])
        self.assertTrue(docs[-1]["reclaim"][0]["used"])
        self.assertEqual(self.active_ids(T0 + 300), [rid])
        self.assertChildrenAlive()

    def test_no_reclaim_across_a_sampling_gap(self):
        other = self.child()
        rid = self.book_id("1", "2h", "--gpu", "0")
        self.gpus([self.proc(other, uid=ALICE, username="alice")], [])
        self.run_until([T0, T0 + 10, T0 + 20, T0 + 30])
        # No sample for 30 s (> 2 x 10 s): the count restarts at +60.
        docs = self.run_until([T0 + 60 + 10 * k for k in range(7)], expect_reclaim_at=T0 + 120)
        self.assertTrue(docs[0]["reclaim"][0]["gap"])
        self.assertNotIn(rid, self.active_ids(T0 + 130))
        self.assertChildrenAlive()

    def test_no_reclaim_across_an_nvml_error(self):
        other = self.child()
        self.book_id("1", "2h", "--gpu", "0")
        self.gpus([self.proc(other, uid=ALICE, username="alice")], [])
        self.run_until([T0, T0 + 10, T0 + 20, T0 + 30])
        self.nvml_error()
        doc = self.sample(T0 + 40)
        self.assertEqual(doc["state"], "failed")
        self.assertIn("fallen off the bus", doc["error"])
        self.assertEqual(doc["reclaim"][0]["verdict"], "untrusted")
        self.assertEqual(doc["heartbeat"]["state"], "degraded")
        self.assertIn("telemetry-failed", [e["event"] for e in doc["events"]])
        self.gpus([self.proc(other, uid=ALICE, username="alice")], [])
        docs = self.run_until([T0 + 50 + 10 * k for k in range(7)], expect_reclaim_at=T0 + 110)
        kinds = [e["event"] for e in docs[0]["events"]]
        self.assertIn("telemetry-restored", kinds)
        self.assertNotIn("process-stop", kinds, "an outage must not invent process stops")
        self.assertChildrenAlive()

    def test_no_reclaim_with_an_ambiguous_container_process(self):
        shared = self.child()
        self.book_id("1", "2h", "--gpu", "0")
        root = self.proc(shared, uid=0, username="root", identity_source="container-ambiguous",
                         container_runtime="docker", container_id="0123456789abcdef0123456789abcdef")
        self.gpus([root], [])
        docs = self.run_until([T0 + 10 * k for k in range(15)])
        self.assertEqual(docs[-1]["reclaim"][0]["verdict"], "untrusted")
        self.assertIn("ambiguous", docs[-1]["reclaim"][0]["why"])
        self.assertEqual(docs[-1]["heartbeat"]["reported_status"], "degraded")
        self.assertChildrenAlive()

    def test_no_reclaim_with_an_unattributable_process(self):
        hidden = self.child()
        self.book_id("1", "2h", "--gpu", "0")
        self.gpus([{"pid": hidden, "uid": None, "command": "?"}], [])
        docs = self.run_until([T0 + 10 * k for k in range(15)])
        self.assertEqual(docs[-1]["reclaim"][0]["verdict"], "untrusted")
        self.assertChildrenAlive()

    def test_root_container_process_is_inferred_to_the_booking_holder(self):
        # Alice (UID 1001) holds GPU 0; a root process in a Docker container there is hers.
        job = self.child()
        self.import_ledger([upstream_reservation("11111111-1111-4111-8111-111111111111", [0],
                                                 "2026-11-29T18:45:00Z", "2026-11-29T20:45:00Z",
                                                 uid=ALICE, username="alice")])
        root = self.proc(job, uid=0, username="root", container_runtime="docker",
                         container_id="0123456789abcdef0123456789abcdef")
        self.gpus([root], [])
        docs = self.run_until([T0 + 10 * k for k in range(10)])
        p = docs[0]["snapshot"]["devices"][0]["processes"][0]
        self.assertEqual(p["identity_source"], "container-reservation")
        self.assertEqual(p["uid"], ALICE)
        self.assertEqual(p["username"], "alice")
        self.assertEqual(p["host_uid"], 0)
        self.assertEqual(p["status"], "ok")
        self.assertEqual(docs[0]["reclaim"][0]["verdict"], "use")
        self.assertChildrenAlive()

    def test_root_container_process_with_two_holders_is_ambiguous(self):
        job = self.child()
        self.import_ledger([
            upstream_reservation("11111111-1111-4111-8111-111111111111", [0], "2026-11-29T18:45:00Z",
                                 "2026-11-29T20:45:00Z", uid=ALICE, username="alice"),
            upstream_reservation("22222222-2222-4222-8222-222222222222", [0], "2026-11-29T18:45:00Z",
                                 "2026-11-29T20:45:00Z", uid=ALICE + 1, username="bob")])
        root = self.proc(job, uid=0, username="root", container_runtime="docker",
                         container_id="0123456789abcdef0123456789abcdef")
        self.gpus([root], [])
        docs = self.run_until([T0 + 10 * k for k in range(15)])
        p = docs[-1]["snapshot"]["devices"][0]["processes"][0]
        self.assertEqual(p["identity_source"], "container-ambiguous")
        self.assertEqual(p["status"], "unknown")
        self.assertEqual([d["verdict"] for d in docs[-1]["reclaim"]], ["untrusted", "untrusted"])
        self.assertChildrenAlive()

    def test_no_reclaim_in_a_paused_exclusive_window(self):
        other = self.child()
        pause = {"BK_PAUSE_SAMPLING_DURING_EXCLUSIVE": "true"}
        shared = self.book_id("1", "2h", "--gpu", "0", env=pause)
        self.book_id("x", "1", "1h", "--gpu", "1", env=pause)  # 18:45-19:45
        self.gpus([self.proc(other, uid=ALICE, username="alice")], [])
        docs = self.run_until([T0 + 10 * k for k in range(20)], env=pause)
        doc = docs[-1]
        self.assertEqual(doc["state"], "paused")
        self.assertTrue(doc["paused"])
        self.assertEqual(doc["heartbeat"]["state"], "paused")
        self.assertEqual([d["verdict"] for d in doc["reclaim"]], ["untrusted", "untrusted"])
        self.assertIn("paused", docs[0]["reclaim"][0]["why"])
        self.assertIn("paused", [e["event"] for e in docs[0]["events"]])
        # Identities from an earlier sample are kept; nothing else is known.
        # The source is not even read while paused: a broken file changes nothing.
        self.write_json("sim.json", "{not json")
        doc = self.sample(T0 + 200, env=pause)
        self.assertEqual(doc["state"], "paused")
        self.assertIsNone(doc["error"])
        self.assertIn(shared, self.active_ids(T0 + 200))
        # The exclusive booking ends at 19:45: sampling resumes and the count starts then.
        self.gpus([self.proc(other, uid=ALICE, username="alice")], [])
        end = calendar.timegm(time.strptime("2026-11-29T19:45:00Z", "%Y-%m-%dT%H:%M:%SZ"))
        docs = self.run_until([end + 10 * k for k in range(7)], env=pause, expect_reclaim_at=end + 60)
        self.assertIn("resumed", [e["event"] for e in docs[0]["events"]])
        self.assertChildrenAlive()

    def test_paused_window_keeps_cached_identities(self):
        pause = {"BK_PAUSE_SAMPLING_DURING_EXCLUSIVE": "true"}
        self.gpus([], [])
        self.sample(T0 - 600, env=pause)  # before any booking: a normal sample
        self.book_id("x", "1", "1h", "--gpu", "1", env=pause)
        doc = self.sample(T0, env=pause)
        self.assertEqual(doc["state"], "paused")
        dev = doc["snapshot"]["devices"][1]
        self.assertEqual(dev["uuid"], sim_gpu(1)["uuid"])
        self.assertEqual(dev["memory_total_mb"], 81920)
        self.assertEqual(dev["source"], "none")
        self.assertEqual(dev["processes"], [])

    def test_stepped_clock_in_one_run(self):
        other = self.child()
        self.book_id("1", "2h", "--gpu", "0")
        self.gpus([self.proc(other, uid=ALICE, username="alice")], [])
        p = self.bk("m", "--samples", "7", "--json", env={"BK_TEST_CLOCK_STEP": "10"})
        self.assertEqual(p.returncode, 0, p.stderr)
        docs = [json.loads(line) for line in p.stdout.splitlines()]
        self.assertEqual([d["sampled_at"] for d in docs], [iso(T0 + 10 * k) for k in range(7)])
        self.assertEqual([len(self.reclaimed(d)) for d in docs], [0, 0, 0, 0, 0, 0, 1])
        self.assertChildrenAlive()

    def test_reclaim_off_when_zero(self):
        self.book_id("1", "2h", "--gpu", "0")
        p = self.bk("m", "--samples", "100", "--json", env={"BK_TEST_CLOCK_STEP": "10",
                                                           "BK_RECLAIM_AFTER_SECONDS": "0"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sum(len(self.reclaimed(json.loads(l))) for l in p.stdout.splitlines()), 0)


class MonitorOutputTest(MonitorCase):

    def test_once_json_snapshot_and_heartbeat(self):
        mine, theirs = self.child(), self.child()
        rid = self.book_id("1", "2h", "--gpu", "0")
        self.gpus([self.proc(mine, sm=40)], [self.proc(theirs, uid=ALICE, username="alice")])
        doc = self.sample(T0)
        self.assertEqual(doc["sampled_at"], NOW)
        self.assertEqual(doc["state"], "ok")
        hb = doc["heartbeat"]
        self.assertEqual(hb["state"], "running")
        self.assertTrue(hb["fresh"])
        self.assertEqual(hb["sample_interval_seconds"], 10.0)
        devs = doc["snapshot"]["devices"]
        self.assertEqual(len(devs), 2)
        p0 = devs[0]["processes"][0]
        self.assertEqual((p0["pid"], p0["uid"], p0["username"], p0["identity_source"], p0["status"]),
                         (mine, ME_UID, ME_NAME, "host", "ok"))
        self.assertEqual(p0["reservation_id"], rid)
        p1 = devs[1]["processes"][0]
        self.assertEqual((p1["uid"], p1["username"], p1["status"]), (ALICE, "alice", "unreserved"))
        kinds = [(e["event"], e["gpu"]) for e in doc["events"]]
        self.assertIn(("process-start", 0), kinds)
        self.assertIn(("process-start", 1), kinds)
        self.assertIn(("unbooked-use", 1), kinds)
        # The next sample: nothing new.
        self.assertEqual(self.sample(T0 + 10)["events"], [])
        # Alice's job ends.
        self.gpus([self.proc(mine, sm=40)], [])
        doc = self.sample(T0 + 20)
        self.assertEqual([(e["event"], e["pid"]) for e in doc["events"]], [("process-stop", theirs)])
        self.assertChildrenAlive()

    def test_text_output(self):
        other = self.child()
        self.gpus([], [self.proc(other, uid=ALICE, username="alice")])
        out = self.ok("m", "--once")
        lines = out.splitlines()
        self.assertTrue(lines[0].startswith("monitor started: interval=10s reclaim_after=60s"), out)
        self.assertEqual(lines[1], "sample 2026-11-29 18:49 +0000: gpus=2 processes=1 unbooked=1 events=2 reclaimed=0")
        self.assertIn(f"  process-start gpu=1 pid={other} user=alice unreserved", lines)
        self.assertEqual(lines[-1], "monitor stopped: samples=1")

    def test_usage_views(self):
        mine, theirs = self.child(), self.child()
        self.book_id("1", "2h", "--gpu", "0")
        self.gpus([self.proc(mine, sm=50)], [self.proc(theirs, uid=ALICE, username="alice", sm=20)])
        p = self.bk("m", "--samples", "12", "--json", env={"BK_TEST_CLOCK_STEP": "10"})  # 18:49:00-18:50:50
        self.assertEqual(p.returncode, 0, p.stderr)
        later = {"BK_TEST_NOW": iso(T0 + 300)}
        users = self.json("u", "users", "--json", env=later)
        self.assertEqual(users["kind"], "usage-users")
        self.assertEqual(users["schema_version"], "gpubk.usage.v1")
        self.assertEqual(users["collector"]["state"], "stopped")
        by_uid = {u["uid"]: u for u in users["users"]}
        me = by_uid[ME_UID]
        self.assertEqual(me["reserved_gpu_seconds"], 120.0)
        self.assertEqual(me["active_gpu_seconds"], 120.0)
        self.assertEqual(me["avg_sm_percent"], 50.0)
        self.assertEqual(me["gpus"], [0])
        alice = by_uid[ALICE]
        self.assertEqual(alice["unbooked_gpu_seconds"], 120.0)
        self.assertEqual(alice["reserved_gpu_seconds"], 0.0)
        self.assertEqual(self.json("u", "users", "--since", "30d", "--json", env=later)["users"], users["users"])

        mine_doc = self.json("u", "--json", env=later)
        self.assertEqual([u["uid"] for u in mine_doc["users"]], [ME_UID])
        # The original's keys: the node, warnings and the query's resolution; indented unless -c.
        self.assertEqual(set(mine_doc["node"]), {"hostname", "id", "schema"})
        self.assertEqual(mine_doc["warnings"], [])
        self.assertEqual(mine_doc["query"]["resolution"], "1m")
        p = self.bk("u", "--json", env=later)
        self.assertTrue(p.stdout.startswith("{\n  \""), p.stdout[:20])
        p = self.bk("u", "-j", "-c", env=later)
        self.assertEqual(len(p.stdout.splitlines()), 1)
        self.assertEqual(json.loads(p.stdout)["users"], mine_doc["users"])
        text = self.ok("u", env=later)
        self.assertIn("YOUR GPU USE", text)
        self.assertIn("ACTIVE       2m", text)

        events = self.json("u", "events", "--json", env=later)["records"]
        self.assertEqual([e["event"] for e in events],
                         ["monitor-start", "process-start", "process-start", "unbooked-use", "monitor-stop"])
        samples = self.json("u", "samples", "--json", env=later)["records"]
        self.assertEqual(sorted({(s["window_start"], s["gpu"], s["uid"], s["status"]) for s in samples}),
                         sorted({("2026-11-29T18:49:00Z", 0, ME_UID, "ok"), ("2026-11-29T18:50:00Z", 0, ME_UID, "ok"),
                                 ("2026-11-29T18:49:00Z", 1, ALICE, "unreserved"),
                                 ("2026-11-29T18:50:00Z", 1, ALICE, "unreserved")}))
        self.assertEqual(sum(s["sample_count"] for s in samples if s["gpu"] == 0), 12)
        hourly_doc = self.json("u", "samples", "-r", "1h", "--json", env=later)
        self.assertEqual(hourly_doc["query"]["resolution"], "1h")
        hourly = hourly_doc["records"]
        # Coarser windows are merged from the stored ones, as the original's resolutions.
        # The minutes 18:49 and 18:50 hold 6 samples each.
        for res, window, expected in (
                ("5m", 300, [("2026-11-29T18:45:00Z", 6), ("2026-11-29T18:50:00Z", 6)]),
                ("10m", 600, [("2026-11-29T18:40:00Z", 6), ("2026-11-29T18:50:00Z", 6)]),
                ("1d", 86400, [("2026-11-29T00:00:00Z", 12)])):
            doc = self.json("u", "samples", "-r", res, "--json", env=later)
            self.assertEqual(doc["query"]["resolution"], res)
            rows = [r for r in doc["records"] if r["gpu"] == 0]
            self.assertEqual([(r["window_start"], r["sample_count"]) for r in rows], expected, res)
            self.assertEqual({r["resolution_seconds"] for r in rows}, {window})
        self.assertEqual(self.json("u", "samples", "-r", "auto", "--json", env=later)["query"]["resolution"], "1m")
        self.assertEqual(self.json("u", "samples", "-r", "auto", "--since", "30d", "--json",
                                   env=later)["query"]["resolution"], "1h")
        self.assertIn("--resolution must be auto, 1m, 5m, 10m, 1h or 1d", self.fails("u", "samples", "-r", "2m"))
        self.assertEqual([(s["window_start"], s["sample_count"]) for s in hourly if s["gpu"] == 0],
                         [("2026-11-29T18:00:00Z", 12)])
        table = self.ok("u", "users", env=later)
        self.assertIn("alice", table)
        self.assertIn("Unbooked", table)
        self.ok("u", "events", env=later)
        self.ok("u", "samples", env=later)
        self.assertChildrenAlive()

    def test_usage_before_any_monitor_creates_nothing(self):
        out = self.ok("u")
        self.assertIn("collector: not-seen", out)
        doc = self.json("u", "users", "--json")
        self.assertEqual(doc["users"], [])
        self.assertEqual(doc["collector"]["state"], "not-seen")
        self.assertNoDataDir()

    def test_files_are_private(self):
        self.sample(T0)
        for name in ("usage.db", "usage.lock"):
            st = os.stat(os.path.join(self.data_dir, name))
            self.assertEqual(st.st_mode & 0o777, 0o600, name)
        con = sqlite3.connect(f"file:{os.path.join(self.data_dir, 'usage.db')}?mode=ro", uri=True)
        try:
            self.assertEqual(con.execute("PRAGMA journal_mode").fetchone()[0], "wal")
        finally:
            con.close()

    def test_bad_input(self):
        self.refused("m", "--samples", "0", contains="--samples")
        self.refused("m", "--interval", "0.1", contains="--interval")
        self.refused("m", "--once", "--samples", "3")
        self.refused("u", "bogus", contains="unknown usage view")
        self.refused("u", "users", "--since", "soon")
        self.refused("u", "events", "--gpu", "7", contains="--gpu")
        self.refused("u", "users", "--user", "nobody-such-user-xyz", contains="no such user")
        self.refused("u", "me", "--all", contains="your own usage")

    def test_second_monitor_is_refused_and_signals_stop_the_first(self):
        env = dict(self.env)
        env.pop("BK_TEST_NOW")  # a real clock: this one sleeps between samples
        first = subprocess.Popen([BK_BIN, "m", "--interval", "0.2"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, cwd=self.tmp)
        self.addCleanup(self._reap, first)
        lock = os.path.join(self.data_dir, "usage.lock")
        for _ in range(100):
            if os.path.exists(lock) and os.path.getsize(lock) > 0:
                break
            time.sleep(0.05)
        time.sleep(0.3)
        line = self.fails("m", "--once", rc=75)
        self.assertIn("another monitor", line)
        first.send_signal(signal.SIGTERM)
        out, err = first.communicate(timeout=10)
        self.assertEqual(first.returncode, 0, err)
        self.assertRegex(out.splitlines()[-1], r"^monitor stopped: samples=\d+$")
        self.assertEqual(self.json("u", "users", "--json", env={"BK_TEST_NOW": None})["collector"]["state"],
                         "stopped")


class ServerMonitorTest(BkTestCase):
    """The monitor inside `bk server serve` writes usage.db beside the server's ledger."""

    gpu_count = None

    def test_serve_runs_the_monitor(self):
        server_dir = os.path.join(self.tmp, "srv")
        sim = self.write_json("sim.json", {"gpus": [sim_gpu(0), sim_gpu(1)]})
        env = dict(self.env)
        env.pop("BK_DATA_DIR")
        env.pop("BK_TEST_NOW")
        env["BK_GPU_SIM_FILE"] = sim
        p = subprocess.run([BK_BIN, "server", "init", "--directory", server_dir, "--gpu-count", "2"], env=env,
                           capture_output=True, text=True, cwd=self.tmp, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr + p.stdout)
        config = os.path.join(server_dir, "config.json")
        serve = subprocess.Popen([BK_BIN, "server", "serve", "--config", config], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.tmp)
        self.addCleanup(lambda: serve.poll() is None and serve.kill())
        db = None
        for _ in range(100):
            found = [os.path.join(r, "usage.db") for r, _, names in os.walk(server_dir) if "usage.db" in names]
            if found:
                db = found[0]
                break
            time.sleep(0.05)
        self.assertIsNotNone(db, "no usage.db in the server directory")
        time.sleep(2.5)  # the first sample at start, the next 2 s later (monitor_interval_seconds)
        serve.send_signal(signal.SIGTERM)
        out, err = serve.communicate(timeout=10)
        self.assertEqual(serve.returncode, 0, err)
        self.assertIn("monitor started: interval=2s reclaim_after=3600s pause_during_exclusive=true", err)
        self.assertRegex(err, r"monitor stopped: samples=\d+")
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            status, samples = con.execute("SELECT status, samples FROM heartbeat").fetchone()
            devices = con.execute("SELECT count(DISTINCT gpu) FROM devices WHERE state = 'ok'").fetchone()[0]
        finally:
            con.close()
        self.assertEqual(status, "stopped")
        self.assertGreaterEqual(samples, 2)
        self.assertEqual(devices, 2)
        self.assertEqual(os.stat(db).st_mode & 0o777, 0o600)


if __name__ == "__main__":
    unittest.main()
