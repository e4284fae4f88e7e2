"""The Debian package (`make deb`): built by CPack from this build, checked by
lintian, then installed, upgraded over itself and removed with dpkg on this
machine, with bk, its completion and its manual used from the installed files.

Needs root, dpkg-deb, cpack and lintian; skipped in sanitizer builds (their
binary is not one to ship) and where a bk not from this package already owns
/usr/bin/bk (it is not ours to replace).
"""

import glob
import os
import shutil
import subprocess
import tempfile
import unittest

from bktest import BK_BIN

BUILD = os.path.dirname(os.path.realpath(BK_BIN))


def run(*args, **kw):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=kw.pop("timeout", 300), **kw)


def dpkg_excludes(prefix):
    """Whether dpkg is told to leave `prefix` out (slim container images drop the manual)."""
    for name in glob.glob("/etc/dpkg/dpkg.cfg.d/*"):
        try:
            with open(name) as f:
                if any(line.startswith("path-exclude") and prefix in line for line in f):
                    return True
        except OSError:
            continue
    return False


def owner_of(path):
    p = run("dpkg-query", "-S", path)
    return p.stdout.split(":")[0] if p.returncode == 0 else None


class DebianPackage(unittest.TestCase):
    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("installing a package needs root")
        for tool in ("dpkg", "dpkg-deb", "cpack", "lintian", "dpkg-shlibdeps"):
            if not shutil.which(tool):
                self.skipTest(tool + " is not installed (scripts/install-deps)")
        if os.environ.get("BK_E2E_SANITIZER"):
            self.skipTest("a sanitizer build is not packaged")
        if os.path.exists("/usr/bin/bk") and owner_of("/usr/bin/bk") != "gpubk":
            self.skipTest("/usr/bin/bk belongs to something else")
        self.tmp = tempfile.mkdtemp(prefix="bk-deb-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.addCleanup(lambda: run("dpkg", "--purge", "gpubk"))

    def build(self):
        out = os.path.join(self.tmp, "out")
        p = run("cpack", "-G", "DEB", "-B", out, "--config", os.path.join(BUILD, "CPackConfig.cmake"),
                cwd=BUILD, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        debs = glob.glob(os.path.join(out, "gpubk_*.deb"))
        self.assertEqual(len(debs), 1, os.listdir(out))
        return debs[0]

    def bk(self, *args, **env):
        e = {"PATH": "/usr/bin:/bin", "HOME": self.tmp, "BK_DATA_DIR": os.path.join(self.tmp, "data"),
             "BK_GPU_COUNT": "4", "LANG": "C.UTF-8", "TZ": "UTC"}
        e.update(env)
        return run("/usr/bin/bk", *args, env=e, timeout=60)

    def test_build_lint_install_upgrade_remove(self):
        deb = self.build()
        version = run(BK_BIN, "--version").stdout.split()[1]

        fields = {f: run("dpkg-deb", "-f", deb, f).stdout.strip() for f in ("Package", "Version", "Depends")}
        self.assertEqual(fields["Package"], "gpubk")
        self.assertEqual(fields["Version"], version + "-1")
        for lib in ("libc6", "libsqlite3-0", "libstdc++6"):
            self.assertIn(lib, fields["Depends"])  # computed by dpkg-shlibdeps

        contents = run("dpkg-deb", "-c", deb).stdout
        for path in ("./usr/bin/bk", "./usr/share/man/man1/bk.1.gz", "./usr/share/man/man1/bk-server.1.gz",
                     "./usr/share/man/man8/bk-admin.8.gz", "./usr/share/man/man5/gpubk-config.5.gz",
                     "./usr/share/man/man7/gpubk-protocol.7.gz", "./usr/share/bash-completion/completions/bk",
                     "./usr/share/zsh/vendor-completions/_bk", "./usr/share/fish/vendor_completions.d/bk.fish",
                     "./usr/share/gpubk/systemd/gpubk.service", "./usr/share/gpubk/skills/gpubk/SKILL.md",
                     "./usr/share/doc/gpubk/copyright", "./usr/share/doc/gpubk/changelog.Debian.gz",
                     "./usr/share/doc/gpubk/README.md"):
            self.assertIn(" " + path + "\n", contents + "\n", path)
        self.assertNotIn("/usr/local", contents)

        lint = run("lintian", "--no-tag-display-limit", deb, timeout=600)
        errors = [line for line in lint.stdout.split("\n") if line.startswith("E:")]
        self.assertEqual(errors, [], lint.stdout)

        p = run("dpkg", "-i", deb)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(self.bk("--version").stdout.strip(), "bk " + version)
        booked = self.bk("1", "30m")
        self.assertEqual(booked.returncode, 0, booked.stderr)
        self.assertIn("created", booked.stdout)
        complete = run("bash", "--norc", "--noprofile", "-c",
                       'source /usr/share/bash-completion/completions/bk; COMP_LINE="bk ren"; COMP_POINT=6; _bk; '
                       'echo "${COMPREPLY[@]}"', env={"PATH": "/usr/bin:/bin", "HOME": self.tmp})
        self.assertEqual(complete.stdout.strip(), "renew", complete.stderr)
        if not dpkg_excludes("/usr/share/man"):
            self.assertEqual(run("man", "-w", "bk").stdout.strip(), "/usr/share/man/man1/bk.1.gz")
        with open("/usr/share/gpubk/systemd/gpubk.service") as f:
            self.assertIn('ExecStart="/usr/bin/bk" server serve', f.read())
        installed = [f for f in run("dpkg", "-L", "gpubk").stdout.split("\n") if os.path.isfile(f)]
        self.assertIn("/usr/bin/bk", installed)

        p = run("dpkg", "-i", deb)  # the same version over itself, as an upgrade runs
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(self.bk("--version").returncode, 0)

        p = run("dpkg", "-r", "gpubk")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual([f for f in installed if os.path.exists(f)], [])
        # What bk wrote for a user is the user's: removing the package leaves it.
        self.assertTrue(os.path.exists(os.path.join(self.tmp, "data", "ledger.db")))


if __name__ == "__main__":
    unittest.main()
