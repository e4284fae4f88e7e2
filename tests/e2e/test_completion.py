"""Tab completion in real shells: `bk completion bash|zsh|fish` and `bk __complete`.

bash is driven two ways: its completion function called as readline would
call it (COMP_LINE and COMP_POINT), and an interactive bash in tmux where
Tab is a key. zsh runs interactively in tmux with compinit, the script on
$fpath as the package installs it. fish answers `complete -C`. The screen is
the only synchronisation (bounded polls). References come from the private
ledger, from a daemon, and from nothing at all when the daemon is gone or
never answers.
"""

import os
import shutil
import socket
import subprocess
import threading
import time
import unittest

from bktest import BK_BIN, BkTestCase
import server_fixture as fx
from test_tui import Pane, shell_quote

HAVE_TMUX = shutil.which("tmux") is not None


class CompletionCase(BkTestCase):
    def setUp(self):
        super().setUp()
        bindir = os.path.join(self.tmp, "bin")
        os.mkdir(bindir)
        os.symlink(os.path.realpath(BK_BIN), os.path.join(bindir, "bk"))
        self.env["PATH"] = bindir + ":/usr/bin:/bin"
        self.scripts = os.path.join(self.tmp, "completion")
        os.mkdir(self.scripts)
        for shell, name in (("bash", "bk"), ("zsh", "_bk"), ("fish", "bk.fish")):
            with open(os.path.join(self.scripts, name), "w") as f:
                f.write(self.ok("completion", shell))

    def bash_complete(self, line, env=None):
        """COMPREPLY for `line` with the cursor at its end, as readline asks for it."""
        script = ('source %s; COMP_LINE=%s; COMP_POINT=${#COMP_LINE}; _bk; printf "%%s\\n" "${COMPREPLY[@]}"'
                  % (shell_quote(os.path.join(self.scripts, "bk")), shell_quote(line)))
        e = dict(self.env)
        e.update(env or {})
        p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], env=e, capture_output=True, text=True,
                           timeout=30, cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        return [w for w in p.stdout.split("\n") if w]

    def complete(self, *words, env=None):
        p = self.bk("__complete", *words, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        return [w for w in p.stdout.split("\n") if w]


class PrivateCompletion(CompletionCase):
    def test_bash_completes_commands_options_counts_and_your_references(self):
        # Before the first booking: no references, and Tab creates no ledger.
        self.assertEqual(self.bash_complete("bk renew "), [])
        self.assertNoDataDir()
        self.assertIn("renew", self.bash_complete("bk re"))
        self.assertIn("reset", self.bash_complete("bk re"))
        self.assertEqual(self.bash_complete("bk ren"), ["renew"])
        self.assertEqual(self.bash_complete("bk 1 1h --gpu "), ["0", "1", "2", "3"])
        self.assertEqual(self.bash_complete("bk slots "), ["1", "2", "3", "4"])
        self.assertIn("--exclude", self.bash_complete("bk x 1 1h --ex"))
        self.assertEqual(self.bash_complete("bk admin data "), ["import", "verify", "backup", "restore", "clear"])

        mine = self.book_id("1", "30m")[:8]
        other = self.book_id("1", "1h", "-t", "21:00")[:8]
        self.assertEqual(sorted(self.bash_complete("bk renew ")), sorted([mine, other]))
        self.assertEqual(self.bash_complete("bk d " + mine[:3]), [mine] if mine[:3] != other[:3] else
                         sorted([mine, other]))
        self.assertEqual(self.bash_complete("bk admin cancel "), [])  # not yours to list
        self.ok("d", other)
        self.assertEqual(self.bash_complete("bk e "), [mine])

    def test_the_gpu_count_comes_from_the_policy(self):
        self.assertEqual(self.complete("1", "1h", "--gpu", ""), ["0", "1", "2", "3"])
        self.assertEqual(self.complete("1", "1h", "--gpu", "", env={"BK_GPU_COUNT": "8"}),
                         [str(i) for i in range(8)])

    def test_a_broken_configuration_still_completes_commands(self):
        os.makedirs(self.data_dir)
        with open(os.path.join(self.data_dir, "config.json"), "w") as f:
            f.write("{not json")
        self.assertEqual(self.complete("ren"), ["renew"])
        self.assertEqual(self.complete("renew", ""), [])

    def test_the_line_being_typed_is_not_bks_own_options(self):
        # `bk st --color <Tab>`: the half-typed --color is the line's, not an
        # option of __complete to refuse.
        self.assertEqual(self.complete("st", "--color", ""), [])
        self.assertEqual(self.complete("l", "--json", "--hi"), ["--history"])

    def test_paths_are_left_to_the_shell(self):
        with open(os.path.join(self.tmp, "backup-1.db"), "w"):
            pass
        self.assertEqual(self.complete("admin", "data", "verify", ""), [":files"])
        self.assertEqual(self.bash_complete("bk admin data verify back"), ["backup-1.db"])

    def test_bad_input_is_one_line_and_exit_2(self):
        for args, needle in ((["completion", "tcsh"], "bash, zsh or fish"), (["completion"], "give the shell")):
            p = self.bk(*args)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertEqual(p.stdout, "")
            self.assertEqual(len(p.stderr.strip().split("\n")), 1, p.stderr)
            self.assertIn(needle, p.stderr)

    @unittest.skipUnless(shutil.which("fish"), "fish is not installed")
    def test_fish(self):
        mine = self.book_id("1", "30m")[:8]
        script = "source %s; complete -C %s" % (shell_quote(os.path.join(self.scripts, "bk.fish")),
                                                shell_quote("bk renew "))
        p = subprocess.run(["fish", "--no-config", "-c", script], env=self.env, capture_output=True, text=True,
                           timeout=30, cwd=self.tmp)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([w.split("\t")[0] for w in p.stdout.split("\n") if w], [mine])
        p = subprocess.run(["fish", "--no-config", "-c", script.replace("bk renew ", "bk ren")], env=self.env,
                           capture_output=True, text=True, timeout=30, cwd=self.tmp)
        self.assertEqual([w.split("\t")[0] for w in p.stdout.split("\n") if w], ["renew"])


@unittest.skipUnless(HAVE_TMUX, "tmux is not installed")
class InteractiveCompletion(CompletionCase):
    """Tab pressed in a real terminal: `bk re<Tab>` becomes renew, the next Tab your booking."""

    def pane(self, command):
        env = {k: v for k, v in self.env.items()}
        env["TERM"] = "xterm-256color"
        pane = Pane(self.tmp, command, 100, 20, env)
        self.addCleanup(pane.close)
        return pane

    def drive(self, pane, ref):
        pane.wait_for("READY$")
        pane.keys("bk ren", "Tab")
        pane.wait_for("bk renew")
        pane.keys("Tab")
        pane.wait_for("bk renew " + ref)

    def test_bash(self):
        ref = self.book_id("1", "30m")[:8]
        rc = os.path.join(self.tmp, "bashrc")
        with open(rc, "w") as f:
            f.write("source %s\nPS1='READY$ '\n" % shell_quote(os.path.join(self.scripts, "bk")))
        self.drive(self.pane("bash --noprofile --rcfile %s -i" % shell_quote(rc)), ref)

    @unittest.skipUnless(shutil.which("zsh"), "zsh is not installed")
    def test_zsh_from_fpath_as_packaged(self):
        ref = self.book_id("1", "30m")[:8]
        zdot = os.path.join(self.tmp, "zdot")
        os.mkdir(zdot)
        with open(os.path.join(zdot, ".zshrc"), "w") as f:
            f.write("fpath=(%s $fpath)\nautoload -U compinit\ncompinit -u -D\nPS1='READY$ '\n"
                    % shell_quote(self.scripts))
        self.env["ZDOTDIR"] = zdot
        self.drive(self.pane("zsh -i"), ref)


class ServerCompletion(CompletionCase):
    """Connected to a daemon, references come through it; without one, nothing, at once."""

    def test_references_through_the_daemon_and_none_once_it_is_gone(self):
        base = os.path.join(self.tmp, "srv-base")
        os.mkdir(base, 0o755)
        me = fx.Account.current(base)
        srv = fx.Server(base, me)
        srv.init("--gpu-count", "4")
        self.addCleanup(srv.cleanup)
        srv.start()
        env = {"BK_CONFIG_FILE": srv.config, "BK_DATA_DIR": None}
        ref = self.book_id("1", "30m", env=env)[:8]
        self.assertEqual(self.complete("renew", "", env=env), [ref])
        self.assertEqual(self.complete("1", "1h", "--gpu", "", env=env), ["0", "1", "2", "3"])
        self.assertEqual(srv.stop(), 0)
        self.assertEqual(self.complete("renew", "", env=env), [])
        self.assertEqual(self.complete("ren", env=env), ["renew"])

    def test_a_daemon_that_never_answers_gives_nothing_within_the_deadline(self):
        base = os.path.join(self.tmp, "srv-base")
        os.mkdir(base, 0o755)
        srv = fx.Server(base, fx.Account.current(base))
        srv.init("--gpu-count", "4")
        # In the daemon's place, a socket that accepts and then says nothing.
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(srv.socket)
        listener.listen(8)
        listener.settimeout(0.2)
        held = []
        stop = threading.Event()

        def accept():
            while not stop.is_set():
                try:
                    held.append(listener.accept()[0])
                except OSError:
                    continue

        t = threading.Thread(target=accept, daemon=True)
        t.start()
        self.addCleanup(lambda: (stop.set(), t.join(), listener.close(), [c.close() for c in held]))
        env = {"BK_CONFIG_FILE": srv.config, "BK_DATA_DIR": None}
        started = time.monotonic()
        p = self.bk("__complete", "renew", "", env=env)
        elapsed = time.monotonic() - started
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
        self.assertTrue(held, "completion never asked the socket")
        # The deadline is half a second; a loaded machine gets slack, a hang would not.
        self.assertLess(elapsed, 5.0)


if __name__ == "__main__":
    unittest.main()
