"""`bk tutorial`: real commands on a throwaway sandbox that never touches the user's
ledger, starts no daemon and is gone at the end, on q and on Ctrl-C."""

import os

from bktest import BK_BIN, BkTestCase
from pty_session import PtySession

NEXT = "Press Enter to run it (q quits): "
COMMANDS = ["bk 1 30m", "bk 1 1h --at 'tomorrow 9'", "bk l", "bk e 2 --at 'tomorrow 10'", "bk renew 1 30m",
            "bk d 1", "bk l"]


def bk_processes_in_a_sandbox():
    """PIDs of processes of ours whose environment names a tutorial sandbox."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if b"/bk-tutorial-" in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


class TutorialTest(BkTestCase):

    def setUp(self):
        super().setUp()
        self.ok("1", "30m")  # the user's own booking, which the tutorial must leave alone
        self.sandboxes = os.path.join(self.tmp, "sandboxes")
        os.mkdir(self.sandboxes)
        self.env["TMPDIR"] = self.sandboxes
        self.before = self.snapshot()
        self.mine = self.reservations()

    def assertNothingOfOursChanged(self):
        self.assertEqual(os.listdir(self.sandboxes), [], "the sandbox was left behind")
        self.assertUnchanged(self.before)
        self.assertEqual(self.reservations(), self.mine)
        self.assertEqual(bk_processes_in_a_sandbox(), [], "a process of the sandbox is still running")

    def tutorial(self, *args):
        return PtySession(BK_BIN, ["tutorial", *args], self.env, self.tmp)

    def test_the_walkthrough_runs_each_command_on_enter(self):
        s = self.tutorial()
        intro = s.expect(NEXT)
        self.assertIn("2 simulated GPUs (" + self.sandboxes + "/bk-tutorial-", intro)
        self.assertIn("Step 1/7  Book a GPU\n", intro)
        for i, command in enumerate(COMMANDS):
            if i:
                s.expect(NEXT)
            s.send("\n")
            self.assertIn("  $ " + command + "\n", s.output)
        self.assertEqual(s.wait(), 0, s.output)
        out = s.output
        for result in ("created: ", "YOUR RESERVATIONS", "updated: ", "renewed: ", "cancelled: "):
            self.assertIn(result, out)
        self.assertNotIn("bk: ", out)
        self.assertIn("Step 7/7  That is all you need\n", out)
        for needed in ("bk 1 30m    book", "bk l        list", "bk d 1      cancel", "`bk -h`"):
            self.assertIn(needed, out)
        self.assertTrue(out.endswith("The sandbox is removed. `bk tutorial` runs it again.\n"), out)
        self.assertNothingOfOursChanged()

    def test_q_or_end_of_input_leaves_early(self):
        for leave in ("q\n", "\x04"):
            with self.subTest(leave=leave):
                s = self.tutorial()
                s.answer(NEXT, "")
                s.expect(NEXT)
                s.send(leave)
                self.assertEqual(s.wait(), 0, s.output)
                self.assertIn("tutorial ended; its sandbox is removed", s.output)
                self.assertNotIn("Step 3/7", s.output)
                self.assertNothingOfOursChanged()

    def test_ctrl_c_removes_the_sandbox(self):
        s = self.tutorial()
        s.answer(NEXT, "")
        s.expect(NEXT)
        s.interrupt()
        self.assertEqual(s.wait(), 130, s.output)
        self.assertIn("interrupted; the tutorial's sandbox is removed", s.output)
        self.assertNothingOfOursChanged()

    def test_without_a_terminal_every_step_runs_straight_through(self):
        out = self.ok("tour")
        for command in COMMANDS:
            self.assertIn("  $ " + command + "\n", out)
        self.assertNotIn(NEXT, out)
        self.assertIn("cancelled: ", out)
        self.assertIn("Step 7/7", out)
        self.assertEqual(self.last.stderr, "")
        self.assertNothingOfOursChanged()

    def test_the_visual_tour_needs_a_terminal(self):
        msg = self.refused("intro", "--tui")
        self.assertEqual(msg, "bk tutorial --tui needs a terminal; `bk tutorial` without one prints the walkthrough")
        self.assertNothingOfOursChanged()

    def test_the_visual_tour_opens_bk_t_on_the_sandbox(self):
        s = self.tutorial("--tui")
        s.expect("A sandbox with 2 simulated GPUs is ready; `bk t` opens on it.\n")
        # Where `bk t` is refused the walkthrough takes over; where it runs and
        # ends by itself (a plain fallback on this dumb terminal), the summary follows.
        refused = "`bk t` did not open here; the walkthrough shows the same in plain commands.\n"
        if s.expect_any(refused, "The three commands to remember:")[0] == refused:
            s.answer(NEXT, "q")
        self.assertEqual(s.wait(), 0, s.output)
        self.assertIn("sandbox is removed", s.output)
        self.assertNothingOfOursChanged()
