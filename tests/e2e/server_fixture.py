"""Shared helpers for the shared-server end-to-end tests (test_server_*.py).

A `Server` is one `bk server init` directory under a fresh temporary
directory (mode 0755, so other accounts can traverse it), initialised and
served by its owner account. `start()` launches `bk server serve` as a child
process running directly as the owner (setuid in the child, like
`setpriv --reuid`), so the PID the test holds is the daemon's own and SIGTERM
or SIGKILL reach it. Readiness is awaited without fixed sleeps: the test
listens on a NOTIFY_SOCKET for the daemon's sd_notify READY=1 and then pings
the broker socket, with bounded retries.

Accounts: as root the tests create real Unix accounts (`useradd -m`) and run
every `bk` as them; `Account.current()` is the account running the tests.

Only the Python standard library is used.

    BK_BIN          the bk binary (ctest sets it; default: <repo>/build/bk)
"""

import calendar
import grp
import json
import os
import pwd
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_DIR = os.environ.get("BK_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE))
BK_BIN = os.path.abspath(os.environ.get("BK_BIN") or os.path.join(SOURCE_DIR, "build", "bk"))

NOW_ISO = "2026-11-29T18:49:00Z"
NOW = calendar.timegm(time.strptime(NOW_ISO, "%Y-%m-%dT%H:%M:%SZ"))

# Accounts the root-only tests create (and keep: creating them is the slow part).
OWNER = "bksrvown"
USER_A = "bksrva"
USER_B = "bksrvb"

_SCRUB_PREFIXES = ("BK_", "GPUBK_", "LC_", "XDG_")
_SCRUB_NAMES = {"NO_COLOR", "TERM", "COLUMNS", "LINES", "TZ", "LANG", "LANGUAGE", "CUDA_VISIBLE_DEVICES",
                "NOTIFY_SOCKET", "HOME", "USER", "LOGNAME"}


def is_root():
    return os.geteuid() == 0


def bk_ok():
    return os.path.isfile(BK_BIN) and os.access(BK_BIN, os.X_OK)


def account_command(args, done=None, attempts=100):
    """Runs useradd/groupadd/usermod, retrying while another process holds /etc/passwd's lock
    (ctest runs test files in parallel). `done()` says whether the goal is already reached."""
    last = None
    for _ in range(attempts):
        if done is not None and done():
            return
        last = subprocess.run(args, capture_output=True, text=True)
        if last.returncode == 0 or (done is not None and done()):
            return
        if "lock" not in (last.stderr or "").lower():
            break
        time.sleep(0.05)  # pacing between retries of a busy lock, not synchronisation
    raise RuntimeError("%s failed: %s" % (" ".join(args), (last.stderr or "").strip() if last else "?"))


def ensure_user(name):
    """The pwd entry of `name`, created with `useradd -m` when missing (root only)."""
    def exists():
        try:
            pwd.getpwnam(name)
            return True
        except KeyError:
            return False

    account_command(["useradd", "-m", "-s", "/bin/sh", name], done=exists)
    return pwd.getpwnam(name)


def ensure_group(name, members=()):
    """The GID of group `name` (created when missing) with `members` added (root only)."""
    def exists():
        try:
            grp.getgrnam(name)
            return True
        except KeyError:
            return False

    account_command(["groupadd", name], done=exists)
    for m in members:
        account_command(["usermod", "-a", "-G", name, m],
                        done=lambda m=m: m in grp.getgrnam(name).gr_mem)
    return grp.getgrnam(name).gr_gid


class Account:
    """One Unix account with a private HOME / XDG_CONFIG_HOME under the test's directory."""

    def __init__(self, name, uid, gid, home):
        self.name, self.uid, self.gid, self.home = name, uid, gid, home

    @classmethod
    def make(cls, name, base_dir):
        """A real account (created when missing) with a fresh home in base_dir, owned by it."""
        pw = ensure_user(name)
        home = os.path.join(base_dir, "home-" + name)
        os.mkdir(home, 0o700)
        os.chown(home, pw.pw_uid, pw.pw_gid)
        return cls(name, pw.pw_uid, pw.pw_gid, home)

    @classmethod
    def current(cls, base_dir, label="me"):
        uid = os.geteuid()
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = str(uid)
        home = os.path.join(base_dir, "home-" + label)
        os.mkdir(home, 0o700)
        return cls(name, uid, os.getegid(), home)

    @property
    def switches(self):
        return self.uid != os.geteuid()

    def env(self, **extra):
        """A clean environment for bk as this account: nothing from the caller's BK_*/XDG_* leaks in."""
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(_SCRUB_PREFIXES) and k not in _SCRUB_NAMES}
        env.update({"HOME": self.home, "USER": self.name, "LOGNAME": self.name,
                    "XDG_CONFIG_HOME": os.path.join(self.home, ".config"),
                    "XDG_DATA_HOME": os.path.join(self.home, ".local", "share"),
                    "TZ": "UTC", "LANG": "C.UTF-8", "COLUMNS": "100", "TERM": "dumb",
                    "BK_TEST_NOW": NOW_ISO})
        for k, v in extra.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = str(v)
        return env

    def popen_kwargs(self):
        """subprocess keyword arguments that run the child as this account."""
        if not self.switches:
            return {}
        try:
            groups = [g for g in os.getgrouplist(self.name, self.gid) if g != self.gid]
        except (KeyError, OSError):
            groups = []
        return {"user": self.uid, "group": self.gid, "extra_groups": groups}

    def run(self, args, env=None, timeout=30, input=None, cwd=None):
        """Runs a command as this account; returns the CompletedProcess (text)."""
        return subprocess.run(list(map(str, args)), env=env if env is not None else self.env(), input=input,
                              stdin=None if input is not None else subprocess.DEVNULL, capture_output=True,
                              text=True, encoding="utf-8", errors="replace", timeout=timeout,
                              cwd=cwd or self.home, **self.popen_kwargs())

    def bk(self, *args, env=None, timeout=30, input=None):
        return self.run([BK_BIN, *args], env=env, timeout=timeout, input=input)


