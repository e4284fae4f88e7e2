"""`bk skill install|status|show|path` end to end, in a temporary HOME per
test: where each agent's copy lands, file modes, refusals (symlinks, foreign
directories), rollback of a failed staged replacement, and the content of the
bundled Skill itself.

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_skill
"""

import json
import os
import re
import stat
import subprocess

from bktest import BK_BIN, SOURCE_DIR, BkTestCase

SKILL_DIR = os.path.join(SOURCE_DIR, "skills", "gpubk")


def front_matter(text):
    """The YAML front matter of a SKILL.md as a dict of its top-level scalar keys."""
    assert text.startswith("---\n"), text[:20]
    end = text.index("\n---\n", 4)
    fields = {}
    for line in text[4:end].splitlines():
        m = re.match(r"^([a-z-]+):\s*(.*)$", line)
        if m:
            fields[m.group(1)] = m.group(2).strip()
    return fields, text[end + 5:]


def tree(root):
    """{relative path: (kind, mode)} of everything under root, symlinks not followed."""
    out = {}
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(base, name)
            st = os.lstat(path)
            kind = "dir" if stat.S_ISDIR(st.st_mode) else "link" if stat.S_ISLNK(st.st_mode) else "file"
            out[os.path.relpath(path, root)] = (kind, stat.S_IMODE(st.st_mode))
    return out


