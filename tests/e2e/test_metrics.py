"""The Prometheus textfile (metrics_textfile): `bk m` in private mode and the daemon write it after each
sample; promtool accepts it, and its values are those `bk agent context` reports for the same instant
(GPU telemetry, who holds which GPU, bookings per user).

promtool comes with Debian's `prometheus` package (scripts/install-deps); without it the format check
is skipped and the value checks still run. The server test needs root (real accounts), as CI runs it.

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_metrics
"""

import json
import os
import re
import shutil
import stat
import subprocess
import unittest

from bktest import BkTestCase, sim_gpu
from server_fixture import (BK_BIN, OWNER, USER_A, Account, Server, bk_ok, describe, is_root, make_base_dir,
                            poll_until, remove_tree)

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text):
    """{(name, frozenset(labels)): value} of every sample, checking each line's shape."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line:
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line
        labels = frozenset(LABEL.findall(m.group(3) or ""))
        out[(m.group(1), labels)] = float(m.group(4))
    return out


def value(samples, name, **labels):
    return samples.get((name, frozenset((k, str(v)) for k, v in labels.items())))


def promtool_check(testcase, path):
    tool = shutil.which("promtool")
    if not tool:
        return
    with open(path, "rb") as f:
        p = subprocess.run([tool, "check", "metrics"], stdin=f, capture_output=True, text=True, timeout=60)
    testcase.assertEqual(p.returncode, 0, "promtool check metrics:\n" + p.stdout + p.stderr)
    testcase.assertEqual(p.stdout.strip(), "", p.stdout)  # no lint findings either


class PrivateMetrics(BkTestCase):
    gpu_count = 2

    def setUp(self):
        super().setUp()
        self.sim = os.path.join(self.tmp, "sim.json")
        gpus = [sim_gpu(0, used=1024, util=0), sim_gpu(1, used=40960, util=87)]
        gpus[0]["temperature_c"] = 41
        with open(self.sim, "w", encoding="utf-8") as f:
            json.dump({"gpus": gpus}, f)
        self.prom = os.path.join(self.tmp, "prom", "gpubk.prom")
        os.mkdir(os.path.dirname(self.prom))
        self.env.update({"BK_GPU_SIM_FILE": self.sim, "BK_METRICS_TEXTFILE": self.prom})

    def test_monitor_writes_what_the_agent_context_reports(self):
        self.ok("1", "2h")                      # running on one GPU
        self.ok("x", "1", "1h", "-t", "21:00")  # queued
        self.ok("m", "--once")
        st = os.stat(self.prom)
        self.assertEqual(stat.S_IMODE(st.st_mode), 0o644)
        self.assertEqual(os.listdir(os.path.dirname(self.prom)), ["gpubk.prom"])  # no temporary left
        promtool_check(self, self.prom)
        with open(self.prom, encoding="utf-8") as f:
            samples = parse(f.read())
        ctx = json.loads(self.ok("agent", "context"))
        me = ctx["actor"]["username"]
        for g in ctx["gpu_advice"]["gpus"]:
            i = g["index"]
            self.assertEqual(value(samples, "gpubk_gpu_utilization_ratio", gpu=i),
                             g["live"]["utilization_percent"] / 100.0)
            self.assertEqual(value(samples, "gpubk_gpu_memory_used_bytes", gpu=i), g["memory"]["used_mb"] * 2**20)
            self.assertEqual(value(samples, "gpubk_gpu_memory_total_bytes", gpu=i),
                             g["memory"]["total_mb"] * 2**20)
            if g.get("temperature_c") is not None:
                self.assertEqual(value(samples, "gpubk_gpu_temperature_celsius", gpu=i), g["temperature_c"])
        now = ctx["generated_at"]
        running = [r for r in ctx["reservations"] if r["start_at"] <= now < r["end_at"]]
        queued = [r for r in ctx["reservations"] if r["start_at"] > now]
        self.assertEqual((len(running), len(queued)), (1, 1))
        self.assertEqual(value(samples, "gpubk_bookings", state="running", user=me), 1)
        self.assertEqual(value(samples, "gpubk_bookings", state="queued", user=me), 1)
        [r] = running
        for gpu in r["gpus"]:
            self.assertEqual(value(samples, "gpubk_gpu_booked", gpu=gpu, mode=r["mode"]), 1)
            self.assertEqual(value(samples, "gpubk_gpu_booking_owner_info", gpu=gpu, mode=r["mode"],
                                   reservation=r["short_id"], user=me), 1)
        free = [g for g in range(2) if g not in r["gpus"]]
        for gpu in free:
            self.assertEqual(value(samples, "gpubk_gpu_booked", gpu=gpu, mode="none"), 0)
        self.assertEqual(value(samples, "gpubk_monitor_samples_total"), 1)
        self.assertEqual(value(samples, "gpubk_monitor_sample_ok"), 1)
        self.assertGreater(value(samples, "gpubk_ledger_size_bytes"), 0)
        # Private mode has no daemon: no request metrics.
        self.assertFalse(any(name.startswith("gpubk_request") for name, _ in samples))

    def test_a_link_at_the_path_is_refused_never_written_through(self):
        target = os.path.join(self.tmp, "elsewhere.txt")
        with open(target, "w", encoding="utf-8") as f:
            f.write("keep me\n")
        os.symlink(target, self.prom)
        p = self.bk("m", "--once")
        self.assertEqual(p.returncode, 0, self._describe(["m", "--once"], p))  # sampling goes on
        self.assertIn("metrics: refusing to replace %s: it is a symbolic link" % self.prom, p.stderr)
        self.assertTrue(os.path.islink(self.prom))
        with open(target, encoding="utf-8") as f:
            self.assertEqual(f.read(), "keep me\n")

    def test_bad_path_is_one_line_and_an_unwritable_file_does_not_stop_sampling(self):
        p = self.bk("m", "--once", env={"BK_METRICS_TEXTFILE": "relative.prom"})
        self.assertEqual(p.returncode, 2, self._describe(["m"], p))
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn("metrics_textfile must be an absolute path", p.stderr)
        missing = os.path.join(self.tmp, "no-such-dir", "gpubk.prom")
        p = self.bk("m", "--samples", "2", "--interval", "0.2", env={"BK_METRICS_TEXTFILE": missing})
        self.assertEqual(p.returncode, 0, self._describe(["m"], p))
        self.assertEqual(p.stderr.count("metrics:"), 1, p.stderr)  # told once, not every sample


@unittest.skipUnless(is_root(), "creates Unix accounts: run as root (CI does)")
class DaemonMetrics(unittest.TestCase):
    def test_daemon_counts_requests_and_writes_after_each_sample(self):
        if not bk_ok():
            self.skipTest("bk binary not found at %s" % BK_BIN)
        base = make_base_dir("bk-metrics-")
        self.addCleanup(remove_tree, base)
        owner = Account.make(OWNER, base)
        a = Account.make(USER_A, base)
        srv = Server(base, owner)
        self.addCleanup(srv.cleanup)
        srv.init("--gpu-count", "2")
        prom_dir = os.path.join(base, "textfile")
        os.mkdir(prom_dir, 0o755)
        os.chown(prom_dir, owner.uid, owner.gid)
        prom = os.path.join(prom_dir, "gpubk.prom")
        srv.patch_config(metrics_textfile=prom, monitor_interval_seconds=0.2)
        srv.start()
        p = a.bk("server", "connect", srv.config)
        self.assertEqual(p.returncode, 0, describe(["server", "connect"], p))
        p = a.bk("1", "1h")
        self.assertEqual(p.returncode, 0, describe(["1", "1h"], p))
        self.assertEqual(a.bk("l").returncode, 0)

        def booked():
            if not os.path.exists(prom):
                return None
            with open(prom, encoding="utf-8") as f:
                s = parse(f.read())
            ok = value(s, "gpubk_requests_total", method="booking.create", outcome="ok")
            return s if ok and value(s, "gpubk_bookings", state="running", user=USER_A) == 1 else None

        samples = poll_until(booked, 20, "the daemon's textfile to count the booking")
        promtool_check(self, prom)
        count = value(samples, "gpubk_request_duration_seconds_count", method="booking.create")
        self.assertEqual(value(samples, "gpubk_request_duration_seconds_bucket", method="booking.create",
                               le="+Inf"), count)
        self.assertGreaterEqual(count, 1)


if __name__ == "__main__":
    unittest.main()
