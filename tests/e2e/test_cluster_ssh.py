"""`bk c` against real hosts: three network namespaces, each with its own sshd, daemon and node identity.

The client runs as a real account in a client namespace and reaches every host over OpenSSH
(cluster_hosts.py builds all of it). Needs root, iproute2 and OpenSSH (scripts/install-deps);
skipped otherwise, with the reason. Run:

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_cluster_ssh
"""

import calendar
import json
import os
import re
import secrets
import time
import unittest

from cluster_hosts import BK_BIN, ClusterHosts, unavailable
from server_fixture import describe

SKIP = unavailable()


class ClusterCase(unittest.TestCase):
    maxDiff = None

    # -- the client

    def explain(self, args, p):
        """The command's outcome, and what each host's sshd logged (why a login was refused)."""
        logs = "".join("--- sshd of %s\n%s" % (h.name, h.sshd_log()[-3000:]) for h in self.cluster.hosts)
        return describe(args, p) + logs

    def c_ok(self, *args, env=None, timeout=60):
        p = self.cluster.client_bk(*args, env=env, timeout=timeout)
        self.assertEqual(p.returncode, 0, self.explain(args, p))
        return p.stdout

    def c_json(self, *args, env=None, rc=0, timeout=60):
        p = self.cluster.client_bk(*args, env=env, timeout=timeout)
        self.assertEqual(p.returncode, rc, self.explain(args, p))
        try:
            return json.loads(p.stdout)
        except ValueError as e:
            self.fail("stdout is not one JSON document (%s):%s" % (e, describe(args, p)))

    # -- the hosts

    def rows(self, host):
        """Every reservation of the user on the host, past and cancelled ones too, as the host's own
        bk lists them (the daemon holds its ledger locked: the file cannot be read beside it)."""
        return self.cluster.reservations(host, history=True)

    def row_counts(self):
        return {h.name: len(self.rows(h)) for h in self.cluster.hosts}

    def host(self, name):
        [h] = [h for h in self.cluster.hosts if h.name == name]
        return h

    def node(self, doc, name):
        found = [n for n in doc["nodes"] if n["name"] == name]
        self.assertEqual(len(found), 1, "node %s in %s" % (name, json.dumps(doc, indent=1)))
        return found[0]

    def assertOnlyOn(self, before, name, added=1):
        """Exactly `added` new reservations on host `name` and none on any other host."""
        after = self.row_counts()
        want = dict(before)
        want[name] += added
        self.assertEqual(after, want)