def describe(args, p):
    return "\n$ bk %s\nrc=%s\n--- stdout\n%s--- stderr\n%s" % (" ".join(map(str, args)), p.returncode, p.stdout,
                                                               p.stderr)


# ------------------------------------------------------------------ JSON-RPC

class Rpc:
    """One NDJSON JSON-RPC connection to the broker socket (as the calling process)."""

    def __init__(self, path, timeout=5.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # A blocking connect bounded by SO_SNDTIMEO: with a full listen backlog it waits for the
        # daemon to accept (as bk's own client does) instead of failing with EAGAIN.
        secs = int(timeout)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                             struct.pack("ll", secs, int((timeout - secs) * 1e6)))
        self.sock.connect(path)
        self.sock.settimeout(timeout)
        self.buf = b""
        self.next_id = 0

    def send_raw(self, data):
        self.sock.sendall(data if isinstance(data, bytes) else data.encode())

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def read_line(self, timeout=5.0):
        """The next reply line (bytes, without the newline); None on EOF."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply within %.1f s" % timeout)
            self.sock.settimeout(left)
            try:
                chunk = self.sock.recv(65536)
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                if self.buf:
                    line, self.buf = self.buf, b""
                    return line
                return None
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def read(self, timeout=5.0):
        line = self.read_line(timeout)
        if line is None:
            raise EOFError("the daemon closed the connection")
        return json.loads(line)

    def call(self, method, params=None, timeout=5.0):
        self.next_id += 1
        req = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            req["params"] = params
        self.send(req)
        reply = self.read(timeout)
        if reply.get("id") != self.next_id:
            raise AssertionError("reply id %r for request %d: %r" % (reply.get("id"), self.next_id, reply))
        return reply

    def closed_by_peer(self, timeout=0.0):
        """True when the daemon closes this connection (EOF or reset) within `timeout` seconds;
        whatever it sends before that is kept for read()."""
        deadline = time.monotonic() + timeout
        while True:
            r, _, _ = select.select([self.sock], [], [], max(0.0, deadline - time.monotonic()))
            if not r:
                return False
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                return True
            if not chunk:
                return True
            self.buf += chunk

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def rpc_as(account, socket_path, requests, timeout=30.0):
    """Sends `requests` (dicts or raw strings) one by one on a single connection made by a forked
    child running as `account` (so SO_PEERCRED names that account), reading one reply line per
    request that has an id. Returns the parsed replies; None stands for a connection the daemon
    closed instead of answering (and ends the list)."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in requests]
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: become the account, talk, report on the pipe, never return
        code = 0
        try:
            os.close(rfd)
            if account.switches:
                os.setgroups(account.popen_kwargs()["extra_groups"])
                os.setgid(account.gid)
                os.setuid(account.uid)
            out = []
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(timeout)
            s.connect(socket_path)
            buf = b""
            for line in lines:
                s.sendall(line.encode() + b"\n")
                try:
                    want = isinstance(json.loads(line), dict) and "id" in json.loads(line)
                except ValueError:
                    want = True
                if not want:
                    continue
                while b"\n" not in buf:
                    try:
                        chunk = s.recv(65536)
                    except ConnectionResetError:
                        chunk = b""
                    if not chunk:
                        break
                    buf += chunk
                if b"\n" not in buf:
                    out.append("EOF")
                    break
                reply, _, buf = buf.partition(b"\n")
                out.append(reply.decode())
            payload = "\n".join(out).encode()
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            payload = ("ERROR " + repr(e)).encode()
            code = 1
        try:
            os.write(wfd, payload)
        finally:
            os._exit(code)
    os.close(wfd)
    chunks = []
    while True:
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(rfd)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise AssertionError("rpc client as %s failed: %s" % (account.name, text))
    return [None if line == "EOF" else json.loads(line) for line in text.splitlines()]


