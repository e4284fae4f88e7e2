"""The terminal UI `bk t` in a real terminal (tmux): drawing, keys, live updates, fallbacks.

Each test drives a tmux pane with send-keys and reads it with capture-pane;
the screen is the only synchronisation (bounded polls, no sleeps), and every
change is checked in the ledger afterwards with `bk l --json`.
"""

import json
import os
import shutil
import subprocess
import time
import unittest

from bktest import BK_BIN, BkTestCase
import server_fixture as fx
import test_server_users as users

HAVE_TMUX = shutil.which("tmux") is not None


class Pane:
    """One tmux server with one pane running `command`, removed by close()."""

    def __init__(self, directory, command, width=130, height=40, env=None):
        self.sock = os.path.join(directory, "tmux-%d.sock" % time.monotonic_ns())
        shell = " ".join("%s=%s" % (k, shell_quote(v)) for k, v in (env or {}).items())
        # The shell ignores SIGINT, as an interactive one does while a job runs
        # in the foreground: Ctrl-C is for bk alone.
        script = "trap '' INT; env -i %s %s; echo bk-exited=$?; stty -a; sleep 60" % (shell, command)
        subprocess.run(["tmux", "-S", self.sock, "-f", "/dev/null", "new-session", "-d", "-s", "tui",
                        "-x", str(width), "-y", str(height), "sh", "-c", script], check=True)

    def close(self):
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True)

    def screen(self, escapes=False):
        args = ["tmux", "-S", self.sock, "capture-pane", "-p", "-t", "tui"] + (["-e"] if escapes else [])
        return subprocess.run(args, capture_output=True, text=True, encoding="utf-8", errors="replace").stdout

    def wait_for(self, text, timeout=10.0, gone=False):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            s = self.screen()
            if (text in s) != gone:
                return s
            time.sleep(0.05)
        raise AssertionError("%r never %s; screen:\n%s" % (text, "went" if gone else "appeared", self.screen()))

    def keys(self, *keys):
        subprocess.run(["tmux", "-S", self.sock, "send-keys", "-t", "tui", *keys], check=True)

    def resize(self, width, height):
        subprocess.run(["tmux", "-S", self.sock, "resize-window", "-t", "tui", "-x", str(width), "-y", str(height)],
                       check=True)


def shell_quote(value):
    return "'" + str(value).replace("'", "'\\''") + "'"


