"""`bk admin cluster`: the catalog of GPU hosts (gpubk.cluster.v1), written atomically, checked strictly."""

import json
import os
import stat

from bktest import BkTestCase


class ClusterCatalog(BkTestCase):

    def setUp(self):
        super().setUp()
        self.path = os.path.join(self.tmp, "cluster.json")
        self.env["BK_CLUSTER_CONFIG"] = self.path

    def catalog(self):
        return json.loads(self.text())

    def text(self):
        with open(self.path) as f:
            return f.read()

    def test_init_add_disable_remove(self):
        self.assertIn("no cluster catalog at", self.fails("admin", "cluster", "status"))
        out = self.ok("admin", "cluster", "init", "gpu-a", "--yes")
        self.assertIn("written: %s (this host is gpu-a)" % self.path, out)
        self.assertEqual(stat.S_IMODE(os.stat(self.path).st_mode), 0o644)
        [local] = self.catalog()["nodes"]
        self.assertEqual((local["name"], local["transport"]), ("gpu-a", "local"))
        self.assertRegex(local["node_id"], r"^[0-9a-f]{20}$")
        self.assertIn("already exists", self.fails("admin", "cluster", "init", "gpu-a", "--yes"))
        self.ok("admin", "cluster", "add", "gpu-b", "gpu-b.lab", "b" * 20, "--priority", "5", "--timeout", "12",
                "--yes")
        doc = self.catalog()
        self.assertEqual(doc["schema_version"], "gpubk.cluster.v1")
        self.assertEqual(doc["nodes"][1], {"name": "gpu-b", "node_id": "b" * 20, "transport": "ssh",
                                           "target": "gpu-b.lab", "priority": 5, "timeout_seconds": 12.0})
        self.assertIn("disabled: gpu-b", self.ok("admin", "cluster", "disable", "gpu-b", "--yes"))
        self.assertFalse(self.catalog()["nodes"][1]["enabled"])
        self.assertIn("unchanged", self.ok("admin", "cluster", "disable", "gpu-b", "--yes"))
        self.assertEqual(json.loads(self.ok("admin", "cluster", "status", "--json")), self.catalog())
        self.ok("admin", "cluster", "enable", "gpu-b", "--yes")
        self.assertNotIn("enabled", self.catalog()["nodes"][1])  # the default is left out
        self.ok("admin", "cluster", "rm", "gpu-b", "--yes")
        self.assertEqual([n["name"] for n in self.catalog()["nodes"]], ["gpu-a"])
        self.assertIn("last host", self.fails("admin", "cluster", "rm", "gpu-a", "--yes"))

    def test_bad_input_changes_nothing(self):
        self.ok("admin", "cluster", "init", "gpu-a", "--yes")
        before = self.text()
        for args, says in [
            (["add", "--yes", "gpu-b", "--", "-oProxyCommand=sh", "b" * 20], "target must start with a letter or digit"),
            (["add", "--yes", "gpu-b", "host b", "b" * 20], "target may hold only"),
            (["add", "--yes", "gpu-b", "host", "B" * 20], "node_id must be 20 lowercase hex"),
            (["add", "--yes", "gpu-a", "host", "b" * 20], "already in the catalog"),
            (["add", "--yes", "gpu-b", "host", "b" * 20, "--timeout", "0"], "timeout_seconds must be 1-300"),
            (["add", "--yes", "gpu-b", "host", "b" * 20, "--priority", "x"], "--priority must be a number"),
            (["rm", "nope", "--yes"], "no host named nope"),
            (["frobnicate"], "unknown cluster command"),
        ]:
            with self.subTest(args=args):
                self.assertIn(says, self.fails("admin", "cluster", *args))
                self.assertEqual(self.text(), before)
        # Without --yes and without a terminal to ask at, nothing is written.
        p = self.bk("admin", "cluster", "add", "gpu-b", "host", "b" * 20)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--yes", p.stderr)
        self.assertEqual(self.text(), before)

    def test_a_catalog_others_could_write_is_refused(self):
        self.ok("admin", "cluster", "init", "gpu-a", "--yes")
        os.chmod(self.path, 0o666)
        self.assertIn("writable by others", self.fails("admin", "cluster", "status"))
        os.chmod(self.path, 0o644)
        link = os.path.join(self.tmp, "link.json")
        os.symlink(self.path, link)
        self.assertIn("must be a regular file", self.fails("admin", "cluster", "status", env={"BK_CLUSTER_CONFIG": link}))
        self.assertIn("must be absolute", self.fails("admin", "cluster", "status", env={"BK_CLUSTER_CONFIG": "x.json"}))
        with open(self.path, "w") as f:
            f.write('{"schema_version": "gpubk.cluster.v1", "nodes": [], "extra": 1}')
        self.assertIn("unknown key \"extra\"", self.fails("admin", "cluster", "status"))
