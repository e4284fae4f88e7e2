"""Bash and zsh GPU visibility: `eval "$(bk shell init)"`, the prompt hook and `bk shell env`.

The shells run interactively (-i) reading a script on stdin, so every line is preceded by a
real prompt and its hook. The clock is stepped: BK_TEST_NOW for bk and BK_SHELL_TEST_EPOCH for
the hook's own time. After the first refresh the hook calls bk through a counting shim, so the
test knows exactly how many processes the hook started; strace confirms it when available.
"""

import calendar
import os
import shutil
import subprocess
import time
import unittest

from bktest import BK_BIN, BkTestCase, sim_gpu

UUID = [sim_gpu(i)["uuid"] for i in range(4)]


def epoch(iso):
    return calendar.timegm(time.strptime(iso, "%Y-%m-%dT%H:%M:%SZ"))


def strace_works():
    if not shutil.which("strace"):
        return False
    return subprocess.run(["strace", "-f", "-o", "/dev/null", "true"], capture_output=True).returncode == 0


SHELLS = {
    "bash": ["bash", "--norc", "--noprofile", "--noediting", "-i"],
    "zsh": ["zsh", "-f", "-i"],
}


class ShellChecks:
    """The checks, run by BashTest and ZshTest."""

    gpu_count = None
    shell = None  # set by the test classes

    def setUp(self):
        if not shutil.which(self.shell):
            self.skipTest("%s is not installed" % self.shell)
        super().setUp()
        self.use_sim([sim_gpu(i) for i in range(4)])
        bindir = os.path.join(self.tmp, "bin")
        os.mkdir(bindir)
        os.symlink(os.path.realpath(BK_BIN), os.path.join(bindir, "bk"))
        self.count_file = os.path.join(self.tmp, "hook-calls")
        self.shim = os.path.join(self.tmp, "bk-shim")
        with open(self.shim, "w") as f:
            f.write('#!/bin/sh\necho call >> "%s"\nexec "%s" "$@"\n' % (self.count_file, os.path.realpath(BK_BIN)))
        os.chmod(self.shim, 0o755)
        self.env["PATH"] = bindir + ":" + self.env.get("PATH", "/usr/bin:/bin")

    def calls(self):
        try:
            with open(self.count_file) as f:
                return len(f.read().splitlines())
        except FileNotFoundError:
            return 0

    def at(self, iso):
        """A line that moves both clocks; the next prompt's hook sees the new time."""
        return "export BK_TEST_NOW=%s BK_SHELL_TEST_EPOCH=%d" % (iso, epoch(iso))

    def run_shell(self, lines, start="2026-11-29T18:49:00Z", trace=None):
        """Runs the shell interactively on `lines`; returns ({label: CUDA_VISIBLE_DEVICES}, stderr)."""
        script = [self.at(start),
                  'eval "$(bk shell init %s)"' % self.shell,
                  "__bk_gpu_bin=%s" % self.shim,  # from here on every refresh is counted
                  *lines, "exit"]
        argv = SHELLS[self.shell]
        env = self.env
        if trace:
            argv = ["strace", "-f", "-qq", "-e", "trace=execve", "-o", trace, *argv]
            # In an AddressSanitizer build: LeakSanitizer cannot run in a traced process (it
            # stops the world with ptrace itself) and would fail every bk at exit; the rest of
            # ASan still checks these runs. Without ASan the variable means nothing.
            env = dict(env, ASAN_OPTIONS="detect_leaks=0")
        p = subprocess.run(argv, input="\n".join(script) + "\n", env=env, cwd=self.tmp,
                           capture_output=True, text=True, timeout=60)
        seen = {}
        for line in p.stdout.splitlines():
            at = line.find("@@")
            if at >= 0:
                label, _, value = line[at + 2:].partition("=")
                seen[label] = value
        return seen, p.stderr

    @staticmethod
    def show(label):
        return 'echo "@@%s=[$CUDA_VISIBLE_DEVICES]"' % label

    # ------------------------------------------------------------ the checks

    def test_future_booking_appears_at_its_start_and_leaves_at_its_end(self):
        self.ok("x", "1", "1h", "--gpu", "1", "-t", "19:00", "-q")
        lines = [self.show("before")]
        # Twenty prompts before the start: the hook compares integers, spawns nothing.
        for minute in range(50, 60):
            lines += [self.at("2026-11-29T18:%02d:00Z" % minute), ":"]
        lines += ['echo "@@calls-before=[$(wc -l < %s 2>/dev/null || echo 0)]"' % self.count_file]
        lines += [self.at("2026-11-29T19:00:00Z"), self.show("during")]
        for minute in range(1, 59, 3):
            lines += [self.at("2026-11-29T19:%02d:30Z" % minute), ":"]
        lines += [self.show("still"), self.at("2026-11-29T20:00:00Z"), self.show("after")]
        seen, err = self.run_shell(lines)
        self.assertEqual(seen["before"], "[]", err)
        self.assertEqual(seen["calls-before"].strip("[] "), "0", err)
        self.assertEqual(seen["during"], "[%s]" % UUID[1], err)
        self.assertEqual(seen["still"], "[%s]" % UUID[1], err)
        self.assertEqual(seen["after"], "[]", err)
        self.assertEqual(self.calls(), 2, "one refresh at the start, one at the end")
        self.assertEqual(err.count("bk: no GPU booked for you now"), 2, err)  # once before, once after
        self.assertEqual(err.count("bk: this shell now sees GPU 1"), 1, err)

    def test_cancel_in_this_shell_hides_the_gpu_at_the_next_prompt(self):
        self.ok("x", "1", "1h", "--gpu", "2", "-q")
        seen, err = self.run_shell([self.show("booked"), "bk d 1 >/dev/null", self.show("cancelled"), ":", ":",
                                    self.show("later")])
        self.assertEqual(seen["booked"], "[%s]" % UUID[2], err)
        self.assertEqual(seen["cancelled"], "[]", err)
        self.assertEqual(seen["later"], "[]", err)
        self.assertEqual(self.calls(), 1, "exactly one refresh after the bk command")
        self.assertEqual(self.reservations(), [])

    def test_unreachable_service_empties_the_variable_with_one_notice(self):
        srv = os.path.join(self.tmp, "srv")
        os.mkdir(srv, 0o700)
        self.ok("server", "init", "--directory", srv, "--gpu-count", "4")  # never served: the socket is dead
        self.env["BK_CONFIG_FILE"] = os.path.join(srv, "config.json")
        del self.env["BK_DATA_DIR"]  # it would win over BK_CONFIG_FILE
        self.env["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"  # what the shell inherited
        lines = [self.show("down")]
        lines += [self.at("2026-11-29T18:49:%02dZ" % s) for s in range(10, 59, 7)]
        lines += [self.show("still-down"), self.at("2026-11-29T18:50:00Z"), self.show("retried")]
        seen, err = self.run_shell(lines)
        self.assertEqual(seen["down"], "[]", err)
        self.assertEqual(seen["still-down"], "[]", err)
        self.assertEqual(seen["retried"], "[]", err)
        self.assertEqual(self.calls(), 1, "one retry a minute later, none before")
        self.assertEqual(err.count("GPU booking service unreachable"), 1, err)

    def test_broken_configuration_installs_the_hook_and_shows_no_gpu(self):
        self.ok("x", "1", "1h", "--gpu", "1", "-q")  # active now, in the private ledger
        data_dir = self.env.pop("BK_DATA_DIR")  # it would win over BK_CONFIG_FILE
        self.env["BK_CONFIG_FILE"] = os.path.join(self.tmp, "no-such-config.json")
        self.env["CUDA_VISIBLE_DEVICES"] = "0,1,2,3"  # what the shell inherited
        lines = ['type bk_gpu_refresh >/dev/null 2>&1 && echo "@@hook=yes"', self.show("broken"),
                 "unset BK_CONFIG_FILE", "export BK_DATA_DIR=%s" % data_dir, "bk_gpu_refresh", self.show("fixed")]
        seen, err = self.run_shell(lines)
        self.assertEqual(seen.get("hook"), "yes", err)
        self.assertEqual(seen["broken"], "[]", err)
        self.assertEqual(err.count("configuration is broken"), 1, err)
        self.assertIn("no-such-config.json", err)
        self.assertEqual(seen["fixed"], "[%s]" % UUID[1], err)

    def test_no_process_between_boundaries_under_strace(self):
        if not strace_works():
            self.skipTest("strace is not available or not permitted here")
        self.ok("x", "1", "2h", "--gpu", "3", "-q")
        trace = os.path.join(self.tmp, "trace")
        lines = [self.show("now")] + [":"] * 40 + [self.show("end")]
        seen, err = self.run_shell(lines, trace=trace)
        self.assertEqual(seen["end"], "[%s]" % UUID[3], err)
        with open(trace) as f:
            refreshes = [l for l in f if "execve(" in l and '"shell", "env"' in l]
        # The eval's `bk shell init` is not a refresh; the init's own first refresh is the only one.
        self.assertEqual(len(refreshes), 1, "".join(refreshes))
        self.assertEqual(self.calls(), 0)


class BashTest(ShellChecks, BkTestCase):
    shell = "bash"


class ZshTest(ShellChecks, BkTestCase):
    shell = "zsh"


class ShellEnvTest(BkTestCase):
    gpu_count = None

    def test_raw_values(self):
        self.use_sim([sim_gpu(i) for i in range(4)])
        rid = self.book_id("x", "1", "1h", "--gpu", "1", "-t", "19:00")
        doc = self.json("shell", "env", "--json")
        self.assertEqual((doc["schema_version"], doc["state"]), ("gpubk.shell-env.v1", "none"))
        self.assertEqual(doc["cuda_visible_devices"], "")
        self.assertEqual(doc["next_boundary"], epoch("2026-11-29T19:00:00Z"))
        out = self.ok("shell", "env", env={"BK_TEST_NOW": "2026-11-29T19:10:00Z"})
        self.assertIn("BK_SHELL_STATE=ok\nCUDA_VISIBLE_DEVICES=%s\nBK_RESERVED_GPUS=1\nBK_RESERVATION_IDS=%s\n"
                      "BK_NEXT_BOUNDARY=%d\n" % (UUID[1], rid, epoch("2026-11-29T20:00:00Z")), out)
        self.assertIn("unsupported shell fish", self.fails("shell", "init", "fish"))
        self.assertIn("bk_gpu_refresh", self.ok("shell", "init", "zsh"))


if __name__ == "__main__":
    unittest.main()
