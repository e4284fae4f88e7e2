"""Foreground `bk run`: the command runs attached to the terminal on exactly the booked GPUs. As in the
original, the `run: GPU=...` banner and the read-only and queued lines go to stdout; bk's lines around a
command it runs go to stderr."""

import fcntl
import os
import select
import signal
import subprocess
import termios
import time
import unittest

from bktest import BK_BIN, sim_gpu
from test_worker import WorkerCase, marked_groups

UUID = [sim_gpu(i)["uuid"] for i in range(4)]
ENV_LINE = ('printf "%s|%s|%s|%s|%s|%s\\n" "$CUDA_VISIBLE_DEVICES" "$CUDA_DEVICE_ORDER" "$BK_RESERVED_GPUS" '
            '"${BK_RESERVATION_ID-unset}" "$GPUBK_RESERVATION_IDS" "$GPUBK_GPU_IDS"')


class RunNowTest(WorkerCase):

    def test_show_without_and_with_a_booking(self):
        out = self.ok("run")
        self.assertIn("run: no booking is active now; earliest suggestion is GPU=", out)
        self.assertIn("book and run: bk run 1 30m -- python train.py", out)
        rid = self.book_id("x", "1", "2h", "--gpu", "1")
        self.assertEqual(self.ok("r"), "run: GPU=1 from booking(s) %s\nexample: bk run -- python train.py\n" % rid[:8])

    def test_show_the_gpus_one_booking_would_use(self):
        self.assertIn("you have no reservation active now", self.refused("run", "1"))  # as the original
        a = self.book_id("1", "30m", "--gpu", "0")
        b = self.book_id("1", "1h", "--gpu", "2")
        self.assertEqual(self.ok("run", "2"), "run: GPU=2 from booking(s) %s\nexample: bk run -- python train.py\n" % b[:8])
        self.assertEqual(self.ok("r", a[:8]).splitlines()[0], "run: GPU=0 from booking(s) %s" % a[:8])
        self.assertIn("no booking active now number 3", self.refused("run", "3"))
        self.assertIn("no booking of yours active now matches zz", self.fails("run", "zz"))

    def test_runs_on_the_current_booking_and_returns_its_status(self):
        rid = self.book_id("x", "1", "2h", "--gpu", "1")
        p = self.bk("run", "--", "sh", "-c", ENV_LINE + "; exit 5")
        self.assertEqual(p.returncode, 5, p.stderr)
        self.assertEqual(p.stdout, "run: GPU=1 from booking(s) %s\n%s|PCI_BUS_ID|1|%s|%s|1\n" % (rid[:8], UUID[1], rid, rid))
        self.assertEqual(p.stderr, "")

    def test_selects_by_number_or_runs_on_all(self):
        a = self.book_id("1", "30m", "--gpu", "0")
        b = self.book_id("1", "1h", "--gpu", "2")
        p = self.bk("run", "--", "sh", "-c", ENV_LINE)
        self.assertEqual(p.stdout, "run: GPU=0,2 from booking(s) %s,%s\n%s,%s|PCI_BUS_ID|0,2|unset|%s,%s|0,2\n"
                         % (a[:8], b[:8], UUID[0], UUID[2], a, b))
        p = self.bk("run", "2", "--", "sh", "-c", ENV_LINE)  # numbered as `bk g` numbers them
        self.assertEqual(p.stdout.splitlines()[1].split("|")[0], UUID[2])
        p = self.bk("run", b[:8], "--", "sh", "-c", ENV_LINE)
        self.assertEqual(p.stdout.splitlines()[1].split("|")[0], UUID[2])
        self.assertIn("no booking of yours active now matches zz", self.fails("run", "zz", "--", "true"))

    def test_without_a_booking_it_refuses(self):
        msg = self.fails("run", "--", "true")
        self.assertIn("you have no reservation active now; use `bk run 1 30m -- COMMAND`", msg)

    def test_bad_input(self):
        self.assertIn("booking-and-run requires a command after --", self.refused("run", "1", "30m"))
        self.assertIn("-- must be followed by a job command", self.refused("run", "--"))
        self.assertIn("--wait applies to booking-and-run", self.refused("run", "--wait", "--", "true"))
        self.assertIn("not the option --json", self.refused("1", "30m", "--", "--json"))

    def test_ctrl_c_is_forwarded(self):
        self.book_id("1", "2h")
        p = subprocess.Popen([BK_BIN, "run", "--", "sh", "-c",
                              'trap "echo got-INT; exit 9" INT; echo ready; while :; do sleep 0.05; done'],
                             env=self.env, cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            self.assertTrue(p.stdout.readline().startswith("run: GPU="))
            self.assertEqual(p.stdout.readline(), "ready\n")
            p.send_signal(signal.SIGINT)
            out, _ = p.communicate(timeout=10)
        finally:
            if p.poll() is None:
                p.kill()
        self.assertEqual(out, "got-INT\n")
        self.assertEqual(p.returncode, 130)

    def test_what_left_the_group_is_stopped_when_the_command_exits(self):
        rid = self.book_id("1", "2h")
        # One escapee ends on SIGTERM, the other ignores it and needs the SIGKILL after the grace.
        script = ("setsid sleep 600 </dev/null >/dev/null 2>&1 & "
                  "setsid sh -c 'trap \"\" TERM; while :; do sleep 0.05; done' </dev/null >/dev/null 2>&1 & "
                  "exit 0")
        t0 = time.monotonic()
        p = self.bk("run", "--", "sh", "-c", script, env={"BK_WORKER_TERMINATION_GRACE_SECONDS": "1"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertLess(time.monotonic() - t0, 10)
        self.assertEqual(p.stdout.splitlines(), ["run: GPU=%s from booking(s) %s" % (
            self.reservations()[0]["gpus"][0], rid[:8])])
        self.assertEqual(p.stderr, "")
        self.assertEqual(marked_groups(rid), set())


class BookAndRunTest(WorkerCase):

    def test_books_then_runs_in_the_foreground(self):
        p = self.bk("run", "x", "1", "2h", "--gpu", "1", "--", "sh", "-c", 'echo "$CUDA_VISIBLE_DEVICES"; exit 4')
        self.assertEqual(p.returncode, 4, p.stderr)
        self.assertEqual(p.stdout, UUID[1] + "\n")  # only the command writes to stdout
        self.assertIn("created: ", p.stderr)
        job = self.job()
        self.assertEqual((job["status"], job["exit_code"]), ("failed", 4))

    def test_handed_to_a_running_worker(self):
        _, log = self.start_worker()
        p = self.bk("run", "1", "30m", "--", "sh", "-c", "echo from-the-worker; exit 6")
        self.assertEqual(p.returncode, 6, p.stderr)
        self.assertIn("run: handed to the running worker", p.stderr)
        self.assertEqual(p.stdout, "from-the-worker\n")
        self.assertIn("finished:", self.read(log))

    def test_a_later_slot_is_queued_for_the_worker(self):
        self.ok("x", "1", "1h", "--gpu", "1", "-q")  # GPU 1 is busy until 19:45
        p = self.bk("run", "x", "1", "30m", "--gpu", "1", "--", "echo", "later")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.splitlines(), [
            "run: queued; your worker will launch the command at the reservation start",
            "worker: enable your user service once with `bk service install worker`, then "
            "`systemctl --user enable --now bk-worker.service`",
            "worker: check it with `bk w`; an administrator may enable loginctl linger",
        ])
        self.assertIn("queued: ", p.stderr)
        [queued] = [r for r in self.jobs()]
        self.assertEqual((queued["job"]["status"], queued["start_at"]), ("pending", "2026-11-29T19:45:00Z"))
        self.assertEqual(len(os.listdir(os.path.join(self.jobs_dir, "specs"))), 1)
        # Its worker launches it at the start.
        run = self.bk("w", "once", env={"BK_TEST_NOW": "2026-11-29T19:45:10Z"})
        self.assertIn("finished:", run.stdout)

    def test_wait_keeps_it_in_the_foreground_until_the_start(self):
        self.ok("x", "1", "1h", "--gpu", "1", "-q")
        p = subprocess.Popen([BK_BIN, "run", "x", "1", "30m", "--gpu", "1", "--wait", "--", "echo", "later"],
                             env=self.env, cwd=self.tmp, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            self.assertTrue(p.stderr.readline().startswith("queued: "))
            self.assertTrue(p.stderr.readline().startswith("run: waiting for the booking to start at "))
            # It waits as a foreground worker: once that holds the lease, Ctrl-C is its to handle.
            self.wait_for(lambda: self.ok("w").startswith("worker: running"), "the foreground worker")
            p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=10)
        finally:
            if p.poll() is None:
                p.kill()
        self.assertEqual(p.returncode, 130, err)
        self.assertEqual(out, "")
        self.assertIn("run: stopped waiting; the job stays queued for your worker", err)
        self.assertEqual(self.job()["status"], "pending")


class JobReleaseTest(WorkerCase):
    """A booking made for a command is given back from the next slot boundary once the command exits.
    The clock starts at 18:49:00: the booking runs 18:45-20:45 and the next boundary is 18:50."""

    RELEASED = "released: %s GPU %s from 2026-11-29 18:50 +0000 - 1h55m given back"

    def end_at(self):
        [r] = self.reservations()
        return r["end_at"]

    def history_edits(self, rid):
        return [(e["action"], e["before"]["end_at"], e["after"]["end_at"])
                for e in self.json("history", rid[:8], "--json")["edits"]]

    def test_a_missing_program_is_refused_before_booking(self):
        msg = self.refused("run", "1", "2h", "--", "no-such-program-for-bk-tests", "x")
        self.assertTrue(msg.startswith("no-such-program-for-bk-tests: command not found on PATH; "), msg)
        self.assertIn("command not found on PATH", self.refused("1", "2h", "--", "no-such-program-for-bk-tests"))
        self.assertIn("command not found on PATH", self.refused("run", "x", "1", "2h", "--wait", "--", "nope-bk"))
        # The caller's PATH is the one searched, as the launch will search it.
        self.assertIn("sh: command not found on PATH", self.refused("run", "1", "2h", "--", "sh", "-c", "true",
                                                                    env={"PATH": self.tmp}))
        self.assertIn("./missing.sh: no such file", self.refused("run", "1", "2h", "--", "./missing.sh"))
        plain = os.path.join(self.tmp, "plain.sh")
        with open(plain, "w") as f:
            f.write("#!/bin/sh\ntrue\n")
        os.chmod(plain, 0o644)
        self.assertIn("not an executable file", self.refused("1", "2h", "--", plain))
        self.assertIn("not an executable file", self.refused("run", "1", "2h", "--", self.tmp))
        self.assertEqual(self.reservations(), [])
        # An executable one is booked and run.
        os.chmod(plain, 0o755)
        self.assertEqual(self.bk("run", "1", "2h", "--", "./plain.sh").returncode, 0, self.last.stderr)

    def test_a_short_job_that_succeeds_releases_the_rest(self):
        p = self.bk("run", "x", "1", "2h", "--gpu", "1", "--", "true")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout, "")
        rid = self.reservations()[0]["id"]
        self.assertIn(self.RELEASED % (rid[:8], 1) + "\n", p.stderr)
        self.assertEqual(self.end_at(), "2026-11-29T18:50:00Z")
        self.assertEqual(self.history_edits(rid), [("release", "2026-11-29T20:45:00Z", "2026-11-29T18:50:00Z")])
        history = self.ok("history", rid[:8])
        self.assertIn("Edits: 1\n", history)
        self.assertIn(" release exclusive GPU=1 2026-11-29 18:45 +0000 -> 2026-11-29 20:45 +0000", history)
        # The given-back time is free: the same GPU books from 18:50.
        self.assertIn("2026-11-29 18:50 +0000", self.ok("x", "1", "1h", "--gpu", "1", "-t", "18:50"))

    def test_a_failing_job_releases_the_rest(self):
        p = self.bk("run", "x", "1", "2h", "--gpu", "2", "--", "sh", "-c", "exit 3")
        self.assertEqual(p.returncode, 3, p.stderr)
        rid = self.reservations()[0]["id"]
        self.assertIn(self.RELEASED % (rid[:8], 2), p.stderr)
        self.assertEqual(self.job()["status"], "failed")
        self.assertEqual(self.end_at(), "2026-11-29T18:50:00Z")

    def test_keep_holds_the_whole_booking(self):
        p = self.bk("run", "1", "2h", "--keep", "--", "true")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("released", p.stderr)
        self.assertEqual(self.end_at(), "2026-11-29T20:45:00Z")
        self.assertEqual(self.history_edits(self.reservations()[0]["id"]), [])
        self.assertIn("--keep applies to a booking for a command", self.refused("1", "2h", "--keep"))
        self.assertIn("--keep applies to booking-and-run", self.refused("run", "--keep", "--", "true"))

    def test_a_command_on_a_current_booking_releases_nothing(self):
        rid = self.book_id("1", "2h")
        p = self.bk("run", "--", "true")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        self.assertEqual(self.end_at(), "2026-11-29T20:45:00Z")
        self.assertEqual(self.history_edits(rid), [])


class RunDeadlineTest(WorkerCase):
    """Real short waits: the booking ends 3 s after bk starts (grace 1 s)."""

    def setUp(self):
        super().setUp()
        self.env.update({"BK_SLOT_MINUTES": "1", "BK_WORKER_TERMINATION_GRACE_SECONDS": "1",
                         "BK_WORKER_POLL_SECONDS": "0.1", "BK_TEST_NOW": "2026-11-29T18:49:57Z"})

    def test_book_and_run_stops_at_the_deadline_with_124(self):
        t0 = time.monotonic()
        p = self.bk("run", "1", "1m", "--", "sh", "-c", 'trap "" TERM; while :; do sleep 0.05; done')
        elapsed = time.monotonic() - t0
        self.assertEqual(p.returncode, 124, p.stderr)
        self.assertGreater(elapsed, 2.8)
        self.assertLess(elapsed, 7)
        self.assertIn("run: timed-out", p.stderr)
        self.assertEqual(self.job()["status"], "timed-out")

    def test_run_now_stops_at_the_deadline_with_124(self):
        self.book_id("1", "1m")
        t0 = time.monotonic()
        p = self.bk("run", "--", "sleep", "30")
        self.assertEqual(p.returncode, 124, p.stderr)
        self.assertLess(time.monotonic() - t0, 7)
        self.assertIn("run: reservation ended; stopping the command", p.stderr)



class HangupTest(WorkerCase):
    """The terminal closes under `bk run` (an SSH session dropped): the command belongs to its booking
    and runs on until the booking ends. Real short waits: the booking ends 6 s after bk starts."""

    def setUp(self):
        super().setUp()
        self.env.update({"BK_SLOT_MINUTES": "1", "BK_WORKER_TERMINATION_GRACE_SECONDS": "1",
                         "BK_WORKER_POLL_SECONDS": "0.1", "BK_TEST_NOW": "2026-11-29T18:49:54Z"})

    def on_a_terminal(self, *args):
        """bk leading a session of its own whose controlling terminal is a pty; returns (process, master)."""
        master, slave = os.openpty()
        try:
            p = subprocess.Popen([BK_BIN, *args], env=self.env, cwd=self.tmp, stdin=slave, stdout=slave,
                                 stderr=slave, start_new_session=True,
                                 preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        finally:
            os.close(slave)
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        return p, master

    def read_until(self, master, text):
        seen = b""
        deadline = time.monotonic() + 15
        while text.encode() not in seen:
            left = deadline - time.monotonic()
            self.assertGreater(left, 0, "timed out waiting for %r on the terminal: %r" % (text, seen))
            if select.select([master], [], [], left)[0]:
                seen += os.read(master, 4096)
        return seen.decode(errors="replace")

    def hang_up(self, master):
        """Closing the terminal's last master descriptor: the kernel sends SIGHUP to bk, the session's
        leader, and from then on every write to the terminal fails with EIO."""
        os.close(master)

    def test_run_now_outlives_its_terminal_until_the_booking_ends(self):
        rid = self.book_id("1", "1m")
        t0 = time.monotonic()
        # The command keeps writing to the dead terminal; its failing writes do not stop it.
        p, master = self.on_a_terminal("run", "--", "sh", "-c", "echo ready; while :; do echo tick; sleep 0.1; done")
        self.read_until(master, "ready")
        self.hang_up(master)
        self.assertEqual(p.wait(timeout=20), 124)  # stopped by the booking's end, not by the hangup
        self.assertGreater(time.monotonic() - t0, 4.5)  # SIGTERM at end - grace, 5 s in
        self.assertEqual(marked_groups(rid), set())

    def test_book_and_run_outlives_its_terminal_and_records_the_job(self):
        t0 = time.monotonic()
        p, master = self.on_a_terminal("run", "1", "1m", "--", "sh", "-c",
                                       'echo ready; trap "" TERM; while :; do sleep 0.05; done')
        self.read_until(master, "ready")
        self.hang_up(master)
        self.assertEqual(p.wait(timeout=20), 124)
        self.assertGreater(time.monotonic() - t0, 5.5)  # SIGKILL at the end, 6 s in
        job = self.job()
        self.assertEqual((job["status"], job["message"]), ("timed-out", "deadline"))
        self.assertEqual(marked_groups(self.reservations()[0]["id"]), set())


if __name__ == "__main__":
    unittest.main()
