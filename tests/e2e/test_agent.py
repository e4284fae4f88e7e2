"""`bk agent ...` and `bk mcp` end to end: the bk.agent.v1 documents an agent
reads, the compact form, retry-safe writes, and the MCP server over stdio (a
minimal JSON-RPC client here; tests/mcp drives it with the official SDK).

    cd tests/e2e && BK_BIN=/path/to/bk python3 -m unittest -v test_agent

The shared-server class needs root (it creates Unix accounts, like
test_server_users) and is skipped otherwise.
"""

import json
import os
import subprocess
import time
import unittest

from bktest import BK_BIN, BkTestCase
from server_fixture import (OWNER, USER_A, Account, Server, bk_ok, describe, ensure_user, is_root, make_base_dir,
                            remove_tree)

SEED_COMMANDS = (
    ("agent", "context", "--compact"),
    ("agent", "recommend", "1", "2h", "--gpu", "1", "--mem", "24g", "--cpus", "4", "--ram", "32g", "--compact"),
    ("1", "2h", "--gpu", "1", "--mem", "24g", "--cpus", "4", "--ram", "32g", "--op-id", "experiment-001", "--json"),
)


class AgentCommandsTest(BkTestCase):
    gpu_count = 8

    def one_line(self, *args, rc=0, env=None):
        """Runs a --compact command: exactly one line of JSON, nothing on stderr."""
        p = self.bk(*args, env=env)
        d = self._describe(args, p)
        self.assertEqual(p.returncode, rc, d)
        self.assertEqual(p.stderr, "", d)
        self.assertEqual(len(p.stdout.splitlines()), 1, d)
        return json.loads(p.stdout)

    def test_seed_commands_verbatim_on_a_simulated_8_gpu_host(self):
        self.use_sim(gpus=[{"index": i, "name": "NVIDIA A100-SXM4-80GB", "uuid": "GPU-%08x-0000-4000-8000-%012x" % (i, i),
                            "memory_used_mb": 0, "memory_total_mb": 81920, "utilization_percent": 0, "processes": []}
                           for i in range(8)])
        docs = [self.one_line(*cmd, env={"BK_GPU_COUNT": None}) for cmd in SEED_COMMANDS]
        ctx, rec, booked = docs
        for d in docs:
            self.assertEqual(d["schema_version"], "bk.agent.v1")
        self.assertEqual(ctx["kind"], "context")
        self.assertEqual(ctx["policy"]["gpu_count"], 8)
        self.assertEqual(len(ctx["gpu_advice"]["gpus"]), 8)
        self.assertEqual(ctx["gpu_advice"]["gpus"][1]["uuid"], "GPU-00000001-0000-4000-8000-000000000001")
        self.assertEqual(rec["kind"], "recommendation")
        self.assertTrue(rec["available"])
        self.assertEqual(rec["recommendation"]["gpus"], [1])
        self.assertEqual((rec["request"]["cpus"], rec["request"]["ram_mb"]), (4, 32768))
        self.assertEqual(booked["kind"], "booking_result")
        self.assertEqual(booked["status"], "created")
        r = booked["reservation"]
        self.assertEqual((r["gpus"], r["cpus"], r["ram_mb"], r["expected_memory_mb_per_gpu"]), ([1], 4, 32768, 24576))
        # The retry of the seed booking replays it.
        again = self.one_line(*SEED_COMMANDS[2], env={"BK_GPU_COUNT": None})
        self.assertEqual(again["status"], "exists")
        self.assertEqual(again["reservation"]["id"], r["id"])

    def test_seed_commands_with_count_only_gpus(self):
        for cmd in SEED_COMMANDS:
            self.assertEqual(self.one_line(*cmd)["schema_version"], "bk.agent.v1")

    def test_context_pretty_and_compact(self):
        p = self.bk("agent", "context")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("{\n  \""), p.stdout[:40])
        full = json.loads(p.stdout)
        self.assertEqual(full["kind"], "context")
        self.assertEqual(full["deployment"], "private")
        self.assertEqual(full["software"]["name"], "gpubk")
        self.assertIn("capabilities", full)
        self.assertIsNone(full["policy"]["host_cpus"])
        self.assertEqual(full["host_budget"]["cpus"]["enforced"], False)
        self.assertEqual(full["policy"]["storage_transport"], "direct")
        # The original's documents and keys: the administrator, this user's worker, the deployment and
        # worker policy, and its capability names that hold here.
        self.assertEqual(full["administrator"]["schema_version"], "gpubk.administrator.v1")
        self.assertEqual((full["worker"]["schema_version"], full["worker"]["state"]), ("gpubk.worker.v1", "not-seen"))
        pol = full["policy"]
        self.assertEqual((pol["access_mode"], pol["broker_socket"], pol["daemon_policy_exit_code"],
                          pol["worker_busy_exit_code"], pol["worker_waiting_exit_code"]), ("private", None, 78, 75, 3))
        self.assertEqual((pol["worker_max_parallel"], pol["worker_effective_max_parallel"]), (64, 16))  # 8 GPUs x 2
        for flag in ("private_job_specs", "single_worker_lease", "worker_liveness", "collector_liveness"):
            self.assertIs(full["capabilities"][flag], True, flag)
        self.assertEqual(full["capabilities"]["usage_api_schema"], "gpubk.usage.v1")
        # --compact: every key, one line, Python's separators (as the original).
        compact_text = self.bk("agent", "ctx", "--compact").stdout
        self.assertEqual(len(compact_text.splitlines()), 1)
        compact = json.loads(compact_text)
        self.assertEqual(compact, full)
        self.assertTrue(compact_text.startswith('{"actor": {"administrator": true, "uid": '), compact_text[:60])
        self.assertIsNone(compact["policy"]["host_cpus"])

    def test_context_with_host_budgets_and_reservations(self):
        env = {"BK_HOST_CPUS": "32", "BK_HOST_RAM_MB": "131072"}
        self.book("1", "2h", "--gpu", "1", "--cpus", "4", "--ram", "32g", env=env)
        self.book("1", "1h", "--gpu", "2", env=env)  # defaults: 1 CPU, 1 GiB
        ctx = self.one_line("agent", "context", "--compact", env=env)
        self.assertEqual((ctx["policy"]["host_cpus"], ctx["policy"]["host_ram_mb"]), (32, 131072))
        self.assertEqual(ctx["host_budget"]["cpus"], {"total": 32, "booked_now": 5, "free_now": 27, "enforced": True})
        self.assertEqual(ctx["host_budget"]["ram_mb"]["booked_now"], 32768 + 1024)
        self.assertEqual(sorted(r["cpus"] for r in ctx["reservations"]), [1, 4])
        # A request beyond the budget cannot fit: exit 3 with the document.
        p = self.bk("agent", "recommend", "1", "1h", "--cpus", "30", "--compact", env=env)
        self.assertEqual(p.returncode, 0, p.stdout)  # queued after the 4-CPU booking ends
        rec = json.loads(p.stdout)
        self.assertTrue(rec["recommendation"]["queued"])
        self.assertEqual(rec["recommendation"]["start_at"], "2026-11-29T20:45:00Z")

    def test_context_gpu_history_from_the_monitors_samples(self):
        self.use_sim()
        empty = self.one_line("agent", "context", "--compact")["gpu_advice"]["gpus"]
        self.assertEqual(empty[1]["history"], {"average_utilization_percent": 0.0, "busy_fraction": 0.0,
                                               "memory_percent": 0.0, "predicted_percent": 0.0,
                                               "sample_count": 0})
        # One sample a minute ago: GPU 1 runs alice's job at 87% with half its memory.
        self.ok("m", "--once", env={"BK_TEST_NOW": "2026-11-29T18:48:00Z"})
        gpus = self.one_line("agent", "context", "--compact")["gpu_advice"]["gpus"]
        self.assertEqual(gpus[1]["history"], {"average_utilization_percent": 87.0, "busy_fraction": 1.0,
                                              "memory_percent": 50.0, "predicted_percent": 86.55,
                                              "sample_count": 1})
        self.assertEqual(gpus[2]["history"]["sample_count"], 1)
        self.assertEqual(gpus[2]["history"]["busy_fraction"], 0.0)

    def test_recommend_uses_the_booking_grammar(self):
        rec = self.one_line("agent", "recommend", "2", "1h", "--exclude-gpu", "0,1", "--mode", "x", "--compact")
        self.assertEqual(rec["request"]["mode"], "exclusive")
        self.assertEqual(rec["request"]["excluded_gpus"], [0, 1])
        self.assertTrue(set(rec["recommendation"]["gpus"]).isdisjoint({0, 1}))
        rec = self.one_line("agent", "rec", "1", "30m", "--share", "2", "--start", "2026-11-29T20:00:00Z", "--compact")
        self.assertEqual(rec["request"]["share_units_per_gpu"], 2)
        self.assertEqual(rec["recommendation"]["start_at"], "2026-11-29T20:00:00Z")
        self.assertFalse(rec["request"]["allow_queue"])

    def test_recommend_exits_3_when_nothing_fits(self):
        self.book("x", "1", "2h", "--gpu", "3")
        rec = self.one_line("agent", "recommend", "1", "1h", "--gpu", "3", "--start", "2026-11-29T19:00:00Z",
                            "--compact", rc=3)
        self.assertFalse(rec["available"])
        self.assertIsNone(rec["recommendation"])  # every key, null included
        self.assertEqual(rec["nearest_available"]["gpus"], [3])
        self.assertEqual(rec["nearest_available"]["start_at"], "2026-11-29T20:45:00Z")
        pretty = self.json("agent", "recommend", "1", "1h", "--gpu", "3", "--start", "2026-11-29T19:00:00Z", rc=3)
        self.assertIsNone(pretty["recommendation"])

    def test_errors_are_json_documents_even_without_flags(self):
        for args in (("agent", "recommend", "1", "7m"),
                     ("agent", "recommend", "1"),
                     ("agent", "frobnicate"),
                     ("agent",),
                     ("agent", "context", "--bogus"),
                     ("agent", "operation", "bad id!")):
            doc = self.json_error(*args)
            self.assertIn("message", doc["error"])
        self.assertIn("multiple of 5 minutes", self.json_error("agent", "recommend", "1", "7m")["error"]["message"])
        self.assertNoDataDir()
        self.assertIn("not found", self.json_error("agent", "cancel", "ffffffff")["error"]["message"])

    def test_edit_needs_an_operation_id_and_a_change(self):
        rid = self.book_id("1", "1h", "--gpu", "0")
        msg = self.json_error("agent", "edit", rid[:8], "--duration", "2h")["error"]["message"]
        self.assertIn("operation ID is required", msg)
        msg = self.json_error("agent", "edit", rid[:8], "--op-id", "e1", "--queue")["error"]["message"]
        self.assertIn("at least one changed field", msg)

    def test_edit_renew_cancel_and_operation_replay(self):
        rid = self.book_id("1", "1h", "--gpu", "0", "--op-id", "create-1")
        edited = self.json("agent", "edit", rid[:8], "--op-id", "edit-1", "--duration", "2h")
        self.assertEqual((edited["kind"], edited["status"]), ("booking_result", "updated"))
        self.assertEqual(edited["reservation"]["end_at"], "2026-11-29T20:45:00Z")
        self.assertIn("capabilities", edited)
        replay = self.one_line("agent", "edit", rid[:8], "--op-id", "edit-1", "--duration", "2h", "--compact")
        self.assertEqual(replay["status"], "exists")
        self.assertEqual(replay["reservation"]["end_at"], "2026-11-29T20:45:00Z")
        self.assertIn("different write",
                      self.json_error("agent", "edit", rid[:8], "--op-id", "edit-1", "--duration", "3h")
                      ["error"]["message"])

        renewed = self.one_line("agent", "renew", rid, "30m", "--op-id", "renew-1", "--compact")
        self.assertEqual(renewed["reservation"]["end_at"], "2026-11-29T21:15:00Z")
        self.assertEqual(self.one_line("agent", "renew", rid, "30m", "--op-id", "renew-1", "--compact")
                         ["reservation"]["end_at"], "2026-11-29T21:15:00Z")
        self.assertIn("operation ID is required", self.json_error("agent", "renew", rid, "30m")["error"]["message"])

        op = self.one_line("agent", "operation", "create-1", "--compact")
        self.assertEqual((op["kind"], op["found"], op["action"]), ("operation_status", True, "create"))
        self.assertEqual(op["reservation"]["id"], rid)
        missing = self.json("agent", "op", "never-used")
        self.assertEqual((missing["found"], missing["action"], missing["reservation"]), (False, None, None))

        cancelled = self.one_line("agent", "cancel", rid[:8], "--op-id", "cancel-1", "--compact")
        self.assertEqual(cancelled["kind"], "cancellation_result")
        self.assertEqual(cancelled["reservation"]["status"], "cancelled")
        again = self.one_line("agent", "del", rid[:8], "--op-id", "cancel-1", "--compact")
        self.assertEqual(again["reservation"]["id"], rid)
        self.assertEqual(self.reservations(), [])

    def test_ai_alias_and_help(self):
        self.assertEqual(self.one_line("ai", "ctx", "--compact")["kind"], "context")
        self.assertIn("bk agent context", self.ok("agent", "--help"))
        self.assertIn("--compact", self.ok("agent", "recommend", "--help"))
        self.assertIn("plan_gpu_experiment", self.ok("mcp", "--help"))


