"""Real hosts for the multi-host client (`bk c`): a fixture for its end-to-end tests and benchmark.

As root, `ClusterHosts(n).setup()` builds n "hosts" on this machine, each in a network
namespace of its own, and one client namespace wired to each of them:

    bkc-<tag>-cl   the client: veth "h<N>" 10.123.<N>.1/30 towards host N
    bkc-<tag>-h<N> host N:     veth "cl"    10.123.<N>.2/30 towards the client, and lo

Nothing routes out of these namespaces, and <tag> (the pid and a random suffix) keeps
parallel runs apart. Every host has

* its own stable node identity: /etc/netns/<ns>/machine-id holds a distinct id, which
  `ip netns exec` binds over /etc/machine-id for everything started in that namespace
  (bk derives its node ID from that file);
* an OpenSSH server (`sshd -D -e`, own config, host key and pid file in the host's
  directory, `UsePAM no`, keys only, `SetEnv BK_CONFIG_FILE=<the host's server config>` so
  a remote `bk` talks to that host's daemon);
* a rootless `bk server serve` of its own (its own ledger, owned by the server account
  OWNER, simulated GPUs), started in the host's namespace so its node ID is the host's.

One real account, USER, books: its key is in every host's authorized_keys, every host key
in its known_hosts, and its ~/.ssh/config names each host by alias (`host1`...). OpenSSH
finds ~/.ssh through the account's passwd entry (its real home, `home_dir`), never $HOME, so
everything started in a namespace first bind-mounts a directory of this run over home_dir,
in the private mount namespace `ip netns exec` makes: the client has one home, each host
another, as on separate machines, and parallel runs never share one. (A file bound over
/etc/passwd would not do: a useradd anywhere renames a new /etc/passwd into place, and the
kernel then detaches every mount on the old one.)

`client_bk(...)` runs bk as USER in the client namespace with BK_CLUSTER_CONFIG naming the
run's catalog (owned by USER, 0644; `catalog_add|set|rm` change it with `bk admin cluster`).
`host_bk(host, ...)` runs bk as USER on a host, directly in its namespace (to look at or
change its ledger without the client); `ssh(host, ...)` runs a command there over ssh.

Faults: `stop_host` (everything in the host's namespace killed), `slow_host` (its daemon
SIGSTOPped, so a remote bk hangs; SIGCONT in cleanup), `replace_host_key` (a new key,
sshd restarted, known_hosts left stale), `drop_after_commit` (the node's executable is a
wrapper that commits, then reports a dropped connection once).

Every subprocess has a timeout and every wait is a bounded poll. `cleanup()` undoes all of
it, even after a failed setup: processes in the namespaces killed (by pid), daemons
stopped, namespaces deleted, /etc/netns/<ns> removed, the run's directory removed.
"""

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time

from server_fixture import (BK_BIN, OWNER, Account, Server, account_command, describe, ensure_user, is_root,
                            make_base_dir, remove_tree)

IP = shutil.which("ip") or "/usr/sbin/ip"
SSHD = "/usr/sbin/sshd"
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"
UNSHARE = shutil.which("unshare") or "/usr/bin/unshare"
NETNS_ETC = "/etc/netns"

USER = "bkcuser"  # the account that books across the hosts (created when missing, kept)
GPUS_PER_HOST = 4
NODE_TIMEOUT = 10  # seconds, each node's catalog timeout unless a test sets another


def unavailable():
    """Why this machine cannot build the hosts ("" when it can)."""
    if not is_root():
        return "needs root (network namespaces, sshd, Unix accounts): run as root (CI does)"
    if not os.path.exists(IP):
        return "iproute2's ip is not installed"
    if not os.path.exists(SSHD):
        return "OpenSSH's sshd is not installed (scripts/install-deps installs openssh-server)"
    if not shutil.which("ssh") or not os.path.exists(SSH_KEYGEN):
        return "the OpenSSH client (ssh, ssh-keygen) is not installed"
    if not os.path.exists(SETPRIV) or not os.path.exists(UNSHARE):
        return "setpriv and unshare (util-linux) are not installed"
    if not (os.path.isfile(BK_BIN) and os.access(BK_BIN, os.X_OK)):
        return "bk binary not found at %s; build it or set BK_BIN" % BK_BIN
    probe = "bkc-probe-%d-%s" % (os.getpid(), secrets.token_hex(3))
    p = subprocess.run([IP, "netns", "add", probe], capture_output=True, text=True, timeout=10)
    if p.returncode != 0:
        return "cannot create a network namespace here: %s" % p.stderr.strip()
    subprocess.run([IP, "netns", "del", probe], capture_output=True, timeout=10)
    return ""


