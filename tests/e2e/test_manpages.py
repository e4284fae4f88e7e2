"""The manual pages and the other files the build makes for installing (`bk __generate`).

They are made by the bk just built; here they are checked as a reader and
the tools see them: groff renders every page without a warning, man(1)
shows them, the compressed copies match, and the build's copies are what
this bk makes now (nothing stale). That every command, option, key and
method is in them is unit-tested beside the generator.
"""

import gzip
import os
import shutil
import subprocess
import tempfile
import unittest

from bktest import BK_BIN

GENERATED = os.path.join(os.path.dirname(os.path.realpath(BK_BIN)), "share")
PAGES = ["bk.1", "bk-server.1", "bk-admin.8", "gpubk-config.5", "gpubk-protocol.7"]


class ManPages(unittest.TestCase):
    def setUp(self):
        if not os.path.isdir(os.path.join(GENERATED, "man")):
            self.fail("no generated pages in %s; build the generated_docs target" % GENERATED)

    def read(self, page):
        with open(os.path.join(GENERATED, "man", page), encoding="utf-8") as f:
            return f.read()

    def test_the_builds_pages_are_what_this_bk_makes(self):
        with tempfile.TemporaryDirectory() as out:
            first = self.read("bk.1").split("\n")[1]  # .TH line: the build's date
            date = first.split('"')[1]
            p = subprocess.run([BK_BIN, "__generate", out, "--date", date, "--bk-path", "/usr/bin/bk"],
                               capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": out})
            self.assertEqual(p.returncode, 0, p.stderr)
            for page in PAGES:
                with open(os.path.join(out, "man", page), encoding="utf-8") as f:
                    self.assertEqual(f.read(), self.read(page), page + " is stale")
                with gzip.open(os.path.join(GENERATED, "man", page + ".gz"), "rt", encoding="utf-8") as f:
                    self.assertEqual(f.read(), self.read(page), page + ".gz")
            for name in ("bk", "_bk", "bk.fish"):
                self.assertTrue(os.path.getsize(os.path.join(out, "completion", name)) > 0)
            with open(os.path.join(out, "systemd", "gpubk.service")) as f:
                unit = f.read()
            self.assertIn('ExecStart="/usr/bin/bk" server serve', unit)

    @unittest.skipUnless(shutil.which("groff"), "groff is not installed")
    def test_groff_renders_every_page_without_a_warning(self):
        for page in PAGES:
            p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", os.path.join(GENERATED, "man", page)],
                               capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stderr), (0, ""), page)

    @unittest.skipUnless(shutil.which("man"), "man is not installed")
    def test_man_shows_the_commands_as_a_reader_sees_them(self):
        env = {"PATH": "/usr/bin:/bin", "MANWIDTH": "80", "LANG": "C.UTF-8", "MAN_KEEP_FORMATTING": ""}
        p = subprocess.run(["man", "-l", os.path.join(GENERATED, "man", "bk.1")], capture_output=True, text=True,
                           env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        text = p.stdout
        for needle in ("bk renew", "--op-id", "SEVERAL HOSTS", "bk completion", "EXIT STATUS", "bk-admin(8)"):
            self.assertIn(needle, text)
        p = subprocess.run(["man", "-l", os.path.join(GENERATED, "man", "gpubk-config.5")], capture_output=True,
                           text=True, env=env)
        self.assertIn("slot_minutes", p.stdout)
        self.assertIn("BK_SLOT_MINUTES", p.stdout)


if __name__ == "__main__":
    unittest.main()
