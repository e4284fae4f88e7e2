"""System install: `sudo bk admin install|uninstall|services` end to end.

Needs root (it creates throwaway accounts with useradd and installs into /etc, /var/lib and
/run); skipped otherwise. The real install runs only when none of its paths exist yet, and
everything it made is removed afterwards, even on failure. No systemd runs here: the test
starts the unit's ExecStart by hand as the service account (setpriv), as systemd would.
GPU telemetry for `bk doctor --probe --strict` comes from the fake NVML driver of
tests/gpu/fake_driver.cc, built with the host's C++ compiler. Run:

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_system_install
"""

import grp
import hashlib
import json
import os
import pwd
import shlex
import shutil
import sqlite3
import stat
import subprocess
import unittest

from server_fixture import (BK_BIN, SOURCE_DIR, Account, Server, account_command, bk_ok, describe, ensure_group,
                            ensure_user, is_root, make_base_dir, remove_tree)

SVC = "bksyssvc"
USER_A = "bksysa"
USER_B = "bksysb"
OTHER_GROUP = "bksysgrp"  # the service account is not in it
SYSTEM_PATHS = ["/etc/gpubk", "/var/lib/gpubk", "/run/gpubk", "/etc/systemd/system/gpubk.service",
                "/etc/profile.d/gpubk.sh"]
UNIT = "/etc/systemd/system/gpubk.service"

_made_accounts = []
_made_groups = []


def setUpModule():
    if not is_root() or not bk_ok():
        return
    for name in (SVC, USER_A, USER_B):
        try:
            pwd.getpwnam(name)
        except KeyError:
            ensure_user(name)
            _made_accounts.append(name)
    try:
        grp.getgrnam(OTHER_GROUP)
    except KeyError:
        ensure_group(OTHER_GROUP)
        _made_groups.append(OTHER_GROUP)


def tearDownModule():
    for name in _made_accounts:
        account_command(["userdel", "-r", name])
    for name in _made_groups:
        account_command(["groupdel", name])


def state(paths, shallow=()):
    """Every path under `paths`: type, mode, owner, group and a file's hash; "absent" for a missing
    one. Directories in `shallow` count only themselves (the daemon writes inside them)."""
    out = {}

    def one(path):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            out[path] = "absent"
            return
        entry = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)
        if stat.S_ISREG(st.st_mode):
            with open(path, "rb") as f:
                entry += (hashlib.sha256(f.read()).hexdigest(),)
        out[path] = entry
        if stat.S_ISDIR(st.st_mode) and path not in shallow:
            for name in sorted(os.listdir(path)):
                one(os.path.join(path, name))

    for p in paths:
        one(p)
    return out


