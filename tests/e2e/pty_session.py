"""Drives `bk` through a pseudo-terminal, as a person at a terminal would.

Every wait reads until the expected text appears, with a bounded timeout: no
sleeps. Output is kept with the terminal's CR LF line ends turned into LF.
"""

import os
import pty
import select
import time


class PtySession:
    """`bk ARGS` started on a new pseudo-terminal, its stdin, stdout and stderr."""

    def __init__(self, bk_bin, args, env, cwd, timeout=20):
        self.timeout = timeout
        self.output = ""  # everything read so far
        self._unread = ""
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the pty is its controlling terminal
            try:
                os.chdir(cwd)
                os.execve(bk_bin, [bk_bin, *args], env)
            finally:
                os._exit(127)

    def _read_some(self, deadline):
        """Appends what the terminal has within the deadline; False at its end."""
        ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise TimeoutError(f"nothing more within {self.timeout}s; output so far:\n{self.output}")
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        text = chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        self.output += text
        self._unread += text
        return True

    def expect(self, text):
        """Reads until `text` appears; returns what came before it (since the last expect)."""
        return self.expect_any(text)[1]

    def expect_any(self, *texts):
        """Reads until one of `texts` appears; returns it and what came before it."""
        deadline = time.monotonic() + self.timeout
        while True:
            found = [(self._unread.find(t), t) for t in texts if t in self._unread]
            if found:
                text = min(found)[1]
                before, _, self._unread = self._unread.partition(text)
                return text, before
            if not self._read_some(deadline):
                raise AssertionError(f"none of {texts!r} came; output:\n{self.output}")

    def send(self, text):
        os.write(self.fd, text.encode())

    def answer(self, prompt, reply):
        """Waits for `prompt`, then types `reply` and Enter."""
        self.expect(prompt)
        self.send(reply + "\n")

    def end_of_input(self):
        """Ctrl-D at the start of a line."""
        self.send("\x04")

    def interrupt(self):
        """Ctrl-C: SIGINT to the terminal's foreground processes."""
        self.send("\x03")

    def wait(self):
        """Reads to the end; returns the exit status (negative: killed by that signal)."""
        deadline = time.monotonic() + self.timeout
        while self._read_some(deadline):
            pass
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)
