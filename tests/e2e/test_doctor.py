"""`bk doctor`: the checks, GPUBK 0.2.8's issue lists and document keys, --require-monitor,
--require-worker, --strict and the --probe deployment preflight. Nothing it does may create or
change data. The server cases need root (they create Unix accounts) and are skipped otherwise."""

import json
import os
import signal
import subprocess
import time
import unittest

import test_server_users
from bktest import BK_BIN, ME_UID, BkTestCase, sim_gpu
from server_fixture import OWNER, USER_A, ensure_group
from test_worker import WorkerCase

PROBES_PRIVATE = ["data-directory", "atomic-replace", "process-lock", "disk-space", "gpu-telemetry"]
MONITOR_NOT_SEEN = "collector heartbeat has not been recorded; start the monitor and retry"
WORKER_NOT_SEEN = ("current-user worker is not ready for this data directory (state=not-seen); "
                   "start bk-worker.service and retry")


def by_name(items, key="name"):
    return {i[key]: i for i in items}


class DoctorDocument(BkTestCase):

    def test_a_fresh_private_ledger_is_healthy_and_strict_exits_0(self):
        p = self.bk("doctor", "--strict")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(p.stdout.endswith("No policy issues found.\n"), p.stdout)
        self.assertIn("warn monitor: collector not-seen", p.stdout)
        self.assertNoDataDir()

    def test_the_original_keys_beside_the_checks(self):
        p = self.bk("doctor", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith('{\n  "access_mode": "private",\n'), p.stdout)  # always indented
        doc = json.loads(p.stdout)
        self.assertEqual({k: doc[k] for k in (
            "access_mode", "booking_slot_minutes", "broker_socket", "broker_uid", "configured_gpu_count",
            "data_dir", "dir_mode", "file_mode", "healthy", "kind", "monitor_required", "monitor_uid",
            "policy_issues", "privacy_issues", "probes", "ready", "schema_version", "storage_gid",
            "storage_issues", "storage_transport", "worker_required")}, {
            "access_mode": "private", "booking_slot_minutes": 5, "broker_socket": None, "broker_uid": None,
            "configured_gpu_count": 4, "data_dir": self.data_dir, "dir_mode": "0700", "file_mode": "0600",
            "healthy": True, "kind": "doctor", "monitor_required": False, "monitor_uid": None,
            "policy_issues": [], "privacy_issues": [], "probes": [], "ready": None,
            "schema_version": "gpubk.doctor.v1", "storage_gid": None, "storage_issues": [],
            "storage_transport": "direct", "worker_required": False})
        self.assertEqual((doc["collector"]["schema_version"], doc["collector"]["state"]),
                         ("gpubk.collector.v1", "not-seen"))
        self.assertEqual((doc["worker"]["schema_version"], doc["worker"]["state"], doc["worker"]["running"]),
                         ("gpubk.worker.v1", "not-seen", False))
        self.assertEqual([c["name"] for c in doc["checks"]],
                         ["configuration", "ledger-policy", "ledger-integrity", "monitor", "worker"])
        # The slot size is the configured one.
        doc = self.json("doctor", "--json", env={"BK_SLOT_MINUTES": "10"})
        self.assertEqual(doc["booking_slot_minutes"], 10)
        self.assertNoDataDir()

    def test_require_monitor_and_worker_are_issues_worded_as_the_original(self):
        doc = self.json("doctor", "--require-monitor", "--json", "--strict", rc=2)
        self.assertTrue(doc["monitor_required"])
        self.assertFalse(doc["healthy"])
        self.assertEqual(doc["policy_issues"], [{"type": "monitor-health", "message": MONITOR_NOT_SEEN}])
        self.assertEqual(by_name(doc["checks"])["monitor"]["status"], "fail")
        doc = self.json("doctor", "--require-worker", "--json", "--strict", rc=2)
        self.assertTrue(doc["worker_required"])
        self.assertEqual(doc["policy_issues"], [{"type": "worker-health", "message": WORKER_NOT_SEEN}])
        # Issues alone exit 0 without --strict.
        p = self.bk("doctor", "--require-worker", "--require-monitor")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("Found 0 storage issue(s), 2 policy issue(s), 0 privacy issue(s):\n"
                      "monitor-health " + MONITOR_NOT_SEEN + "\n"
                      "worker-health " + WORKER_NOT_SEEN + "\n", p.stdout)
        self.assertNoDataDir()

    def test_a_running_monitor_satisfies_require_monitor_and_a_stopped_one_is_an_issue(self):
        self.use_sim([sim_gpu(i) for i in range(4)])
        monitor = subprocess.Popen([BK_BIN, "m"], env=self.env, cwd=self.tmp, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(monitor.wait)
        self.addCleanup(monitor.kill)
        deadline = time.monotonic() + 15
        while True:
            p = self.bk("doctor", "--require-monitor", "--strict")
            if p.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.05)  # polling until the monitor wrote its first heartbeat
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("pass monitor: collector running", p.stdout)
        self.assertTrue(p.stdout.endswith("Monitor is running with fresh, complete telemetry.\n"), p.stdout)
        monitor.send_signal(signal.SIGTERM)
        self.assertEqual(monitor.wait(10), 0)
        doc = self.json("doctor", "--json", "--strict", rc=2)  # stopped: an issue even when not required
        self.assertEqual([i["type"] for i in doc["policy_issues"]], ["monitor-health"])
        self.assertTrue(doc["policy_issues"][0]["message"].startswith("collector stopped at 2026-11-29T"))

    def test_a_ledger_policy_mismatch_is_a_policy_issue(self):
        self.ok("1", "30m")
        doc = self.json("doctor", "--json", env={"BK_GPU_COUNT": "8"})
        self.assertFalse(doc["healthy"])
        self.assertEqual([i["type"] for i in doc["policy_issues"]], ["ledger-policy-mismatch"])
        self.assertIn("gpu_count: ledger=4 local=8", doc["policy_issues"][0]["message"])
        self.json("doctor", "--json", "--strict", env={"BK_GPU_COUNT": "8"}, rc=2)