def run_root(*args, stdin=subprocess.DEVNULL, **extra_env):
    """bk as root, with a clean environment (no SUDO_* unless given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BK_", "SUDO_", "XDG_"))}
    env.update(extra_env)
    return subprocess.run([BK_BIN, *args], env=env, stdin=stdin, capture_output=True, text=True, timeout=60)


def unit_fields(path):
    """ExecStart's words and the Environment= assignments of a unit file, as systemd reads them
    (quotes, backslash escapes, then %% and $$)."""
    exec_start, env = None, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, _, value = line.rstrip("\n").partition("=")
            if key == "ExecStart":
                exec_start = [w.replace("%%", "%").replace("$$", "$") for w in shlex.split(value)]
            elif key == "Environment":
                for assignment in shlex.split(value):
                    k, _, v = assignment.replace("%%", "%").partition("=")
                    env[k] = v
    return exec_start, env


def build_fake_nvml(base):
    """tests/gpu/fake_driver.cc as libnvidia-ml.so.1 (two GPUs); the directories, or None without
    a compiler."""
    cxx = shutil.which("c++") or shutil.which("g++")
    if not cxx:
        return None
    lib, procs = os.path.join(base, "fake-lib"), os.path.join(base, "fake-state", "procs")
    os.makedirs(lib)
    os.makedirs(procs)
    os.chmod(os.path.dirname(procs), 0o755)
    os.chmod(procs, 0o1777)
    so = os.path.join(lib, "libnvidia-ml.so.1")
    subprocess.run([cxx, "-std=c++17", "-O1", "-shared", "-fPIC", "-o", so,
                    os.path.join(SOURCE_DIR, "tests", "gpu", "fake_driver.cc")], check=True, timeout=120)
    os.chmod(lib, 0o755)
    os.chmod(so, 0o755)
    return {"LD_LIBRARY_PATH": lib, "FAKE_GPU_DIR": os.path.dirname(procs)}


class SystemDaemon(Server):
    """The installed unit's ExecStart, started by hand as its User= (setpriv), with its Environment=."""

    def __init__(self, base, root_account, svc_pw):
        super().__init__(base, root_account, test_now=None)
        self.config = "/etc/gpubk/config.json"
        self.socket = "/run/gpubk/broker.sock"
        self.ledger = "/var/lib/gpubk/ledger.db"
        self.exec_start, unit_env = unit_fields(UNIT)
        self.svc = svc_pw
        self.serve_env = dict(unit_env, BK_TEST_NOW=None)

    def serve_cmd(self):
        return ["setpriv", "--reuid=%d" % self.svc.pw_uid, "--regid=%d" % self.svc.pw_gid, "--init-groups",
                "--", *self.exec_start]


def needs_root(cls):
    return unittest.skipUnless(is_root(), "creates accounts and installs into /etc: run as root (CI does)")(cls)