class SkillInstallTest(BkTestCase):
    def setUp(self):
        super().setUp()
        self.home = self.env["HOME"]
        self.codex = os.path.join(self.home, ".agents", "skills", "gpubk")
        self.claude = os.path.join(self.home, ".claude", "skills", "gpubk")

    def install(self, *args, env=None, umask=None):
        e = dict(self.env)
        e.update(env or {})
        p = subprocess.run([BK_BIN, "skill", "install", *args], env=e, capture_output=True, text=True, cwd=self.tmp,
                           stdin=subprocess.DEVNULL, preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)
        self.last = p
        return p

    def installed(self, *args, dest, **kw):
        p = self.install(*args, **kw)
        self.assertEqual(p.returncode, 0, self._describe(("skill", "install") + args, p))
        self.assertEqual(p.stdout, "installed skill: %s\n" % dest)
        self.assertEqual(p.stderr, "")

    def refused_install(self, *args, message, env=None):
        p = self.install(*args, env=env)
        d = self._describe(("skill", "install") + args, p)
        self.assertEqual(p.returncode, 2, d)
        self.assertEqual(p.stdout, "", d)
        self.assertTrue(p.stderr.startswith("bk: "), d)
        self.assertIn(message, p.stderr, d)

    def assertIsBundle(self, dest):
        files = {rel for rel, (kind, _) in tree(dest).items() if kind == "file"}
        self.assertEqual(files, {"SKILL.md", "references/protocol.md", "agents/openai.yaml"})
        for rel, (kind, mode) in tree(dest).items():
            self.assertEqual(mode, 0o644 if kind == "file" else 0o755, rel)
            self.assertEqual(os.lstat(os.path.join(dest, rel)).st_uid, os.getuid(), rel)
        self.assertEqual(stat.S_IMODE(os.lstat(dest).st_mode), 0o755)
        for rel in ("SKILL.md", "references/protocol.md", "agents/openai.yaml"):
            with open(os.path.join(dest, rel), encoding="utf-8") as f:
                self.assertEqual(f.read(), self.ok("skill", "show", rel), rel)
            with open(os.path.join(SKILL_DIR, rel), encoding="utf-8") as f:
                self.assertEqual(self.ok("skill", "show", rel), f.read(), "the binary bundles the source tree")

    def assertNoLeftovers(self, dest):
        self.assertEqual([n for n in os.listdir(os.path.dirname(dest)) if n != "gpubk"], [])

    # ------------------------------------------------------------------ installing

    def test_codex_and_claude_destinations(self):
        self.installed("--agent", "codex", dest=self.codex)
        self.assertIsBundle(self.codex)
        self.installed("--agent", "claude", dest=self.claude, umask=0o077)  # the umask must not matter
        self.assertIsBundle(self.claude)
        # Nothing else is written: no AGENTS.md, CLAUDE.md, shell rc or MCP configuration.
        self.assertEqual(sorted(os.listdir(self.home)), [".agents", ".claude"])
        self.assertEqual(sorted(tree(os.path.join(self.home, ".claude"))),
                         ["skills", "skills/gpubk", "skills/gpubk/SKILL.md", "skills/gpubk/agents",
                          "skills/gpubk/agents/openai.yaml", "skills/gpubk/references",
                          "skills/gpubk/references/protocol.md"])
        self.assertNoDataDir()
        self.assertEqual(self.ok("skill", "path", "--agent", "claude"), self.claude + "\n")
        self.assertEqual(self.ok("skill", "path"), self.codex + "\n")

    def test_works_with_a_broken_configuration(self):
        # The skill needs no configuration; an agent may install it to learn how to fix one.
        broken = {"BK_GPU_COUNT": "0"}
        self.assertIn("gpu_count must be between", self.fails("l", env=broken))
        self.installed("--agent", "codex", dest=self.codex, env=broken)
        self.assertIsBundle(self.codex)
        self.assertIn("name: gpubk", self.ok("skill", "show", env=broken))

    def test_existing_copy_needs_force_and_force_replaces_all_of_it(self):
        self.installed("--agent", "claude", dest=self.claude)
        self.refused_install("--agent", "claude", message="skill already exists: %s; pass --force" % self.claude)
        with open(os.path.join(self.claude, "SKILL.md"), "w") as f:
            f.write("---\nname: gpubk\ndescription: an older GPUBK skill\n---\nold\n")
        with open(os.path.join(self.claude, "references", "stale.md"), "w") as f:
            f.write("stale")
        self.assertIn("differs", self.ok("skill", "status"))
        self.installed("--agent", "claude", "--force", dest=self.claude)
        self.assertIsBundle(self.claude)
        self.assertNoLeftovers(self.claude)

    def test_refuses_foreign_directories_even_with_force(self):
        os.makedirs(self.codex)
        with open(os.path.join(self.codex, "SKILL.md"), "w") as f:
            f.write("---\nname: my-own-skill\ndescription: not GPUBK\n---\n")
        self.refused_install("--agent", "codex", "--force", message="refusing to replace an unrecognized")
        with open(os.path.join(self.codex, "SKILL.md")) as f:
            self.assertIn("my-own-skill", f.read())
        self.assertIn("foreign", self.ok("skill", "status"))
        self.refused_install("--target", os.path.join(self.home, "somewhere", "other-name"), message="named gpubk")

    def test_refuses_symlinks_on_the_way_and_at_the_destination(self):
        elsewhere = os.path.join(self.tmp, "elsewhere")
        os.makedirs(os.path.join(elsewhere, "skills"))
        os.symlink(elsewhere, os.path.join(self.home, ".claude"))
        self.refused_install("--agent", "claude", "--force", message="symlink")
        self.assertEqual(os.listdir(os.path.join(elsewhere, "skills")), [])

        os.makedirs(os.path.dirname(self.codex))
        os.symlink(elsewhere, self.codex)
        self.refused_install("--agent", "codex", "--force", message="refusing to replace a symlink")
        self.assertTrue(os.path.islink(self.codex))
        self.assertIn("symlink", self.ok("skill", "status"))

    def test_status_reports_every_location(self):
        out = self.ok("skill", "status")
        self.assertEqual(len(out.splitlines()), 3, out)
        self.assertTrue(all(line.rstrip().endswith("absent") for line in out.splitlines()), out)
        legacy_home = os.path.join(self.tmp, "codex-home")
        self.installed("--target", os.path.join(legacy_home, "skills", "gpubk"),
                       dest=os.path.join(legacy_home, "skills", "gpubk"))
        self.installed("--agent", "claude", dest=self.claude)
        doc = self.json("skill", "status", "--json", env={"CODEX_HOME": legacy_home})
        self.assertEqual(doc["kind"], "skill-status")
        states = {i["agent"]: (i["path"], i["state"]) for i in doc["installations"]}
        self.assertEqual(states, {
            "codex": (self.codex, "absent"),
            "codex-legacy": (os.path.join(legacy_home, "skills", "gpubk"), "current"),
            "claude": (self.claude, "current"),
        })

    def test_bad_invocations(self):
        self.fails("skill")
        self.fails("skill", "frobnicate")
        self.fails("skill", "install", "--agent", "cursor")
        self.fails("skill", "install", "--agent", "codex", "--target", "/tmp/x/gpubk")
        self.fails("skill", "show", "nope.md")
        self.assertEqual(os.listdir(self.home), [])


