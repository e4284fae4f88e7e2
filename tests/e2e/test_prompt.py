"""Plain `bk` at a real terminal (tmux): status, then a `bk> ` prompt."""

import os
import shutil
import subprocess
import tempfile
import time
import unittest

from bktest import BkTestCase

BK = os.environ.get("BK_BIN", "bk")


class PipedPromptTest(BkTestCase):
    """Commands piped into plain `bk` run at its prompt, as in the original (`printf 'l\\nquit\\n' | bk`)."""

    def test_piped_commands_run_in_order(self):
        p = self.bk(input="1 30m\nl\nfrobnicate\nquit\n1 1h\n")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = p.stdout
        self.assertIn("bk> ", out)
        booked = out.index("created: ")
        self.assertLess(out.index("GPU status"), booked)
        self.assertLess(booked, out.index("YOUR RESERVATIONS"))
        self.assertIn("bk: unknown command: frobnicate", out)
        # `quit` ended it: the line after it never ran.
        self.assertEqual(len(self.json("l", "--json")["reservations"]), 1)

    def test_end_of_input_ends_the_prompt(self):
        p = self.bk(input="")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.endswith("bk> \n"), p.stdout[-80:])

    def test_no_input_is_not_a_script(self):
        # stdin on /dev/null (cron, CI): the status and a hint, no prompt.
        p = self.bk()
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("bk> ", p.stdout)
        self.assertIn("Book with `bk 1 30m`", p.stdout)