@unittest.skipIf(SKIP, SKIP)
class OneCluster(ClusterCase):
    """Three healthy hosts for the class; the tests only read, or book on ledgers they check relatively."""

    @classmethod
    def setUpClass(cls):
        cls.cluster = ClusterHosts(3).setup()
        try:
            cls.cluster.catalog_all()
        except BaseException:
            cls.cluster.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.cluster.cleanup()

    def test_each_host_is_its_own_machine_over_ssh(self):
        # What the fixture promises: over ssh as the user, each alias reaches a host whose bk has
        # that host's node identity and talks to that host's daemon.
        ids = set()
        for h in self.cluster.hosts:
            p = self.cluster.ssh(h, BK_BIN, "agent", "context", "--compact")
            self.assertEqual(p.returncode, 0, describe(["ssh", h.name, "agent", "context"], p))
            doc = json.loads(p.stdout)
            self.assertEqual(doc["node"]["id"], h.node_id)
            self.assertEqual(doc["deployment"], "server", p.stdout)
            self.assertEqual(doc["node"]["hostname"], h.name, p.stdout)
            ids.add(doc["node"]["id"])
        self.assertEqual(len(ids), 3)
        with open("/etc/machine-id", encoding="utf-8") as f:
            self.assertNotIn(f.read().strip(), [h.machine_id for h in self.cluster.hosts])

    def test_probe_prints_the_reviewed_add_command_and_the_add_works(self):
        h = self.cluster.hosts[1]
        doc = self.c_json("c", "probe", "gpu-x", h.name, "--executable", BK_BIN, "--json")
        self.assertEqual(doc["kind"], "cluster-node-probe", doc)
        self.assertEqual(doc["node"]["id"], h.node_id, doc)
        argv = doc["add_argv"]
        self.assertEqual(argv[:8], ["sudo", "bk", "admin", "cluster", "add", "gpu-x", h.name, h.node_id], argv)
        self.assertEqual(argv[-1], "--yes", argv)
        self.assertEqual(argv[argv.index("--executable") + 1], BK_BIN, argv)

        out = self.c_ok("c", "probe", "gpu-x", h.name, "--executable", BK_BIN)
        lines = out.splitlines()
        self.assertIn("Reviewed add command:", lines, out)
        after = lines[lines.index("Reviewed add command:") + 1:]
        self.assertTrue(any("bk admin cluster add gpu-x %s %s" % (h.name, h.node_id) in line for line in after), out)

        # The reviewed command, run as printed (less sudo) on a catalog of its own, adds the host.
        own = os.path.join(self.cluster.user.home, "probe-catalog.json")
        self.addCleanup(lambda: os.path.exists(own) and os.remove(own))
        p = self.cluster.client_bk(*argv[2:], env={"BK_CLUSTER_CONFIG": own})
        self.assertEqual(p.returncode, 0, describe(argv[2:], p))
        with open(own, encoding="utf-8") as f:
            [node] = json.load(f)["nodes"]
        self.assertEqual((node["name"], node["target"], node["node_id"], node["executable"]),
                         ("gpu-x", h.name, h.node_id, BK_BIN))

    def test_status_lists_every_host_with_its_gpus(self):
        doc = self.c_json("c", "st", "--json")
        self.assertEqual(doc["kind"], "cluster-context", doc)
        self.assertEqual(sorted(n["name"] for n in doc["nodes"]), ["host1", "host2", "host3"])
        for h in self.cluster.hosts:
            n = self.node(doc, h.name)
            self.assertEqual(n["node_id"], h.node_id, n)
            self.assertIs(n["available"], True, n)
            self.assertFalse(n["error"], n)
            ctx = n["context"]
            self.assertEqual(ctx["node"]["id"], h.node_id, n)
            self.assertEqual(len(gpus_of(ctx)), 4, n)
            self.assertEqual(ctx["policy"]["gpu_count"], 4, n)

        out = self.c_ok("c", "st")
        for h in self.cluster.hosts:
            self.assertEqual(len([line for line in out.splitlines() if re.search(r"\b%s\b" % h.name, line)]), 1, out)

    def test_a_long_runtime_directory_still_reaches_every_host(self):
        # $XDG_RUNTIME_DIR/gpubk-ssh of 55 bytes: the control socket ssh binds while it starts a
        # master (the directory, "/", 40 hex, "." and 16 more) is longer than a socket path may be.
        # Connection sharing must then be left off, not every host fail.
        parent = os.path.join(self.cluster.user.home, "rt")
        runtime = parent + "-" + "x" * (55 - len("/gpubk-ssh") - len(parent) - 1)
        os.mkdir(runtime, 0o700)
        os.chown(runtime, self.cluster.user.uid, self.cluster.user.gid)
        self.assertEqual(len(runtime + "/gpubk-ssh"), 55)
        doc = self.c_json("c", "st", "--json", env={"XDG_RUNTIME_DIR": runtime})
        self.assertEqual([(n["name"], n["available"], n["error"]) for n in doc["nodes"]],
                         [(h.name, True, None) for h in self.cluster.hosts])

    def test_check_says_every_host_is_ready(self):
        doc = self.c_json("c", "check", "--json")
        self.assertEqual(doc["kind"], "cluster-check", doc)
        self.assertIs(doc["ready"], True, doc)
        for h in self.cluster.hosts:
            self.assertEqual(self.node(doc, h.name)["status"], "ready", doc)


def gpus_of(context):
    """The GPUs a node's agent context describes (its GPU advice, one entry per GPU)."""
    return context["gpu_advice"]["gpus"]


