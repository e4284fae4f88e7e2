"""Managed launches: `bk N DUR -- CMD`, the per-user worker, `bk j`, `bk jl`, `bk jr`.
Real processes (small sh scripts) on simulated GPUs.

Time: the worker's clock starts at BK_TEST_NOW and advances in real time, so a
booking whose end lies a few seconds ahead gives real, short waits where the
feature *is* time (TERM at end - grace, KILL at end, a renewal moving them).
Slots are one minute (BK_SLOT_MINUTES=1) and the grace 2 s there.
"""

import hashlib
import json
import os
import signal
import sqlite3
import stat
import subprocess
import time
import unittest

from bktest import BK_BIN, ME_NAME, ME_UID, BkTestCase, sim_gpu, upstream_reservation
from server_fixture import OWNER, USER_A, USER_B, Account, Server, is_root, make_base_dir, remove_tree, rpc_as

UUID1 = sim_gpu(1)["uuid"]


def idle_gpus(count=4, processes=None):
    """A simulated host whose GPUs are idle; `processes` maps a GPU index to its process list."""
    return [sim_gpu(i, processes=(processes or {}).get(i)) for i in range(count)]


def marked_groups(reservation_id):
    """PGIDs of this user's processes whose environment holds BK_RESERVATION_ID=<id> exactly."""
    want = ("BK_RESERVATION_ID=" + reservation_id).encode()
    out = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat("/proc/" + name).st_uid != ME_UID:
                continue
            with open("/proc/%s/environ" % name, "rb") as f:
                if want not in f.read().split(b"\0"):
                    continue
            with open("/proc/%s/stat" % name) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                out.add(int(fields[2]))
        except (OSError, IndexError, ValueError):
            continue
    return out