def run(args, timeout=20, check=True, **kw):
    """A root command of the fixture, bounded; raises with its output when it fails."""
    p = subprocess.run(list(map(str, args)), capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, **kw)
    if check and p.returncode != 0:
        raise AssertionError("%s failed (rc=%s):\n%s%s" % (" ".join(map(str, args)), p.returncode, p.stdout,
                                                          p.stderr))
    return p


def drop_to(account):
    """The argv prefix that runs the rest as `account` (after `ip netns exec`, which needs root)."""
    return [SETPRIV, "--reuid", str(account.uid), "--regid", str(account.gid), "--init-groups", "--"]


def write_file(path, text, mode, owner=None):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)
    if owner is not None:
        os.chown(path, owner.uid, owner.gid)


def make_dir(path, mode, owner=None):
    os.mkdir(path, mode)
    os.chmod(path, mode)  # mkdir's mode passes through the umask
    if owner is not None:
        os.chown(path, owner.uid, owner.gid)


def shadow_password(name):
    """The password field of `name` in /etc/shadow (None when absent)."""
    with open("/etc/shadow", encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split(":")
            if fields[0] == name and len(fields) > 1:
                return fields[1]
    return None


def sim_gpus(host_index, count=GPUS_PER_HOST):
    """Idle A100-80GB GPUs with UUIDs distinct across hosts (docs/simulation.md)."""
    return [{"index": i, "name": "NVIDIA A100-SXM4-80GB",
             "uuid": "GPU-%08x-0000-4000-8000-%012x" % (host_index, i), "memory_used_mb": 0,
             "memory_total_mb": 81920, "utilization_percent": 0, "processes": []} for i in range(count)]


# Waits (bounded) until every ADDR accepts TCP connections on port 22 and sends an SSH banner.
_WAIT_SSH = r"""
import socket, sys, time
deadline = time.monotonic() + float(sys.argv[1])
for addr in sys.argv[2:]:
    while True:
        try:
            with socket.create_connection((addr, 22), timeout=1) as s:
                s.settimeout(2)
                if s.recv(64).startswith(b"SSH-"):
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            sys.exit("no SSH server answers on %s:22" % addr)
        time.sleep(0.02)  # pacing between connection attempts of a bounded wait
"""


class NsServer(Server):
    """A host's `bk server serve`, started inside the host's network namespace as the owner."""

    def __init__(self, base_dir, owner, host):
        super().__init__(base_dir, owner, test_now=None)  # real clock: hosts and client agree on it
        self.host = host

    def launch(self, cmd):
        return [*self.host.enter(), *drop_to(self.owner), *cmd], {}


class Host:
    """One host: its namespace, address, node identity, sshd and daemon."""

    def __init__(self, cluster, index):
        self.cluster = cluster
        self.index = index
        self.name = "host%d" % index  # its ssh_config alias and its catalog name
        self.ns = "bkc-%s-h%d" % (cluster.tag, index)
        self.addr = "10.123.%d.2" % index
        self.client_addr = "10.123.%d.1" % index
        self.dir = os.path.join(cluster.base, self.name)
        self.machine_id = secrets.token_hex(16)
        self.node_id = None  # what bk computes in the namespace, read back in setup
        self.sshd = None
        self.sshd_starts = 0
        self.server = None
        self.user = None  # USER with this host's home
        self.host_key = os.path.join(self.dir, "ssh_host_ed25519_key")
        self.sshd_config = os.path.join(self.dir, "sshd_config")
        self.drop_marker = None
        self.stopped = False
        self.slow = False

    def enter(self):
        """The argv prefix that runs the rest on this host: in its network namespace (and its
        machine-id), with its own hostname (a UTS namespace) and USER's home, execing all the way."""
        return [IP, "netns", "exec", self.ns, UNSHARE, "--uts", "--", "sh", "-c",
                'hostname "$0" && mount --bind "$1" "$2" && shift 2 && exec "$@"', self.name, self.user.home,
                self.cluster.home_dir]

    @property
    def config(self):
        """The host's server config.json (what BK_CONFIG_FILE names on it)."""
        return self.server.config

    def host_key_line(self):
        with open(self.host_key + ".pub", encoding="utf-8") as f:
            key = " ".join(f.read().split()[:2])
        return "%s,%s %s\n" % (self.name, self.addr, key)

    def sshd_log(self):
        out = []
        for k in range(1, self.sshd_starts + 1):
            try:
                with open(os.path.join(self.dir, "sshd-%d.log" % k), encoding="utf-8", errors="replace") as f:
                    out.append(f.read())
            except OSError:
                pass
        return "".join(out)


class ClusterHosts:
    """n hosts and a client, as described in the module's docstring."""

    def __init__(self, n=3, gpus=GPUS_PER_HOST):
        self.n = n
        self.gpus = gpus
        self.tag = "%d%s" % (os.getpid() % 100000, secrets.token_hex(2))
        self.client_ns = "bkc-%s-cl" % self.tag
        self.base = None
        self.hosts = []
        self.namespaces = []  # created ones, for cleanup
        self.user = None  # USER with the client's home
        self.home_dir = None  # USER's home in the passwd database: where each namespace binds its own
        self.owner = None
        self.catalog = None

    # ------------------------------------------------------------ building

    def setup(self):
        """Builds everything; on any failure cleans up what it made and raises."""
        try:
            self._setup()
        except BaseException:
            self.cleanup()
            raise
        return self

    def _setup(self):
        self.base = make_base_dir("bk-cluster-")
        pw = ensure_user(USER)
        # sshd without PAM refuses a locked account ("!" in /etc/shadow, useradd's default);
        # "*" still allows no password, but lets the key in.
        account_command(["usermod", "-p", "*", USER], done=lambda: shadow_password(USER) == "*")
        self.owner = Account.make(OWNER, self.base)
        self.hosts = [Host(self, i) for i in range(1, self.n + 1)]
        client_dir = os.path.join(self.base, "client")
        make_dir(client_dir, 0o755)
        self.user = self._home_for(pw, client_dir)
        self.catalog = os.path.join(self.user.home, "cluster.json")

        self.home_dir = pw.pw_dir
        if not os.path.isdir(self.home_dir):  # the mount point; useradd -m made it, unless told not to
            os.makedirs(self.home_dir, 0o700)
            os.chown(self.home_dir, pw.pw_uid, pw.pw_gid)
        self._add_ns(self.client_ns)
        for h in self.hosts:
            make_dir(h.dir, 0o755)
            h.user = self._home_for(pw, h.dir)
            self._add_ns(h.ns)
            write_file(os.path.join(NETNS_ETC, h.ns, "machine-id"), h.machine_id + "\n", 0o444)
            run([IP, "link", "add", "h%d" % h.index, "netns", self.client_ns, "type", "veth", "peer", "name",
                 "cl", "netns", h.ns])
            run([IP, "-n", self.client_ns, "addr", "add", h.client_addr + "/30", "dev", "h%d" % h.index])
            run([IP, "-n", h.ns, "addr", "add", h.addr + "/30", "dev", "cl"])
            run([IP, "-n", self.client_ns, "link", "set", "h%d" % h.index, "up"])
            run([IP, "-n", h.ns, "link", "set", "cl", "up"])

        self._user_keys()
        for h in self.hosts:
            self._start_daemon(h)
            self._write_sshd_config(h)
            run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", h.name, "-f", h.host_key])
            self._start_sshd(h)
        self.write_known_hosts()
        self.wait_ssh(self.hosts)
        for h in self.hosts:
            h.node_id = self.node_context(h)["node"]["id"]
        ids = [h.node_id for h in self.hosts]
        if len(set(ids)) != len(ids):
            raise AssertionError("the hosts' node IDs are not distinct: %s" % ids)

    def _home_for(self, pw, parent):
        """USER with a fresh home under `parent` (seen at home_dir in its namespace)."""
        home = os.path.join(parent, "home")
        acc = Account(USER, pw.pw_uid, pw.pw_gid, home)
        make_dir(home, 0o700, acc)
        make_dir(os.path.join(home, ".ssh"), 0o700, acc)
        return acc

    def _add_ns(self, ns):
        """The namespace with lo up, and its /etc/netns directory (machine-id goes there)."""
        run([IP, "netns", "add", ns])
        self.namespaces.append(ns)
        run([IP, "-n", ns, "link", "set", "lo", "up"])
        os.makedirs(os.path.join(NETNS_ETC, ns), 0o755)

    def _user_keys(self):
        """USER's key, ssh_config aliases and every host's authorized_keys."""
        ssh = os.path.join(self.user.home, ".ssh")
        key = os.path.join(ssh, "id_ed25519")
        run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", USER + "@client", "-f", key])
        for path in (key, key + ".pub"):
            os.chown(path, self.user.uid, self.user.gid)
        with open(key + ".pub", encoding="utf-8") as f:
            pub = f.read()
        conf = []
        for h in self.hosts:
            conf.append("Host %s\n  HostName %s\n  User %s\n  IdentityFile ~/.ssh/id_ed25519\n"
                        "  IdentitiesOnly yes\n" % (h.name, h.addr, USER))
            write_file(os.path.join(h.user.home, ".ssh", "authorized_keys"), pub, 0o600, h.user)
        write_file(os.path.join(ssh, "config"), "\n".join(conf), 0o600, self.user)

    def write_known_hosts(self):
        """known_hosts with each host's current key (replace_host_key leaves it stale)."""
        write_file(os.path.join(self.user.home, ".ssh", "known_hosts"),
                   "".join(h.host_key_line() for h in self.hosts), 0o644, self.user)

    def _write_sshd_config(self, h):
        write_file(h.sshd_config, "\n".join([
            "ListenAddress %s:22" % h.addr,
            "HostKey %s" % h.host_key,
            "PidFile %s" % os.path.join(h.dir, "sshd.pid"),
            "UsePAM no",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PubkeyAuthentication yes",
            "PermitRootLogin no",
            "AllowUsers %s" % USER,
            "AuthorizedKeysFile .ssh/authorized_keys",
            "StrictModes yes",
            "X11Forwarding no",
            "PrintMotd no",
            "LogLevel DEBUG1",
            "SetEnv BK_CONFIG_FILE=%s" % h.config,
            "",
        ]), 0o644)

    def _start_sshd(self, h):
        os.makedirs("/run/sshd", 0o755, exist_ok=True)  # sshd's privilege separation directory
        h.sshd_starts += 1
        with open(os.path.join(h.dir, "sshd-%d.log" % h.sshd_starts), "wb") as log:
            h.sshd = subprocess.Popen([*h.enter(), SSHD, "-D", "-e", "-f", h.sshd_config],
                                      stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)

    def _start_daemon(self, h):
        srv = NsServer(h.dir, self.owner, h)
        h.server = srv
        srv.init("--gpu-count", str(self.gpus), "--cpus", "64", "--ram", "256g")
        sim = os.path.join(h.dir, "gpus.json")
        write_file(sim, json.dumps({"gpus": sim_gpus(h.index, self.gpus)}), 0o644)
        srv.serve_env = {"BK_GPU_SIM_FILE": sim, "BK_TEST_NOW": None}
        srv.start()

    def wait_ssh(self, hosts, timeout=20.0):
        """Bounded: every host's sshd answers with a banner, seen from the client namespace."""
        for h in hosts:
            if h.sshd.poll() is not None:
                raise AssertionError("sshd of %s exited with %s:\n%s" % (h.name, h.sshd.returncode, h.sshd_log()))
        p = subprocess.run([IP, "netns", "exec", self.client_ns, sys.executable, "-c", _WAIT_SSH, str(timeout),
                            *[h.addr for h in hosts]], capture_output=True, text=True, timeout=timeout + 10)
        if p.returncode != 0:
            raise AssertionError("%s\n%s" % (p.stderr.strip(), "\n".join(h.sshd_log() for h in hosts)))

    # ------------------------------------------------------------ running things

    def enter_client(self):
        """The argv prefix that runs the rest in the client namespace, with USER's home there."""
        return [IP, "netns", "exec", self.client_ns, "sh", "-c", 'mount --bind "$0" "$1" && shift && exec "$@"',
                self.user.home, self.home_dir]

    def _env(self, account, env):
        # As a login would have it: HOME is the passwd entry's (in the namespace, this side's home).
        e = account.env(BK_TEST_NOW=None, HOME=self.home_dir, XDG_CONFIG_HOME=None, XDG_DATA_HOME=None)
        for k, v in (env or {}).items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = str(v)
        return e

    def _run_in(self, prefix, account, argv, env, timeout, input=None):
        return subprocess.run([*prefix, *drop_to(account), *map(str, argv)], env=env,
                              cwd=account.home, input=input, stdin=None if input is not None else subprocess.DEVNULL,
                              capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=timeout)

    def client_bk(self, *args, env=None, timeout=60, input=None):
        """bk as USER in the client namespace, with BK_CLUSTER_CONFIG naming the catalog."""
        e = self._env(self.user, dict({"BK_CLUSTER_CONFIG": self.catalog}, **(env or {})))
        return self._run_in(self.enter_client(), self.user, [BK_BIN, *args], e, timeout, input)

    def client_run(self, *argv, env=None, timeout=30):
        """Any command as USER in the client namespace (e.g. ssh host1 ...)."""
        return self._run_in(self.enter_client(), self.user, argv, self._env(self.user, env), timeout)

    def ssh(self, host, *remote, timeout=30):
        """`ssh -o BatchMode=yes hostN REMOTE...` as USER from the client namespace."""
        return self.client_run("ssh", "-o", "BatchMode=yes", host.name, *remote, timeout=timeout)

    def host_bk(self, host, *args, env=None, timeout=30):
        """bk as USER directly on `host` (in its namespace, talking to its daemon), not via ssh."""
        e = self._env(host.user, dict({"BK_CONFIG_FILE": host.config}, **(env or {})))
        return self._run_in(host.enter(), host.user, [BK_BIN, *args], e, timeout)

    def host_json(self, host, *args):
        p = self.host_bk(host, *args)
        if p.returncode != 0:
            raise AssertionError("on %s:%s" % (host.name, describe(args, p)))
        return json.loads(p.stdout)

    def node_context(self, host):
        """`bk agent context --compact` on the host: its node identity and its daemon's view."""
        return self.host_json(host, "agent", "context", "--compact")

    def reservations(self, host, history=True):
        """USER's reservations on `host` as its bk lists them (`bk l --json [--history]`)."""
        return self.host_json(host, "l", "--json", *(["--history"] if history else []))["reservations"]

    # ------------------------------------------------------------ the catalog

    def catalog_add(self, host, name=None, node_id=None, executable=BK_BIN, timeout=NODE_TIMEOUT, priority=None,
                    target=None):
        """`bk admin cluster add` of `host` (or another name/ID/executable for it) as USER."""
        args = ["admin", "cluster", "add", name or host.name, target or host.name, node_id or host.node_id,
                "--executable", executable, "--timeout", str(timeout), "--yes"]
        if priority is not None:
            args += ["--priority", str(priority)]
        p = self.client_bk(*args)
        if p.returncode != 0:
            raise AssertionError("catalog add failed:%s" % describe(args, p))
        return p

    def catalog_set(self, name, **options):
        """`bk admin cluster set NAME --OPTION VALUE... --yes` as USER (e.g. timeout=2,
        executable=PATH): how a host is reached changes, its node ID stays."""
        args = ["admin", "cluster", "set", name]
        for k, v in options.items():
            args += ["--" + k, str(v)]
        args.append("--yes")
        p = self.client_bk(*args)
        if p.returncode != 0:
            raise AssertionError("catalog set failed:%s" % describe(args, p))
        return p

    def catalog_rm(self, name):
        args = ["admin", "cluster", "rm", name, "--yes"]
        p = self.client_bk(*args)
        if p.returncode != 0:
            raise AssertionError("catalog rm failed:%s" % describe(args, p))

    def catalog_all(self, **kw):
        for h in self.hosts:
            self.catalog_add(h, **kw)

    def read_catalog(self):
        with open(self.catalog, encoding="utf-8") as f:
            return json.load(f)

    # ------------------------------------------------------------ faults

    def ns_pids(self, ns):
        p = run([IP, "netns", "pids", ns], check=False)
        return [int(x) for x in p.stdout.split() if x.isdigit()] if p.returncode == 0 else []

    def _kill_ns(self, ns, timeout=10.0, only=None):
        """SIGCONT then SIGKILL to the processes in `ns` (all of them started by this fixture, or by
        what it started), until none is left; `only(pid)` picks some."""
        deadline = time.monotonic() + timeout
        while True:
            pids = [p for p in self.ns_pids(ns) if only is None or only(p)]
            if not pids:
                return
            for pid in pids:
                for sig in (signal.SIGCONT, signal.SIGKILL):
                    try:
                        os.kill(pid, sig)
                    except ProcessLookupError:
                        pass
            if time.monotonic() > deadline:
                raise AssertionError("processes left in %s: %s" % (ns, pids))
            time.sleep(0.02)  # pacing between sweeps of a bounded wait

    def _reap(self, h):
        for proc in (h.sshd, h.server.proc if h.server else None):
            if proc is not None:
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    pass

    def stop_host(self, h):
        """The host goes down: its sshd, its sessions and its daemon killed (connections refused)."""
        self._kill_ns(h.ns)
        self._reap(h)
        h.stopped = True

    def slow_host(self, h):
        """Its daemon stopped (SIGSTOP): a remote bk hangs on it until someone gives up."""
        os.kill(h.server.proc.pid, signal.SIGSTOP)
        h.slow = True

    def resume_host(self, h):
        if h.slow and h.server.alive():
            os.kill(h.server.proc.pid, signal.SIGCONT)
        h.slow = False

    def kill_sessions(self, h):
        """Ends every sshd of the host (listener and sessions, so no client master stays attached)."""
        def is_sshd(pid):
            try:
                with open("/proc/%d/comm" % pid, encoding="utf-8") as f:
                    return f.read().strip() == "sshd"
            except OSError:
                return False
        self._kill_ns(h.ns, only=is_sshd)
        if h.sshd is not None:
            h.sshd.wait(10)

    def replace_host_key(self, h):
        """A new host key and a restarted sshd; USER's known_hosts still holds the old key."""
        self.kill_sessions(h)
        os.remove(h.host_key)
        os.remove(h.host_key + ".pub")
        run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", h.name, "-f", h.host_key])
        self._start_sshd(h)
        self.wait_ssh([h])

    def drop_after_commit(self, h):
        """A wrapper for the host's bk (give it as the node's executable) and its one-shot marker:
        while the marker exists, the first run whose arguments hold --op-id deletes it, runs the
        real bk (which commits), discards what it printed and exits 255, as ssh does when the
        connection drops. Returns the wrapper's path; `arm_drop(h)` creates the marker."""
        wrapper = os.path.join(h.dir, "bk-drop")
        h.drop_marker = os.path.join(h.user.home, "drop-next-commit")
        write_file(wrapper, "\n".join([
            "#!/bin/sh",
            "# bk, except that once (while the marker exists) a write with --op-id loses its answer.",
            "for a in \"$@\"; do",
            "  case $a in",
            "    --op-id|--op-id=*)",
            "      if rm %s 2>/dev/null; then" % h.drop_marker,
            "        %s \"$@\" >/dev/null 2>&1 </dev/null" % BK_BIN,
            "        exit 255",
            "      fi",
            "      ;;",
            "  esac",
            "done",
            "exec %s \"$@\"" % BK_BIN,
            "",
        ]), 0o755)
        return wrapper

    def arm_drop(self, h):
        write_file(h.drop_marker, "", 0o644, h.user)

    # ------------------------------------------------------------ teardown

    def cleanup(self):
        """Undoes everything; safe after a partial setup and to call twice."""
        problems = []
        for ns in [self.client_ns] + [h.ns for h in self.hosts]:
            if ns in self.namespaces:
                try:
                    self._kill_ns(ns)
                except AssertionError as e:
                    problems.append(str(e))
        for h in self.hosts:
            if h.server is not None:
                h.server.cleanup()
            self._reap(h)
        for ns in self.namespaces:
            p = run([IP, "netns", "del", ns], check=False)
            if p.returncode != 0:
                problems.append("ip netns del %s: %s" % (ns, p.stderr.strip()))
            shutil.rmtree(os.path.join(NETNS_ETC, ns), ignore_errors=True)
        self.namespaces = []
        if self.base:
            remove_tree(self.base)
            self.base = None
        if problems:
            raise AssertionError("cleanup: " + "; ".join(problems))

    def __enter__(self):
        return self.setup()

    def __exit__(self, *exc):
        self.cleanup()