class McpStdio:
    """A minimal line-oriented JSON-RPC client for `bk mcp`."""

    def __init__(self, env, **popen_kwargs):
        self.proc = subprocess.Popen([BK_BIN, "mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, encoding="utf-8", **popen_kwargs)
        self.next_id = 0

    def send(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError("bk mcp closed stdout; stderr: " + self.proc.stderr.read())
        return json.loads(line)

    def request(self, method, params=None):
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        self.next_id += 1
        if params is not None:
            msg["params"] = params
        self.send(json.dumps(msg))
        return self.read()

    def call(self, tool, arguments):
        return self.request("tools/call", {"name": tool, "arguments": arguments})["result"]

    def close(self):
        self.proc.stdin.close()
        rc = self.proc.wait(timeout=10)
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return rc, err


class McpTest(BkTestCase):
    gpu_count = 8

    def start(self, env=None):
        e = dict(self.env)
        e.update(env or {})
        s = McpStdio(e)
        self.addCleanup(lambda: s.proc.poll() is None and s.proc.kill())
        return s

    def test_handshake_book_and_eof(self):
        t0 = time.monotonic()
        s = self.start()
        init = s.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "e2e", "version": "1"}})
        elapsed_ms = (time.monotonic() - t0) * 1000
        print("\n  bk mcp: spawn + initialize answered in %.1f ms" % elapsed_ms)
        self.assertEqual(init["id"], 0)
        self.assertEqual(init["result"]["protocolVersion"], "2025-11-25")
        s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        created = s.call("create_gpu_booking", {"count": 1, "duration": "2h", "gpus": [1], "operation_id": "mcp-1"})
        self.assertFalse(created["isError"])
        doc = created["structuredContent"]
        self.assertEqual(json.loads(created["content"][0]["text"]), doc)
        self.assertEqual(doc["status"], "created")
        # The MCP booking is the same ledger the CLI reads.
        self.assertEqual([r["id"] for r in self.reservations()], [doc["reservation"]["id"]])
        self.assertEqual(self.json("agent", "operation", "mcp-1")["reservation"]["id"], doc["reservation"]["id"])
        rc, err = s.close()
        self.assertEqual(rc, 0)
        self.assertEqual(err, "")

    def test_stdout_carries_only_messages_and_errors_never_kill_it(self):
        s = self.start()
        s.send("this is not json")
        self.assertEqual(s.read()["error"]["code"], -32700)
        self.assertEqual(s.request("no/such")["error"]["code"], -32601)
        bad = s.call("create_gpu_booking", {"count": 1, "duration": "1h"})
        self.assertTrue(bad["isError"])
        self.assertIn("operation_id is required", bad["content"][0]["text"])
        self.assertEqual(s.request("ping")["result"], {})
        rc, _ = s.close()
        self.assertEqual(rc, 0)

    def test_mcp_version_and_arguments(self):
        self.assertTrue(self.ok("mcp", "--version").startswith("gpubk "))
        self.fails("mcp", "--socket")