class WorkerCase(BkTestCase):
    """A simulated 4-GPU host with idle GPUs and a private job directory."""

    gpu_count = None

    def setUp(self):
        super().setUp()
        self.use_sim(idle_gpus())
        self.jobs_dir = os.path.join(self.tmp, "home", ".local", "state", "gpubk", "jobs")
        self.workers = []
        self.addCleanup(self._stop_workers)

    def _stop_workers(self):
        # SIGTERM first: a worker stops its jobs on the way out.
        for p, log in self.workers:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=10)
            log.close()
        # Whatever a failed test left behind: this test's jobs (they carry its HOME).
        home = ("HOME=" + os.path.join(self.tmp, "home")).encode()
        for name in os.listdir("/proc"):
            try:
                if not name.isdigit() or os.stat("/proc/" + name).st_uid != ME_UID:
                    continue
                with open("/proc/%s/environ" % name, "rb") as f:
                    env = f.read().split(b"\0")
                if home in env and any(e.startswith(b"BK_RESERVATION_ID=") for e in env):
                    os.kill(int(name), signal.SIGKILL)
            except (OSError, ValueError):
                continue

    def start_worker(self, env=None):
        """`bk w start` in the background; returns (process, log path) once it said it started."""
        e = dict(self.env)
        e.update({k: str(v) for k, v in (env or {}).items()})
        path = os.path.join(self.tmp, "worker-%d.log" % len(self.workers))
        log = open(path, "w")
        p = subprocess.Popen([BK_BIN, "w", "start"], env=e, cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=log,
                             stderr=subprocess.STDOUT)
        self.workers.append((p, log))
        self.wait_for(lambda: "worker started" in self.read(path), "the worker to start", path)
        return p, path

    def read(self, path):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_for(self, cond, what, log=None, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if cond():
                return
            time.sleep(0.05)  # polling a condition another process brings about
        self.fail("timed out waiting for %s%s" % (what, ("\n" + self.read(log)) if log else ""))

    def jobs(self, env=None):
        return self.json("j", "--json", env=env)["jobs"]

    def job(self, env=None):
        js = self.jobs(env=env)
        self.assertEqual(len(js), 1, js)
        return js[0]["job"]


class SubmitAndLaunchTest(WorkerCase):

    def test_seed_flow_launches_on_exactly_the_booked_gpu(self):
        out_file = os.path.join(self.tmp, "env.txt")
        script = ('printf "%s|%s|%s|%s\\n" "$CUDA_VISIBLE_DEVICES" "$CUDA_DEVICE_ORDER" "$BK_RESERVED_GPUS" '
                  '"$BK_RESERVATION_ID" > ' + out_file)
        out = self.ok("x", "1", "2h", "--gpu", "1", "--", "sh", "-c", script)
        self.assertIn("job: pending command=sh (+2 args)", out)
        self.assertIn("worker: not seen", out)
        self.assertIn("scheduled command worker is not-seen", self.last.stderr)
        rid = self.reservations()[0]["id"]
        run = self.bk("w", "once")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("started: %s pid=" % rid[:8], run.stdout)
        self.assertIn("finished: %s status=succeeded exit=0" % rid[:8], run.stdout)
        with open(out_file) as f:
            self.assertEqual(f.read(), "%s|PCI_BUS_ID|1|%s\n" % (UUID1, rid))
        job = self.job()
        self.assertEqual((job["status"], job["exit_code"]), ("succeeded", 0))
        # A finished job's spec is removed; its log stays private.
        self.assertEqual(os.listdir(os.path.join(self.jobs_dir, "specs")), [])
        log = os.path.join(self.jobs_dir, rid + ".log")
        self.assertEqual(stat.S_IMODE(os.stat(log).st_mode), 0o600)
        self.assertEqual(stat.S_IMODE(os.stat(self.jobs_dir).st_mode), 0o700)

    def test_command_stays_private_ledger_keeps_digest_and_summary(self):
        secret = "--token=s3cr3t-value"
        self.ok("1", "30m", "--", "python3", "train.py", secret)
        specs = os.path.join(self.jobs_dir, "specs")
        self.assertEqual(stat.S_IMODE(os.stat(specs).st_mode), 0o700)
        [name] = os.listdir(specs)
        path = os.path.join(specs, name)
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
        with open(path) as f:
            spec = json.load(f)
        self.assertEqual(spec["argv"], ["python3", "train.py", secret])
        self.assertEqual(spec["cwd"], self.tmp)
        self.assertEqual(list(spec["environment"]), ["PATH"])
        canonical = json.dumps({"argv": spec["argv"], "cwd": spec["cwd"], "environment": spec["environment"],
                                "uid": ME_UID, "version": 2}, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(canonical.encode()).hexdigest()
        self.assertEqual(spec["digest"], digest)
        con = sqlite3.connect(os.path.join(self.data_dir, "ledger.db"))
        try:
            rows = con.execute("SELECT spec_id, digest, summary, status FROM jobs").fetchall()
        finally:
            con.close()
        self.assertEqual(rows, [(name[:-5], digest, "python3 train.py (+1 args)", "pending")])
        for f in os.listdir(self.data_dir):
            with open(os.path.join(self.data_dir, f), "rb") as fh:
                self.assertNotIn(b"s3cr3t", fh.read(), f)
        # The public documents show the summary, never the spec or digest.
        doc = self.json("l", "--json")["reservations"][0]["job"]
        self.assertEqual((doc["status"], doc["summary"]), ("pending", "python3 train.py (+1 args)"))
        self.assertNotIn("digest", json.dumps(doc))
        self.assertNotIn("spec_id", json.dumps(doc))

    def test_json_booking_result_carries_job_and_worker(self):
        doc = self.json("1", "30m", "--json", "--", "echo", "hi")
        self.assertEqual(doc["kind"], "booking_result")
        self.assertEqual(doc["reservation"]["job"]["status"], "pending")
        self.assertEqual(doc["reservation"]["job"]["summary"], "echo (+1 args)")
        self.assertEqual(doc["worker"]["schema_version"], "gpubk.worker.v1")
        self.assertEqual(doc["worker"]["state"], "not-seen")
        jobs = self.json("j", "--json")
        self.assertEqual((jobs["kind"], jobs["schema_version"]), ("jobs", "bk.agent.v1"))
        self.assertEqual(len(jobs["jobs"]), 1)

    def test_failed_booking_leaves_no_spec(self):
        self.ok("x", "4", "1h", "-q")
        before = self.snapshot()
        self.fails("x", "1", "1h", "--start", "now", "--", "echo", "hi")
        self.assertUnchanged(before, "after a refused booking with a command")

    def test_exit_status_output_and_no_shell(self):
        self.ok("1", "30m", "-q", "--", "sh", "-c", "echo out; echo err >&2; exit 7")
        self.ok("1", "30m", "-q", "--", "echo", "$HOME;ls", "*")
        run = self.bk("w", "once")
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)  # a job failed
        js = sorted(self.jobs(), key=lambda j: j["job"]["summary"])  # same start: ID order is random
        self.assertEqual([(j["job"]["summary"], j["job"]["status"], j["job"]["exit_code"]) for j in js],
                         [("echo (+2 args)", "succeeded", 0), ("sh (+2 args)", "failed", 7)])
        first = self.ok("jl", js[1]["id"][:8])
        header, rest = first.split("\n", 1)
        self.assertEqual(json.loads(header)["event"], "bk-job-start")
        self.assertEqual(json.loads(header)["argv"], ["sh", "-c", "echo out; echo err >&2; exit 7"])
        self.assertEqual(sorted(rest.split()), ["err", "out"])
        self.assertTrue(self.ok("jl", js[0]["id"][:8]).endswith("$HOME;ls *\n"))  # arguments reach it verbatim
        self.assertIn("failed", self.ok("j"))

    def test_missing_executable_fails_with_a_path_free_message(self):
        # It existed when it was submitted (a missing one is refused then) and is gone at the launch.
        program = os.path.join(self.tmp, "gone-before-the-launch")
        with open(program, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(program, 0o755)
        self.ok("1", "30m", "-q", "--", program)
        os.unlink(program)
        self.assertEqual(self.bk("w", "once").returncode, 1)
        job = self.job()
        self.assertEqual(job["status"], "failed")
        self.assertEqual(job["message"], "scheduled executable or working directory was not found")

    def test_a_job_that_cannot_start_gives_its_booking_back(self):
        program = os.path.join(self.tmp, "gone")
        with open(program, "w") as f:
            f.write("#!/bin/sh\n")
        os.chmod(program, 0o755)
        self.ok("x", "1", "2h", "--gpu", "3", "-q", "--", program)
        os.unlink(program)
        run = self.bk("w", "once")
        self.assertIn("released: %s GPU 3 from 2026-11-29 18:50 +0000 - 1h55m given back" % self.reservations()[0]["id"][:8],
                      run.stdout)
        self.assertEqual(self.reservations()[0]["end_at"], "2026-11-29T18:50:00Z")

    def test_a_finished_job_gives_the_rest_of_its_booking_back(self):
        self.ok("x", "1", "2h", "--gpu", "1", "-q", "--", "true")
        self.ok("x", "1", "2h", "--gpu", "2", "-q", "--", "sh", "-c", "exit 4")
        self.ok("x", "1", "2h", "--gpu", "3", "-q", "--keep", "--", "true")
        # The spec remembers --keep; its digest covers it.
        specs = os.path.join(self.jobs_dir, "specs")
        kept = []
        for name in os.listdir(specs):
            with open(os.path.join(specs, name)) as f:
                kept.append(json.load(f).get("keep_booking", False))
        self.assertEqual(sorted(kept), [False, False, True])
        run = self.bk("w", "once")
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)  # a job failed
        by_gpu = {r["gpus"][0]: r for r in self.reservations()}
        for gpu in (1, 2):
            rid = by_gpu[gpu]["id"]
            self.assertIn("released: %s GPU %d from 2026-11-29 18:50 +0000 - 1h55m given back" % (rid[:8], gpu),
                          run.stdout)
            self.assertEqual(by_gpu[gpu]["end_at"], "2026-11-29T18:50:00Z")
            edits = self.json("history", rid[:8], "--json")["edits"]
            self.assertEqual([(e["action"], e["after"]["end_at"]) for e in edits],
                             [("release", "2026-11-29T18:50:00Z")])
        self.assertEqual(by_gpu[3]["end_at"], "2026-11-29T20:45:00Z")  # --keep
        self.assertEqual(run.stdout.count("released:"), 2)

    def test_tampered_spec_is_refused(self):
        self.ok("1", "30m", "-q", "--", "echo", "hi")
        [name] = os.listdir(os.path.join(self.jobs_dir, "specs"))
        path = os.path.join(self.jobs_dir, "specs", name)
        with open(path) as f:
            spec = json.load(f)
        spec["argv"] = ["sh", "-c", "echo evil"]
        with open(path, "w") as f:
            json.dump(spec, f)
        self.assertEqual(self.bk("w", "once").returncode, 1)
        self.assertEqual(self.job()["message"], "private job spec integrity check failed")

    def test_cancel_before_start_settles_the_job(self):
        self.ok("1", "30m", "-t", "20:00", "-q", "--", "echo", "later")
        self.assertEqual(self.job()["status"], "pending")
        self.ok("d", "1")
        self.assertEqual(self.job()["status"], "cancelled")
        run = self.bk("w", "once")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertNotIn("\nstarted: ", run.stdout)

    def test_cancel_removes_the_spec_of_a_job_that_had_not_started(self):
        self.ok("1", "30m", "-t", "20:00", "-q", "--", "echo", "later")
        self.ok("1", "30m", "-t", "21:00", "-q", "--", "echo", "kept")
        specs = os.path.join(self.jobs_dir, "specs")
        self.assertEqual(len(os.listdir(specs)), 2)
        out = self.ok("d", "1")
        self.assertEqual(self.last.stderr, "")
        self.assertTrue(out.startswith("cancelled: "), out)
        self.assertEqual(len(os.listdir(specs)), 1)  # the other booking's job still needs its own
        self.assertEqual(self.json("agent", "cancel", "1")["reservation"]["status"], "cancelled")
        self.assertEqual(os.listdir(specs), [])
        self.assertEqual(sorted(j["job"]["status"] for j in self.jobs()), ["cancelled", "cancelled"])

    def test_future_job_waits_for_its_start(self):
        self.ok("1", "30m", "-t", "20:00", "-q", "--", "echo", "later")
        run = self.bk("w", "once")
        self.assertEqual(run.returncode, 0)
        self.assertEqual(self.job()["status"], "pending")
        run = self.bk("w", "once", env={"BK_TEST_NOW": "2026-11-29T20:00:10Z"})
        self.assertIn("finished:", run.stdout)
        self.assertEqual(self.job(env={"BK_TEST_NOW": "2026-11-29T20:00:10Z"})["status"], "succeeded")

    def test_missed_when_the_window_passed(self):
        self.ok("1", "30m", "-q", "--", "echo", "hi")
        later = {"BK_TEST_NOW": "2026-11-29T23:00:00Z"}
        run = self.bk("w", "once", env=later)
        self.assertIn("missed:", run.stdout)
        job = self.job(env=later)
        self.assertEqual((job["status"], job["message"]), ("missed", "reservation window ended"))

    def test_retry_runs_again_and_keeps_the_previous_log(self):
        self.ok("1", "30m", "-q", "--", "sh", "-c", "echo attempt; exit 3")
        self.bk("w", "once")
        self.assertEqual(self.ok("jr", "1"), "job retry queued: %s\n" % self.reservations()[0]["id"][:8])
        self.assertEqual(self.job()["status"], "pending")
        self.bk("w", "once")
        log = self.ok("jl", "1")
        self.assertEqual(log.splitlines().count("attempt"), 2, log)
        msg = self.fails("jr", "zzzz")
        self.assertIn("job not found", msg)
        self.ok("1", "30m", "-q", "--", "true")
        self.bk("w", "once")
        [done] = [j for j in self.jobs() if j["job"]["summary"] == "true"]
        self.assertIn("job in succeeded state cannot be retried", self.fails("jr", done["id"][:8]))


class LaunchGuardTest(WorkerCase):

    def test_waits_on_an_unreserved_process_then_launches(self):
        alice = {"pid": 4242, "uid": 1001, "username": "alice", "command": "python train.py",
                 "gpu_memory_mb": 2048, "sm_utilization_percent": 50}
        self.use_sim(idle_gpus(processes={1: [alice]}))
        self.ok("1", "30m", "--gpu", "1", "-q", "--", "true")
        run = self.bk("w", "once")
        self.assertEqual(run.returncode, 3, run.stdout + run.stderr)
        self.assertIn("waiting: ", run.stdout)
        self.assertIn("GPU 1 has unreserved process user=alice pid=4242", run.stdout)
        job = self.job()
        self.assertEqual((job["status"], job["launch_guard_state"]), ("pending", "waiting"))
        self.assertIn("note: GPU 1 has unreserved process user=alice pid=4242", self.ok("j"))
        # A repeated identical decision writes no new audit event.
        events = len(self.json("lg", "--json", "--limit", "1000")["events"])
        self.bk("w", "once")
        self.assertEqual(len(self.json("lg", "--json", "--limit", "1000")["events"]), events)
        self.use_sim(idle_gpus())
        run = self.bk("w", "once")
        self.assertIn("ready: ", run.stdout)
        self.assertEqual(self.job()["status"], "succeeded")

    def test_bk_j_says_pending_while_the_guard_holds_the_job(self):
        alice = {"pid": 4242, "uid": 1001, "username": "alice", "command": "python train.py",
                 "gpu_memory_mb": 2048, "sm_utilization_percent": 50}
        self.use_sim(idle_gpus(processes={1: [alice]}))
        self.ok("1", "30m", "--gpu", "1", "-q", "--", "true")
        rid = self.reservations()[0]["id"]
        self.assertEqual(self.bk("w", "once").returncode, 3)
        lines = self.ok("j").splitlines()
        self.assertEqual(lines[1:], [
            "#  ID       State        GPU       Start                  Command",
            "1  %s pending      1         2026-11-29 18:45 +0000 true" % rid[:8],
            "   note: GPU 1 has unreserved process user=alice pid=4242",
        ])

    def test_accepts_what_the_monitor_accepts(self):
        mine = {"pid": 5151, "uid": ME_UID, "username": ME_NAME, "command": "python serve.py",
                "gpu_memory_mb": 2048, "sm_utilization_percent": 30}
        bob = {"pid": 6161, "uid": 1002, "username": "bob", "command": "python eval.py", "gpu_memory_mb": 1024}
        self.import_ledger([upstream_reservation("b0b00000-0000-4000-8000-000000000001", [2],
                                                 "2026-11-29T18:00:00Z", "2026-11-29T21:00:00Z",
                                                 uid=1002, username="bob")])
        self.use_sim(idle_gpus(processes={1: [mine], 2: [bob]}))
        self.ok("x", "1", "1h", "--gpu", "1", "-q", "--", "true")  # the owner's own process
        self.ok("1", "1h", "--gpu", "2", "-q", "--", "true")       # bob holds a booking on GPU 2
        run = self.bk("w", "once")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertEqual([j["job"]["status"] for j in self.jobs()], ["succeeded", "succeeded"])

    def test_without_telemetry_it_waits_and_can_be_turned_off(self):
        self.env.pop("BK_GPU_SIM_FILE")
        self.env["BK_GPU_COUNT"] = "4"
        self.ok("1", "30m", "-q", "--", "sh", "-c", "echo $CUDA_VISIBLE_DEVICES")
        run = self.bk("w", "once")
        self.assertEqual(run.returncode, 3)
        self.assertIn("GPU 0 live telemetry is unavailable", run.stdout)
        run = self.bk("w", "once", env={"BK_WORKER_LIVE_GUARD": "off"})
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertTrue(self.ok("jl", "1").endswith("\n0\n"))  # indexes without UUIDs


class WorkerStatusTest(WorkerCase):

    def test_status_names_the_missing_worker_of_a_scheduled_command(self):
        warning = ("scheduled command worker is not-seen; start `bk w start` now or enable bk-worker.service, "
                   "otherwise the command cannot launch. For temporary use keep `bk w start` in tmux; for "
                   "logout/reboot persistence contact the GPUBK administrator shown by `bk info`")
        self.ok("1", "30m", "-q")
        self.assertNotIn("worker:", self.ok("st"))
        self.ok("1", "30m", "-t", "20:00", "-q", "--", "echo", "later")
        self.assertIn("warning: " + warning + "\n", self.last.stderr)  # the booking says it too
        later = self.reservations()[1]["id"][:8]
        lines = self.ok("st").splitlines()
        self.assertEqual(self.last.stderr, "warning: " + warning + "\n")
        self.assertEqual(lines[lines.index("   2 %s shared slots 1/2 GPU 0 11-29 20:00->20:30" % later) + 1],
                         "worker: not seen (`bk w` checks status; `bk w start` launches it)")
        doc = self.json("1", "30m", "-t", "21:00", "--json", "--", "true")
        self.assertEqual(doc["warnings"], [warning])
        self.start_worker()
        self.assertIn("worker: running", self.ok("st"))
        self.assertEqual(self.last.stderr, "")

    def test_cleanup_refuses_a_linked_specs_directory(self):
        self.ok("1", "30m", "-t", "20:00", "-q", "--", "echo", "later")
        specs = os.path.join(self.jobs_dir, "specs")
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.rename(specs, elsewhere)
        os.symlink(elsewhere, specs)
        stale = os.path.join(elsewhere, "00000000-0000-4000-8000-000000000000.json")  # an old orphan
        with open(stale, "w") as f:
            f.write("{}")
        os.chmod(stale, 0o600)
        os.utime(stale, (0, 0))
        msg = self.refused("j", "--cleanup")
        self.assertEqual(msg, "private job path is not a directory: " + specs)
        self.assertEqual(len(os.listdir(elsewhere)), 2)

    def test_read_only_commands_create_nothing(self):
        before = self.snapshot()
        self.assertIn("worker: not seen", self.ok("w"))
        self.assertEqual(self.json("w", "status", "--json")["state"], "not-seen")
        self.assertIn("No jobs.", self.ok("j"))
        self.ok("shell", "env")
        self.ok("run")
        self.assertUnchanged(before, "after read-only job commands")
        self.assertNoDataDir()

    def test_worker_option_rules(self):
        self.assertIn("--json requires --status", self.json_error("worker", "--json")["error"]["message"])
        self.assertIn("cannot be combined", self.fails("worker", "--status", "--once"))
        self.assertEqual(self.bk("worker", "--require-running").returncode, 2)
        self.assertIn("give a job number", self.fails("jr"))

    def install_unit(self, kind, env):
        """`bk service install KIND`: its output, the unit's path and text, checked for what every unit has."""
        out = self.ok("service", "install", kind, env=env)
        unit = os.path.join(self.tmp, "home", ".config", "systemd", "user", "bk-%s.service" % kind)
        self.assertIn("installed unit: " + unit, out)
        self.assertIn("systemctl --user enable --now bk-%s.service" % kind, out)
        self.assertIn("after starting it, verify: bk doctor --require-%s --strict" % kind, out)
        with open(unit) as f:
            text = f.read()
        self.assertIn('Environment="BK_DATA_DIR=%s"' % self.data_dir, text)
        return out, unit, text

    def test_service_install_writes_a_unit_and_enables_nothing(self):
        # Only the variables bk reads are captured, sorted; the shell hook's state is not.
        out, unit, text = self.install_unit("worker", {"BK_RESERVED_GPUS": "0", "BK_SHELL_STATE": "active",
                                                       "BK_QUEUE_SEARCH_HOURS": "24"})
        self.assertIn('ExecStart="%s" worker' % os.path.realpath(BK_BIN), text)
        self.assertIn("RestartPreventExitStatus=75 78", text)
        self.assertNotIn("BK_RESERVED_GPUS", text)
        self.assertNotIn("BK_SHELL_STATE", text)
        self.assertIn('Environment="BK_JOB_LOG_DIR=', text)
        names = [line.split("=", 1)[1].lstrip('"').split("=")[0] for line in text.splitlines()
                 if line.startswith("Environment=")]
        self.assertEqual(names, sorted(names))
        self.assertIn("BK_QUEUE_SEARCH_HOURS", names)
        self.assertIn("captured config overrides: ", out)
        self.assertNotIn("BK_DATA_DIR", out.split("captured config overrides: ")[1].splitlines()[0])
        self.assertIn("temporary after SSH disconnect: keep `bk w start` running in tmux", out)
        self.assertIn("already exists", self.fails("service", "install", "worker"))
        self.ok("service", "install", "worker", "--force")
        self.assertIn("removed unit", self.ok("service", "uninstall", "worker"))
        self.assertFalse(os.path.exists(unit))

    def test_service_install_monitor_on_a_private_ledger(self):
        _, unit, text = self.install_unit("monitor", {"BK_QUEUE_SEARCH_HOURS": "24"})
        self.assertIn('ExecStart="%s" m\n' % os.path.realpath(BK_BIN), text)
        self.assertIn("RestartPreventExitStatus=75 77 78", text)
        self.assertNotIn("BK_JOB_LOG_DIR", text)
        self.assertEqual(self.ok("service", "show", "monitor", env={"BK_QUEUE_SEARCH_HOURS": "24"}), text)
        self.assertIn("removed unit: " + unit, self.ok("service", "uninstall", "monitor"))
        self.assertIn("give the unit", self.fails("service", "install", "printer"))


class RealTimeTest(WorkerCase):
    """Short real waits: a 1-minute booking ending a few seconds after the worker starts."""

    def setUp(self):
        super().setUp()
        self.env.update({"BK_SLOT_MINUTES": "1", "BK_WORKER_TERMINATION_GRACE_SECONDS": "2",
                         "BK_WORKER_POLL_SECONDS": "0.1", "BK_WORKER_RECOVERY_GRACE_SECONDS": "1",
                         "BK_TEST_NOW": "2026-11-29T18:49:55Z"})  # the booking ends at 18:50:00

    def stubborn(self, name):
        """A script that notes each TERM in a file and keeps running."""
        path = os.path.join(self.tmp, name)
        return path, ["sh", "-c", 'trap "date +%%s.%%N >> %s" TERM; while :; do sleep 0.05; done' % path]

    def test_term_at_end_minus_grace_then_kill_at_end(self):
        term_file, cmd = self.stubborn("term.txt")
        cmd[-1] = "setsid sleep 60 & " + cmd[-1]  # one process even leaves the job's session
        self.ok("1", "1m", "-q", "--", *cmd)
        rid = self.reservations()[0]["id"]
        t0 = time.time()
        run = self.bk("w", "once")
        elapsed = time.time() - t0
        self.assertEqual(run.returncode, 1, run.stdout + run.stderr)  # timed-out counts as failed
        with open(term_file) as f:
            term_at = float(f.read().split()[0]) - t0
        self.assertGreater(term_at, 2.5)   # not before end - grace (18:49:58, 3 s in)
        self.assertLess(term_at, 4.5)
        self.assertGreater(elapsed, 4.8)   # KILL at the end (18:50:00, 5 s in)
        self.assertLess(elapsed, 8.0)
        job = self.job()
        self.assertEqual((job["status"], job["exit_code"], job["message"]), ("timed-out", -9, "deadline"))
        self.assertEqual(marked_groups(rid), set())  # nothing carrying its marker outlives the booking

    def test_renewal_moves_the_deadline_and_a_cancel_stops_the_job(self):
        term_file, cmd = self.stubborn("term.txt")
        self.ok("1", "1m", "-q", "--", *cmd)
        worker, log = self.start_worker()
        self.wait_for(lambda: "started:" in self.read(log), "the job to start", log)
        t0 = time.monotonic()
        self.ok("renew", "1", "1m", env={"BK_TEST_NOW": "2026-11-29T18:49:56Z"})
        time.sleep(max(0.0, 6.0 - (time.monotonic() - t0)))  # past the old end (18:50:00)
        self.assertFalse(os.path.exists(term_file), "TERM came at the old end")
        self.assertEqual(self.job()["status"], "running")
        later = {"BK_TEST_NOW": "2026-11-29T18:50:01Z"}
        self.ok("d", "1", env=later)
        self.wait_for(lambda: "finished:" in self.read(log), "the cancelled job to stop", log, timeout=10)
        self.assertTrue(os.path.exists(term_file))  # TERM first, KILL after the grace
        job = self.job(env=later)
        self.assertEqual((job["status"], job["exit_code"], job["message"]), ("cancelled", -9, "cancelled"))
        worker.send_signal(signal.SIGTERM)
        self.assertEqual(worker.wait(timeout=10), 0)

    def test_crash_recovery_stops_the_orphaned_group_and_a_second_worker_is_refused(self):
        self.env["BK_TEST_NOW"] = "2026-11-29T18:49:00Z"
        _, cmd = self.stubborn("term.txt")
        self.ok("1", "10m", "-q", "--", *cmd)
        rid = self.reservations()[0]["id"]
        worker, log = self.start_worker()
        self.wait_for(lambda: "started:" in self.read(log), "the job to start", log)
        second = self.bk("w", "once")
        self.assertEqual(second.returncode, 75, second.stdout + second.stderr)
        self.assertEqual(second.stderr, "bk: another worker is active for %s\n" % self.jobs_dir)
        self.assertIn("worker: running (lease held)", self.ok("w"))
        self.assertTrue(self.json("w", "status", "--json")["running"])
        # The worker logs "started:" once the child is forked; its exec (which gives the
        # group its marked environment) may come a moment later on a loaded machine.
        self.wait_for(lambda: len(marked_groups(rid)) == 1, "the job's process group to carry its marker", log)
        worker.kill()  # an unclean exit: the job's process group is left behind
        worker.wait(timeout=10)
        groups = marked_groups(rid)
        self.assertEqual(len(groups), 1)
        run = self.bk("w", "once")
        self.assertIn("recovery: examined=1 uncertain=1 terminated_groups=1", run.stdout)
        self.assertEqual(marked_groups(rid), set())
        job = self.job()
        self.assertEqual((job["status"], job["recovery_state"]), ("uncertain", "terminated"))
        self.assertIn("--accept-duplicate-risk", self.fails("jr", "1"))
        self.assertIn("job retry queued", self.ok("jr", "1", "--accept-duplicate-risk"))
        self.assertEqual(self.job()["status"], "pending")

    def test_what_left_the_group_is_stopped_when_the_command_exits(self):
        self.env["BK_TEST_NOW"] = "2026-11-29T18:49:00Z"
        # The booking runs on for ten minutes; the job's main process is done at once. One escapee
        # ends on SIGTERM, the other needs the SIGKILL after the grace.
        script = ("setsid sleep 600 </dev/null >/dev/null 2>&1 & "
                  "setsid sh -c 'trap \"\" TERM; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 & "
                  "echo main-done")
        self.ok("1", "10m", "-q", "--", "sh", "-c", script)
        rid = self.reservations()[0]["id"]
        t0 = time.monotonic()
        run = self.bk("w", "once")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertIn("finished: %s status=succeeded exit=0" % rid[:8], run.stdout)
        self.assertEqual(marked_groups(rid), set())
        self.assertEqual(self.job()["status"], "succeeded")
        self.assertEqual(self.ok("jl", "1").split("\n", 1)[1], "main-done\n")

    def test_stopping_the_worker_interrupts_its_jobs(self):
        self.env["BK_TEST_NOW"] = "2026-11-29T18:49:00Z"
        self.ok("1", "10m", "-q", "--", "sh", "-c", "while :; do sleep 0.05; done")
        worker, log = self.start_worker()
        self.wait_for(lambda: "started:" in self.read(log), "the job to start", log)
        worker.send_signal(signal.SIGTERM)
        self.assertEqual(worker.wait(timeout=10), 1)
        self.assertIn("status=interrupted exit=-15", self.read(log))
        self.assertEqual(self.job()["message"], "worker-stop")


class RemoteWorkerTest(unittest.TestCase):
    """A user of a connected server: the worker reports through the daemon, which accepts a job
    update only from the booking's owner. As root the owner and users are real accounts."""

    def setUp(self):
        self.base = make_base_dir("bk-worker-srv-")
        self.addCleanup(remove_tree, self.base)
        if is_root():
            self.owner = Account.make(OWNER, self.base)
            self.user = Account.make(USER_A, self.base)
            self.other = Account.make(USER_B, self.base)
        else:
            self.owner = self.user = Account.current(self.base)
            self.other = None
        self.srv = Server(self.base, self.owner)
        self.addCleanup(self.srv.cleanup)
        self.srv.init("--gpu-count", "4")
        # The GPUs are the daemon's: its monitor samples them and every client (the worker's
        # launch guard included) sees that monitor's snapshot.
        self.sim = os.path.join(self.base, "sim.json")
        with open(self.sim, "w") as f:
            json.dump({"gpus": idle_gpus()}, f)
        os.chmod(self.sim, 0o644)
        self.srv.serve_env["BK_GPU_SIM_FILE"] = self.sim
        self.srv.start()
        self.srv.wait_sampled()

    def bk(self, who, *args, local_sim=True):
        """`bk` as `who`; `local_sim` also gives this client the simulation file (for the UUIDs a
        shell sees); without it the client host has no GPU telemetry at all."""
        env = who.env(BK_CONFIG_FILE=self.srv.config, BK_WORKER_POLL_SECONDS="0.1")
        if local_sim:
            env["BK_GPU_SIM_FILE"] = self.sim
        return who.bk(*args, env=env)

    def test_a_client_without_telemetry_launches_on_the_daemons(self):
        """No NVML and no simulation file on the client side: the launch guard asks the daemon,
        and `bk config` reports the daemon's telemetry rather than none."""
        out_file = os.path.join(self.user.home, "cvd-remote.txt")
        p = self.bk(self.user, "x", "1", "1h", "--gpu", "1", "-q", "--", "sh", "-c",
                    'echo "$CUDA_VISIBLE_DEVICES" > ' + out_file, local_sim=False)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.bk(self.user, "w", "once", local_sim=False)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        with open(out_file) as f:
            self.assertEqual(f.read(), UUID1 + "\n")
        # The same through `bk run`, whose foreground worker runs the launch guard itself.
        p = self.bk(self.user, "run", "x", "1", "1h", "--gpu", "2", "--", "sh", "-c", 'echo "$CUDA_VISIBLE_DEVICES"',
                    local_sim=False)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout, sim_gpu(2)["uuid"] + "\n")
        # `bk st` shows the same snapshot: the daemon's monitor's, not this client's (it has none).
        st = self.bk(self.user, "st", local_sim=False)
        self.assertEqual(st.returncode, 0, st.stdout + st.stderr)
        self.assertIn("A100", st.stdout)
        want = "simulation %s (sampled by the daemon's monitor)" % self.sim
        config = self.bk(self.user, "config", local_sim=False)
        self.assertIn("telemetry: " + want, config.stdout.splitlines())
        doc = json.loads(self.bk(self.user, "config", "--json", local_sim=False).stdout)
        self.assertEqual(doc["telemetry"], want)

    def test_a_finished_job_gives_its_booking_back_through_the_daemon(self):
        p = self.bk(self.user, "x", "1", "1h", "--gpu", "1", "-q", "--", "true")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        [r] = json.loads(self.bk(self.user, "l", "--json").stdout)["reservations"]
        if self.other is not None:
            # Only the owner may give it back: not another user, not the server's owner.
            request = {"jsonrpc": "2.0", "id": 1, "method": "booking.release", "params": {"reservation_id": r["id"]}}
            for who in (self.other, self.owner):
                [reply] = rpc_as(who, self.srv.socket, [request])
                self.assertEqual(reply["error"]["data"]["kind"], "permission", who.name)
        run = self.bk(self.user, "w", "once")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("released: %s GPU 1 from 2026-11-29 18:50 +0000 - 55m given back" % r["id"][:8], run.stdout)
        [after] = json.loads(self.bk(self.user, "l", "--json").stdout)["reservations"]
        self.assertEqual((after["start_at"], after["end_at"]), (r["start_at"], "2026-11-29T18:50:00Z"))
        history = self.bk(self.user, "history", r["id"][:8])
        self.assertIn(" release exclusive GPU=1 ", history.stdout)
        # A program that is not there is refused before the daemon books anything.
        p = self.bk(self.user, "run", "1", "1h", "--", "no-such-program-for-bk-tests")
        self.assertEqual(p.returncode, 2)
        self.assertIn("bk: no-such-program-for-bk-tests: command not found on PATH", p.stderr)
        self.assertEqual(len(json.loads(self.bk(self.user, "l", "--json").stdout)["reservations"]), 1)

    def test_worker_of_a_server_user(self):
        out_file = os.path.join(self.user.home, "cvd.txt")
        p = self.bk(self.user, "x", "1", "1h", "--gpu", "1", "-q", "--", "sh", "-c",
                    'echo "$CUDA_VISIBLE_DEVICES" > ' + out_file)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        run = self.bk(self.user, "w", "once")
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        with open(out_file) as f:
            self.assertEqual(f.read(), UUID1 + "\n")
        doc = json.loads(self.bk(self.user, "j", "--json").stdout)
        self.assertEqual(doc["jobs"][0]["job"]["status"], "succeeded")
        env = json.loads(self.bk(self.user, "shell", "env", "--json").stdout)
        self.assertEqual((env["state"], env["cuda_visible_devices"]), ("ok", UUID1))
        if self.other is None:
            return
        # Nobody but the booking's owner may change its job: not another user, not the owner of
        # the server (an administrator).
        rid = doc["jobs"][0]["id"]
        request = {"jsonrpc": "2.0", "id": 1, "method": "job.update",
                   "params": {"reservation_id": rid, "status": "uncertain"}}
        for who in (self.other, self.owner):
            [reply] = rpc_as(who, self.srv.socket, [request])
            self.assertIn("error", reply, who.name)
            self.assertIn("only its owner's worker may update its job", reply["error"]["message"])
        listed = rpc_as(self.other, self.srv.socket, [{"jsonrpc": "2.0", "id": 2, "method": "job.list"}])
        self.assertEqual(listed[0]["result"], [])  # and nobody else sees it
        self.srv.stop()
        env = json.loads(self.bk(self.user, "shell", "env", "--json").stdout)
        self.assertEqual((env["state"], env["cuda_visible_devices"]), ("unreachable", ""))


if __name__ == "__main__":
    unittest.main()