class DoctorStorage(BkTestCase):

    def test_a_symlinked_data_root_is_flagged_and_never_read(self):
        outside = os.path.join(self.tmp, "outside")
        os.mkdir(outside, 0o700)
        with open(os.path.join(outside, "ledger.db"), "w") as f:
            f.write("not a ledger")
        os.symlink(outside, self.data_dir)
        before = self.snapshot()
        doc = self.json("doctor", "--json", "--strict", rc=2)
        self.assertIn({"type": "directory-type", "path": self.data_dir, "expected": "directory",
                       "actual": "symlink"}, doc["storage_issues"])
        read = by_name(doc["storage_issues"], "type")["ledger-read"]
        self.assertIn("skipped", read["message"])
        self.assertFalse(doc["healthy"])
        doc = self.json("doctor", "--json", "--probe")
        self.assertEqual(by_name(doc["probes"])["data-directory"]["status"], "fail")
        self.assertFalse(doc["ready"])
        self.assertUnchanged(before)

    def test_a_data_directory_mode_other_than_0700_is_flagged(self):
        self.ok("1", "30m")
        os.chmod(self.data_dir, 0o750)
        doc = self.json("doctor", "--json")
        self.assertIn({"type": "directory-mode", "path": self.data_dir, "expected": "0700", "actual": "0750"},
                      doc["storage_issues"])


class DoctorProbe(BkTestCase):

    def test_probe_of_a_missing_data_directory_creates_nothing(self):
        before = self.snapshot()
        p = self.bk("doctor", "--probe")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        lines = p.stdout.splitlines()
        at = lines.index("Deployment preflight: not ready")  # no GPU telemetry: count only
        self.assertEqual([line.split(":")[0] for line in lines[at + 1:]],
                         ["pass data-directory", "pass atomic-replace", "pass process-lock", "pass disk-space",
                          "fail gpu-telemetry"])
        self.assertIn("fail gpu-telemetry: no usable GPU telemetry source", p.stdout)
        doc = self.json("doctor", "--probe", "--json", "--strict", rc=2)
        self.assertEqual([x["name"] for x in doc["probes"]], PROBES_PRIVATE)
        self.assertIs(doc["ready"], False)
        self.assertTrue(doc["healthy"])
        self.assertTrue(all(set(x) >= {"name", "status", "message"} for x in doc["probes"]), doc["probes"])
        self.assertNoDataDir()
        self.assertUnchanged(before)

    def test_probe_of_a_ledger_in_use_leaves_it_as_it_was(self):
        self.use_sim([sim_gpu(i) for i in range(4)])
        self.ok("1", "30m")
        before = self.snapshot()
        doc = self.json("doctor", "--probe", "--json", "--strict", rc=2)
        probes = by_name(doc["probes"])
        self.assertEqual([p["status"] for p in doc["probes"]], ["pass", "pass", "pass", "pass", "warn"])
        self.assertEqual((probes["data-directory"]["path"], probes["data-directory"]["mode"],
                          probes["data-directory"]["owner_uid"]), (self.data_dir, "0700", ME_UID))
        self.assertEqual(probes["gpu-telemetry"]["message"], "simulation is active; real GPU telemetry was not tested")
        self.assertEqual(probes["gpu-telemetry"]["device_count"], 4)
        self.assertUnchanged(before)  # the probe's own files are gone


    def test_probe_rejects_a_gpu_topology_other_than_configured(self):
        self.use_sim([sim_gpu(i) for i in range(2)], keep_gpu_count=True)  # BK_GPU_COUNT=4
        doc = self.json("doctor", "--probe", "--json")
        gpu = by_name(doc["probes"])["gpu-telemetry"]
        self.assertEqual((gpu["status"], gpu["message"], gpu["device_count"], gpu["configured_device_count"]),
                         ("fail", "configured GPU topology does not match detected devices", 2, 4))
        self.assertIs(doc["ready"], False)