@unittest.skipUnless(is_root(), "creates Unix accounts with useradd: run as root (CI does)")
class SharedServerAgentTest(unittest.TestCase):
    """`bk agent` and `bk mcp` run by a user connected to a rootless shared server: every call goes
    through the daemon's socket, and the daemon takes the identity from the kernel."""

    @classmethod
    def setUpClass(cls):
        if not bk_ok():
            raise unittest.SkipTest("bk binary not found at %s" % BK_BIN)
        # The accounts are shared with test_server_users, which ctest may run at the same time:
        # a concurrent first useradd can lose the /etc/passwd lock, so try again.
        for name in (OWNER, USER_A):
            for attempt in range(5):
                try:
                    ensure_user(name)
                    break
                except RuntimeError:
                    if attempt == 4:
                        raise
                    time.sleep(0.2 * (attempt + 1))
        cls.base = make_base_dir("bk-agent-srv-")
        try:
            cls.owner = Account.make(OWNER, cls.base)
            cls.user = Account.make(USER_A, cls.base)
            cls.srv = Server(cls.base, cls.owner)
            cls.srv.init("--gpu-count", "4", "--cpus", "16", "--ram", "64g")
            cls.srv.start()
            for who in (cls.owner, cls.user):
                p = who.bk("server", "connect", cls.srv.config)
                if p.returncode != 0:
                    raise AssertionError("connect as %s failed:%s" % (who.name, describe(["server", "connect"], p)))
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def tearDownClass(cls):
        srv = getattr(cls, "srv", None)
        if srv is not None:
            srv.stop()
            srv.cleanup()
        remove_tree(cls.base)

    def agent(self, who, *args, rc=0):
        p = who.bk("agent", *args)
        self.assertEqual(p.returncode, rc, "as %s:%s" % (who.name, describe(("agent",) + args, p)))
        return json.loads(p.stdout)

    def test_context_names_the_server_deployment_and_the_caller(self):
        ctx = self.agent(self.user, "context")
        self.assertEqual(ctx["deployment"], "server")
        self.assertEqual(ctx["policy"]["storage_transport"], "socket")
        self.assertEqual(ctx["capabilities"]["kernel_peer_credentials"], True)
        self.assertEqual((ctx["actor"]["uid"], ctx["actor"]["username"]), (self.user.uid, self.user.name))
        self.assertEqual((ctx["policy"]["host_cpus"], ctx["policy"]["host_ram_mb"]), (16, 65536))

    def test_mcp_as_a_user_books_as_that_user(self):
        s = McpStdio(self.user.env(), cwd=self.user.home, **self.user.popen_kwargs())
        try:
            self.assertEqual(s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
                             ["result"]["protocolVersion"], "2025-06-18")
            args = {"count": 1, "duration": "1h", "gpus": [2], "cpus": 2, "ram": "4g", "operation_id": "srv-mcp-1"}
            first = s.call("create_gpu_booking", args)
            self.assertFalse(first["isError"], first)
            r = first["structuredContent"]["reservation"]
            self.assertEqual((r["uid"], r["username"], r["mine"]), (self.user.uid, self.user.name, True))
            again = s.call("create_gpu_booking", args)
            self.assertEqual(again["structuredContent"]["status"], "exists")
            self.assertEqual(again["structuredContent"]["reservation"]["id"], r["id"])
            ctx = s.call("get_gpu_context", {})["structuredContent"]
            self.assertEqual(ctx["host_budget"]["cpus"]["booked_now"], 2)
            self.assertTrue(s.call("cancel_my_gpu_booking", {"reservation_id": "nope"})["isError"])
        finally:
            s.close()
        # The owner sees it through the daemon as someone else's booking.
        theirs = [x for x in self.agent(self.owner, "context")["reservations"] if x["id"] == r["id"]]
        self.assertEqual(len(theirs), 1)
        self.assertFalse(theirs[0]["mine"])
        self.assertEqual(theirs[0]["uid"], self.user.uid)
        op = self.agent(self.user, "operation", "srv-mcp-1")
        self.assertEqual((op["found"], op["reservation"]["id"]), (True, r["id"]))
        self.agent(self.user, "cancel", r["id"], "--op-id", "srv-cancel-1")

    def test_mcp_usage_job_log_and_command_through_the_daemon(self):
        env = self.user.env(BK_JOB_DIR=os.path.join(self.user.home, "mcp-jobs"))
        s = McpStdio(env, cwd=self.user.home, **self.user.popen_kwargs())
        try:
            usage = s.call("get_my_gpu_usage", {"since": "2h", "include_events": True})
            self.assertFalse(usage["isError"], usage)
            doc = usage["structuredContent"]
            self.assertEqual((doc["schema_version"], doc["kind"]), ("gpubk.usage.v1", "my-usage"))
            for part in ("summary", "samples", "events"):
                self.assertEqual(doc[part]["query"]["uid"], self.user.uid, part)
            other = s.call("get_my_gpu_usage", {"uid": 0})  # never another UID
            self.assertTrue(other["isError"], other)
            self.assertIn("unknown argument: uid", other["content"][0]["text"])

            args = {"count": 1, "duration": "1h", "gpus": [3], "operation_id": "srv-cmd-1",
                    "command": ["python3", "train.py", "--epochs", "2"], "working_directory": self.user.home}
            booked = s.call("create_gpu_booking", args)
            self.assertFalse(booked["isError"], booked)
            rid = booked["structuredContent"]["reservation"]["id"]
            log = s.call("read_my_job_log", {"reservation_id": rid[:8]})["structuredContent"]
            self.assertEqual((log["reservation_id"], log["status"], log["available"]), (rid, "pending", False))
            specs = s.call("cleanup_my_job_specs", {})["structuredContent"]["private_job_cleanup"]
            self.assertEqual((specs["failed"], specs["retained"]), (0, 1), specs)
        finally:
            s.close()
        # The daemon holds the job for the worker; its command line stays in the user's private spec.
        p = self.user.bk("j", "--json", env=env)
        self.assertEqual(p.returncode, 0, describe(("j", "--json"), p))
        job = [j for j in json.loads(p.stdout)["jobs"] if j["id"] == rid]
        self.assertEqual(len(job), 1, p.stdout)
        self.assertEqual((job[0]["job"]["status"], job[0]["job"]["summary"]),
                         ("pending", "python3 train.py (+2 args)"))
        self.assertNotIn("--epochs", json.dumps(self.agent(self.owner, "context")))
        self.agent(self.user, "cancel", rid, "--op-id", "srv-cmd-cancel-1")


if __name__ == "__main__":
    unittest.main()