@unittest.skipUnless(shutil.which("tmux"), "tmux is not installed")
class PromptTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bk-prompt-")
        self.session = "bkprompt%d" % os.getpid()
        self.starts = 0
        self.history = os.path.join(self.tmp, ".local", "state", "bk", "history")
        self.start()

    def start(self, env_extra="", args=""):
        # A server of its own each time: a killed one may still hold its socket.
        self.starts += 1
        self.sock = os.path.join(self.tmp, "tmux%d.sock" % self.starts)
        env = ("env -i PATH=/usr/bin:/bin HOME=%s TERM=xterm BK_DATA_DIR=%s/data BK_GPU_COUNT=4 "
               "BK_TEST_NOW=2026-11-29T18:49:00Z TZ=UTC COLUMNS=100 %s %s %s; echo bk-exited=$?; sleep 30"
               % (self.tmp, self.tmp, env_extra, BK, args))
        subprocess.run(["tmux", "-S", self.sock, "new-session", "-d", "-s", self.session, "-x", "120", "-y", "50",
                        "sh", "-c", env], check=True)

    def restart(self, env_extra="", args=""):
        """A new bk in a new terminal; the files of the last one stay."""
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True)
        self.start(env_extra, args)

    def tearDown(self):
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def screen(self):
        return subprocess.run(["tmux", "-S", self.sock, "capture-pane", "-p", "-t", self.session, "-S", "-50"],
                              capture_output=True, text=True).stdout

    def wait_for(self, text, timeout=10.0, count=1):
        # Polls the terminal until `text` shows `count` times (bounded); the
        # prompt is an interactive program, so its screen is the only
        # synchronisation, and a text already on screen from an earlier step
        # must not count for a later one.
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.screen()
            if s.count(text) >= count:
                return s
            time.sleep(0.05)
        self.fail("%r never appeared; screen:\n%s" % (text, self.screen()))

    def keys(self, *keys):
        subprocess.run(["tmux", "-S", self.sock, "send-keys", "-t", self.session, *keys], check=True)

    def send(self, line):
        subprocess.run(["tmux", "-S", self.sock, "send-keys", "-t", self.session, "-l", line], check=True)
        subprocess.run(["tmux", "-S", self.sock, "send-keys", "-t", self.session, "Enter"], check=True)

    def test_book_list_and_quit_at_the_prompt(self):
        self.wait_for("GPU status")
        self.wait_for("bk>")  # capture-pane drops the trailing space
        self.send("1 30m")
        self.wait_for("created: ")
        self.send("l")
        self.wait_for("YOUR RESERVATIONS")
        self.send("d 'zz")  # unclosed quote: one line, the prompt goes on
        self.wait_for("bk: no closing quotation")
        self.send("frobnicate")
        self.wait_for("bk: unknown command: frobnicate")
        self.send("quit")
        screen = self.wait_for("bk-exited=0")
        self.assertIn("shared    0", screen)

    def test_job_log_without_an_id_asks_which_job(self):
        self.wait_for("bk>")
        self.send("1 30m -t 21:00 -- echo first")
        self.wait_for("job: pending")
        self.send("1 30m -t 22:00 -- echo second")
        self.wait_for("echo (+1 args)", count=2)
        self.send("jl")  # two jobs at a terminal: the list, then the question
        screen = self.wait_for("Job number or ID (Enter: the latest):")
        self.assertIn("#  ID       State", screen)
        self.send("1")
        self.wait_for("job log unavailable")
        self.send("jl")
        self.wait_for("Job number or ID (Enter: the latest):", count=2)
        self.send("x9")  # not a list number, and no hexadecimal ID starts with it
        self.wait_for("bk: job not found for current user: x9")
        self.send("quit")
        self.wait_for("bk-exited=0")

    def test_up_recalls_the_last_command(self):
        self.wait_for("bk>")
        self.send("1 30m")
        self.wait_for("created: ")
        self.keys("Up")
        self.wait_for("bk> 1 30m\n")  # the line is back, not "^[[A"
        self.keys("C-u")
        self.send("l")
        self.wait_for("YOUR RESERVATIONS")
        self.send("quit")
        self.wait_for("bk-exited=0")
        self.assertNotIn("^[[A", self.screen())
        with open(self.history) as f:
            self.assertEqual(f.read(), "1 30m\nl\nquit\n")
        self.assertEqual(os.stat(self.history).st_mode & 0o777, 0o600)
        self.assertEqual(os.stat(os.path.dirname(self.history)).st_mode & 0o777, 0o700)
        # The next session starts with it.
        self.restart()
        self.wait_for("bk>")
        self.keys("Up")
        self.keys("Up")
        self.wait_for("bk> l\n")

    def test_tab_completes_a_command_word(self):
        self.wait_for("bk>")
        self.keys("-l", "timel")
        self.keys("Tab")
        self.wait_for("bk> timeline")
        self.keys("Enter")
        self.wait_for("Timeline")
        self.send("quit")
        self.wait_for("bk-exited=0")

    def test_tab_completes_your_booking_and_an_option(self):
        self.wait_for("bk>")
        self.send("1 30m")
        screen = self.wait_for("created: ")
        short = screen.split("created: ")[1].split()[0]
        self.assertRegex(short, "^[0-9a-f]{8}$")
        self.keys("-l", "renew ")
        self.keys("Tab")
        self.wait_for("bk> renew " + short)
        self.keys("-l", "30m --js")  # a unique completion ends with a space
        self.keys("Tab")
        self.wait_for("bk> renew %s 30m --json" % short)
        self.keys("C-u")
        self.send("quit")
        self.wait_for("bk-exited=0")

    def test_history_is_bounded_and_follows_xdg_state_home(self):
        state = os.path.join(self.tmp, "state")
        path = os.path.join(state, "bk", "history")
        os.makedirs(os.path.dirname(path), mode=0o700)
        with open(path, "w") as f:
            f.writelines("st %d\n" % i for i in range(1005))
        self.restart("XDG_STATE_HOME=" + state)
        self.wait_for("bk>")
        self.keys("Up")
        self.wait_for("bk> st 1004")
        self.keys("C-u")
        self.send("l")
        self.wait_for("No active reservations.")
        self.send("quit")
        self.wait_for("bk-exited=0")
        with open(path) as f:
            lines = f.read().splitlines()
        self.assertEqual(len(lines), 1000)
        self.assertEqual(lines[-2:], ["l", "quit"])
        self.assertEqual(lines[0], "st 7")
        self.assertFalse(os.path.exists(self.history))

    def test_a_symlinked_history_file_is_never_followed(self):
        target = os.path.join(self.tmp, "elsewhere")
        with open(target, "w") as f:
            f.write("secret\n")
        os.makedirs(os.path.dirname(self.history), mode=0o700)
        os.symlink(target, self.history)
        self.restart()
        self.wait_for("warning: history is not saved")
        self.send("l")
        self.wait_for("No active reservations.")
        self.keys("Up")  # this session still remembers
        self.wait_for("bk> l\n")
        self.keys("C-u")
        self.send("quit")
        self.wait_for("bk-exited=0")
        with open(target) as f:
            self.assertEqual(f.read(), "secret\n")
        self.assertTrue(os.path.islink(self.history))

    def test_color_always_paints_the_prompt(self):
        self.restart(args="--color=always")
        self.wait_for("bk>")
        screen = subprocess.run(["tmux", "-S", self.sock, "capture-pane", "-p", "-e", "-t", self.session],
                                capture_output=True, text=True).stdout
        self.assertIn("\x1b[1mbk>", screen)
        self.send("quit")
        self.wait_for("bk-exited=0")


if __name__ == "__main__":
    unittest.main()