@unittest.skipIf(SKIP, SKIP)
class FreshCluster(ClusterCase):
    """A cluster of three healthy hosts per test (the tests book, or break hosts)."""

    def setUp(self):
        self.cluster = ClusterHosts(3).setup()
        self.addCleanup(self.cluster.cleanup)
        self.cluster.catalog_all()
        self.h1, self.h2, self.h3 = self.cluster.hosts

    # -- booking

    def test_recommendation_picks_the_free_host_and_the_booking_lands_there_only(self):
        # host1 is full for the next hour and host2 has one GPU left: only host3 can start 2 GPUs now.
        for h, count in ((self.h1, "4"), (self.h2, "3")):
            p = self.cluster.host_bk(h, "x", count, "1h", "--json")
            self.assertEqual(p.returncode, 0, describe(["x", count, "1h"], p))
        rec = self.c_json("c", "rec", "2", "1h", "--json")
        self.assertEqual(rec["kind"], "cluster-recommendation", rec)
        self.assertEqual(sorted(n["name"] for n in rec["nodes"]), ["host1", "host2", "host3"], rec)
        self.assertEqual(rec["selected_node"], "host3", rec)
        out = self.c_ok("c", "rec", "2", "1h")
        [best] = [line for line in out.splitlines() if line.startswith("host3")]
        self.assertIn("best", best, out)

        before = self.row_counts()
        doc = self.c_json("c", "2", "1h", "--json")
        self.assertEqual(doc["kind"], "cluster-booking-result", doc)
        self.assertEqual(doc["node"], {"name": "host3", "node_id": self.h3.node_id}, doc)
        self.assertTrue(doc["operation_id"], doc)
        self.assertOnlyOn(before, "host3")
        [mine] = self.cluster.reservations(self.h3)
        self.assertEqual(len(mine["gpus"]), 2, mine)
        self.assertEqual(doc["result"]["reservation"]["id"], mine["id"], doc)

    def test_at_host_books_on_exactly_that_host_and_renew_and_cancel_stay_there(self):
        before = self.row_counts()
        p = self.cluster.client_bk("@host2", "1", "30m")
        self.assertEqual(p.returncode, 0, describe(["@host2", "1", "30m"], p))
        self.assertOnlyOn(before, "host2")
        [mine] = self.cluster.reservations(self.h2)
        self.assertEqual((len(mine["gpus"]), mine["status"]), (1, "active"), mine)
        self.assertIn("on host2: %s" % mine["short_id"], p.stdout)

        # Renewed and cancelled by NODE/ID, on that host only.
        ref = "host2/" + mine["short_id"]
        doc = self.c_json("c", "renew", ref, "30m", "--json")
        self.assertEqual((doc["kind"], doc["node"]), ("cluster-mutation-result", "host2"), doc)
        [renewed] = self.cluster.reservations(self.h2)
        self.assertEqual(iso_seconds(renewed["end_at"]) - iso_seconds(mine["end_at"]), 1800, renewed)
        doc = self.c_json("c", "d", ref, "--json")
        self.assertEqual((doc["kind"], doc["node"]), ("cluster-mutation-result", "host2"), doc)
        self.assertEqual(self.cluster.reservations(self.h2, history=False), [])
        [gone] = self.rows(self.h2)
        self.assertEqual((gone["id"], gone["status"]), (mine["id"], "cancelled"), gone)
        self.assertOnlyOn(before, "host2")

    # -- failing hosts

    def test_a_stopped_host_is_reported_and_the_others_answer(self):
        # Warm first: a shared connection to host2 is up when it goes down.
        warm = self.c_json("c", "st", "--json")
        self.assertEqual([n["available"] for n in warm["nodes"]], [True] * 3, warm)
        self.cluster.stop_host(self.h2)
        doc = self.c_json("c", "st", "--json")
        self.assertIs(self.node(doc, "host2")["available"], False, doc)
        self.assertTrue(self.node(doc, "host2")["error"], doc)
        for name in ("host1", "host3"):
            self.assertIs(self.node(doc, name)["available"], True, doc)
        out = self.c_ok("c", "st")
        self.assertEqual(len([line for line in out.splitlines() if re.search(r"\bhost2\b", line)]), 1, out)
        check = self.c_json("c", "check", "--json", rc=3)
        self.assertIs(check["ready"], False, check)
        self.assertEqual([(n["name"], n["status"]) for n in check["nodes"]],
                         [("host1", "ready"), ("host2", "failed"), ("host3", "ready")], check)
        self.assertTrue(self.node(check, "host2")["error"], check)

        # With every host down, bk c st still answers, for each host, and says so by its exit status.
        self.cluster.stop_host(self.h1)
        self.cluster.stop_host(self.h3)
        doc = self.c_json("c", "st", "--json", rc=3)
        self.assertEqual([(n["name"], n["available"]) for n in doc["nodes"]],
                         [("host1", False), ("host2", False), ("host3", False)], doc)

    def test_a_slow_host_times_out_and_the_others_answer(self):
        self.cluster.catalog_set("host3", timeout=2)
        self.cluster.slow_host(self.h3)
        t0 = time.monotonic()
        doc = self.c_json("c", "st", "--json", timeout=30)
        took = time.monotonic() - t0
        self.assertLess(took, 2 + 4, "bk c st took %.1f s with a 2 s timeout" % took)
        n3 = self.node(doc, "host3")
        self.assertIs(n3["available"], False, doc)
        self.assertRegex(n3["error"], r"(?i)time(d)? ?out", doc)
        for name in ("host1", "host2"):
            self.assertIs(self.node(doc, name)["available"], True, doc)
        out = self.c_ok("c", "st", timeout=30)
        [line] = [line for line in out.splitlines() if re.search(r"\bhost3\b", line)]
        self.assertIn("timed out after 2s", line, out)

        # A booking meanwhile goes to a host that answers, in bounded time, and never to host3.
        t0 = time.monotonic()
        booked = self.c_json("c", "1", "1h", "--json", timeout=30)
        took = time.monotonic() - t0
        self.assertLess(took, 2 + 4, "bk c 1 1h took %.1f s with a 2 s timeout" % took)
        self.assertIn(booked["node"]["name"], ("host1", "host2"), booked)
        self.cluster.resume_host(self.h3)
        self.assertEqual(self.rows(self.h3), [])
        self.assertEqual(len(self.rows(self.host(booked["node"]["name"]))), 1)

    def test_a_replaced_host_key_is_refused_and_nothing_is_written(self):
        self.cluster.replace_host_key(self.h1)
        doc = self.c_json("c", "st", "--json")
        n1 = self.node(doc, "host1")
        self.assertIs(n1["available"], False, doc)
        self.assertRegex(n1["error"], r"(?i)host key|verification", doc)
        self.assertIs(self.node(doc, "host2")["available"], True, doc)
        before = self.row_counts()
        p = self.cluster.client_bk("@host1", "1", "30m")
        self.assertNotEqual(p.returncode, 0, describe(["@host1", "1", "30m"], p))
        self.assertRegex(p.stderr, r"(?i)host key|verification", describe(["@host1"], p))
        self.assertEqual(self.row_counts(), before)

    def test_a_node_id_that_does_not_match_is_refused_and_nothing_is_written(self):
        wrong = "f" * 20
        self.cluster.catalog_add(self.h2, name="impostor", node_id=wrong)
        before = self.row_counts()
        p = self.cluster.client_bk("@impostor", "1", "30m")
        self.assertNotEqual(p.returncode, 0, describe(["@impostor", "1", "30m"], p))
        self.assertIn("stable node identity does not match the catalog", p.stderr, describe(["@impostor"], p))
        self.assertEqual(self.row_counts(), before)
        doc = self.c_json("c", "st", "--json")
        self.assertIs(self.node(doc, "impostor")["available"], False, doc)
        self.assertIn("stable node identity does not match the catalog", self.node(doc, "impostor")["error"])
        self.assertIs(self.node(doc, "host2")["available"], True, doc)

    def test_a_connection_dropped_after_the_commit_of_bk_at_node_is_resolved_on_that_host(self):
        self.cluster.catalog_set("host2", executable=self.cluster.drop_after_commit(self.h2))
        self.cluster.arm_drop(self.h2)
        before = self.row_counts()
        op = "drop-%s" % secrets.token_hex(4)
        doc = self.c_json("@host2", "1", "30m", "--op-id", op, "--json")
        self.assertFalse(os.path.exists(self.h2.drop_marker), "the wrapper never dropped a connection")
        self.assertOnlyOn(before, "host2")
        [row] = self.rows(self.h2)
        # The host's own booking document (its answer to the replay), the shape a caller gets
        # when nothing is lost.
        self.assertEqual((doc["kind"], doc["reservation"]["id"]), ("booking_result", row["id"]), doc)
        # Asked again with the same operation ID, the host replays the one booking.
        again = self.c_json("@host2", "1", "30m", "--op-id", op, "--json")
        self.assertIn(row["id"], json.dumps(again), again)
        self.assertOnlyOn(before, "host2")

    def test_a_connection_dropped_after_the_commit_of_bk_c_is_resolved_on_that_host(self):
        # Every host drops its first answer to a write: whichever bk c chooses, it must find the
        # booking there by its operation ID, not book again there or anywhere else.
        for h in self.cluster.hosts:
            self.cluster.catalog_set(h.name, executable=self.cluster.drop_after_commit(h))
            self.cluster.arm_drop(h)
        before = self.row_counts()
        op = "drop-%s" % secrets.token_hex(4)
        doc = self.c_json("c", "1", "1h", "--op-id", op, "--json")
        self.assertEqual(doc["kind"], "cluster-booking-result", doc)
        self.assertEqual(doc["operation_id"], op, doc)
        chosen = doc["node"]["name"]
        dropped = [h.name for h in self.cluster.hosts if not os.path.exists(h.drop_marker)]
        self.assertEqual(dropped, [chosen], doc)
        self.assertOnlyOn(before, chosen)
        [row] = self.rows(self.host(chosen))
        self.assertIn(row["id"], json.dumps(doc), doc)
        # The same request again goes back to that host (found by its operation ID) and books nothing.
        again = self.c_json("c", "1", "1h", "--op-id", op, "--json")
        self.assertEqual(again["node"]["name"], chosen, again)
        self.assertOnlyOn(before, chosen)

    def test_hostile_arguments_stay_one_word_on_the_remote(self):
        pwned = "/tmp/bkc-pwned-%s" % self.cluster.tag
        self.addCleanup(lambda: os.path.exists(pwned) and os.remove(pwned))
        # An operation ID of shell syntax is refused by the client, by the hosts' own rule on
        # characters, before any host is asked; nothing runs anywhere.
        before = self.row_counts()
        op = "$(touch %s); x" % pwned
        p = self.cluster.client_bk("@host1", "1", "30m", "--op-id", op, "--json")
        self.assertEqual(p.returncode, 2, self.explain(["@host1", "--op-id", op], p))
        self.assertIn("operation ID contains unsupported characters", json.loads(p.stdout)["error"]["message"])
        self.assertFalse(os.path.exists(pwned), self.explain(["@host1", "--op-id", op], p))
        self.assertEqual(self.row_counts(), before)

        # A job command of shell syntax: booked, and stored on the host exactly as given.
        job = ["/bin/sh", "-c", "echo \"a;b\" '$(touch %s)' `touch %s`; exit 0" % (pwned, pwned),
               "two words", "it's", "$(touch %s)" % pwned, ";", "a\\b", "*", "", "--op-id", "x\ny"]
        p = self.cluster.client_bk("@host1", "1", "30m", "--", *job)
        self.assertEqual(p.returncode, 0, self.explain(["@host1", "1", "30m", "--", *job], p))
        self.assertFalse(os.path.exists(pwned), self.explain(["@host1", "--", "..."], p))
        self.assertOnlyOn(before, "host1")
        specs = job_specs(self.h1)
        self.assertEqual(len(specs), 1, specs)
        self.assertEqual(specs[0]["argv"], job)


def iso_seconds(text):
    return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%SZ"))


def job_specs(host):
    """The private job specs of the user on `host` (where bk keeps a booked command's argv)."""
    d = os.path.join(host.user.home, ".local", "state", "gpubk", "jobs", "specs")
    out = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        with open(os.path.join(d, name), encoding="utf-8") as f:
            out.append(json.load(f))
    return out


if __name__ == "__main__":
    unittest.main()