class InstallCase(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        if not bk_ok():
            self.skipTest("bk binary not found at %s" % BK_BIN)
        self.base = make_base_dir("bk-sys-")
        self.addCleanup(remove_tree, self.base)

    def ok(self, *args):
        p = run_root(*args)
        self.assertEqual(p.returncode, 0, describe(args, p))
        return p.stdout

    def refused(self, *args, want, **extra_env):
        """One line "bk: ..." containing `want`, exit 2, nothing on stdout."""
        p = run_root(*args, **extra_env)
        d = describe(args, p)
        self.assertEqual(p.returncode, 2, d)
        self.assertEqual(p.stdout, "", d)
        self.assertEqual(len(p.stderr.splitlines()), 1, d)
        self.assertTrue(p.stderr.startswith("bk: "), d)
        self.assertIn(want, p.stderr, d)


@needs_root
class StagedInstall(InstallCase):
    """`--root DIR`: the whole install staged under a directory, nothing started."""

    def test_staged_install_verifies_reinstalls_as_a_no_op_and_uninstall_restores(self):
        root = os.path.join(self.base, "stage")
        # Already there: the unit directory and /etc/gpubk with a file of the administrator's.
        os.makedirs(os.path.join(root, "etc", "systemd", "system"))
        os.makedirs(os.path.join(root, "etc", "gpubk"))
        with open(os.path.join(root, "etc", "gpubk", "NOTES"), "w") as f:
            f.write("ours\n")
        before = state([root])
        svc = pwd.getpwnam(SVC)

        doc = json.loads(self.ok("admin", "install", "--root", root, "--service-user", SVC, "--gpu-count", "2",
                                 "--login-hook", "--yes", "--json"))
        self.assertEqual(doc["kind"], "admin-install")
        self.assertTrue(doc["changed"])
        actions = {s["path"][len(root):]: s["action"] for s in doc["steps"]}
        self.assertEqual(actions["/etc/gpubk"], "unchanged")
        for path in ("/etc/gpubk/config.json", "/var/lib/gpubk", "/run/gpubk", UNIT, "/etc/profile.d/gpubk.sh",
                     "/etc/gpubk/install.json"):
            self.assertEqual(actions[path], "create", path)
        self.assertNotIn("/etc/systemd/system", actions)

        def owner_mode(path):
            st = os.lstat(root + path)
            return st.st_uid, stat.S_IMODE(st.st_mode)

        self.assertEqual(owner_mode("/etc/gpubk/config.json"), (0, 0o644))
        self.assertEqual(owner_mode("/etc/gpubk/install.json"), (0, 0o600))
        self.assertEqual(owner_mode("/var/lib/gpubk"), (svc.pw_uid, 0o700))
        self.assertEqual(owner_mode("/run/gpubk"), (svc.pw_uid, 0o711))
        self.assertEqual(owner_mode(UNIT), (0, 0o644))
        with open(root + "/etc/gpubk/config.json") as f:
            config = json.load(f)
        self.assertEqual((config["owner_uid"], config["socket"], config["data_dir"], config["gpu_count"]),
                         (svc.pw_uid, "/run/gpubk/broker.sock", "/var/lib/gpubk", 2))
        exec_start, env = unit_fields(root + UNIT)
        self.assertEqual(exec_start, [os.path.realpath(BK_BIN), "server", "serve", "--config",
                                      "/etc/gpubk/config.json"])
        self.assertEqual(env, {"BK_CONFIG_FILE": "/etc/gpubk/config.json"})
        with open(root + "/etc/profile.d/gpubk.sh") as f:
            hook = f.read()
        self.assertIn("timeout -k 0.2s 1s '%s' login --hook 2>/dev/null || :" % os.path.realpath(BK_BIN), hook)

        analyze = shutil.which("systemd-analyze")
        if analyze:
            p = subprocess.run([analyze, "verify", root + UNIT], capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertNotIn("gpubk.service:", p.stdout + p.stderr)
        else:
            print("\nnote: systemd-analyze is missing (scripts/install-deps installs systemd); unit not verified")

        installed = state([root])
        out = self.ok("admin", "install", "--root", root, "--yes")
        self.assertIn("nothing to change: the system install is complete", out)
        self.assertNotIn("create", out)
        self.assertEqual(state([root]), installed)
        self.refused("admin", "install", "--root", root, "--gpu-count", "3", "--yes", want="bk admin policy")
        self.assertEqual(state([root]), installed)

        # The unit alone: status, remove, put back.
        self.assertIn("(current)", self.ok("admin", "services", "status", "--root", root))
        self.ok("admin", "services", "uninstall", "--root", root, "--yes")
        self.assertFalse(os.path.exists(root + UNIT))
        self.assertEqual(run_root("admin", "services", "status", "--root", root).returncode, 1)
        self.ok("admin", "services", "install", "--root", root, "--yes")
        self.assertEqual(state([root]), installed)

        self.ok("admin", "uninstall", "--root", root, "--yes", "--purge-data")
        self.assertEqual(state([root]), before)

    def test_uninstall_keeps_the_data_and_puts_back_a_replaced_file(self):
        root = os.path.join(self.base, "stage")
        hook = root + "/etc/profile.d/gpubk.sh"
        os.makedirs(os.path.dirname(hook))
        with open(hook, "w") as f:  # an older hook of ours
            f.write("# Managed by `bk admin install` (GPUBK login hook); `bk admin uninstall` removes it.\n:\n")
        before = state([root])
        self.ok("admin", "install", "--root", root, "--service-user", SVC, "--gpu-count", "1", "--yes")
        with open(hook) as f:
            self.assertIn("login --hook", f.read())  # a hook already there is kept up to date
        out = self.ok("admin", "uninstall", "--root", root, "--yes")
        self.assertIn("keep      %s/var/lib/gpubk (data directory: the ledger; --purge-data removes it)" % root,
                      out)
        after = state([root])
        self.assertEqual(after[hook], before[hook])
        self.assertNotEqual(after[root + "/var/lib/gpubk"], "absent")
        self.assertNotIn(root + "/etc/gpubk", after)

    def test_bad_input_is_one_line_and_changes_nothing(self):
        root = os.path.join(self.base, "stage")
        data = root + "/var/lib/gpubk"
        os.makedirs(data)
        a = pwd.getpwnam(USER_A)
        os.chown(data, a.pw_uid, a.pw_gid)
        before = state([root])
        cases = [
            (["--service-user", SVC], "%s (data directory) belongs to %s, not %s" % (data, USER_A, SVC)),
            (["--service-user", "root"], "the service account must not be root"),
            (["--service-user", "bksys-nobody"], "no such account: bksys-nobody"),
            ([], "name the account the daemon runs as with --service-user"),
            (["--service-user", USER_A, "--access", "group", "--group", OTHER_GROUP],
             "the service account %s is not in group %s" % (USER_A, OTHER_GROUP)),
            (["--service-user", USER_A, "--gpu-count", "0"], "--gpu-count must be a whole number"),
            (["--service-user", USER_A, "--root", "relative"], "--root must be an absolute path"),
        ]
        for extra, want in cases:
            with self.subTest(extra=extra):
                args = ["admin", "install", "--root", root, *extra, "--yes"]
                self.refused(*args, want=want)
                self.assertEqual(state([root]), before)
        # The default service account is whoever ran sudo, when SUDO_USER and SUDO_UID agree.
        self.refused("admin", "install", "--root", root, "--yes", SUDO_USER=USER_A, SUDO_UID="0",
                     want="SUDO_USER %s and SUDO_UID 0 name different accounts" % USER_A)
        self.assertEqual(state([root]), before)
        p = run_root("admin", "install", "--root", root, "--dry-run", SUDO_USER=USER_A,
                     SUDO_UID=str(a.pw_uid))
        self.assertEqual(p.returncode, 0, describe(["admin", "install", "--dry-run"], p))
        self.assertIn("service account %s (UID %d)" % (USER_A, a.pw_uid), p.stdout)
        # A fine install, but no terminal to confirm it on and no --yes.
        self.refused("admin", "install", "--root", root, "--service-user", USER_A, want="add --yes")
        self.assertEqual(state([root]), before)
        self.assertIn("create", self.ok("admin", "install", "--root", root, "--service-user", USER_A, "--dry-run"))
        self.assertEqual(state([root]), before)
        # A unit of somebody else's is never overwritten.
        os.makedirs(root + "/etc/systemd/system")
        with open(root + UNIT, "w") as f:
            f.write("[Unit]\nDescription=not ours\n")
        before = state([root])
        self.refused("admin", "install", "--root", root, "--service-user", USER_A, "--yes",
                     want="%s exists and was not written by bk" % (root + UNIT))
        self.assertEqual(state([root]), before)
        self.refused("admin", "uninstall", "--root", root, "--yes", want="no system install to remove")

    def test_a_config_placed_by_hand_elsewhere_is_not_taken_over(self):
        root = os.path.join(self.base, "stage")
        os.makedirs(root + "/etc/gpubk")
        with open(root + "/etc/gpubk/config.json", "w") as f:
            json.dump({"schema_version": "gpubk.server.v1", "owner_uid": pwd.getpwnam(SVC).pw_uid,
                       "socket": "/srv/gpubk/run/broker.sock", "data_dir": "/srv/gpubk/data", "gpu_count": 2}, f)
        before = state([root])
        self.refused("admin", "install", "--root", root, "--yes",
                     want="serves the ledger in /srv/gpubk/data through /srv/gpubk/run/broker.sock")
        self.assertEqual(state([root]), before)

    def test_from_server_adopts_a_rootless_servers_ledger_and_policy(self):
        owner = Account.make(SVC, self.base)
        srv = Server(self.base, owner, test_now=None)
        self.addCleanup(srv.cleanup)
        srv.init("--gpu-count", "3", "--cpus", "8")
        srv.start()
        p = owner.bk("1", "30m", env=owner.env(BK_CONFIG_FILE=srv.config, BK_TEST_NOW=None))
        self.assertEqual(p.returncode, 0, describe(["1", "30m"], p))
        root = os.path.join(self.base, "stage")
        self.refused("admin", "install", "--root", root, "--from-server", srv.config, "--service-user", SVC,
                     "--yes", want="is running; stop its `bk server serve`")
        self.assertFalse(os.path.exists(root))
        self.assertEqual(srv.stop(), 0)
        self.ok("admin", "install", "--root", root, "--from-server", srv.config, "--service-user", SVC, "--yes")
        with open(root + "/etc/gpubk/config.json") as f:
            config = json.load(f)
        self.assertEqual((config["gpu_count"], config["host_cpus"], config["socket"], config["data_dir"]),
                         (3, 8, "/run/gpubk/broker.sock", "/var/lib/gpubk"))
        ledger = root + "/var/lib/gpubk/ledger.db"
        self.assertEqual(os.lstat(ledger).st_uid, owner.uid)
        with sqlite3.connect("file:%s?mode=ro" % ledger, uri=True) as db:
            self.assertEqual(db.execute("SELECT count(*) FROM reservations").fetchone()[0], 1)
        self.assertTrue(os.path.exists(srv.ledger))  # the server's own copy stays


@needs_root
class RealInstall(InstallCase):
    """Onto this machine, when it has no system install of its own."""

    def setUp(self):
        super().setUp()
        present = [p for p in SYSTEM_PATHS if os.path.lexists(p)]
        if present:
            self.skipTest("this host already has %s; the test never touches an install it did not make"
                          % ", ".join(present))
        self.addCleanup(self.remove_install)
        self.daemon = None

    def remove_install(self):
        if self.daemon is not None:
            self.daemon.cleanup()
        for path in SYSTEM_PATHS:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            elif os.path.lexists(path):
                os.unlink(path)

    def test_installed_unit_serves_two_accounts_and_uninstall_restores_the_host(self):
        before = state(SYSTEM_PATHS)
        out = self.ok("admin", "install", "--service-user", SVC, "--gpu-count", "2", "--no-start", "--yes")
        self.assertIn("not started (--no-start); start it with: systemctl daemon-reload", out)
        installed = state(SYSTEM_PATHS, shallow=("/var/lib/gpubk", "/run/gpubk"))

        self.daemon = SystemDaemon(self.base, Account.current(self.base, "root"), pwd.getpwnam(SVC))
        fake = build_fake_nvml(self.base)
        self.daemon.serve_env.update(fake or {})
        self.daemon.start()
        self.assertIn("READY=1", "".join(self.daemon.notified))
        if fake:
            self.daemon.wait_sampled()
        ids = set()
        for name in (USER_A, USER_B):
            who = Account.make(name, self.base)
            env = who.env(BK_TEST_NOW=None)  # no BK_CONFIG_FILE, no connection: /etc/gpubk applies
            p = who.bk("server", "status", "--json", env=env)
            self.assertEqual(p.returncode, 0, describe(["server", "status"], p))
            status = json.loads(p.stdout)
            self.assertEqual((status["deployment"], status["actor"]["username"]), ("system", name))
            p = who.bk("1", "30m", "--json", env=env)
            self.assertEqual(p.returncode, 0, describe(["1", "30m"], p))
            booked = json.loads(p.stdout)["reservation"]
            self.assertEqual(booked["username"], name)
            ids.add(booked["id"])
            if fake:
                p = who.bk("doctor", "--probe", "--require-monitor", "--strict", env=env)
                self.assertEqual(p.returncode, 0, describe(["doctor", "--probe"], p))
                self.assertIn("Deployment preflight: ready", p.stdout)
        self.assertEqual(len(ids), 2)

        out = self.ok("admin", "install", "--no-start", "--yes")
        self.assertIn("nothing to change", out)
        self.assertEqual(state(SYSTEM_PATHS, shallow=("/var/lib/gpubk", "/run/gpubk")), installed)

        self.assertEqual(self.daemon.stop(), 0, self.daemon.log())
        self.ok("admin", "uninstall", "--yes", "--purge-data")
        self.assertEqual(state(SYSTEM_PATHS), before)


if __name__ == "__main__":
    unittest.main()
