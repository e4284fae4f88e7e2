"""`bk c` and `bk @NODE` without SSH hosts: this host as the catalog's local node (the real bk
run as a child, as on a cluster) next to a host that cannot be reached. The real-hosts tests over
OpenSSH are test_cluster_ssh.py."""

import calendar
import os
import time

from bktest import BkTestCase


def iso_seconds(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))


class ClusterLocal(BkTestCase):

    def setUp(self):
        super().setUp()
        self.use_sim()
        self.catalog = os.path.join(self.tmp, "cluster.json")
        self.env["BK_CLUSTER_CONFIG"] = self.catalog

    def make_catalog(self, unreachable=True):
        self.ok("admin", "cluster", "init", "gpu-a", "--yes")
        if unreachable:
            # Never resolves: ssh fails at once, as for a host that is down.
            self.ok("admin", "cluster", "add", "gpu-z", "gpu-z.invalid", "f" * 20, "--timeout", "5", "--yes")

    def test_without_a_catalog_it_says_how_to_make_one(self):
        msg = self.refused("c", contains="cluster mode is not configured: " + self.catalog)
        self.assertIn("bk c probe NODE HOST", msg)
        self.refused_json("c", "rec", "1", "1h", "--json", contains="cluster mode is not configured")
        self.refused("@gpu-a", "1", "1h", contains="cluster mode is not configured")

    def test_status_recommend_book_edit_cancel_across_hosts(self):
        self.make_catalog()
        doc = self.json("c", "--json")
        self.assertEqual((doc["schema_version"], doc["kind"]), ("gpubk.cluster.v1", "cluster-context"))
        a, z = doc["nodes"]
        self.assertEqual((a["name"], a["available"], a["error"]), ("gpu-a", True, None))
        self.assertEqual(a["context"]["kind"], "context")
        self.assertEqual(a["context"]["node"]["id"], a["node_id"])
        self.assertEqual((z["name"], z["available"], z["context"]), ("gpu-z", False, None))
        self.assertIn("gpu-z.invalid", z["error"])
        table = self.ok("c")
        self.assertRegex(table, r"gpu-a\s+\S+\s+ready\s+4\s+0\s+0")
        self.assertRegex(table, r"gpu-z\s+-\s+unreachable")

        rec = self.json("c", "rec", "2", "1h", "--json")
        self.assertEqual((rec["kind"], rec["selected_node"], rec["selected_write_compatible"]),
                         ("cluster-recommendation", "gpu-a", True))
        offline = [n for n in rec["nodes"] if n["name"] == "gpu-z"][0]
        self.assertIn("gpu-z.invalid", offline["error"])
        self.assertRegex(self.ok("c", "rec", "2", "1h"), r"gpu-a\s+best\s+yes\s+\d,\d")
        self.assertEqual(self.reservations(), [])  # a recommendation books nothing

        booked = self.json("c", "2", "1h", "--json")
        self.assertEqual((booked["kind"], booked["node"]["name"]), ("cluster-booking-result", "gpu-a"))
        res = booked["result"]["reservation"]
        [mine] = self.reservations()
        self.assertEqual((mine["id"], mine["gpus"]), (res["id"], res["gpus"]))
        self.assertEqual(booked["result"]["status"], "created")
        table = self.ok("c")
        self.assertRegex(table, r"gpu-a/%s\s+\*" % res["short_id"])
        self.assertRegex(table, r"gpu-a\s+\S+\s+ready\s+4\s+2\s+1")  # two GPUs held now, one booking mine

        at = self.json("@gpu-a", "x", "1", "30m", "-t", "+2h", "--json")
        self.assertEqual(at["kind"], "booking_result")  # the host's own document, not an envelope
        self.assertEqual(at["reservation"]["mode"], "exclusive")
        self.assertEqual(len(self.reservations()), 2)
        self.assertRegex(self.ok("c"), r"gpu-a\s+\S+\s+ready\s+4\s+2\s+2")  # the later one holds nothing yet

        ref = "gpu-a/" + res["short_id"]
        self.assertRegex(self.ok("c", "e", ref, "-d", "2h"), r"^updated: %s GPU=" % ref)
        edited = self.reservations()[0]
        self.assertEqual(iso_seconds(edited["end_at"]) - iso_seconds(edited["start_at"]), 7200)
        self.assertIn("cancelled: " + ref, self.ok("c", "d", ref))
        self.assertEqual([r["id"] for r in self.reservations()], [at["reservation"]["id"]])

        fails = self.bk("@gpu-z", "1", "30m")
        self.assertEqual(fails.returncode, 2, fails.stderr)
        self.assertIn("cluster node gpu-z:", fails.stderr)
        self.assertEqual(len(self.reservations()), 1)

    def test_a_retry_with_the_same_op_id_books_once(self):
        self.make_catalog(unreachable=False)
        first = self.json("c", "1", "1h", "--op-id", "exp-7", "--json")
        again = self.json("c", "1", "1h", "--op-id", "exp-7", "--json")
        self.assertEqual(first["result"]["reservation"]["id"], again["result"]["reservation"]["id"])
        self.assertEqual(len(self.reservations()), 1)

    def test_a_retry_is_refused_while_a_host_cannot_answer(self):
        self.make_catalog()
        # Not bad input: a host is down. SSH's connection-sharing directory may appear; no booking may.
        msg = self.fails("c", "1", "1h", "--op-id", "exp-8")
        self.assertIn("cannot safely route this retry because operation status is unavailable on 1 node(s): gpu-z",
                      msg)
        self.assertEqual(self.reservations(), [])

    def test_check(self):
        self.make_catalog()
        p = self.bk("c", "check")
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("Cluster check: not ready | 2 enabled, 0 disabled", p.stdout)
        self.assertRegex(p.stdout, r"pass gpu-a: v\S+ as \S+:\d+ clock 0s GPUs=4")
        self.assertIn("fail gpu-z: ", p.stdout)
        self.ok("admin", "cluster", "disable", "gpu-z", "--yes")
        doc = self.json("c", "check", "--json")
        self.assertTrue(doc["ready"])
        self.assertEqual(doc["summary"], {"configured": 2, "enabled": 1, "disabled": 1, "failed": 0, "warnings": 0})
        self.refused("@gpu-z", "1", "1h", contains="cluster node 'gpu-z' is disabled by the administrator")

    def test_bad_input_changes_nothing(self):
        self.make_catalog()
        for args, says in [
            (["c", "0", "1h"], "GPU count must be at least 1"),
            (["c", "1", "1h", "--"], "-- must be followed by a job command"),
            (["c", "rec", "1", "1h", "--", "ls"], "cluster recommend does not accept a job command"),
            (["c", "x", "1", "1h", "--mode", "s"], "cluster booking mode was specified more than once"),
            (["c", "1", "1h", "--gpu", "1,1"], "--gpu"),
            (["c", "1", "1h", "--op-id", " "], "--op-id must not be empty"),
            (["c", "1", "1h", "--op-id", "$(id); x"], "operation ID contains unsupported characters"),
            (["c", "d", "gpu-a/abc", "--op-id", "a b"], "operation ID contains unsupported characters"),
            (["c", "e", "gpu-a/abc"], "cluster edit requires at least one changed field"),
            (["c", "d", "abc"], "use a node-qualified reservation ID such as gpu-a/1a2b3c"),
            (["c", "d", "gpu-q/abc"], "no cluster node named 'gpu-q'"),
            (["c", "frob"], "unknown cluster command: frob"),
            (["@gpu-a", "l"], "bk @gpu-a currently accepts booking commands only"),
            (["@gpu-q", "1", "1h"], "no cluster node named 'gpu-q'"),
            (["c", "u", "-n", "0"], "--limit must be 1-200000"),
        ]:
            with self.subTest(args=args):
                self.refused(*args, contains=says)

    def test_usage_across_hosts(self):
        self.make_catalog()
        doc = self.json("c", "u", "--json")
        self.assertEqual(doc["kind"], "cluster-usage")
        self.assertEqual([n["name"] for n in doc["nodes"]], ["gpu-a", "gpu-z"])
        self.assertEqual(doc["nodes"][0]["usage"]["kind"], "usage-users")
        self.assertFalse(doc["nodes"][1]["available"])
        p = self.bk("c", "u")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("Cluster usage |", p.stdout)
        self.assertIn("warning: gpu-z: ", p.stderr)

    def test_help(self):
        out = self.ok("c", "-h")
        for words in ("bk c rec N DUR", "bk @NODE N DUR", "bk c d NODE/ID", "bk c probe NAME HOST"):
            self.assertIn(words, out)
        self.assertIn("--mode MODE", self.ok("c", "rec", "help"))


if __name__ == "__main__":
    import unittest
    unittest.main()