@unittest.skipUnless(HAVE_TMUX, "tmux is not installed")
class PrivateTui(BkTestCase):

    def open(self, width=130, height=40, **extra):
        env = dict(self.env, TERM="xterm-256color", PATH="/usr/bin:/bin")
        env.pop("COLUMNS", None)
        env.update({k: v for k, v in extra.items() if v is not None})
        for k, v in extra.items():
            if v is None:
                env.pop(k, None)
        pane = Pane(self.tmp, BK_BIN + " t", width, height, env)
        self.addCleanup(pane.close)
        pane.wait_for("| q")  # the footer: the first frame is drawn
        return pane

    def mine(self):
        return json.loads(self.ok("l", "--json"))["reservations"]

    def test_book_renew_edit_and_cancel_from_the_keyboard(self):
        pane = self.open()
        # The cursor starts on NOW at GPU 0: `a` opens the editor there.
        pane.keys("a")
        pane.wait_for("READY: GPU 0")
        pane.keys("Enter")
        pane.wait_for("booked ")
        [r] = self.mine()
        self.assertEqual(r["gpus"], [0])
        self.assertEqual((r["start_at"], r["end_at"]), ("2026-11-29T18:45:00Z", "2026-11-29T19:45:00Z"))
        # It has started: `e` moves only its end, and later renews it.
        pane.keys("e")
        pane.wait_for("RENEW/END")
        pane.keys("]", "]")
        pane.wait_for("renews it")
        pane.keys("Enter")
        pane.wait_for("renewed ")
        [r] = self.mine()
        self.assertEqual(r["end_at"], "2026-11-29T19:55:00Z")
        # A booking made elsewhere appears without a key; then it is moved.
        self.ok("1", "1h", "-t", "21:00", "-g", "2")
        pane.wait_for(" 2 active")
        pane.keys("Down")
        pane.keys("e")
        pane.wait_for("EDIT ")
        pane.keys("Right", "Right")
        pane.wait_for("READY: GPU 2")
        pane.keys("Enter")
        pane.wait_for("updated ")
        later = [x for x in self.mine() if x["gpus"] == [2]][0]
        self.assertEqual(later["start_at"], "2026-11-29T21:10:00Z")
        # `d` asks first; only y cancels.
        pane.keys("d")
        pane.wait_for("Cancel booking")
        pane.keys("n")
        pane.wait_for("nothing cancelled")
        self.assertEqual(len(self.mine()), 2)
        pane.keys("d")
        pane.wait_for("Cancel booking")
        pane.keys("y")
        pane.wait_for("cancelled ")
        self.assertEqual([x["gpus"] for x in self.mine()], [[0]])
        pane.keys("q")
        pane.wait_for("bk-exited=0")

    def test_a_blocked_preview_names_the_reason_and_books_nothing(self):
        self.ok("x", "1", "2h", "-g", "1")
        pane = self.open()
        pane.keys("Down", "a")
        pane.wait_for("BLOCKED")
        pane.keys("Enter")
        pane.wait_for("blocked: ")
        self.assertEqual(len(self.mine()), 1)
        pane.keys("Escape")
        pane.wait_for("nothing booked")

    def test_small_terminal_resize_and_too_small(self):
        pane = self.open(72, 18)
        s = pane.screen()
        self.assertTrue(all(len(line) <= 71 for line in s.splitlines()), s)
        pane.keys("a")
        pane.wait_for("READY")
        pane.keys("Enter")
        pane.wait_for("booked ")
        self.assertEqual(len(self.mine()), 1)
        pane.resize(60, 15)
        pane.wait_for("Terminal too small: 60x15")
        pane.resize(100, 30)
        pane.wait_for("GPUBK | LIVE")
        pane.resize(60, 15)
        pane.wait_for("Terminal too small")
        pane.keys("q")  # keys still work
        pane.wait_for("bk-exited=0")

    def test_ascii_glyphs_without_utf8(self):
        self.ok("1", "1h")
        pane = self.open(LANG="C")
        s = pane.screen()
        self.assertTrue(all(ord(c) < 128 for c in s), s)
        self.assertIn("@@@@", s)  # the caller's booking
        self.assertIn("....", s)  # free cells
        utf8 = self.open(LANG="C.UTF-8")
        self.assertIn("\u25c6\u25c6", utf8.screen())

    def test_no_color_keeps_attributes_only(self):
        self.ok("1", "1h")
        coloured = self.open().screen(escapes=True)
        self.assertRegex(coloured, r"\x1b\[[0-9;]*3[0-9]")  # foreground colours
        self.assertIn("38;5;", coloured)  # the 256-colour palette
        eight = self.open(TERM="xterm").screen(escapes=True)  # 8 colours: the basic ones only
        self.assertRegex(eight, r"\x1b\[[0-9;]*3[1-7]m")
        self.assertNotIn("38;5;", eight)
        plain = self.open(NO_COLOR="1").screen(escapes=True)
        self.assertNotRegex(plain, r"\x1b\[[0-9;]*(3[0-7]|38;5|4[0-7]|48;5)[;m]")
        self.assertIn("GPUBK", plain)

    def test_banner_shows_announcements_as_they_are_published(self):
        self.env["BK_BOOKING_BLACKOUTS"] = '[["2026-11-29T20:00:00Z", "2026-11-29T21:00:00Z", "PSU swap"]]'
        pane = self.open()
        s = pane.wait_for("BLACKOUT 2026-11-29 20:00 +0000 -> 2026-11-29 21:00 +0000: PSU swap")
        self.assertIn("####", s.replace("\u2592", "#"))
        self.ok("admin", "notice", "publish", "Reboot at 20:00", "--level", "critical", "--yes")
        pane.wait_for("CRITICAL: Reboot at 20:00")

    def test_ctrl_c_restores_the_terminal(self):
        pane = self.open()
        pane.keys("C-c")
        pane.wait_for("bk-exited=0")
        s = pane.wait_for("icanon")  # stty -a's settings, printed after bk exits
        self.assertRegex(s, r"(?<!-)icanon")
        self.assertRegex(s, r"(?<!-)echo ")

    def test_help_and_details_dialogs(self):
        self.ok("1", "1h")
        pane = self.open()
        pane.keys("?")
        pane.wait_for("IN THE EDITOR")
        pane.keys("q")
        pane.wait_for("IN THE EDITOR", gone=True)
        pane.keys("Enter")
        pane.wait_for("Reservation ")
        pane.wait_for("yours: e edits")
        pane.keys("q")
        pane.wait_for("yours: e edits", gone=True)
        pane.keys("u")  # the usage history, as `bk u` reads it
        pane.wait_for("My GPU use")
        pane.wait_for("no usage history yet")
        pane.keys("q")
        pane.keys("/")
        pane.wait_for("show only user")
        pane.keys("-l", "nobody")
        pane.keys("Enter")
        pane.wait_for("none for user nobody")

    def test_without_a_terminal_prints_the_fallback(self):
        self.ok("1", "1h")
        for env in ({"TERM": "dumb"}, {"TERM": "xterm"}):
            p = self.bk("t", env=env)  # stdout is a pipe
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("GPUBK TUI fallback", p.stdout)
            self.assertIn("active reservations:", p.stdout)


@unittest.skipUnless(HAVE_TMUX, "tmux is not installed")
@users.needs_root
class ServerTui(users.ServerCase):
    """Through a real daemon: another account's booking appears without a key."""

    setUpClass = classmethod(users.SharedServerUsers.setUpClass.__func__)
    _teardown = classmethod(users.SharedServerUsers._teardown.__func__)
    tearDownClass = classmethod(users.SharedServerUsers.tearDownClass.__func__)

    def test_another_users_booking_appears_live(self):
        env = self.a.env(TERM="xterm-256color", PATH="/usr/bin:/bin")
        env.pop("COLUMNS", None)
        command = "setpriv --reuid=%d --regid=%d --init-groups %s t" % (self.a.uid, self.a.gid, BK_BIN)
        pane = Pane(self.base, command, 130, 40, env)
        self.addCleanup(pane.close)
        pane.wait_for("TIMELINE")
        pane.wait_for("server")
        r = self.book(self.b, "1", "1h", "-t", "20:00", "-g", "3")
        pane.wait_for(r["id"][:8], timeout=5)
        pane.keys("a")
        pane.wait_for("READY")
        pane.keys("Enter")
        pane.wait_for("booked ")
        self.assertEqual(len(self.mine(self.a)), 1)
        self.ok(self.b, "d", r["id"][:8])
        pane.wait_for(r["id"][:8], timeout=5, gone=True)
        # The daemon restarts (its commit counter starts again): the UI says
        # so, and reads everything once it answers again.
        self.assertEqual(self.srv.stop(), 0)
        pane.wait_for("cannot reach the ledger", timeout=5)
        self.srv.start()
        pane.wait_for("the ledger answers again", timeout=5)
        again = self.book(self.b, "1", "1h", "-t", "21:00", "-g", "1")
        pane.wait_for(again["id"][:8], timeout=5)


if __name__ == "__main__":
    unittest.main()
