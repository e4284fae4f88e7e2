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

    def test_set_map_unmap(self):
        self.ok("admin", "cluster", "init", "gpu-a", "--yes")
        self.ok("admin", "cluster", "add", "gpu-b", "gpu-b.lab", "b" * 20, "--yes")
        self.assertIn("updated: gpu-b", self.ok("admin", "cluster", "set", "gpu-b", "--target", "gpu-b2",
                                                "--priority", "3", "--yes"))
        b = self.catalog()["nodes"][1]
        self.assertEqual((b["target"], b["priority"], b["node_id"]), ("gpu-b2", 3, "b" * 20))
        self.assertIn("unchanged", self.ok("admin", "cluster", "set", "gpu-b", "--priority", "3", "--yes"))
        self.assertIn("no SSH target", self.fails("admin", "cluster", "set", "gpu-a", "--target", "x", "--yes"))
        self.assertIn("at least one", self.fails("admin", "cluster", "set", "gpu-b", "--yes"))

        a_id = self.catalog()["nodes"][0]["node_id"]
        self.ok("admin", "cluster", "map", "alice", "gpu-a", "1001", "--yes")
        self.ok("admin", "cluster", "map", "alice", "gpu-b", "2042", "--yes")
        self.assertEqual(self.catalog()["principals"],
                         [{"id": "alice", "members": [{"node_id": a_id, "uid": 1001}, {"node_id": "b" * 20, "uid": 2042}]}])
        before = self.text()
        self.assertIn("already alice", self.fails("admin", "cluster", "map", "bob", "gpu-b", "2042", "--yes"))
        self.assertIn("UID must be a number", self.fails("admin", "cluster", "map", "bob", "gpu-b", "x", "--yes"))
        self.assertIn("not mapped", self.fails("admin", "cluster", "unmap", "gpu-b", "7", "--yes"))
        self.assertEqual(self.text(), before)
        self.ok("admin", "cluster", "unmap", "gpu-a", "1001", "--yes")
        self.ok("admin", "cluster", "unmap", "gpu-b", "2042", "--yes")
        self.assertNotIn("principals", self.catalog())  # the empty principal went with its last member

    def test_delete(self):
        self.ok("admin", "cluster", "init", "gpu-a", "--yes")
        p = self.bk("admin", "cluster", "delete")  # no terminal to ask at: kept
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertTrue(os.path.exists(self.path))
        out = self.ok("admin", "cluster", "delete", "--yes")
        self.assertIn("deleted: " + self.path, out)
        self.assertIn("reservations, usage history, and SSH configuration were unchanged", out)
        self.assertFalse(os.path.exists(self.path))
        self.assertIn("no cluster catalog at", self.fails("admin", "cluster", "delete", "--yes"))