class DoctorWorker(WorkerCase):

    def test_a_running_worker_satisfies_require_worker(self):
        self.start_worker()
        p = self.bk("doctor", "--require-worker", "--strict")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("pass worker: running", p.stdout)
        self.assertTrue(p.stdout.endswith("Current-user worker is running for this data directory.\n"), p.stdout)
        doc = self.json("doctor", "--require-worker", "--json")
        self.assertEqual((doc["worker"]["state"], doc["worker"]["running"]), ("running", True))


@test_server_users.needs_root
class DoctorServer(test_server_users.ServerCase):
    # The fixture of the server lifecycle tests: a fresh base directory, the owner and USER_A, and a
    # server not yet initialised.
    setUp = test_server_users.ServerLifecycle.setUp

    def doctor(self, who, *args, rc=0):
        p = who.bk("doctor", "--json", *args)
        self.assertEqual(p.returncode, rc, p.stdout + p.stderr)
        return json.loads(p.stdout)

    def test_a_user_probes_the_daemon_not_its_files(self):
        self.srv.init("--gpu-count", "4")
        self.srv.start()
        p = self.a.bk("server", "connect", self.srv.config)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = self.doctor(self.a, "--probe")
        self.assertEqual({k: doc[k] for k in ("access_mode", "broker_socket", "broker_uid", "monitor_uid",
                                              "storage_transport", "data_dir", "storage_gid")},
                         {"access_mode": "broker", "broker_socket": self.srv.socket, "broker_uid": self.owner.uid,
                          "monitor_uid": self.owner.uid, "storage_transport": "socket",
                          "data_dir": os.path.join(self.srv.dir, "data"), "storage_gid": None})
        self.assertEqual([x["name"] for x in doc["probes"]],
                         ["data-directory", "disk-space", "daemon", "gpu-telemetry"])
        probes = by_name(doc["probes"])
        self.assertEqual(probes["data-directory"]["status"], "pass", probes)
        self.assertEqual({k: probes["daemon"][k] for k in ("status", "socket", "service_uid", "actor_uid")},
                         {"status": "pass", "socket": self.srv.socket, "service_uid": self.owner.uid,
                          "actor_uid": self.a.uid})
        self.assertEqual(doc["storage_issues"], [])
        # The owner also probes the files its daemon writes.
        p = self.owner.bk("doctor", "--json", "--probe", env=self.owner.env(BK_CONFIG_FILE=self.srv.config))
        self.assertEqual([x["name"] for x in json.loads(p.stdout)["probes"]],
                         ["data-directory", "atomic-replace", "process-lock", "disk-space", "daemon",
                          "gpu-telemetry"])
        self.assertEqual([n for n in os.listdir(os.path.join(self.srv.dir, "data")) if n.startswith(".gpubk-probe-")],
                         [])
        # The daemon down: the probe says so, and the ledger could not be read.
        self.assertEqual(self.srv.stop(), 0, self.srv.log())
        doc = self.doctor(self.a, "--probe", "--strict", rc=2)
        self.assertEqual(by_name(doc["probes"])["daemon"]["status"], "fail")
        self.assertIn("bk server serve", by_name(doc["probes"])["daemon"]["message"])
        self.assertEqual([i["type"] for i in doc["storage_issues"]], ["ledger-read"])

    def test_a_server_directory_outside_the_configured_group_is_flagged(self):
        group = "bksrvgrp"
        gid = ensure_group(group, members=(OWNER, USER_A))
        self.srv.init("--gpu-count", "4", "--access", "group", "--group", group)
        env = self.a.env(BK_CONFIG_FILE=self.srv.config)
        p = self.a.bk("doctor", "--json", env=env)
        self.assertEqual([i["type"] for i in json.loads(p.stdout)["storage_issues"]], ["ledger-read"])  # no daemon
        run = os.path.dirname(self.srv.socket)
        os.chown(run, -1, 0)
        p = self.a.bk("doctor", "--json", "--strict", env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        issues = by_name(json.loads(p.stdout)["storage_issues"], "type")
        self.assertEqual({k: issues["directory-gid"][k] for k in ("path", "expected_gid", "actual_gid")},
                         {"path": run, "expected_gid": gid, "actual_gid": 0})


if __name__ == "__main__":
    unittest.main()