# ------------------------------------------------------------------ the server

class Server:
    """A `bk server init` directory and its `bk server serve` process."""

    def __init__(self, base_dir, owner, test_now=NOW_ISO):
        self.base = base_dir
        self.owner = owner
        self.dir = os.path.join(base_dir, "srv")
        self.config = os.path.join(self.dir, "config.json")
        self.socket = os.path.join(self.dir, "run", "broker.sock")
        self.lock = os.path.join(self.dir, "run", "serve.lock")
        self.ledger = os.path.join(self.dir, "data", "ledger.db")
        self.test_now = test_now
        self.proc = None
        self.notify = None
        self.notified = []  # sd_notify datagrams received, in order
        self.starts = 0
        self.logs = []
        self.serve_env = {}  # extra environment of `bk server serve` (e.g. BK_GPU_SIM_FILE)

    # -- init

    def init(self, *args):
        """`bk server init --directory DIR ARGS` as the owner; returns its stdout. The directory is
        created (empty, owned by the owner) first, since the owner cannot write the base dir."""
        os.mkdir(self.dir, 0o700)
        if self.owner.switches:
            os.chown(self.dir, self.owner.uid, self.owner.gid)
        cmd = ["server", "init", "--directory", self.dir, *args]
        p = self.owner.bk(*cmd)
        if p.returncode != 0:
            raise AssertionError("bk server init failed" + describe(cmd, p))
        if self.test_now:
            self.patch_config(test_now=self.test_now)
        return p.stdout

    def read_config(self):
        with open(self.config, encoding="utf-8") as f:
            return json.load(f)

    def patch_config(self, **changes):
        """Rewrites config.json in place, so its owner and mode stay what init made them."""
        doc = self.read_config()
        doc.update(changes)
        with open(self.config, "r+", encoding="utf-8") as f:
            f.seek(0)
            f.truncate()
            f.write(json.dumps(doc, indent=2) + "\n")

    # -- serve

    def serve_cmd(self):
        return [BK_BIN, "server", "serve", "--config", self.config]

    def start(self, timeout=20.0):
        """Starts the daemon as the owner and waits until it answers a ping. Returns the ping result."""
        assert self.proc is None or self.proc.poll() is not None, "the daemon is already running"
        self._open_notify()
        self.starts += 1
        log_path = os.path.join(self.base, "serve-%d.log" % self.starts)
        self.logs.append(log_path)
        log = open(log_path, "wb")
        env = self.owner.env(NOTIFY_SOCKET=self.notify_path, **self.serve_env)
        argv, kwargs = self.launch(self.serve_cmd())
        try:
            self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, cwd=self.owner.home, **kwargs)
        finally:
            log.close()
        return self.wait_ready(timeout)

    def launch(self, cmd):
        """The argv and subprocess keyword arguments that run `cmd` as the owner. A subclass may
        start it elsewhere (cluster_hosts.py: inside a network namespace), as long as the process
        it starts execs into the daemon, so that the PID held is the daemon's own."""
        return cmd, self.owner.popen_kwargs()

    def wait_ready(self, timeout=20.0):
        """Bounded polling: drain sd_notify datagrams and try a ping until one answers."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("bk server serve exited with %s before it was ready:\n%s"
                                     % (self.proc.returncode, self.log()))
            self.drain_notify(0.05)
            if os.path.exists(self.socket):
                try:
                    result = self.ping(timeout=2.0)
                except (OSError, EOFError, TimeoutError, ValueError) as e:
                    last = e
                else:
                    # The daemon sends READY=1 before its loop answers anything, so
                    # after a reply the datagram is already queued: collect it.
                    self.drain_notify(0)
                    return result
        self.kill()
        raise AssertionError("bk server serve not ready within %.0f s (last error %r):\n%s"
                             % (timeout, last, self.log()))

    def _open_notify(self):
        if self.notify is not None:
            return
        self.notify_path = os.path.join(self.base, "notify.sock")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(self.notify_path)
        os.chmod(self.notify_path, 0o666)  # the owner account sends to it

    def drain_notify(self, timeout=0.0):
        """Collects pending sd_notify datagrams (waiting up to `timeout` for the first)."""
        if self.notify is None:
            return self.notified
        wait = timeout
        while True:
            r, _, _ = select.select([self.notify], [], [], wait)
            if not r:
                return self.notified
            self.notified.append(self.notify.recv(4096).decode(errors="replace"))
            wait = 0

    def call(self, method, timeout=2.0):
        """One `method` call without params on a fresh connection (as the test process); returns
        the result."""
        c = Rpc(self.socket, timeout=timeout)
        try:
            reply = c.call(method, timeout=timeout)
        finally:
            c.close()
        if "result" not in reply:
            raise AssertionError("%s failed: %r" % (method, reply))
        return reply["result"]

    def ping(self, timeout=2.0):
        """One server.ping on a fresh connection (as the test process); returns the result."""
        return self.call("server.ping", timeout)

    def wait_sampled(self, timeout=10.0):
        """Waits until what the daemon serves comes from a sample of its monitor, not the
        placeholders it holds before the first one (bounded polling)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            devices = self.call("status.get")["devices"]
            if devices and all(d["source"] != "none" for d in devices):
                return devices
            time.sleep(0.1)  # pacing between polls of a bounded wait
        raise AssertionError("the daemon's monitor sampled nothing within %.0f s:\n%s" % (timeout, self.log()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=15.0):
        """SIGTERM and wait; returns the exit status."""
        if self.proc is None or self.proc.poll() is not None:
            return None if self.proc is None else self.proc.returncode
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("bk server serve did not stop within %.0f s of SIGTERM:\n%s"
                                 % (timeout, self.log()))

    def kill(self):
        """SIGKILL (the crash), then reap."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(15)

    def log(self, which=-1):
        if not self.logs:
            return ""
        try:
            with open(self.logs[which], encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def cleanup(self):
        self.kill()
        if self.notify is not None:
            self.notify.close()
            self.notify = None


def make_base_dir(prefix="bk-srv-"):
    """A fresh temporary directory others can traverse (0755, owned by the test's account)."""
    base = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    os.chmod(base, 0o755)
    return base


def remove_tree(path):
    shutil.rmtree(path, ignore_errors=True)


def poll_until(predicate, timeout, what, interval=0.01):
    """Bounded polling on a condition; the interval only paces the retries."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError("timed out after %.1f s waiting for %s" % (timeout, what))
        time.sleep(interval)


def budgeted_server(base, gpu_count, host_cpus, capacity):
    """An initialised (not started) server with host budgets (64 GiB of RAM), and its client
    accounts: USER_A and USER_B served by OWNER as root, else the current account alone."""
    if is_root():
        owner = Account.make(OWNER, base)
        users = [Account.make(USER_A, base), Account.make(USER_B, base)]
    else:
        owner = Account.current(base, "owner")
        users = [owner]
    srv = Server(base, owner)
    srv.init("--gpu-count", str(gpu_count), "--cpus", str(host_cpus), "--ram", "64g", "--max-shared",
             str(capacity))
    return srv, users


def write_upstream_ledger(directory, records, gpu_count):
    """The original's ledger.json holding `records`, readable by the server's owner; returns its path."""
    from bktest import upstream_ledger  # the one description of that format in the tests
    path = os.path.join(directory, "ledger.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(upstream_ledger(records, gpu_count=gpu_count), f)
    os.chmod(path, 0o644)
    return path