class SkillContentTest(BkTestCase):
    def skill(self):
        return self.ok("skill", "show")

    def test_front_matter(self):
        fields, body = front_matter(self.skill())
        self.assertEqual(fields["name"], "gpubk")
        self.assertRegex(fields["name"], r"^[a-z0-9]+(-[a-z0-9]+)*$")
        self.assertLessEqual(len(fields["name"]), 64)
        self.assertTrue(20 < len(fields["description"]) <= 1024, len(fields["description"]))
        self.assertLess(len(body.splitlines()), 500)

    def test_maps_natural_requests_to_commands(self):
        text = self.skill()
        for needle in ("--gpu 1", "bk 1 2h --gpu 1", "not `bk 1 2h`", "bk agent recommend", "bk slots",
                       "bk renew REF 30m", "bk x 1 2h --gpu 1", "--op-id", "same ID", "status: \"exists\"",
                       "bk agent operation", "CUDA_VISIBLE_DEVICES", "references/protocol.md", "--compact",
                       "`--cpus 4 --ram 32g`", "--mem 24g", "reservation.id", "error.message"):
            self.assertIn(needle, text)

    def test_every_command_it_mentions_exists(self):
        text = self.skill() + self.ok("skill", "show", "references/protocol.md")
        checked = set()
        for span in re.findall(r"`(bk [^`]+)`", text):
            words = span.split()
            if len(words) < 2 or words[1][0].isdigit() or words[1] in ("N", "COUNT"):
                continue  # the booking grammar `bk N DUR`
            cmd = words[1:3] if words[1] in ("agent", "skill") and len(words) > 2 and words[2].isalpha() else words[1:2]
            key = tuple(cmd)
            if key in checked:
                continue
            checked.add(key)
            p = self.bk(*cmd, "--help")
            self.assertEqual(p.returncode, 0, "%s (from `%s`)%s" % (key, span, self._describe(cmd, p)))
        self.assertGreater(len(checked), 8)

    def test_managed_launch_claim_matches_the_binary(self):
        p = self.bk("x", "1", "30m", "--gpu", "0", "--", "true")
        launches = p.returncode == 0
        says_no = "does not launch commands" in self.skill()
        self.assertNotEqual(launches, says_no,
                            "SKILL.md's managed-launch section is out of date with `bk x ... -- CMD`:"
                            + self._describe(("x", "1", "30m", "--", "true"), p))

    def test_shell_visibility_claim_matches_the_binary(self):
        has_hook = self.bk("shell", "--help").returncode == 0
        mentions_refresh = "bk_gpu_refresh" in self.skill()
        says_none = "no shell hook" in self.skill()
        self.assertEqual((has_hook, has_hook), (mentions_refresh, not says_none),
                         "SKILL.md's shell-visibility advice is out of date with `bk shell`")

    def test_protocol_reference_examples_are_real_documents(self):
        text = self.ok("skill", "show", "references/protocol.md")
        blocks = re.findall(r"```json\n(.*?)\n```", text, re.S)
        self.assertGreaterEqual(len(blocks), 10)
        kinds = set()
        for b in blocks:
            doc = json.loads(b)
            self.assertEqual(doc["schema_version"], "bk.agent.v1")
            kinds.add(doc["kind"])
        self.assertEqual(kinds, {"context", "recommendation", "booking_result", "operation_status",
                                 "cancellation_result", "reservations", "error"})

    def test_codex_metadata(self):
        yaml = self.ok("skill", "show", "agents/openai.yaml")
        self.assertIn('display_name: "GPUBK"', yaml)
        self.assertIn("$gpubk", yaml)
